"""Score checkpoints on fresh held-out sets in blocks, and compare two settings with paired,
per-query statistics (issue 21, seventh pass: docs/trainer.md).

A held-out set written by `python -m model.synth_retrieval OUT --heldout NAME:N:SEED` holds one
shard per block of 200 images. Each block is scored exactly as `lait ablate` scores a 200-image
test set (`read_samples(block, sample=200, seed=0)`: the whole block in shard order; the ITM
logit over all 200 x 200 pairs; correct = the same caption text), so R@K and the
duplicate-aware chance are those of val / test / test2, and K blocks give K x 200 queries per
checkpoint. Every query's hits are kept, with its seen / unseen class (`narrow_pairs`), so
the summary can pair the settings query by query.

    python bench/heldout_blocks.py score --config configs/imagebert_synth.yaml \\
        --set data.vocab=out/synth/vocab.txt --heldout test3=out/synth/test3_feat/shards \\
        --out hits.jsonl CKPT ...
    python bench/heldout_blocks.py summary hits.jsonl --setting single=CK1,CK2,CK3 \\
        --setting multi=CK4,CK5,CK6 --compare multi,single
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KS = (1, 5, 10)
DIRS = ("i2t", "t2i")


def score(cfg, checkpoints: list[str], sets: dict, out: str, block: int = 200, seed: int = 0,
          log=print) -> None:
    """Append one record per (checkpoint, set, block) to `out`: per-query hits at 1/5/10 both
    ways, the seen flags and the block's chance. Records already in `out` are not redone."""
    import torch
    from bench.seen_unseen import objects_by_key
    from model.data import list_shards, read_samples, tokenizer_for
    from model.pretrain import ImageBERT
    from model.retrieval import chance_at_k, hits_at_k, score_matrix
    from model.synth_retrieval import NARROW_SEED, narrow_pairs, seen
    from model.train import load_checkpoint
    done = set()
    if os.path.exists(out):
        done = {(r["checkpoint"], r["set"], r["block"]) for r in map(json.loads, open(out))}
    tok, dev, allowed = tokenizer_for(cfg), torch.device("cpu"), narrow_pairs(NARROW_SEED)
    models = {}
    for ck in checkpoints:
        models[ck] = ImageBERT(cfg).to(dev)
        load_checkpoint(ck, models[ck])
    with open(out, "a") as f:
        for name, spec in sets.items():
            for b, shard in enumerate(list_shards(spec)):
                todo = [ck for ck in checkpoints if (ck, name, b) not in done]
                if not todo:
                    continue
                samples = read_samples(shard, cfg, tok, sample=block, seed=seed)
                objs = objects_by_key(shard)
                # -1: a sample without the benchmark's objects (no seen / unseen class)
                flags = [int(seen(objs[s["key"]], allowed)) if s["key"] in objs else -1 for s in samples]
                caps = [tok.decode(s["ids"]) for s in samples]
                chance = chance_at_k(caps, KS)
                for ck in todo:
                    hits = hits_at_k(score_matrix(models[ck], samples, cfg, tok, dev), caps, KS)
                    rec = {"checkpoint": ck, "set": name, "block": b, "shard": shard, "n": len(samples),
                           "distinct_captions": len(set(caps)), **chance, "seen": flags,
                           **{f"{d}_{k}": [int(x) for x in hits[d, k]] for d, k in hits}}
                    f.write(json.dumps(rec) + "\n")
                    f.flush()
                    log(f"{name} block {b} {ck}: i2t R@1 {np.mean(rec['i2t_1']):.3f} "
                        f"t2i R@1 {np.mean(rec['t2i_1']):.3f}")


def hits_matrix(records: list[dict], checkpoints: list[str], key: str, sets=None) -> np.ndarray:
    """[checkpoint, query] 0/1 for hits `key` (e.g. 'i2t_1', or 'seen'), queries ordered by
    (set, block, index); every checkpoint must have every (set, block) the first one has."""
    by = {(r["checkpoint"], r["set"], r["block"]): r for r in records if sets is None or r["set"] in sets}
    blocks = sorted({(s, b) for c, s, b in by if c == checkpoints[0]})
    missing = [(c, s, b) for c in checkpoints for s, b in blocks if (c, s, b) not in by]
    if missing:
        raise ValueError(f"not scored: {missing[:3]}{' ...' if len(missing) > 3 else ''}")
    return np.array([[x for s, b in blocks for x in by[c, s, b][key]] for c in checkpoints], dtype=np.int8)


