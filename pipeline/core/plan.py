"""The plan: an ordered list of steps, translated by each engine (``pipeline/engines/``).

A step is data (its kind and its stage core); drivers hold no stage logic.  ``kind`` is
``"source"`` (parts -> records), ``"map"`` (record -> records) or ``"group"`` (records sharing
a key -> records; the engine shuffles by ``stage.key``).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Step:
    kind: str
    stage: object

    @property
    def name(self) -> str:
        return self.stage.name


@dataclass
class Plan:
    steps: list[Step]
    parts: list[str]
    config: dict = field(default_factory=dict)

    def __post_init__(self):
        names = [s.name for s in self.steps]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:  # counts are keyed by step name
            raise ValueError(f"step names must be unique in a plan; repeated: {dup}")
        if not self.steps or self.steps[0].kind != "source":
            raise ValueError("a plan starts with a source step")

    @property
    def step_names(self) -> list[str]:
        return [s.name for s in self.steps]

