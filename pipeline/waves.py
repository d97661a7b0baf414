"""Resume and waves: a run cut into jobs (``pipeline/jobs.py`` gives their step lists), each done in waves that finish for good.

1. **pages** (unit: an input part, e.g. a group of WARC files): read, language, extract, clean
   texts; the surviving candidates are written bucketed by a hash of their image URL.
2. **images** (unit: an image-URL bucket): fetch each URL once (all its candidates, from every
   part, are in one bucket), image filters, pairs, scoring; pairs are written bucketed by the
   image's content hash.
3. **corpus** (not split): best text per image, over-shared texts, shards.

Each wave of units runs as one engine job and ends by writing, atomically, a marker with the
wave's units, counts and reject samples (``_work/<job>/<wave>.done``, written last, after every
file of the wave: on an object store, which has no rename, the marker is the commit; see
docs/storage.md).  A restarted run skips every unit that a marker lists
(a finished part is never redone), ignores the files of unfinished waves, and redoes the corpus
job, whose shards are replaced atomically with the same bytes: a run killed at any moment and
started again ends byte-identical to an uninterrupted one.  A job whose engine run fails (a
shard or work file that could not be written) gets no marker and fails the run
(:class:`RunFailed`); the same command run again redoes it.

Every path here may be a local folder or a URL (``s3://bucket/run``): files go through
``pipeline/core/storage.py``.
"""
from __future__ import annotations

import hashlib
import importlib.resources
import json
import logging
import pickle
import time
from dataclasses import dataclass, field
from typing import Callable

from tqdm import tqdm

from pipeline.core import storage
from pipeline.core.errors import ConfigError, RunFailed, exception_chain
from pipeline.core.executor import RunSummary
from pipeline.core.plan import Plan, Step
from pipeline.core.rejects import RejectSample
from pipeline.core.stage import Source
from pipeline.core.stats import StepStats, merge_all
from pipeline.steps.work import WorkSink, WorkSource

WORK = "_work"
# The layout and meaning of the work files; bumped when they change, so that a resume never
# mixes files written under two rules (3: candidates bucketed by canonical image URL; 4: steps
# renamed (natural -> naturalness, aggregate -> best_text) and the image embedding kept as an
# array in the pairs, see README "Changelog"; 5: image labels as {"name", "p"} structs and
# parquet under OUT/parquet/, so a resumed run never writes shards of both layouts; 6: images
# carry ``meta["compliance"]``; 7: images checked against ``dedup.exclude`` right after the
# decode, ``dedup_evaluation``, and no longer in the corpus job; 8: the labels step keeps the
# embedding for the scorer whatever ``labels.store_embedding`` says, see NARROW_FORMATS).
WORK_FORMAT = 8
# Format changes that alter the work files of some configurations only: format -> whether it
# alters those of this configuration (``Config.to_dict()``).  A run stamps the newest format
# that alters its own work files, so the other runs keep resuming across the change, and
# their stamp keeps its bytes.  8: with ``store_embedding: false`` the images job's pairs
# used to be scored without the embedding (the demo kept 4 samples instead of 49).
NARROW_FORMATS: dict[int, Callable[[dict], bool]] = {
    8: lambda config: not config.get("labels", {}).get("store_embedding", True),
}
# Models whose bytes decide what is kept: a resume with other model files would put two
# classifiers' decisions in one corpus.  "PACKAGE/FOLDER": found through the package
# (importlib.resources), so a checkout and an installed wheel give the same digest.
MODEL_DIRS = ("filters/models", "scoring/models")
# Code whose changes alter decisions without touching the work format (the extract and text
# rules, their word lists, the scorer's features): a resume across such a change is allowed
# (README: code changes keep the work format), but the units finished before keep the old
# code's decisions, so a resume says so (qa23: nothing said which code made which part).
CODE_DIRS = ("pipeline/steps", "filters", "scoring")
CODE_SUFFIXES = (".py", ".txt", ".tsv", ".json")

