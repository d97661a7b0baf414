"""Runs plan steps over tagged items; the one piece of logic both engine drivers share.

Items flowing between steps are tuples: ``("r", record)`` for records, ``("s", StepStats)``
for partial counts and ``("x", RejectSample)`` for samples of dropped records.  Each step
passes earlier steps' counts and samples through untouched and appends its own when its bundle
/ partition ends, so they reach the end of the pipeline as data and are merged there, exactly
once, whatever the engine.
"""
from __future__ import annotations

import hashlib
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Iterator

from pipeline.core.plan import Step
from pipeline.core.rejects import RejectSample
from pipeline.core.stage import BatchMapStage, Drop
from pipeline.core.stats import StepStats, merge_all

STATS_KEY = "\x00stats"  # group key under which counts cross a shuffle

# One set-up copy of each stage per worker process (keyed by the stage's pickled config), so
# models load once per process even though Spark deserialises the closure for every task.
_READY: dict[str, object] = {}
_READY_LOCK = threading.Lock()


def ready(stage):
    """The set-up copy of ``stage`` for this process.  The plan's own object is never set up
    (on Beam and Spark it is a deserialised copy anyway; in-process it is a job's step, used
    again by the next wave), so its pickled config stays the key of the copy."""
    blob = pickle.dumps(stage)
    fp = type(stage).__name__ + hashlib.sha1(blob).hexdigest()
    with _READY_LOCK:
        got = _READY.get(fp)
        if got is None:
            got = pickle.loads(blob)
            got.setup()
            _READY[fp] = got
    return got


def forget_run_state() -> None:
    """Drops this process's set-up stages that hold what one run learnt of the network (a
    stage whose class sets ``per_run``: the image fetcher's DNS answers and robots.txt rules),
    so a second build in one process (a notebook, tests, an in-process engine's
    ``--retry-failed``) asks the network again, as a new process does.  Models stay loaded."""
    with _READY_LOCK:
        for fp in [fp for fp, stage in _READY.items() if getattr(stage, "per_run", False)]:
            del _READY[fp]


class StepRunner:
    """Feeds items to one step's core and counts its events; ``flush`` emits the counts."""

    def __init__(self, step: Step):
        self.step = step
        self.stage = None
        self.stats = StepStats(step.name)
        self.rejects = RejectSample(step.name)
        self._pending: list[tuple[str, list]] = []
        self._batch: list = []
        self._pool: ThreadPoolExecutor | None = None

    def _stage(self):
        if self.stage is None:
            self.stage = ready(self.step.stage)
        return self.stage

    def _emit(self, events, inputs=None) -> Iterator[tuple]:
        for i, ev in enumerate(events):
            self.stats.add_event(ev)
            if isinstance(ev, Drop):
                # drops nobody may see (blocklist matches, evaluation images) are counted only
                rec = inputs[i] if inputs is not None else ev.record  # a source's: its own
                if rec is not None and not self.step.stage.withholds(ev.reason):
                    self.rejects.offer(ev.reason, rec)
                continue
            for rec in ev.outputs:
                yield ("r", rec)

    def feed_part(self, part: str) -> Iterator[tuple]:
        """A source step: one input part (e.g. a WARC path)."""
        yield from self._emit(self._stage().events(part))

    def feed(self, item: tuple) -> Iterator[tuple]:
        """A map step: one tagged item."""
        if item[0] != "r":
            yield item
            return
        stage = self._stage()
        if isinstance(stage, BatchMapStage):
            self._batch.append(item[1])
            if len(self._batch) >= stage.batch_size:
                yield from self._run_batch()
            return
        yield from self._emit(stage.events(item[1]), (item[1],))

    def _run_batch(self) -> Iterator[tuple]:
        batch, self._batch = self._batch, []
        if batch:
            yield from self._emit(self._stage().events_batch(batch), batch)

    def feed_group(self, key: str, items: Iterable[tuple]) -> Iterator[tuple]:
        """A group step: every tagged item that shares ``key``."""
        if key == STATS_KEY:
            yield from items
            return
        self._pending.append((key, [it[1] for it in items]))
        conc = getattr(self.step.stage, "concurrency", 1)
        if len(self._pending) >= max(1, conc) * 4:
            yield from self._run_pending()

    def _run_pending(self) -> Iterator[tuple]:
        stage = self._stage()
        pending, self._pending = self._pending, []
        conc = getattr(stage, "concurrency", 1)
        if conc > 1 and len(pending) > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(conc, thread_name_prefix=self.step.name)
            results = self._pool.map(lambda kv: stage.events(*kv), pending)
        else:
            results = (stage.events(k, recs) for k, recs in pending)
        for (_, recs), events in zip(pending, results):
            yield from self._emit(events, recs)

    def flush(self) -> Iterator[tuple]:
        yield from self._run_batch()
        yield from self._run_pending()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if self.stats.n_in:
            yield ("s", self.stats)
        if self.rejects.by_reason:
            yield ("x", self.rejects)
        self.stats = StepStats(self.step.name)
        self.rejects = RejectSample(self.step.name)


def group_key(step: Step, item: tuple) -> str:
    """The shuffle key of a tagged item before a group step."""
    if item[0] != "r":
        return STATS_KEY
    return step.stage.key(item[1])


# Spark-style helpers: a whole partition in, a whole partition out.

def run_source_partition(step: Step, parts: Iterable[str]) -> Iterator[tuple]:
    runner = StepRunner(step)
    for part in parts:
        yield from runner.feed_part(part)
    yield from runner.flush()


def run_map_partition(step: Step, items: Iterable[tuple]) -> Iterator[tuple]:
    runner = StepRunner(step)
    for item in items:
        yield from runner.feed(item)
    yield from runner.flush()


def run_group_partition(step: Step, groups: Iterable[tuple[str, Iterable[tuple]]]) -> Iterator[tuple]:
    runner = StepRunner(step)
    for key, items in groups:
        yield from runner.feed_group(key, items)
    yield from runner.flush()


class RunSummary:
    """What a finished job leaves besides its files: merged counts and reject samples."""

    def __init__(self, step_names: list[str], aux_items):
        stats, rejects = [], {}
        for kind, val in aux_items:
            if kind == "s":
                stats.append(val)
            elif kind == "x":
                rejects.setdefault(val.step, RejectSample(val.step)).merge(val)
        self.steps = merge_all(step_names, stats)
        self.rejects = [rejects[n] for n in step_names if n in rejects]

