"""Zero-shot retrieval R@K split by whether a test query's concepts were in a narrow stage-2 set.

The fifth pass of issue 21 (docs/trainer.md, "A clean set narrower than the web") trains on a
clean set that holds only half of the colour x shape pairs (`narrow_pairs`), while the test
sets hold all of them. This scores a checkpoint exactly as `lait ablate` / `lait eval` do (the
ITM logit over all N x N pairs of one seeded draw; candidates are always all N) and then
reports R@K over the queries whose every object is a seen pair and over the others, both ways
(a t2i query is a caption, classed by its own image's objects).

    python bench/seen_unseen.py --config configs/imagebert_synth.yaml --set data.vocab=out/synth/vocab.txt \
        --test out/synth/val_feat/shards RUN/stage2/final RUN2/stage1/final ...
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import torch
import webdataset as wds

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from model.config import ConfigError, load_config  # noqa: E402
from model.data import list_shards, read_samples, tokenizer_for  # noqa: E402
from model.pretrain import ImageBERT  # noqa: E402
from model.retrieval import hits_at_k, score_matrix  # noqa: E402
from model.synth_retrieval import NARROW_SEED, narrow_pairs, seen  # noqa: E402
from model.train import load_checkpoint  # noqa: E402


def objects_by_key(spec: str) -> dict:
    """key -> the scene's objects, from the .json every benchmark sample carries."""
    out = {}
    for s in wds.WebDataset(list_shards(spec), shardshuffle=False, nodesplitter=None,
                            workersplitter=None, empty_check=False):
        meta = json.loads(s["json"]) if "json" in s else {}
        if "objects" in meta:   # other shards' samples simply have no class
            out[s["__key__"]] = [tuple(o) for o in meta["objects"]]
    return out


def split_recall(S: torch.Tensor, captions: list[str], groups: list[bool], ks=(1, 5, 10)) -> dict:
    """R@K both ways over all queries and over each group (True = seen, False = unseen)."""
    g = torch.tensor(groups)
    out = {"n": len(captions), "n_seen": int(g.sum()), "n_unseen": int((~g).sum())}
    for (d, k), hit in hits_at_k(S, captions, ks).items():
        h = hit.float()
        out[f"{d}_R@{k}"] = float(h.mean())
        out[f"{d}_R@{k}_seen"] = float(h[g].mean()) if g.any() else None
        out[f"{d}_R@{k}_unseen"] = float(h[~g].mean()) if (~g).any() else None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("--config", required=True)
    ap.add_argument("--set", action="append", default=[], help="config override key=value")
    ap.add_argument("--test", required=True, help="test shards")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0, help="draw seed (lait ablate's: 0)")
    ap.add_argument("--pairs-seed", type=int, default=NARROW_SEED)
    a = ap.parse_args(argv)
    # bad arguments and a missing config, vocab or file: one line and exit 2, no traceback
    if a.n < 1:
        ap.error(f"--n must be at least 1: got {a.n}")
    missing = [p for p in (a.test, *a.checkpoints) if not os.path.exists(p)]
    if missing:
        ap.error(f"not found: {', '.join(missing)}")
    try:
        cfg = load_config(a.config, a.set)
    except ConfigError as e:
        ap.error(str(e))
    tok = tokenizer_for(cfg)
    samples = read_samples(a.test, cfg, tok, sample=a.n, seed=a.seed)
    objs = objects_by_key(a.test)
    allowed = narrow_pairs(a.pairs_seed)
    groups = [seen(objs[s["key"]], allowed) for s in samples]
    captions = [tok.decode(s["ids"]) for s in samples]
    dev = torch.device("cpu")
    for ck in a.checkpoints:
        model = ImageBERT(cfg).to(dev)
        load_checkpoint(ck, model)
        S = score_matrix(model, samples, cfg, tok, dev)
        print(json.dumps({"checkpoint": ck, **split_recall(S, captions, groups)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
