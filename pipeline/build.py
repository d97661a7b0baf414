"""`lait build`: run the three jobs of a run on an engine, then write stats.json beside the
shards (see pipeline/waves.py for how a killed run resumes)."""
from __future__ import annotations

import contextlib
import logging
import os
import time

from pipeline import config as config_mod
from pipeline import waves
from pipeline.core import storage
from pipeline.core.executor import forget_run_state
from pipeline.core.errors import ConfigError
from pipeline.core.locks import folder_lock
from pipeline.core.rejects import write_rejects
from pipeline.core.stats import write_stats
from pipeline.engines.local import run_local
from pipeline.jobs import build_jobs, input_source, num_shards
from pipeline.steps.write import ShardWriter, missing_shards
from pipeline.web.failures import is_transient

ENGINES = ("beam", "spark", "local")
log = logging.getLogger(__name__)


def check_engine(engine: str, engine_args: list[str] | None) -> None:
    """Refuses an unknown engine or engine options it would not take (ConfigError), starting
    nothing: a misspelt option fails now, not after the run (or, in ``lait demo``, after the
    sample web is generated)."""
    if engine == "beam":
        # Imported on use: each engine is a heavy optional dependency the other runs never load.
        from pipeline.engines import beam

        beam.pipeline_options(engine_args)
    elif engine == "spark":
        spark_options(list(engine_args or []))
    elif engine == "local":
        if engine_args:  # nothing would read them: a run that ignores what it was told
            raise ConfigError(f"--engine local takes no engine options (after `--`): "
                              f"{' '.join(engine_args)}; they are for --engine beam or spark")
    else:
        raise ConfigError(f"--engine must be one of {ENGINES}, got {engine!r}")


def engine_runner(engine: str, engine_args: list[str] | None, spark=None):
    """A function plan -> RunSummary for the chosen engine."""
    check_engine(engine, engine_args)
    if engine == "beam":
        from pipeline.engines import beam  # on use, as in check_engine

        return lambda plan: beam.run(plan, engine_args)
    if engine == "spark":
        from pipeline.engines import spark as spark_engine  # on use, as above

        master, conf = spark_options(list(engine_args or []))
        session = spark or spark_engine.session(master, conf=conf)
        run = lambda plan: spark_engine.run(plan, session)  # noqa: E731
        if spark is None:  # the session is ours: build() stops it on Ctrl-C
            run.interrupted = lambda: spark_engine.stop_interrupted(session)
        return run
    return run_local


SPARK_EXAMPLES = {"--master": "--master local[2] or spark://h:7077",
                  "--conf": "--conf spark.executorEnv.AWS_PROFILE=lait"}


def spark_options(args: list[str]) -> tuple[str | None, dict]:
    """``(master, conf)`` from what follows ``--`` for Spark: ``--master URL`` and ``--conf
    KEY=VALUE`` (repeatable), each also as ``--opt=value``, spelled as for spark-submit.
    Anything else fails naming it: it used to be dropped without a word, and
    ``--master=spark://...`` ran the job on local[*]."""
    master, conf, i = None, {}, 0
    while i < len(args):
        name, eq, value = args[i].partition("=")
        if name not in SPARK_EXAMPLES:
            raise ConfigError(f"Spark engine option {args[i]!r} is not one lait build takes after "
                              "`--` (--master URL, --conf KEY=VALUE); give other Spark options "
                              "to spark-submit (docs/fetching.md)")
        if not eq:
            i += 1
            value = args[i] if i < len(args) and not args[i].startswith("-") else ""
        if not value:
            raise ConfigError(f"{name} needs a value (e.g. {SPARK_EXAMPLES[name]})")
        i += 1
        if name == "--master":
            master = value
            continue
        key, eq, setting = value.partition("=")
        if not key or not eq:
            raise ConfigError(f"--conf needs KEY=VALUE, got {value!r} (e.g. {SPARK_EXAMPLES[name]})")
        conf[key] = setting
    return master, conf


def check_output_dir(out_dir: str) -> None:
    """Creates ``out_dir`` and proves it writable before any work, so a path that is a file,
    lies under a file or is read-only (or a bucket that is missing or not ours to write)
    fails at once with its name, not as a traceback later."""
    if storage.is_url(out_dir):
        probe = storage.join(out_dir, f".write-probe-{os.getpid()}")
        try:
            storage.makedirs(out_dir)
            storage.write_bytes(probe, b"")
        except ImportError as exc:
            raise ConfigError(f"output dir {out_dir}: no fsspec backend for this scheme "
                              f"is installed ({exc})") from None
        except Exception as exc:  # noqa: BLE001 (each store raises its own types)
            raise ConfigError(f"output dir {out_dir}: not writable "
                              f"({type(exc).__name__}: {exc})") from None
        try:
            storage.remove(probe)
        except Exception as exc:  # noqa: BLE001
            # An append-only key (no s3:DeleteObject): "not writable" sent users after the
            # wrong permission.  A build deletes (replaced shards, a resumed wave's partial
            # files), so it still stops here; the probe it could not remove is named.
            raise ConfigError(f"output dir {out_dir}: writable, but deleting is refused "
                              f"({type(exc).__name__}: {exc}); a build deletes its partial "
                              f"files: allow deletes (s3:DeleteObject) there, and remove "
                              f"{probe}") from None
        return
    try:
        os.makedirs(out_dir, exist_ok=True)
    except FileExistsError:
        raise ConfigError(f"output dir {out_dir}: exists and is not a directory") from None
    except OSError as exc:
        raise ConfigError(f"output dir {out_dir}: cannot be created ({exc.strerror}: "
                          f"{exc.filename or out_dir})") from None
    probe = os.path.join(out_dir, f".write-probe-{os.getpid()}")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as exc:
        raise ConfigError(f"output dir {out_dir}: not writable ({exc.strerror})") from None


