"""The sample web: a small synthetic website built from real, freely licensed photos and clip
art, with ground truth, for the demo and the end-to-end tests.

- :func:`generate` writes ``pages.warc.gz``, the pages, ``images/``, ``truth.jsonl`` and
  ``site.json`` into a folder, deterministically from a seed;
- :func:`serve` serves that folder over HTTP (the pipeline fetches the images from it);
- :func:`evaluate` scores a pipeline's parquet shards against the ground truth;
- :func:`good_pairs` / :func:`labelled_pairs` give labelled (image, text) pairs.

Command line: ``python -m tools.sampleweb generate|serve|evaluate``.
"""
from .evaluate import evaluate, good_pairs, labelled_pairs
from .generate import DEFAULT_BASE_URL, generate
from .server import serve

__all__ = ["generate", "serve", "evaluate", "good_pairs", "labelled_pairs", "DEFAULT_BASE_URL"]
