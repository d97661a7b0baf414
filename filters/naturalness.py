"""Naturalness filter: is this a natural photograph (ImageBERT's LAIT step 2)?

A small head (logistic regression, ``filters/models/naturalness_head.onnx``, trained by
``tools/train_naturalness.py``) on the EfficientNet-lite0 embedding.  The backbone pass is
cached on the item, so the labeler that runs later reuses it instead of running it again.

    python -m filters.naturalness FILE...   # one JSON line per file: {"path", "natural"}
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import numpy as np

from filters.backbone import HEAD_FILE, Backbone, decode_pixels, make_session, square_view
from filters.batched import ImageBatchStage
from pipeline.errors import ConfigError
from pipeline.records import ImageItem

PRECISIONS = ("auto", "float", "int8")


@dataclass
class NaturalnessConfig:
    """``naturalness:`` section.  An image whose natural probability is below ``threshold``
    is dropped.  The backbone settings are shared with the labeler (one pass serves both)."""

    threshold: float = 0.5
    # "int8" (about twice as fast on one core: bench/images.py), "float", or "auto": the one
    # the shipped head was trained on (filters/models/naturalness_head.json; "int8" if unsaid).
    backbone: str = "auto"
    threads: int = 1
    batch_size: int = 16

    def check(self) -> "NaturalnessConfig":
        if not 0.0 <= self.threshold < 1.0:
            raise ConfigError(f"naturalness.threshold must be within [0, 1) (got {self.threshold!r})")
        if self.backbone not in PRECISIONS:
            raise ConfigError(f"naturalness.backbone must be one of {PRECISIONS} (got {self.backbone!r})")
        if self.threads < 1 or self.batch_size < 1:
            raise ConfigError("naturalness.threads and naturalness.batch_size must be >= 1")
        return self


class NaturalnessHead:
    """The ONNX head: embeddings [B,1280] -> natural probabilities [B]."""

    def __init__(self, path: str = HEAD_FILE, threads: int = 1):
        self.path = path
        self.threads = threads
        self._session = None

    def load(self) -> "NaturalnessHead":
        if self._session is None:
            self._session = make_session(self.path, self.threads)
        return self

    def __call__(self, embeddings: np.ndarray) -> np.ndarray:
        self.load()
        (p,) = self._session.run(["natural"], {"embedding": np.asarray(embeddings, np.float32)})
        return p

    def __getstate__(self):
        return {**self.__dict__, "_session": None}


class Naturalness:
    """Backbone + head for callers outside the pipeline (the CLI, tests, tools)."""

    def __init__(self, backbone: str = NaturalnessConfig.backbone, threads: int = 1,
                 head: str = HEAD_FILE):
        self.backbone = Backbone(backbone, threads)
        self.head = NaturalnessHead(head, threads)

    def score_pixels(self, pixels: list[np.ndarray]) -> np.ndarray:
        emb, _ = self.backbone.run([square_view(px) for px in pixels])
        return self.head(emb)

    def score_files(self, paths: list[str]) -> np.ndarray:
        pixels = []
        for p in paths:
            with open(p, "rb") as f:
                pixels.append(decode_pixels(f.read()))
        return self.score_pixels(pixels)


class NaturalnessFilter(ImageBatchStage):
    """Keeps natural photographs: sets ``item.natural``; drops ``natural_not_natural``."""

    name = "natural"

    def __init__(self, config: NaturalnessConfig | None = None):
        self.config = (config or NaturalnessConfig()).check()
        self.batch_size = self.config.batch_size
        self._backbone = Backbone(self.config.backbone, self.config.threads)
        self._head = NaturalnessHead(threads=self.config.threads)

    def setup(self) -> None:
        self._backbone.load()
        self._head.load()

    def describe(self):
        return {"threshold": self.config.threshold, "backbone": self._backbone.precision}

    def process_batch(self, items: list[ImageItem]) -> list:
        ok, results = self.split_viewable(items)
        if ok:
            outs = self._backbone.outputs([items[i] for i in ok])
            probs = self._head(np.stack([emb for emb, _ in outs]))
            for i, p in zip(ok, probs):
                items[i].natural = round(float(p), 4)
                results[i] = ([items[i]] if items[i].natural >= self.config.threshold
                              else self.drop("not_natural"))
        return results


def main(argv=None) -> int:
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python -m filters.naturalness FILE...", file=sys.stderr)
        return 2
    model = Naturalness()
    status = 0
    for path in paths:
        try:
            p = float(model.score_files([path])[0])
            print(json.dumps({"path": path, "natural": round(p, 4)}))
        except Exception as exc:  # one unreadable file does not stop the others
            print(json.dumps({"path": path, "natural": None, "error": f"{type(exc).__name__}: {exc}"}))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
