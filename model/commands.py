"""The trainer's `lait` subcommands: features, train, finetune, eval.

`tools/cli.py` calls `register(subparsers)`; `python -m model.commands ...` runs them alone.
Every handler takes the parsed args and returns an exit code.  The trainer's modules (torch,
webdataset) are imported inside the handlers: building the `lait` parser, and every pipeline
command, must not load torch.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys

import numpy as np

from pipeline.core.errors import UsageError

from .config import ConfigError, load_config

log = logging.getLogger("lait.model")


def _config(args):
    return load_config(args.config, args.set)


def cmd_features(args) -> int:
    from .features import GridExtractor, OnnxDetector, run_features
    if args.onnx:
        ex = OnnxDetector(args.onnx, size=args.onnx_size, min_score=args.min_score,
                          min_regions=args.min_regions, max_regions=args.regions or 100)
    else:
        ex = GridExtractor(grid=args.grid, regions=args.regions, device=args.device)
    dtype = np.float16 if args.dtype == "float16" else np.float32
    stats = run_features(args.input, args.output, ex, batch_size=args.batch_size, dtype=dtype,
                         progress=not args.quiet)
    print(json.dumps(stats))
    if not stats["samples"] and not stats["skipped_done"]:
        raise UsageError(f"features: the shards of {args.input} hold no samples "
                         f"(an empty run? `lait stats {args.input}` shows where they dropped)")
    return 0


def cmd_train(args) -> int:
    from .train import train
    cfg = _config(args)
    rec = train(cfg, args.stage, progress=not args.quiet)
    print(json.dumps(rec))
    return 0


def cmd_finetune(args) -> int:
    from .retrieval import finetune
    from .train import stage_dir
    cfg = _config(args)
    init = args.init or os.path.join(stage_dir(cfg, max(cfg.stages)), "final")
    print(json.dumps({"checkpoint": finetune(cfg, init, progress=not args.quiet)}))
    return 0


def cmd_eval(args) -> int:
    from .retrieval import evaluate
    from .train import stage_dir
    cfg = _config(args)
    ckpt = args.checkpoint or os.path.join(stage_dir(cfg, max(cfg.stages)), "final")
    res = evaluate(cfg, ckpt, args.shards, args.n, args.device)
    print(json.dumps(res))
    return 0


def _common(p: argparse.ArgumentParser):
    p.add_argument("--config", required=True, help="YAML config, e.g. configs/imagebert.yaml")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set stages.1.steps=100 (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def register(subparsers) -> None:
    """Add features / train / finetune / eval to an argparse subparsers object."""
    p = subparsers.add_parser("features", help="copy shards adding <key>.regions.npz (region features)")
    p.add_argument("input", help="dataset folder (with shards/) or a folder of .tar shards")
    p.add_argument("output", help="output dataset folder (shards/ is created inside)")
    p.add_argument("--grid", type=int, default=10, help="EfficientNet-lite0 grid: g x g regions (default 10)")
    p.add_argument("--regions", type=int, default=None, help="keep the N most confident regions")
    p.add_argument("--onnx", default=None, help="ONNX detector with outputs boxes, labels, scores, features")
    p.add_argument("--onnx-size", type=int, default=600, help="detector input size (square)")
    p.add_argument("--min-score", type=float, default=0.5)
    p.add_argument("--min-regions", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--dtype", choices=["float16", "float32"], default="float16")
    p.add_argument("--device", default=None, help="cpu / cuda (default: cuda when present)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_features)

    p = subparsers.add_parser("train", help="ImageBERT pre-training, one stage (torchrun for DDP)")
    _common(p)
    p.add_argument("--stage", type=int, required=True, help="1, then 2 (starts from stage 1's final)")
    p.set_defaults(func=cmd_train)

    p = subparsers.add_parser("finetune", help="image-text retrieval fine-tuning")
    _common(p)
    p.add_argument("--init", default=None, help="checkpoint folder (default: the last stage's final)")
    p.set_defaults(func=cmd_finetune)

    p = subparsers.add_parser("eval", help="retrieval R@1/5/10, image->text and text->image")
    _common(p)
    p.add_argument("--checkpoint", default=None, help="checkpoint folder (default: the last stage's final)")
    p.add_argument("--shards", default=None, help="evaluation shards (default: retrieval.eval_shards)")
    p.add_argument("--n", type=int, default=None, help="number of test images (default: retrieval.eval_size)")
    p.add_argument("--device", default=None)
    p.set_defaults(func=cmd_eval)


def main(argv=None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    ap = argparse.ArgumentParser(prog="python -m model.commands")
    register(ap.add_subparsers(dest="command", required=True))
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, UsageError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
