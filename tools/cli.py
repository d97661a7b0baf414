"""The `lait` command line."""
from __future__ import annotations

import argparse
import os
import sys

from pipeline.build import build
from pipeline.core.errors import ConfigError
from pipeline.core.stats import format_funnel, read_stats
from tools import demo, report


def _cmd_build(args) -> int:
    doc = build(args.config, args.out, engine=args.engine, engine_args=args.engine_args)
    print(format_funnel(doc))
    print(f"\nshards: {os.path.join(os.path.abspath(args.out), 'shards')}")
    return 0


def _cmd_stats(args) -> int:
    path = args.dir if args.dir.endswith(".json") else os.path.join(args.dir, "stats.json")
    print(format_funnel(read_stats(path)))
    return 0


def _cmd_report(args) -> int:
    return report.main(args)


def _cmd_demo(args) -> int:
    return demo.main(args, lait=main)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lait", description="Build a LAIT-style image-text corpus "
                                "from web crawls, and pre-train ImageBERT on it.")
    sub = p.add_subparsers(dest="command", required=True)

    b = sub.add_parser("build", help="run the pipeline (any unknown option goes to the engine)")
    b.add_argument("--config", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--engine", default="beam", choices=["beam", "spark", "local"])
    b.set_defaults(func=_cmd_build, passthrough=True)

    s = sub.add_parser("stats", help="print the filter funnel of a built corpus")
    s.add_argument("dir", help="the output directory (or its stats.json)")
    s.set_defaults(func=_cmd_stats)

    r = sub.add_parser("report", help="write DIR/report.html: funnel, drop reasons, histograms, samples")
    r.add_argument("dir", help="the output directory of a build")
    r.set_defaults(func=_cmd_report)

    d = sub.add_parser("demo", help="generate the sample web, serve it, build it with Beam")
    d.add_argument("--out", default="out/demo")
    d.add_argument("--web", default="out/sample-web")
    d.add_argument("--config", default="configs/demo.yaml")
    d.add_argument("--engine", default="beam", choices=["beam", "spark", "local"])
    d.add_argument("--port", type=int, default=8642)
    d.add_argument("--no-train", action="store_true", help="skip the trainer part of the demo")
    d.set_defaults(func=_cmd_demo)

    try:  # the trainer's commands (features, train, eval) live with the model; imported here
        # because the model needs torch, which a pipeline-only install may lack
        from model.commands import register
    except ImportError:
        pass
    else:
        register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args, extra = p.parse_known_args(argv)
    if extra and not getattr(args, "passthrough", False):
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    args.engine_args = extra
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"lait: configuration error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
