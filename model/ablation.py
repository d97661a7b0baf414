"""`lait ablate`: does multi-stage pre-training pay off? Same model, same total steps, three
schedules, several seeds, zero-shot R@1/5/10 both ways on one fixed random draw of the test set:

  single : one stage on stage 2's data only (all the steps),
  multi  : stage 1 on the stage-1 set (the large noisy one), then stage 2 on stage 2's data
           (ImageBERT's recipe; the config's stages 1 and 2 give each its schedule),
  mixed  : one stage on both sets at once (what ImageBERT found worse).

The config's `stages.1` / `stages.2` give the schedules (lr, warmup, decay, batch); the tool
sets shards, steps and seed. Runs go under OUT/<setting>/seed<k>/; a finished run's result is
kept in OUT/results.jsonl and not redone. `--jobs 2` runs two trainings at once (one torch
thread each), for small CPUs.
"""
from __future__ import annotations

import concurrent.futures as cf
import copy
import json
import logging
import multiprocessing as mp
import os
import statistics

from pipeline.core.errors import RunFailed

from .config import ConfigError, from_dict, load_config, to_dict

log = logging.getLogger(__name__)
SETTINGS = ("single", "multi", "mixed")


def plan(base: dict, setting: str, stage1: str, stage2: str, steps: int, stage1_steps: int,
         seed: int, out: str) -> dict:
    """The raw config of one run."""
    raw = copy.deepcopy(base)
    s1, s2 = raw["stages"].get(1, {}), raw["stages"].get(2, raw["stages"].get(1, {}))
    if setting == "multi":
        raw["stages"] = {1: {**s1, "shards": stage1, "steps": stage1_steps, "init_from": None},
                         2: {**s2, "shards": stage2, "steps": steps - stage1_steps, "init_from": None}}
    elif setting in ("single", "mixed"):
        shards = stage2 if setting == "single" else f"{stage1},{stage2}"
        # one stage: nothing to carry an optimiser state over from
        raw["stages"] = {1: {**s2, "shards": shards, "steps": steps, "init_from": None, "carry_optimizer": False}}
    else:
        raise ConfigError(f"unknown setting {setting!r} (have: {', '.join(SETTINGS)})")
    raw["seed"] = seed
    raw["out_dir"] = os.path.join(out, setting, f"seed{seed}")
    return raw


def run_one(raw: dict, tests: dict, eval_n: int, eval_seed: int, threads: int) -> dict:
    """Train every stage of `raw`, then score the last stage on each test set."""
    import torch
    torch.set_num_threads(threads)
    from .retrieval import evaluate
    from .train import latest_checkpoint, train
    cfg = from_dict(raw)
    for n in sorted(cfg.stages):
        train(cfg, n, progress=False)
    ckpt = latest_checkpoint(cfg)
    res = {"out_dir": cfg.out_dir, "seed": cfg.seed, "checkpoint": ckpt}
    for name, shards in tests.items():
        r = evaluate(cfg, ckpt, shards, eval_n, device="cpu" if not torch.cuda.is_available() else None,
                     seed=eval_seed)
        res[name] = {k: v for k, v in r.items() if k.startswith(("i2t", "t2i", "chance")) or k in ("n", "distinct_captions")}
    return res