def paired_bootstrap(a: np.ndarray, b: np.ndarray, reps: int = 10000, seed: int = 0,
                     level: float = 0.95) -> dict:
    """a, b: [seeds, queries] hits of two settings on the same queries. The pooled mean
    difference (mean over seeds and queries of a minus b), each seed's paired difference, and
    a percentile interval from resampling queries (the same resample for every seed and both
    settings, so the pairing is kept; seed-to-seed variation is in the per-seed rows, not in
    the interval)."""
    d = a.mean(0) - b.mean(0)                      # per query, averaged over seeds
    rng = np.random.default_rng(seed)
    n = len(d)
    boot = np.empty(reps)
    for i in range(0, reps, 1000):                 # chunks keep memory at 1000 x n
        m = min(1000, reps - i)
        boot[i:i + m] = d[rng.integers(0, n, (m, n))].mean(1)
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return {"diff": float(d.mean()), "per_seed": [float(x) for x in (a - b).mean(1)],
            "lo": float(lo), "hi": float(hi), "n_queries": n,
            "share_boot_ge0": float((boot >= 0).mean())}


def summary(records: list[dict], settings: dict, compare=None, sets=None) -> dict:
    """Per setting and direction: R@1/5/10 (mean over seeds of the pooled queries), R@1 per
    seed, spread (max / min), the pooled chance, worst seed over chance, seen / unseen R@1;
    and for `compare` = (a, b) the paired differences of R@1 with their bootstrap interval."""
    rs = [r for r in records if sets is None or r["set"] in sets]
    first = next(iter(settings.values()))[0]
    mine = [r for r in rs if r["checkpoint"] == first]
    chance = {k: statistics.mean(r[f"chance_R@{k}"] for r in mine) for k in KS}
    out = {"sets": sorted({r["set"] for r in mine}), "blocks": len(mine),
           "queries": sum(r["n"] for r in mine), "chance": chance, "settings": {}}
    for name, cks in settings.items():
        cls = hits_matrix(rs, cks, "seen")[0]
        seen, unseen = cls == 1, cls == 0
        row = {}
        for d in DIRS:
            h = {k: hits_matrix(rs, cks, f"{d}_{k}") for k in KS}
            r1 = h[1].mean(1)
            row[d] = {**{f"R@{k}": float(h[k].mean()) for k in KS}, "R@1_seeds": [float(x) for x in r1],
                      "spread": float(r1.max() / r1.min()) if r1.min() > 0 else float("inf"),
                      "worst_over_chance": float(r1.min() / chance[1]),
                      "R@1_seen": float(h[1][:, seen].mean()) if seen.any() else None,
                      "R@1_unseen": float(h[1][:, unseen].mean()) if unseen.any() else None,
                      "n_seen": int(seen.sum()), "n_unseen": int(unseen.sum())}
        out["settings"][name] = row
    if compare:
        a, b = compare
        out["compare"] = {d: paired_bootstrap(hits_matrix(rs, settings[a], f"{d}_1"),
                                              hits_matrix(rs, settings[b], f"{d}_1")) for d in DIRS}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sc = sub.add_parser("score")
    sc.add_argument("checkpoints", nargs="+")
    sc.add_argument("--config", required=True)
    sc.add_argument("--set", action="append", default=[], help="config override key=value")
    sc.add_argument("--heldout", action="append", required=True, metavar="NAME=SHARDS")
    sc.add_argument("--out", required=True)
    sc.add_argument("--block", type=int, default=200)
    su = sub.add_parser("summary")
    su.add_argument("hits")
    su.add_argument("--setting", action="append", required=True, metavar="NAME=CK1,CK2,...")
    su.add_argument("--compare", help="A,B: paired differences A - B")
    su.add_argument("--sets", help="only these sets (comma-separated); default all")
    a = ap.parse_args(argv)
    if a.cmd == "score":
        from model.config import ConfigError, load_config
        sets = dict(h.split("=", 1) for h in a.heldout if "=" in h)
        if len(sets) != len(a.heldout):
            ap.error("--heldout wants NAME=SHARDS")
        missing = [p for p in (*sets.values(), *a.checkpoints) if not os.path.exists(p)]
        if missing:
            ap.error(f"not found: {', '.join(missing)}")
        try:
            cfg = load_config(a.config, a.set)
        except ConfigError as e:
            ap.error(str(e))
        score(cfg, a.checkpoints, sets, a.out, a.block)
        return 0
    settings = {k: v.split(",") for k, v in (s.split("=", 1) for s in a.setting)}
    compare = tuple(a.compare.split(",")) if a.compare else None
    if compare and (len(compare) != 2 or not set(compare) <= set(settings)):
        ap.error(f"--compare wants two of: {', '.join(settings)}")
    records = [json.loads(line) for line in open(a.hits)]
    print(json.dumps(summary(records, settings, compare, a.sets.split(",") if a.sets else None), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