log = logging.getLogger(__name__)


@dataclass
class Job:
    """One job of a run: a source, the steps after it, and (unless it is the last job) a sink
    that writes each wave's records into that wave's directory.

    ``units`` are what a wave marker lists as done (input parts, or buckets); the source reads
    ``parts`` (default: the wave's units themselves).  The corpus job has one unit and reads
    every bucket of the images job.
    """

    name: str
    units: list[str]
    source: Source
    steps: list[Step]
    sink: Callable[[str], Step] | None = None  # wave directory -> the job's last step
    wave_size: int = 0  # 0: all pending units in one wave (the job is not split)
    parts: list[str] | None = None

    def plan(self, units: list[str], wave_dir: str) -> Plan:
        tail = [self.sink(wave_dir)] if self.sink else []
        return Plan([Step("source", self.source), *self.steps, *tail],
                    parts=units if self.parts is None else self.parts)

    @property
    def step_names(self) -> list[str]:
        names = [self.source.name, *(s.name for s in self.steps)]
        return names + ([self.sink("").name] if self.sink else [])

    @property
    def visible_names(self) -> set[str]:
        """The funnel's steps: the internal work-file steps are left out."""
        stages = [self.source, *(s.stage for s in self.steps)]
        return {st.name for st in stages if not getattr(st, "internal", False)}


@dataclass
class JobResult:
    steps: list[StepStats] = field(default_factory=list)
    rejects: list[RejectSample] = field(default_factory=list)
    waves_run: int = 0
    units_skipped: int = 0


