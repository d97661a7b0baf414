"""The stage contract: engine-free cores that map records and say why they drop any.

A core never imports an engine.  It is a picklable object configured through its constructor;
heavy resources (ONNX sessions, HTTP pools) are created lazily by :meth:`Stage.setup`, which
runs once per worker copy.  Cores speak in *events*, one per input unit:

* ``Keep(outputs)``: the unit was kept and turned into zero or more output records;
* ``Drop(reason)``: the unit was dropped, with a snake_case reason prefixed by the stage name.

Counting events is what makes ``in = kept + sum(dropped)`` hold by construction.  A stage whose
unit holds smaller ones (the extract step: a page holds images, an image up to two surrounding
sides) may count those too, in ``units`` of either event: each smaller unit is either kept or
dropped with its own reason, so it balances on its own, and the step's own row stays in pages.

Three kinds of stage exist, matching the three kinds of plan step:

* :class:`Source` reads one input part (e.g. a WARC file) and yields one event per record in it;
* :class:`MapStage` maps one record: ``process(record)`` returns a list of outputs (kept) or a
  :class:`Drop`;
* :class:`GroupStage` sees all the records sharing ``key(record)`` at once and yields one event
  per record of the group (e.g. fetch an image once for every page that uses it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from pipeline.core.errors import StorageFailed

_REASON_RE = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Keep:
    outputs: tuple = ()
    # Counts of smaller units inside the record, each balanced on its own:
    # ``(("image", "kept", 3), ("image", "extract_image_icon", 2), ...)`` (see StepStats.units).
    # Not part of the event's identity: Drop("x") equals Drop("x") with counts.
    units: tuple = field(default=(), compare=False)


@dataclass(frozen=True)
class Drop:
    reason: str
    # As Keep.units: a dropped page may still have had images to count.
    units: tuple = field(default=(), compare=False)
    # What a source step dropped (a map step's is its input): sampled into rejects.parquet,
    # so a crawl's drop names its URL.  Not part of the event's identity either.
    record: Any = field(default=None, compare=False)


def keep(*outputs) -> Keep:
    return Keep(tuple(outputs))


def snake(text: str) -> str:
    """``ConnectionResetError`` -> ``connection_reset_error``; bounded, so reasons stay few."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    s = re.sub(r"[^a-zA-Z0-9]+", "_", s).strip("_").lower()
    return (s or "unknown")[:48]


class Stage:
    """Base of every stage core.  ``name`` is the step name and the prefix of its reasons."""

    name: str = "stage"
    # True: every drop is counted, never sampled into rejects.parquet (blocklist matches,
    # evaluation images); a stage with only some such reasons overrides ``withholds``.
    withhold_rejects: bool = False

    def withholds(self, reason: str) -> bool:
        """Whether a drop with this reason is kept out of the rejects sample (and the report)."""
        return self.withhold_rejects

    def setup(self) -> None:
        """Load heavy resources; called once per worker copy before the first record."""

    def reason(self, what: str) -> str:
        r = f"{self.name}_{what}"
        if not _REASON_RE.match(r):
            raise ValueError(f"bad drop reason {r!r}: must be snake_case")
        return r

    def drop(self, what: str, record=None) -> Drop:
        return Drop(self.reason(what), record=record)

    def error_drop(self, exc: BaseException, record=None) -> Drop:
        # Unexpected exceptions become a counted reason named after the exception type: bad
        # input never crashes a run, and the number of distinct reasons stays small.
        return Drop(self.reason("error_" + snake(type(exc).__name__)), record=record)

    def describe(self) -> dict[str, Any]:
        """The settings written into stats.json's config (override for readability)."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


class Source(Stage):
    """Reads one input part and yields one event per record found in it."""

    def parts(self) -> list[str]:
        """The input parts (e.g. WARC paths), sorted so every engine sees the same list."""
        raise NotImplementedError

    def read(self, part: str) -> Iterator[Keep | Drop]:
        raise NotImplementedError

    def events(self, part: str) -> Iterator[Keep | Drop]:
        try:
            yield from self.read(part)
        except StorageFailed:
            raise
        except Exception as exc:  # a part that fails midway: the records already read count
            yield self.error_drop(exc)


class MapStage(Stage):
    """Maps one record to a list of outputs (kept) or a :class:`Drop`."""

    def process(self, record) -> list | Drop | Keep:
        raise NotImplementedError

    def events(self, record) -> Iterator[Keep | Drop]:
        try:
            result = self.process(record)
        except StorageFailed:
            raise
        except Exception as exc:
            yield self.error_drop(exc)
            return
        if isinstance(result, (Keep, Drop)):
            yield result
        else:
            yield Keep(tuple(result))


class BatchMapStage(MapStage):
    """A map stage that takes records in batches: one model call for many records.

    Subclasses implement ``process_batch(records) -> list`` with one result (outputs or a
    :class:`Drop`) per record.  The executor buffers up to ``batch_size`` records per worker
    before calling it; ``process`` (a batch of one) keeps the per-record API working.
    """

    batch_size: int = 16

    def process(self, record):
        return self.process_batch([record])[0]

    def process_batch(self, records: list) -> list:
        raise NotImplementedError

    def events_batch(self, records: list) -> list[Keep | Drop]:
        try:
            results = self.process_batch(records)
        except StorageFailed:
            raise
        except Exception:
            # A batch that fails as a whole is redone record by record, so one bad record
            # costs only itself and is counted under its own reason.
            return [ev for rec in records for ev in self.events(rec)]
        if len(results) != len(records):
            raise RuntimeError(f"{type(self).__name__}.process_batch gave {len(results)} "
                               f"results for {len(records)} records")
        return [r if isinstance(r, (Keep, Drop)) else Keep(tuple(r)) for r in results]


class GroupStage(Stage):
    """Sees every record sharing a key at once; yields one event per record of the group.

    ``concurrency`` > 1 lets the executor run that many groups at once in threads (I/O-bound
    work such as fetching images) without extra processes.
    """

    concurrency: int = 1

    def key(self, record) -> str:
        raise NotImplementedError

    def reduce(self, key: str, records: list) -> Iterable[Keep | Drop]:
        raise NotImplementedError

    def events(self, key: str, records: Iterable) -> list[Keep | Drop]:
        records = list(records)
        try:
            out = list(self.reduce(key, records))
        except StorageFailed:  # a lost output fails the run; it is not the records' fault
            raise
        except Exception as exc:
            return [self.error_drop(exc)] * len(records)
        if len(out) != len(records):  # a bug in the core, not bad input: fail loudly
            raise RuntimeError(
                f"{type(self).__name__}.reduce gave {len(out)} events for {len(records)} records"
            )
        return out
