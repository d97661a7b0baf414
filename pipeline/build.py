"""`lait build`: run the plan on an engine, then write stats.json beside the shards."""
from __future__ import annotations

import os
import time

from pipeline import config as config_mod
from pipeline.plan import build_plan
from pipeline.rejects import write_rejects
from pipeline.stats import write_stats

ENGINES = ("beam", "spark", "local")


def build(config_path: str, out_dir: str, engine: str = "beam", engine_args: list[str] | None = None,
          overrides: dict | None = None, spark=None) -> dict:
    """Builds the corpus into ``out_dir``; returns the stats document."""
    if engine not in ENGINES:
        raise config_mod.ConfigError(f"--engine must be one of {ENGINES}, got {engine!r}")
    cfg = config_mod.load(config_path, overrides)
    out_dir = os.path.abspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    plan = build_plan(cfg, out_dir)
    if not plan.parts:
        raise config_mod.ConfigError(f"input.warc: no file matches {cfg.input.warc}")
    t0 = time.time()
    if engine == "beam":
        from pipeline import beam_driver

        summary = beam_driver.run(plan, engine_args)
    elif engine == "spark":
        from pipeline import spark_driver

        master = None
        args = list(engine_args or [])
        if "--master" in args:
            master = args[args.index("--master") + 1]
        summary = spark_driver.run(plan, spark or spark_driver.session(master))
    else:
        from pipeline.executor import run_local

        summary = run_local(plan)
    elapsed = time.time() - t0
    write_rejects(os.path.join(out_dir, "rejects.parquet"), summary.rejects, plan.step_names)
    return write_stats(os.path.join(out_dir, "stats.json"), summary.steps, engine=engine,
                       config=cfg.to_dict(), parts=plan.parts,
                       timings={"wall_s": round(elapsed, 3)})
