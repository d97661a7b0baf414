"""`lait build`: run the three jobs of a run on an engine, then write stats.json beside the
shards (see pipeline/run.py for how a killed run resumes)."""
from __future__ import annotations

import os
import time

from pipeline import config as config_mod
from pipeline import run
from pipeline.plan import build_jobs
from pipeline.rejects import write_rejects
from pipeline.stats import write_stats

ENGINES = ("beam", "spark", "local")


def engine_runner(engine: str, engine_args: list[str] | None, spark=None):
    """A function plan -> RunSummary for the chosen engine."""
    if engine == "beam":
        from pipeline import beam_driver

        return lambda plan: beam_driver.run(plan, engine_args)
    if engine == "spark":
        from pipeline import spark_driver

        args = list(engine_args or [])
        master = args[args.index("--master") + 1] if "--master" in args else None
        session = spark or spark_driver.session(master)
        return lambda plan: spark_driver.run(plan, session)
    if engine == "local":
        from pipeline.executor import run_local

        return run_local
    raise config_mod.ConfigError(f"--engine must be one of {ENGINES}, got {engine!r}")


def build(config_path: str, out_dir: str, engine: str = "beam", engine_args: list[str] | None = None,
          overrides: dict | None = None, spark=None) -> dict:
    """Builds (or resumes building) the corpus into ``out_dir``; returns the stats document."""
    cfg = config_mod.load(config_path, overrides)
    engine_run = engine_runner(engine, engine_args, spark)
    out_dir = os.path.abspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    work = run.check_work_dir(out_dir, cfg.to_dict())
    t0 = time.time()
    steps, rejects, timings, resumed = [], [], {}, {}
    for make_job in build_jobs(cfg, out_dir, work):
        job = make_job()
        t = time.time()
        result = run.run_job(job, work, engine_run)
        plan_steps = job.make_plan([], os.path.join(work, "_")).steps
        steps += run.visible(result.steps, plan_steps)
        rejects += [r for r in result.rejects if r.step in {s.name for s in steps}]
        timings[f"{job.name}_s"] = round(time.time() - t, 3)
        resumed[job.name] = {"units": len(job.units), "skipped": result.units_skipped,
                             "waves_run": result.waves_run}
    timings["wall_s"] = round(time.time() - t0, 3)
    write_rejects(os.path.join(out_dir, "rejects.parquet"), rejects, [s.name for s in steps])
    return write_stats(os.path.join(out_dir, "stats.json"), steps, engine=engine,
                       config=cfg.to_dict(), inputs=build_jobs_inputs(cfg),
                       timings=timings, resume=resumed)


def build_jobs_inputs(cfg) -> list[str]:
    from pipeline.sources import WarcSource

    return WarcSource.from_config(cfg.input).parts()
