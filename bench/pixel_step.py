"""Pixel-BERT pre-training step: the CNN once per distinct image (this code) against once per
row (before: 3B joint rows + ITC's B, all copies of the B images), side by side in one process.

    nice -n 10 env OMP_NUM_THREADS=1 python bench/pixel_step.py
    nice -n 10 env OMP_NUM_THREADS=1 python bench/pixel_step.py --against /work/main

configs/imagebert.yaml with ``model.visual=pixels`` (EfficientNet-lite0, random init, at
``--size`` 224), a hidden 128 x 2 Transformer, ITM with both negatives and ITC on, batch
``--batch`` of random images and captions; a step is forward + backward + both optimisers'
step. "old" is the per-row layout (an image per row, as main's collator stacked it) through
``model.share_cnn = False`` (every row's own copy through the CNN, ITC's again: main's
computation); "new" is the collator's layout (each image once + ``image_rows``). After one
warm-up step each, ``--pairs`` pairs of steps alternate (old first in even pairs, new first in
odd ones); prints each pair's times and the median of new / old.

First it checks one batch: losses (bit-identical or not) and the largest gradient difference
of the new path against the reference, and with ``--against CHECKOUT`` against that checkout's
own code run in a process of its own on the per-row batch (same weights, same seed).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)  # this checkout's model/, not an installed one

# Run by --against inside the other checkout (its own model/): the losses and gradients of one
# forward + backward of the per-row batch with the given weights and seed.
_OTHER = r"""
import sys, torch
sys.path.insert(0, '.')
from model.config import from_dict
from model.pretrain import ImageBERT
d = torch.load(sys.argv[1], weights_only=False)
model = ImageBERT(from_dict(d['config'])).train()
model.load_state_dict(d['state'])
torch.manual_seed(d['seed'])
out = model(d['batch'])
out['loss'].backward()
torch.save({'losses': {k: v.detach() for k, v in out.items()},
            'grads': {k: p.grad for k, p in model.named_parameters() if p.grad is not None}}, sys.argv[2])
