"""The "ours" side of bench/fetch.py: an img2dataset-style URL list -> webdataset shards with
the pipeline's own stages (ImageFetcher, ImageSize, ImageDecode, ImagePairs, ShardWriter)
on Spark ``local[P]``: P Python worker processes, each fetching with a thread pool.

    python -m bench.fetch_job --urls urls.txt --out DIR [--processes 2] [--threads 32]

Prints one JSON line: samples written and the step counts.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from pipeline.core.records import Candidate
from pipeline.core.stage import Keep, Source


class UrlList(Source):
    """One candidate per line of a URL file; a part is a range of lines."""

    name = "read"

    def __init__(self, path: str, part_size: int = 250):
        self.path = path
        self.part_size = part_size

    def parts(self) -> list[str]:
        with open(self.path, encoding="utf-8") as f:
            n = sum(1 for line in f if line.strip())
        return [f"{i}:{min(n, i + self.part_size)}" for i in range(0, n, self.part_size)]

    def read(self, part: str):
        start, end = (int(x) for x in part.split(":"))
        with open(self.path, encoding="utf-8") as f:
            urls = [line.strip() for line in f if line.strip()][start:end]
        for i, url in enumerate(urls, start):
            text = f"benchmark image number {i}"
            yield Keep((Candidate(page_url="", image_url=url, text_source="alt", text=text,
                                  raw_text=text, img_index=i),))


def plan_for(urls: str, out: str, threads: int, num_shards: int):
    from filters.image_decode import ImageDecode
    from filters.image_size import ImageSize
    from pipeline.steps.fetch import ImageFetcher
    from pipeline.core.plan import Plan, Step
    from pipeline.steps.write import ShardWriter
    from scoring.pairs import ImagePairs

    src = UrlList(urls)
    steps = [
        Step("source", src),
        Step("group", ImageFetcher(timeout_s=10, concurrency=threads, retries=0,
                                   allow_networks=["127.0.0.1/32"])),
        Step("map", ImageSize(1, 1, 100_000_000)),
        Step("map", ImageDecode(512, 90)),  # longest side 512 = keep_ratio_largest
        Step("map", ImagePairs()),
        Step("group", ShardWriter(out, num_shards)),
    ]
    return Plan(steps, parts=src.parts())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--urls", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--threads", type=int, default=32)
    ap.add_argument("--shards", type=int, default=2)
    args = ap.parse_args(argv)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from bench.fetch_job import plan_for as plan  # by module name: workers unpickle it
    from pipeline.engines import spark as spark_engine

    spark = spark_engine.session(f"local[{args.processes}]", app_name="lait-bench-fetch",
                                 conf={"spark.ui.enabled": "false",
                                       "spark.default.parallelism": str(args.processes)})
    summary = spark_engine.run(plan(args.urls, os.path.abspath(args.out), args.threads,
                                    args.shards), spark)
    spark.stop()
    steps = [s.to_dict() for s in summary.steps]
    print(json.dumps({"written": steps[-1]["in"], "steps": steps}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
