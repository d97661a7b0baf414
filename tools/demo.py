"""`lait demo`: generate the sample web, serve its images on 127.0.0.1, build it, and report.

Everything a new user needs to see the product work on one machine with no network: the
pipeline on Beam (or Spark), the funnel, the corpus's precision and recall against the sample
web's ground truth, the HTML report, and then the trainer on the shards: region features, a
few stage-1 and stage-2 steps of a tiny ImageBERT on CPU, and zero-shot retrieval R@K.
"""
from __future__ import annotations

import os

from pipeline.build import build, check_run
from pipeline.core.errors import UsageError
from pipeline.core.stats import format_funnel
from tools import sampleweb
from tools.report import write_report
from tools.sampleweb.images import ASSETS


# The checkout this module runs from: the demo's configs are found from any working directory.
CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def checkout_path(path: str) -> str:
    """``path`` as given when it exists; else, if relative, the checkout's (``lait demo`` run
    outside the checkout still finds configs/demo.yaml)."""
    if os.path.exists(path) or os.path.isabs(path):
        return path
    inside = os.path.join(CHECKOUT, path)
    return inside if os.path.exists(inside) else path


def require_checkout(config: str, train: bool) -> None:
    """The demo's configs and the sample web's artwork are in the checkout, not in the
    installed package (a worker needs neither): outside a checkout, say so in one line."""
    needed = [config, str(ASSETS)] + ([checkout_path("configs/imagebert_tiny.yaml")] if train else [])
    missing = [p for p in needed if not os.path.exists(p)]
    if missing:
        raise UsageError(f"demo: runs from a checkout of lait-builder ({missing[0]} is missing: "
                         "the installed package carries no demo configs or sample-web artwork); "
                         "run it from a clone, or use `lait build --config FILE.yaml`")


def main(args, lait) -> int:
    """``lait`` is the CLI's entry point (``tools.cli.main``, which calls this): the trainer
    part runs its commands exactly as a user types them."""
    require_checkout(checkout_path(args.config), train=not args.no_train)
    web = os.path.abspath(args.web)
    warcs = {"input.warc": [os.path.join(web, "pages.warc.gz")]}
    # A bad config, engine option or --out fails now, not after the sample web is generated.
    check_run(checkout_path(args.config), args.out, args.engine, args.engine_args, warcs)
    base_url = f"http://127.0.0.1:{args.port}"
    # The port is taken first, so that a busy one fails at once, before minutes of generating.
    os.makedirs(web, exist_ok=True)
    try:
        server = sampleweb.serve(web, host="127.0.0.1", port=args.port)
    except OSError as exc:
        raise UsageError(f"demo: cannot serve the sample web on 127.0.0.1:{args.port} "
                         f"({exc.strerror or exc}); choose another with --port") from None
    try:
        print(f"[demo] generating the sample web into {web}")
        sampleweb.generate(web, seed=0, base_url=base_url)
        print(f"[demo] serving it on {base_url}; building with {args.engine} into {args.out}")
        doc = build(checkout_path(args.config), args.out, engine=args.engine, engine_args=args.engine_args,
                    overrides=warcs)
    finally:
        server.shutdown()
        server.server_close()
    print(format_funnel(doc))
    shards = os.path.join(os.path.abspath(args.out), "shards")
    quality = sampleweb.evaluate(shards, os.path.join(web, "truth.jsonl"))
    print(f"[demo] against the ground truth: precision {quality['precision']:.3f}, "
          f"recall {quality['recall']:.3f} ({quality['n_output']} samples)")
    print(f"[demo] shards: {shards}")
    print(f"[demo] report: {write_report(os.path.abspath(args.out))}")
    if args.no_train:
        return 0
    return train_demo(os.path.abspath(args.out), lait)


def train_demo(out: str, lait) -> int:
    """The trainer commands on the demo's shards, exactly as a user types them."""
    feats = os.path.join(out, "features")
    shards = os.path.join(feats, "shards")
    common = ["--config", checkout_path("configs/imagebert_tiny.yaml"), "--set", f"out_dir={out}/imagebert"]
    steps = [
        ["features", out, feats, "--grid", "4"],
        ["train", *common, "--stage", "1", "--set", f"stages.1.shards={shards}"],
        ["train", *common, "--stage", "2", "--set", f"stages.2.shards={shards}"],
        ["eval", *common, "--set", f"retrieval.eval_shards={shards}"],
    ]
    for argv in steps:
        print(f"[demo] lait {' '.join(argv)}")
        rc = lait(argv)
        if rc:
            return rc
    return 0
