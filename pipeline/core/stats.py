"""Per-step counters that merge by addition, and the funnel written to stats.json.

Counts travel through the pipeline as data (see ``pipeline/core/executor.py``) rather than as
engine metrics: Spark accumulators updated inside transformations may count twice when a task
is retried, and data counted once per produced output is exact on every engine.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from pipeline.core import storage
from pipeline.core.errors import UsageError
from pipeline.core.stage import Drop

MAX_REASONS = 64  # distinct reasons per step; the rest fold into "<step>_other"


@dataclass
class StepStats:
    name: str
    n_in: int = 0
    kept: int = 0
    out: int = 0
    dropped: Counter = field(default_factory=Counter)
    # Smaller units counted inside this step's records (``Keep.units``): unit -> Counter of
    # outcome ("kept" or a drop reason) -> n.  Empty for most steps.
    units: dict = field(default_factory=dict)

    def add_event(self, event) -> None:
        self.n_in += 1
        if isinstance(event, Drop):
            self.dropped[event.reason] += 1
        else:
            self.kept += 1
            self.out += len(event.outputs)
        for unit, outcome, n in event.units:
            c = self.units.get(unit)
            if c is None:
                c = self.units[unit] = Counter()
            c[outcome] += n

    def merge(self, other: "StepStats") -> "StepStats":
        assert other.name == self.name, (self.name, other.name)
        self.n_in += other.n_in
        self.kept += other.kept
        self.out += other.out
        self.dropped.update(other.dropped)
        for unit, c in other.units.items():
            self.units.setdefault(unit, Counter()).update(c)
        return self

    def capped(self) -> dict[str, int]:
        if len(self.dropped) <= MAX_REASONS:
            return dict(sorted(self.dropped.items()))
        top = sorted(self.dropped.items(), key=lambda kv: (-kv[1], kv[0]))
        kept = dict(top[: MAX_REASONS - 1])
        kept[f"{self.name}_other"] = sum(v for _, v in top[MAX_REASONS - 1 :])
        return dict(sorted(kept.items()))

    def to_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "in": self.n_in, "kept": self.kept, "out": self.out,
             "dropped": self.capped()}
        if self.units:
            d["units"] = {u: {"in": sum(c.values()), "kept": c["kept"],
                              "dropped": dict(sorted((r, n) for r, n in c.items()
                                                     if r != "kept"))}
                          for u, c in sorted(self.units.items())}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "StepStats":
        units = {u: Counter({"kept": v["kept"], **v["dropped"]})
                 for u, v in d.get("units", {}).items()}
        return cls(d["name"], d["in"], d["kept"], d["out"], Counter(d["dropped"]), units)

    def balanced(self) -> bool:
        return self.n_in == self.kept + sum(self.dropped.values())


def merge_all(step_names: list[str], partials: Iterable[StepStats]) -> list[StepStats]:
    """Merge partial counts into one StepStats per step, in plan order (steps with no
    input still appear, with zeros, so every run's funnel has the same rows)."""
    total = {n: StepStats(n) for n in step_names}
    for p in partials:
        total[p.name].merge(p)
    return [total[n] for n in step_names]


def write_stats(path: str, steps: list[StepStats], **extra: Any) -> dict[str, Any]:
    doc = {"steps": [s.to_dict() for s in steps], **extra}
    text = json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
    storage.write_bytes(path, text.encode("utf-8"))  # a local path or a URL
    return doc


STEP_KEYS = {"name", "in", "kept", "out", "dropped"}


def read_stats(path: str) -> dict[str, Any]:
    """A run's stats.json; one that is not such a file (cut short by a full disk, edited,
    another tool's) raises :class:`UsageError` naming it: it was a JSON or KeyError traceback
    out of ``lait stats`` and ``lait report``."""
    try:
        doc = json.loads(storage.read_bytes(path).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: not a stats.json written by lait build ({exc})") from None
    steps = doc.get("steps") if isinstance(doc, dict) else None
    if not isinstance(steps, list) or not all(isinstance(s, dict) and STEP_KEYS <= s.keys()
                                              for s in steps):
        raise UsageError(f"{path}: not a stats.json written by lait build (no list of steps "
                         f"with {', '.join(sorted(STEP_KEYS))})")
    return doc


# stats.json's ``out`` is not a second "kept": it counts the records a step hands to the next
# (that step's ``in``).  A kept record may be passed on as several (extract: a page's candidate
# texts; text: a surrounding text with a sentence on each side of its image, as two; pairs: an
# image's texts), several as one (fetch: the texts of one image URL) or as none (write: to the
# shards).  Shown as "passed on" (``lait stats``, the report's table).
FUNNEL_LEGEND = (
    "in = kept + dropped.  passed on: the records a step hands to the next (that step's in);\n"
    "a kept record may give several (a page's candidate texts; a text with a sentence on each\n"
    "side of its image gives two), several may give one (fetch: one image per URL), write none.")


# Units counted inside a step's records (``units``), named where the bare name would read as
# another unit of the funnel: extract's "image"s are the pictures a page's HTML names (<img>,
# srcset, ...), counted before any fetch, not the fetched images the image steps count (the
# report's drops card added the two together).  Others are their name, plural: dedup's
# near-duplicate "image"s are fetched ones, text's "sentence"s, extract's "side"s.
INNER_UNITS = {("extract", "image"): "page images"}


def inner_unit_name(step: str, unit: str) -> str:
    return INNER_UNITS.get((step, unit), f"{unit}s")


def format_funnel(doc: dict[str, Any]) -> str:
    """The funnel as a text table: step, in, kept, passed on (stats.json's ``out``), dropped,
    then each drop reason indented, then :data:`FUNNEL_LEGEND`."""
    rows = [("step", "in", "kept", "passed on", "dropped")]
    for s in doc["steps"]:
        rows.append((s["name"], str(s["in"]), str(s["kept"]), str(s["out"]),
                     str(sum(s["dropped"].values()))))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = []
    for i, r in enumerate(rows):
        lines.append("  ".join(c.ljust(widths[0]) if j == 0 else c.rjust(widths[j])
                               for j, c in enumerate(r)))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
            continue
        step = doc["steps"][i - 1]
        for reason, n in sorted(step["dropped"].items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"    {reason}: {n}")
        for unit, u in step.get("units", {}).items():
            lines.append(f"    ({inner_unit_name(step['name'], unit)} inside: in {u['in']}, kept {u['kept']})")
            for reason, n in sorted(u["dropped"].items(), key=lambda kv: (-kv[1], kv[0])):
                lines.append(f"      {reason}: {n}")
    lines += ["", FUNNEL_LEGEND]
    return "\n".join(lines)
