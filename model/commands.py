"""The trainer's `lait` subcommands: features, train, finetune, eval, ablate.

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


def check_device(name: str | None) -> str | None:
    """``--device`` as given, once torch can run on it here: else a UsageError (one line, exit
    2) instead of torch's AssertionError and traceback ("Torch not compiled with CUDA enabled")
    in the middle of the command."""
    if name is None:
        return None
    import torch
    try:
        dev = torch.device(name)
    except RuntimeError:
        raise UsageError(f"--device {name}: not a device (cpu, cuda or cuda:N)") from None
    if dev.type == "cuda":
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if not n:
            raise UsageError(f"--device {name}: torch sees no CUDA device on this machine "
                             "(use --device cpu, or leave --device out)")
        if dev.index is not None and dev.index >= n:
            raise UsageError(f"--device {name}: this machine has {n} CUDA device(s) (cuda:0..cuda:{n - 1})")
    elif dev.type != "cpu":
        raise UsageError(f"--device {name}: lait runs on cpu or cuda")
    return name


def cmd_features(args) -> int:
    from .features import GridExtractor, OnnxDetector, run_features
    check_device(args.device)
    if args.onnx:
        if not os.path.isfile(args.onnx):  # else onnxruntime's NoSuchFile traceback
            raise UsageError(f"features: --onnx {args.onnx}: no such file")
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
    from .train import latest_checkpoint
    cfg = _config(args)
    init = args.init or latest_checkpoint(cfg, "--init")
    log.info("fine-tuning from %s", init)
    print(json.dumps({"checkpoint": finetune(cfg, init, progress=not args.quiet)}))
    return 0


def cmd_eval(args) -> int:
    from .retrieval import evaluate
    from .train import latest_checkpoint
    check_device(args.device)
    cfg = _config(args)
    ckpt = args.checkpoint or latest_checkpoint(cfg)
    res = evaluate(cfg, ckpt, args.shards, args.n, args.device, args.seed)
    log.info("%s: n=%d (%d distinct captions, sampled with seed %d); R@1 i2t %.3f t2i %.3f, "
             "chance %.4f", ckpt, res["n"], res["distinct_captions"], res["sample_seed"],
             res["i2t_R@1"], res["t2i_R@1"], res["chance_R@1"])
    print(json.dumps(res))
    return 0


def cmd_ablate(args) -> int:
    from .ablation import SETTINGS, ablate, summarise
    tests = {}
    for i, t in enumerate(args.test):
        name, sep, spec = t.partition("=")
        if not sep or "/" in name:
            name, spec = ("test" if i == 0 else f"test{i + 1}"), t
        tests[name] = spec
    settings = args.settings.split(",")
    if not set(settings) <= set(SETTINGS):
        raise UsageError(f"ablate: --settings {args.settings}: each must be one of "
                         f"{','.join(SETTINGS)}")
    from .data import list_shards
    for option, spec in [("--stage1", args.stage1), ("--stage2", args.stage2)] + [
            ("--test", t) for t in tests.values()]:
        try:  # before any run: a missing folder failed every run, then a traceback
            list_shards(spec)
        except ConfigError as e:
            raise UsageError(f"ablate: {option} {spec}: {e}") from None
    res = ablate(args.config, args.stage1, args.stage2, tests, args.out, seeds=args.seeds,
                 steps=args.steps, stage1_steps=args.stage1_steps, settings=settings,
                 eval_n=args.n, eval_seed=args.eval_seed, jobs=args.jobs, overrides=args.set)
    print(summarise(res, list(tests)))
    return 0


def _int_from(low: int):
    """An argparse type: an integer >= ``low``."""
    def parse(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value
    parse.__name__ = "int"  # argparse's "invalid int value: 'x'", as for type=int
    return parse


def _probability(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be within [0, 1], got {value}")
    return value


_probability.__name__ = "float"


def _common(p: argparse.ArgumentParser):
    p.add_argument("--config", required=True, help="YAML config, e.g. configs/imagebert.yaml")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set stages.1.steps=100 (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def register(subparsers) -> None:
    """Add features / train / finetune / eval / ablate to an argparse subparsers object."""
    p = subparsers.add_parser("features", help="copy shards adding <key>.regions.npz (region features)")
    p.add_argument("input", help="dataset folder (with shards/) or a folder of .tar shards")
    p.add_argument("output", help="output dataset folder (shards/ is created inside)")
    # Ranges checked by argparse: `--grid 0` was a ZeroDivisionError traceback, and a batch
    # size or `--regions` of 0 ran as if the option were not given.
    p.add_argument("--grid", type=_int_from(1), default=10, help="EfficientNet-lite0 grid: g x g regions (default 10)")
    p.add_argument("--regions", type=_int_from(1), default=None, help="keep the N most confident regions")
    p.add_argument("--onnx", default=None, help="ONNX detector with outputs boxes, labels, scores, features")
    p.add_argument("--onnx-size", type=_int_from(1), default=600, help="detector input size (square)")
    p.add_argument("--min-score", type=_probability, default=0.5, help="detector score kept, 0..1")
    p.add_argument("--min-regions", type=_int_from(0), default=10)
    p.add_argument("--batch-size", type=_int_from(1), default=32)
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
    # Counts checked by argparse: `--n 0` ran as if it were not given, `--n -5` blamed the
    # shards ("need at least 2 usable evaluation samples"); ranking needs two pairs.
    p.add_argument("--n", type=_int_from(2), default=None, help="number of test images drawn at random "
                   "(default: retrieval.eval_size)")
    p.add_argument("--seed", type=int, default=None, help="seed of that draw (default: the config's seed)")
    p.add_argument("--device", default=None)
    p.set_defaults(func=cmd_eval)

    p = subparsers.add_parser("ablate", help="single-stage vs multi-stage vs mixed pre-training, "
                              "several seeds, zero-shot R@1/5/10 with chance")
    _common(p)
    p.add_argument("--stage1", required=True, help="stage-1 shards (the large, noisy set)")
    p.add_argument("--stage2", required=True, help="stage-2 shards (the clean set)")
    p.add_argument("--test", required=True, action="append",
                   help="test shards, optionally NAME=SHARDS (repeatable: e.g. an independent held-out set)")
    p.add_argument("--out", required=True, help="folder for the runs and results.jsonl")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--steps", type=_int_from(1), default=None, help="total steps of every setting "
                   "(default: stages.1.steps + stages.2.steps)")
    p.add_argument("--stage1-steps", type=_int_from(1), default=None, help="multi-stage: steps of stage 1 "
                   "(default: stages.1.steps)")
    p.add_argument("--settings", default="single,multi,mixed")
    p.add_argument("--n", type=_int_from(2), default=None, help="test pairs drawn (default: retrieval.eval_size)")
    p.add_argument("--eval-seed", type=int, default=0, help="seed of the test draw (the same for every run)")
    p.add_argument("--jobs", type=_int_from(1), default=1, help="runs at once (each with one torch thread when > 1)")
    p.set_defaults(func=cmd_ablate)


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