def _fingerprint(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def models_digest(dirs=MODEL_DIRS) -> str:
    """One digest of the model files in ``dirs`` (names and bytes; dot-files such as build
    stamps left out)."""
    h = hashlib.sha256()
    for d in dirs:
        package, sub = d.split("/", 1)
        folder = importlib.resources.files(package).joinpath(sub)
        for entry in sorted(folder.iterdir(), key=lambda e: e.name) if folder.is_dir() else ():
            if entry.name.startswith(".") or not entry.is_file():
                continue
            h.update(f"{d}/{entry.name}\0".encode())
            with entry.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
    return h.hexdigest()[:16]


def code_digest(dirs=CODE_DIRS) -> str:
    """One digest of the decision code in ``dirs`` (relative names and bytes of its source and
    word-list files, sub-folders included; MODEL_DIRS, caches and dot-files left out)."""
    h = hashlib.sha256()

    def walk(folder, rel: str) -> None:
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            name = f"{rel}/{entry.name}"
            if entry.name.startswith((".", "__pycache__")) or name in MODEL_DIRS:
                continue
            if entry.is_dir():
                walk(entry, name)
            elif entry.name.endswith(CODE_SUFFIXES):
                h.update(f"{name}\0".encode())
                h.update(entry.read_bytes())

    for d in dirs:
        package, _, sub = d.partition("/")
        folder = importlib.resources.files(package)
        folder = folder.joinpath(sub) if sub else folder
        if folder.is_dir():
            walk(folder, d)
    return h.hexdigest()[:16]


def _flat(config, prefix: str = "") -> dict:
    """``{"score": {"threshold": 0.4}}`` -> ``{"score.threshold": 0.4}``."""
    if not isinstance(config, dict) or not config:
        return {prefix: config} if prefix else {}
    out = {}
    for key, value in config.items():
        out.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def config_diff(old: dict, new: dict, most: int = 5) -> str:
    """The keys whose values differ, ``key: OLD there, NEW here`` (the first ``most``), so
    the refusal of an --out made with another configuration says which."""
    # The stamp's config went through JSON (tuples are lists there): so does this one.
    a, b = _flat(old), _flat(json.loads(json.dumps(new, sort_keys=True)))
    show = lambda d, k: json.dumps(d[k], sort_keys=True) if k in d else "absent"  # noqa: E731
    keys = sorted(k for k in a.keys() | b.keys() if k not in a or k not in b or a[k] != b[k])
    parts = [f"{k}: {show(a, k)} there, {show(b, k)} here" for k in keys[:most]]
    return "; ".join(parts) + (f"; and {len(keys) - most} more" if len(keys) > most else "")


def work_format(config: dict) -> int:
    """The newest work-file format whose change alters this configuration's work files."""
    return max(f for f in range(1, WORK_FORMAT + 1)
               if f not in NARROW_FORMATS or NARROW_FORMATS[f](config))


def _any_finished_wave(work: str) -> bool:
    return any(name.endswith(".done") for job in storage.listdir(work)
               for name in storage.listdir(storage.join(work, job)))


def check_work_dir(out_dir: str, config: dict) -> str:
    """Creates ``OUT/_work``; refuses to resume work made with another configuration, another
    work-file format or other model files (each named in the error).  A stamp with no
    finished wave beside it is replaced: there is no work to mix, and a run refused before
    any (a typo in input.warc) must not block the corrected command."""
    work = storage.join(out_dir, WORK)
    storage.makedirs(work)
    stamp = storage.join(work, "config.json")
    now = {"fingerprint": _fingerprint(config), "work_format": work_format(config),
           "models": models_digest()}
    if storage.exists(stamp):
        old = json.loads(storage.read_bytes(stamp).decode("utf-8"))
        what = {"fingerprint": "another configuration",
                "work_format": "another version of the work files (an older lait)",
                "models": "other model files (filters/models, scoring/models)"}
        differ = [text for key, text in what.items() if old.get(key) != now[key]]
        if old.get("fingerprint") != now["fingerprint"] and "config" in old:
            keys = config_diff(old["config"], config)
            differ[0] = f"{differ[0]} ({keys})" if keys else differ[0]
        if not differ:
            code = code_digest()
            if old.get("code") != code and _any_finished_wave(work):
                log.warning("%s was begun by other lait code (code digest %s, now %s): the "
                            "units it finished keep that code's extract, text and scoring "
                            "decisions and the rest get this code's; for one code's output "
                            "use a new --out", out_dir, old.get("code", "not recorded"), code)
            return work
        if _any_finished_wave(work):
            raise ConfigError(f"{out_dir} holds a run made with {' and '.join(differ)}; use "
                              "a new --out, or delete its _work/ to start over")
    doc = json.dumps({**now, "code": code_digest(), "config": config}, indent=2, sort_keys=True)
    storage.write_bytes(stamp, doc.encode("utf-8"))
    return work


def _wave_id(units: list[str]) -> str:
    return hashlib.sha1("\n".join(units).encode()).hexdigest()[:12]


def _finished_waves(job_dir: str) -> list[dict]:
    """The markers of a job's committed waves: only a wave with a marker counts."""
    return [pickle.loads(storage.read_bytes(storage.join(job_dir, name)))
            for name in storage.listdir(job_dir) if name.endswith(".done")]


def finished_counts(work: str, job: str, step: str) -> StepStats:
    """One step's counts over a job's finished waves (zeros when none ran it)."""
    waves = _finished_waves(storage.join(work, job))
    return merge_all([step], [s for w in waves for s in w["steps"] if s.name == step])[0]


def finished_wave_dirs(work: str, job: str) -> list[str]:
    job_dir = storage.join(work, job)
    return [storage.join(job_dir, w["wave"]) for w in _finished_waves(job_dir)]


def reopen_waves(work: str, job: str, redo: Callable[[list[StepStats]], bool] | None = None) -> list[str]:
    """Deletes the markers of ``job``'s finished waves whose step counts ``redo`` picks (all
    when it is None), so the next run does their units again; returns the units reopened.
    Their files become garbage that :func:`run_job` removes."""
    job_dir = storage.join(work, job)
    units = []
    for w in _finished_waves(job_dir):
        if redo is None or redo(w["steps"]):
            storage.remove(storage.join(job_dir, f"{w['wave']}.done"))
            units += w["units"]
    return units


def run_job(job: Job, work: str, engine_run: Callable[[Plan], RunSummary]) -> JobResult:
    """Runs the job's pending units in waves; returns counts over ALL its units, finished
    earlier or now (a marker keeps each wave's counts)."""
    job_dir = storage.join(work, job.name)
    storage.makedirs(job_dir)
    done = _finished_waves(job_dir)
    finished = {u for w in done for u in w["units"]}
    pending = [u for u in job.units if u not in finished]
    result = JobResult(units_skipped=len(job.units) - len(pending))
    # Files of waves that never finished are garbage from a killed run (so are a local
    # marker's temporary files); no reader looks at them, but they would pile up.
    live = {w["wave"] for w in done}
    for name in storage.listdir(job_dir):
        if not name.endswith(".done") and name not in live:
            path = storage.join(job_dir, name)
            if name.endswith(".tmp") or ".done.tmp-" in name:
                storage.remove(path)
            else:
                storage.rmtree(path)
    size = job.wave_size or max(1, len(pending))
    bar = tqdm(total=len(job.units), initial=result.units_skipped, desc=f"build: {job.name}",
               unit="unit", disable=not pending)  # a bar per job, advanced per finished wave
    for i in range(0, len(pending), size):
        units = pending[i:i + size]
        wave = _wave_id(units)
        plan = job.plan(units, storage.join(job_dir, wave))
        try:
            summary = engine_run(plan)
        except KeyboardInterrupt:
            bar.close()
            raise
        except Exception as exc:
            bar.close()
            if _interrupted(exc):  # Ctrl-C, which Beam wraps in a RuntimeError: not a failure
                raise KeyboardInterrupt from exc
            raise RunFailed(f"the {job.name} job failed ({_cause(exc)}); its finished waves "
                            f"are kept: run the same command again to resume") from exc
        marker = {"wave": wave, "units": units, "steps": summary.steps, "rejects": summary.rejects,
                  "finished_at": time.time()}
        # The marker is written last and whole: the wave's commit.
        storage.write_bytes(storage.join(job_dir, f"{wave}.done"), pickle.dumps(marker))
        done.append(marker)
        result.waves_run += 1
        bar.update(len(units))
    bar.close()
    names = job.step_names
    result.steps = merge_all(names, [s for w in done for s in w["steps"]])
    rejects: dict[str, RejectSample] = {}
    for w in done:
        for r in w["rejects"]:
            rejects.setdefault(r.step, RejectSample(r.step)).merge(r)
    result.rejects = [rejects[n] for n in names if n in rejects]
    return result


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is a Ctrl-C the engine wrapped: Beam re-raises a KeyboardInterrupt
    in a DoFn as ``RuntimeError("KeyboardInterrupt [while running 'LAIT/Step fetch']")``."""
    return any(isinstance(e, KeyboardInterrupt) or str(e).startswith("KeyboardInterrupt")
               for e in exception_chain(exc))


def _cause(exc: BaseException) -> str:
    """The first line that names our own storage error, wherever the engine wrapped it (Spark
    gives the worker's traceback as the text of a Java exception)."""
    text = f"{type(exc).__name__}: {exc}"
    for line in reversed(text.splitlines()):
        for name in ("WriteFailed", "StorageFailed"):
            if name + ":" in line:
                return line[line.index(name):].strip()
    return text.splitlines()[0][:500] if text else type(exc).__name__


def sink(out_dir: str, buckets: int, field_path: str, normalise=None) -> Step:
    return Step("group", WorkSink(out_dir, buckets, field_path, normalise))


def source(wave_dirs: list[str], buckets: int) -> WorkSource:
    return WorkSource(wave_dirs, buckets)