RETRY_STEP = "fetch"  # the step whose network failures --retry-failed tries again


def transient_drops(steps) -> int:
    """How many records the fetch step dropped for a network cause (see ``is_transient``)."""
    prefix = RETRY_STEP + "_"
    return sum(n for s in steps if s.name == RETRY_STEP for r, n in s.dropped.items()
               if r.startswith(prefix) and is_transient(r[len(prefix):]))


def reopen_failed(work: str) -> int:
    """``--retry-failed``: the image buckets whose waves dropped candidates for a network
    cause are no longer done, so this run fetches them again; the corpus job is redone after
    them.  The corpus marker goes first: a run killed in between then still redoes it."""
    waves.reopen_waves(work, "corpus")
    return len(waves.reopen_waves(work, "images", lambda steps: transient_drops(steps) > 0))


def reopen_lost_shards(cfg, out_dir: str, work: str) -> None:
    """A finished corpus job whose shards are no longer all there (a shard deleted by hand, a
    sync that lost one) is done again: its marker alone would skip it, and the run would
    print its funnel and exit 0 over a corpus missing samples.  The corpus job rewrites every
    shard with the same bytes from the images job's work files."""
    if not waves.finished_wave_dirs(work, "corpus"):
        return
    written = waves.finished_counts(work, "corpus", ShardWriter.name).kept
    missing = missing_shards(out_dir, num_shards(cfg, work), written)
    if missing:
        log.warning("build: %s: %s missing; writing the corpus again", storage.join(out_dir, "shards"),
                    ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""))
        waves.reopen_waves(work, "corpus")


def check_run(config_path: str | None, out_dir: str, engine: str = "beam",
              engine_args: list[str] | None = None, overrides: dict | None = None):
    """The run's Config, once its configuration, engine options and output dir are checked
    (ConfigError naming what is wrong), before any work or engine starts: ``build`` runs it
    first, and ``lait demo`` before it generates the sample web."""
    cfg = config_mod.load(config_path, overrides)
    check_engine(engine, engine_args)
    check_output_dir(storage.absolute(out_dir))  # a URL stays a URL (never a local "./s3:" folder)
    return cfg


def build(config_path: str | None, out_dir: str, engine: str = "beam", engine_args: list[str] | None = None,
          overrides: dict | None = None, spark=None, retry_failed: bool = False) -> dict:
    """Builds (or resumes building) the corpus into ``out_dir``; returns the stats document.

    A wave that finished is never redone, even when some of its fetches failed for a network
    cause (a refused connection, a timeout, a 5xx); with ``retry_failed`` the image buckets
    that had such failures are fetched again (stats.json's ``retryable`` counts them)."""
    cfg = check_run(config_path, out_dir, engine, engine_args, overrides)
    engine_run = engine_runner(engine, engine_args, spark)
    out_dir = storage.absolute(out_dir)  # a URL stays a URL (never a local "./s3:" folder)
    # Two builds into one local --out would write the same waves side by side: the second fails
    # at once instead (an object store has no lock: docs/storage.md).
    lock = contextlib.nullcontext() if storage.is_url(out_dir) else folder_lock(
        out_dir, f"build: {out_dir} is being built by another process (pid {{pid}}); wait for it "
        "or stop it (its finished waves are kept), or use another --out", ".lock")
    with lock:
        try:
            return _build(cfg, out_dir, engine, engine_run, retry_failed)
        except KeyboardInterrupt:
            # Spark: the session lait started is stopped before it leaves, or its JVM prints
            # Java traces after lait's one line (pipeline.engines.spark.stop_interrupted).
            getattr(engine_run, "interrupted", lambda: None)()
            raise


def _build(cfg, out_dir: str, engine: str, engine_run, retry_failed: bool) -> dict:
    work = waves.check_work_dir(out_dir, cfg.to_dict())
    reopened = reopen_failed(work) if retry_failed else 0
    forget_run_state()  # a run starts with no DNS answers, failures included (docs/fetching.md)
    reopen_lost_shards(cfg, out_dir, work)
    t0 = time.time()
    steps, rejects, timings, resumed = [], [], {}, {}
    for make_job in build_jobs(cfg, out_dir, work):
        job = make_job()
        t = time.time()
        result = waves.run_job(job, work, engine_run)
        visible = job.visible_names
        steps += [s for s in result.steps if s.name in visible]
        rejects += [r for r in result.rejects if r.step in visible]
        timings[f"{job.name}_s"] = round(time.time() - t, 3)
        resumed[job.name] = {"units": len(job.units), "skipped": result.units_skipped,
                             "waves_run": result.waves_run}
    timings["wall_s"] = round(time.time() - t0, 3)
    # stats.json last: its presence says the whole run finished (docs/storage.md).
    write_rejects(storage.join(out_dir, "rejects.parquet"), rejects, [s.name for s in steps])
    return write_stats(storage.join(out_dir, "stats.json"), steps, engine=engine,
                       config=cfg.to_dict(), inputs=input_source(cfg).parts(),
                       timings=timings, resume=resumed, num_shards=num_shards(cfg, work),
                       retryable={RETRY_STEP: transient_drops(steps), "reopened_units": reopened})
