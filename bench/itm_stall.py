"""Why does ITM sit at its 1:2 prior? Instrumented pre-training on the synthetic benchmark.

Every `--every` steps, on the training batch about to be used: each task's loss, the norm of
each task's (weighted) gradient on the shared encoder (so the tasks' pulls compare), the total
gradient norm before clipping, and the ITM logits' mean over positives / negatives, their
spread and the AUC. One JSON line per record to OUT.jsonl.

    python -m model.synth_retrieval out/synth
    python bench/itm_stall.py out/synth/base.jsonl --steps 400
    python bench/itm_stall.py out/synth/itc.jsonl --steps 400 --set pretrain.itc_weight=1.0

docs/trainer.md gives what these runs measured.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from model.config import ConfigError, load_config  # noqa: E402
from model.data import tokenizer_for  # noqa: E402
from model.stream import make_loader  # noqa: E402
from model.monitor import itm_stats  # noqa: E402
from model.pretrain import ImageBERT  # noqa: E402
from model.train import build_optimizers, lr_at  # noqa: E402

TASKS = ("mlm", "moc", "mrfr", "itm", "itc")


def run(cfg, out: str, steps: int, every: int, stage: int = 2) -> None:
    s = cfg.stage(stage)
    torch.manual_seed(cfg.seed)
    model = ImageBERT(cfg)
    if cfg.model.init_from:
        model.init_pretrained()
    opt, _ = build_optimizers(model, s)[0]
    tok = tokenizer_for(cfg)
    batches = iter(make_loader(cfg, s.shards, s.batch_size, tok, seed=cfg.seed))
    shared = [p for n, p in model.named_parameters() if n.startswith("encoder.")]
    t0 = time.time()
    with open(out, "w") as f:
        for step in range(steps):
            for g in opt.param_groups:
                g["lr"] = lr_at(step, s)
            batch = next(batches)
            o = model(batch)
            rec = None
            if step % every == 0:
                rec = {"step": step}
                for k in TASKS:
                    if k in o:
                        w = getattr(cfg.pretrain, k + "_weight")
                        grads = torch.autograd.grad(w * o[k], shared, retain_graph=True, allow_unused=True)
                        rec["grad_" + k] = math.sqrt(sum(float((x ** 2).sum()) for x in grads if x is not None))
                        rec[k] = float(o[k].detach())
                with torch.no_grad():
                    h, _ = model.encode(batch)
                    logit = model.heads["itm"](model.pooled(h))
                rec.update(itm_stats(logit, batch["itm_labels"]))
                rec["itm_logit_std"] = float(logit.std())
            o["loss"].backward()
            total = torch.nn.utils.clip_grad_norm_(model.parameters(), s.grad_clip or float("inf"))
            opt.step()
            opt.zero_grad(set_to_none=True)
            if rec:
                rec.update(grad_total=float(total), seconds=round(time.time() - t0, 1))
                f.write(json.dumps(rec) + "\n")
                f.flush()
                print(" ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()),
                      flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="JSON lines written here")
    ap.add_argument("--config", default="configs/imagebert_synth.yaml")
    ap.add_argument("--stage", type=int, default=2, help="whose shards and schedule (default: 2, the clean set)")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--every", type=int, default=25)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    a = ap.parse_args(argv)
    # bad arguments and a missing config, vocab or stage: one line and exit 2, no traceback
    for name in ("steps", "every"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1: got {getattr(a, name)}")
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    try:
        # The diagnosis runs measured the paper's four tasks unless told otherwise.
        cfg = load_config(a.config, ["pretrain.itc_weight=0.0", *a.set])
        cfg.stage(a.stage)
    except ConfigError as e:
        ap.error(str(e))
    run(cfg, a.out, a.steps, a.every, a.stage)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