"""


def build(args):
    from model.config import load_config
    sets = ["model.visual=pixels", "pretrain.moc_weight=0", "pretrain.mrfr_weight=0",
            "model.hidden=128", "model.layers=2", "model.heads=2", "model.intermediate=512",
            "model.init_from=null", f"model.image_size={args.size}", f"model.pixel_backbone={args.backbone}",
            f"stages.1.batch_size={args.batch}", "data.num_workers=0", *args.set]
    return load_config(os.path.join(REPO, "configs", "imagebert.yaml"), sets)


def make_batch(cfg, B: int, seed: int = 0):
    from model.data import PretrainCollator

    class Tok:  # the collator's masking needs only these
        pad, cls, sep, mask, first_word, vocab_size = 0, 101, 102, 103, 1000, cfg.model.vocab_size
    rng = np.random.default_rng(seed)
    T = cfg.text_len()
    S = cfg.model.image_size
    samples = [{"key": str(i), "ids": [101] + rng.integers(1000, 30000, T - 2).tolist() + [102],
                "image": rng.integers(0, 256, (3, S, S), dtype=np.uint8)} for i in range(B)]
    new = PretrainCollator(cfg, Tok(), seed=seed)(samples)
    old = {k: v for k, v in new.items() if k != "image_rows"}
    old["images"] = new["images"].index_select(0, new["image_rows"])  # main's per-row stack
    return old, new


def step(model, batch, seed: int):
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    out = model(batch)
    out["loss"].backward()
    return ({k: v.detach().clone() for k, v in out.items()},
            {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None})


def compare(name: str, a, b) -> dict:
    (la, ga), (lb, gb) = a, b
    same = all(torch.equal(la[k], lb[k]) for k in lb)
    loss_rel = max(float((la[k] - lb[k]).abs() / lb[k].abs().clamp(min=1e-12)) for k in lb)
    worst, worst_k = 0.0, None
    for k in gb:  # the largest difference relative to that tensor's largest gradient
        r = float((ga[k] - gb[k]).abs().max() / gb[k].abs().max().clamp(min=1e-30))
        if r > worst:
            worst, worst_k = r, k
    # The share of the registered bound used (tests: |a - b| <= 1e-4 |b| + 1e-5 max|b|).
    used = max(float(((ga[k] - gb[k]).abs() / (1e-4 * gb[k].abs() + 1e-5 * gb[k].abs().max())
                      .clamp(min=1e-38)).max()) for k in gb)
    bits = sum(torch.equal(ga[k], gb[k]) for k in gb)
    res = {"check": name, "losses_bit_identical": same, "loss_max_rel_diff": loss_rel,
           "grad_max_diff_over_max": worst, "worst_grad": worst_k, "bound_used": used,
           "grads_bit_identical": f"{bits}/{len(gb)}"}
    print(json.dumps(res), flush=True)
    return res


def check(cfg, model, old, new, against: str | None) -> list[dict]:
    model.share_cnn = True
    n = step(model, new, 5)
    model.share_cnn = False
    r = step(model, old, 5)
    out = [compare("new vs per-row reference", n, r)]
    if against:
        from model.config import to_dict
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = os.path.join(tmp, "in.pt"), os.path.join(tmp, "out.pt")
            torch.save({"config": to_dict(cfg), "state": model.state_dict(), "seed": 5, "batch": old}, src)
            subprocess.run([sys.executable, "-c", _OTHER, src, dst], cwd=against, check=True)
            d = torch.load(dst, weights_only=False)
        other = (d["losses"], d["grads"])
        out.append(compare(f"per-row reference vs {against}", r, other))
        out.append(compare(f"new vs {against}", n, other))
    model.share_cnn = True
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--backbone", default="efficientnet_lite0", choices=("efficientnet_lite0", "tiny"))
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--against", help="a checkout (e.g. /work/main) whose code the step is checked against")
    ap.add_argument("--set", action="append", default=[], help="config override KEY=VALUE")
    args = ap.parse_args()
    # Bad arguments fail before any work (tests/bench/test_bench_args.py).
    if args.pairs < 1:
        ap.error(f"--pairs must be >= 1, got {args.pairs}")
    if args.batch < 2:
        ap.error(f"--batch must be >= 2 (the ITM negatives are other pairs), got {args.batch}")
    if args.size < 32:
        ap.error(f"--size must be >= 32 (the CNN's stride), got {args.size}")
    if args.against and not os.path.isfile(os.path.join(args.against, "model", "pretrain.py")):
        ap.error(f"--against {args.against}: not a checkout (no model/pretrain.py)")
    from model.config import ConfigError
    try:
        cfg = build(args)
    except ConfigError as e:
        ap.error(f"--set: {e}")
    from model.pretrain import ImageBERT
    from model.train import build_optimizers
    torch.manual_seed(cfg.seed)
    model = ImageBERT(cfg).train()
    opts = build_optimizers(model, cfg.stage(1))
    old, new = make_batch(cfg, args.batch)
    checks = check(cfg, model, old, new, args.against)

    def timed(kind: str) -> float:
        model.share_cnn = kind == "new"
        t = time.perf_counter()
        out = model(new if kind == "new" else old)
        out["loss"].backward()
        for o, _ in opts:
            o.step()
            o.zero_grad(set_to_none=True)
        return time.perf_counter() - t

    timed("old"), timed("new")  # warm-up
    rows = []
    for i in range(args.pairs):
        order = ("old", "new") if i % 2 == 0 else ("new", "old")
        t = {k: timed(k) for k in order}
        rows.append(t)
        print(f"pair {i}: old {t['old']:.3f} s  new {t['new']:.3f} s  new/old {t['new'] / t['old']:.3f}",
              flush=True)
    ratio = statistics.median(r["new"] / r["old"] for r in rows)
    print(json.dumps({"size": args.size, "batch": args.batch, "backbone": args.backbone,
                      "threads": torch.get_num_threads(),
                      # the CNN's images a step: a copy per joint row and per ITC row, or each once
                      "images_old": len(new["image_rows"]) + (args.batch if "itc_group" in new else 0),
                      "images_new": len(new["images"]),
                      "old_median_s": statistics.median(r["old"] for r in rows),
                      "new_median_s": statistics.median(r["new"] for r in rows),
                      "median_ratio_new_over_old": ratio, "checks": checks}))


if __name__ == "__main__":
    main()
