"""`lait demo`: generate the sample web, serve its images on 127.0.0.1, build it, and report.

Everything a new user needs to see the product work on one machine with no network: the
pipeline on Beam (or Spark), the funnel, and the corpus's precision and recall against the
sample web's ground truth.
"""
from __future__ import annotations

import os

from pipeline.build import build
from pipeline.stats import format_funnel


def main(args) -> int:
    from tools import sampleweb

    web = os.path.abspath(args.web)
    base_url = f"http://127.0.0.1:{args.port}"
    print(f"[demo] generating the sample web into {web}")
    sampleweb.generate(web, seed=0, base_url=base_url)
    server = sampleweb.serve(web, host="127.0.0.1", port=args.port)
    try:
        print(f"[demo] serving it on {base_url}; building with {args.engine} into {args.out}")
        doc = build(args.config, args.out, engine=args.engine, engine_args=args.engine_args,
                    overrides={"input.warc": [os.path.join(web, "pages.warc.gz")]})
    finally:
        server.shutdown()
    print(format_funnel(doc))
    shards = os.path.join(os.path.abspath(args.out), "shards")
    quality = sampleweb.evaluate(shards, os.path.join(web, "truth.jsonl"))
    print(f"[demo] against the ground truth: precision {quality['precision']:.3f}, "
          f"recall {quality['recall']:.3f} ({quality['n_output']} samples)")
    print(f"[demo] shards: {shards}")
    from tools.report import write_report

    print(f"[demo] report: {write_report(os.path.abspath(args.out))}")
    return 0
