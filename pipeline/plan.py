"""The plan: an ordered list of steps built from one config, translated by each engine driver.

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
    out_dir: str = ""
    config: dict = field(default_factory=dict)

    @property
    def step_names(self) -> list[str]:
        return [s.name for s in self.steps]