def summarise(results: list[dict], tests: list[str]) -> str:
    """A table: per setting and test set, R@1/5/10 both ways (mean over seeds, and each seed's
    R@1), the chance level, and the seed spread of R@1 (max / min)."""
    lines = []
    for t in tests:
        rs = [r for r in results if t in r]
        if not rs:
            continue
        ch = rs[0][t]
        lines.append(f"\n{t}: n={ch['n']} ({ch['distinct_captions']} distinct captions), chance "
                     f"R@1 {ch['chance_R@1']:.4f}  R@5 {ch['chance_R@5']:.4f}  R@10 {ch['chance_R@10']:.4f}")
        lines.append(f"{'setting':8} {'dir':4} {'R@1':>6} {'R@5':>6} {'R@10':>6}  {'R@1 per seed':28} {'spread':>6} {'min/chance':>10}")
        for setting in SETTINGS:
            mine = sorted((r for r in rs if r["setting"] == setting), key=lambda r: r["seed"])
            if not mine:
                continue
            for d in ("i2t", "t2i"):
                mean = {k: statistics.mean(r[t][f"{d}_R@{k}"] for r in mine) for k in (1, 5, 10)}
                r1 = [r[t][f"{d}_R@1"] for r in mine]
                spread = max(r1) / min(r1) if min(r1) > 0 else float("inf")
                seeds = " ".join(f"{r['seed']}:{v:.3f}" for r, v in zip(mine, r1))
                lines.append(f"{setting:8} {d:4} {mean[1]:6.3f} {mean[5]:6.3f} {mean[10]:6.3f}  {seeds:28} "
                             f"{spread:6.2f} {min(r1) / ch['chance_R@1']:10.1f}")
    return "\n".join(lines)


def ablate(config: str, stage1: str, stage2: str, tests: dict, out: str, seeds=(1, 2, 3),
           steps: int | None = None, stage1_steps: int | None = None, settings=SETTINGS,
           eval_n: int | None = None, eval_seed: int = 0, jobs: int = 1, overrides=()) -> list[dict]:
    """Run (or resume) every setting x seed; returns all results (also in OUT/results.jsonl)."""
    cfg = load_config(config, list(overrides))
    base = to_dict(cfg)
    if 1 not in cfg.stages:
        raise ConfigError(f"{config}: needs stages.1 (and stages.2 for the second stage's schedule)")
    total = steps or sum(s.steps for s in cfg.stages.values())
    n1 = stage1_steps or (cfg.stages[1].steps if 2 in cfg.stages else total // 2)
    if not 0 < n1 < total:
        raise ConfigError(f"stage-1 steps {n1} must be between 0 and the total {total}")
    eval_n = eval_n or cfg.retrieval.eval_size
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "results.jsonl")
    done = {}
    if os.path.exists(path):
        for line in open(path):
            r = json.loads(line)
            done[(r["setting"], r["seed"])] = r
    todo = []
    for setting in settings:
        for seed in seeds:
            if (setting, seed) not in done:
                todo.append((setting, seed, plan(base, setting, stage1, stage2, total, n1, seed, out)))
    for _, _, raw in todo:
        from_dict(raw)  # bad configuration fails before hours of training
    log.info("ablation: %d runs to do (%d done), %d steps each (multi: %d + %d)", len(todo), len(done),
             total, n1, total - n1)
    threads = 1 if jobs > 1 else max(1, int(os.environ.get("OMP_NUM_THREADS", "0")) or os.cpu_count() or 1)
    ctx = mp.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=ctx) as ex, open(path, "a") as f:
        futs = {ex.submit(run_one, raw, tests, eval_n, eval_seed, threads): (setting, seed)
                for setting, seed, raw in todo}
        failed = []
        for fut in cf.as_completed(futs):
            setting, seed = futs[fut]
            try:
                res = fut.result()
            except Exception as e:  # noqa: BLE001 - say so now; the other runs go on
                log.error("%s seed %d failed: %r", setting, seed, e)
                failed.append(f"{setting} seed {seed}: {e!r}")
                continue
            r = {"setting": setting, **res, "seed": seed, "steps": total, "stage1_steps": n1}
            f.write(json.dumps(r) + "\n")
            f.flush()
            done[(setting, seed)] = r
            log.info("%s seed %d: %s", setting, seed, {t: r[t]["i2t_R@1"] for t in tests})
    if failed:  # RunFailed: one line and exit 1 from `lait`, not a traceback
        raise RunFailed(f"{len(failed)} ablation run(s) failed (the others are in {path}): "
                        + "; ".join(failed) + "; the same command redoes only those")
    return [done[(s, k)] for s in settings for k in seeds if (s, k) in done]
