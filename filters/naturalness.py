"""Naturalness filter: is this a natural photograph (ImageBERT's LAIT step 2)?

A small head (logistic regression, ``filters/models/naturalness_head.onnx``, trained by
``tools/train_naturalness.py``) on the EfficientNet-lite0 embedding and 19 cheap statistics of
the same 224-px view (grain, flat areas, edges, saturation, colour count:
``filters/image_stats.py``; they tell a photo from a painting or a render of the same
subject).  The backbone pass is cached on the item, so the labeler that runs later reuses it
instead of running it again.

Before the backbone (~10 ms an image), a pre-check costing ~0.05 ms drops clear flat graphics
(logos, icons, clip art, charts, UI) as ``naturalness_flat_graphic``: on a 64x64 nearest-neighbour
sample of the stored pixels, a photo never has 80% of its pixels in 8 exact colours (sensor
noise, shading; a grey photo has 256 levels), flat artwork mostly does; and what is not the
most common colour (the background) must be flat too, so a small product on a white
background, a photo, is not taken for a graphic (:func:`flat_shares`).

A second opinion decides where the head is unsure (its probability within
``second_opinion`` of 0.5: about 9% of the val split's views): a second logistic-regression head
(``filters/models/naturalness_second_head.onnx``) reads the same embedding and statistics plus
open_nsfw's pooled features of the same view (a ResNet-50 trained on photos and drawings, not
ImageNet classes; docs/images.md, sixth round).  The NSFW pass it needs is cached on the item
(``ImageItem.nsfw_out``), and the NSFW step, which runs next, reuses it instead of running
the model again (``NsfwModel.outputs``), so an unsure image that is kept costs no extra pass.

    python -m filters.naturalness FILE...   # one JSON line per file: {"path", "natural"}
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import numpy as np
from PIL import Image

from filters.backbone import (HEAD_FILE, SECOND_HEAD_FILE, Backbone, as_image, decode_pixels,
                              make_session, pixels_of, square_view, view_of)
from filters.batched import ImageBatchStage
from filters.image_stats import stats_batch
from filters.nsfw import NsfwModel
from pipeline.core.errors import ConfigError
from pipeline.core.records import ImageItem

PRECISIONS = ("auto", "float", "int8")


@dataclass
class NaturalnessConfig:
    """``naturalness:`` section.  An image whose natural probability is below ``threshold``
    is dropped (0 keeps everything the head scores; the pre-check has its own switch).  The
    backbone settings are shared with the labeler (one pass serves both)."""

    threshold: float = 0.5
    """images whose natural probability is below this are dropped"""
    # "int8" (about twice as fast on one core: bench/images.py), "float", or "auto": the one
    # the shipped head was trained on (filters/models/naturalness_head.json; "int8" if unsaid).
    backbone: str = "auto"
    threads: int = 1
    """onnxruntime intra-op threads per worker"""
    batch_size: int = 16
    """images per backbone batch"""
    # The flat-graphic pre-check: dropped before the backbone if the ``flat_colors`` most
    # common exact colours of a 64x64 sample cover >= ``flat_share`` of it AND the next
    # ``flat_colors`` - 1 cover >= ``flat_rest_share`` of the pixels outside the most common
    # one.  Chosen on the train and val splits (docs/images.md): no photo of theirs comes
    # near (shares <= 0.60), nor a small photo cut-out on white; about half their graphics do.
    flat_check: bool = True
    flat_colors: int = 8
    """flat-graphic pre-check: the number of most common exact colours counted"""
    flat_share: float = 0.8
    """flat-graphic pre-check: share of the sample those colours must cover"""
    flat_rest_share: float = 0.5
    """flat-graphic pre-check: share of the rest the next colours must cover"""
    # Chosen by grouped cross-validation on the train split (docs/images.md, sixth round).
    second_opinion: float = 0.2
    """the second head (with open_nsfw's features) decides where the head's probability is within this of 0.5; 0 turns it off"""

    def check(self) -> "NaturalnessConfig":
        if not 0.0 <= self.threshold < 1.0:
            raise ConfigError(f"naturalness.threshold must be within [0, 1) (got {self.threshold!r})")
        if self.backbone not in PRECISIONS:
            raise ConfigError(f"naturalness.backbone must be one of {PRECISIONS} (got {self.backbone!r})")
        if self.threads < 1 or self.batch_size < 1:
            raise ConfigError("naturalness.threads and naturalness.batch_size must be >= 1")
        if (not 2 <= self.flat_colors <= FLAT_SIDE * FLAT_SIDE or not 0.0 < self.flat_share <= 1.0
                or not 0.0 <= self.flat_rest_share <= 1.0):
            raise ConfigError("naturalness.flat_colors must be within 2..4096, "
                              "naturalness.flat_share within (0, 1], flat_rest_share [0, 1]")
        if not 0.0 <= self.second_opinion <= 0.5:
            raise ConfigError("naturalness.second_opinion must be within [0, 0.5] "
                              f"(got {self.second_opinion!r})")
        return self


FLAT_SIDE = 64  # the pre-check's sample: every 8th pixel of a 512-px stored image
_FLAT_N = FLAT_SIDE * FLAT_SIDE


def _flat_sample(pixels) -> Image.Image:
    # Nearest sampling blends nothing, so a flat area keeps its one exact colour.
    return as_image(pixels).resize((FLAT_SIDE, FLAT_SIDE), Image.Resampling.NEAREST)


def _shares(colour_counts, colors: int) -> tuple[float, float]:
    counts = sorted((n for n, _ in colour_counts), reverse=True)
    rest = _FLAT_N - counts[0]
    return sum(counts[:colors]) / _FLAT_N, (sum(counts[1:colors]) / rest if rest else 1.0)


def flat_shares(pixels, colors: int = NaturalnessConfig.flat_colors) -> tuple[float, float]:
    """On a 64x64 nearest-neighbour sample of ``pixels`` (PIL or RGB uint8): the share of its
    ``colors`` most common exact colours (no binning: a grey photo has 256 levels), and the
    share of the pixels outside the most common colour that the next ``colors`` - 1 cover."""
    return _shares(_flat_sample(pixels).getcolors(_FLAT_N), colors)


def is_flat_graphic(pixels, config: NaturalnessConfig) -> bool:
    """The pre-check's decision on :func:`flat_shares`, cheaply.

    A sample that passes has at most ``flat_colors`` + (1 - ``flat_share``) * 4096 distinct
    colours, so counting stops past that (``getcolors`` returns None): a photo, with about
    2,000 colours, costs ~3 us instead of the ~1.3 ms a full count takes."""
    if not config.flat_check:
        return False
    bound = config.flat_colors + int((1.0 - config.flat_share) * _FLAT_N) + 1
    counts = _flat_sample(pixels).getcolors(bound)
    if counts is None:
        return False
    share, rest = _shares(counts, config.flat_colors)
    return share >= config.flat_share and rest >= config.flat_rest_share


class NaturalnessHead:
    """The ONNX head: embeddings [B,1280] (and, for a head that reads them, the views' pixel
    statistics [B,19] of ``filters/image_stats.py`` and open_nsfw's pooled features [B,1024])
    -> natural probabilities [B]."""

    def __init__(self, path: str = HEAD_FILE, threads: int = 1):
        self.path = path
        self.threads = threads
        self._session = None
        self.uses_stats = self.uses_pool = False

    def load(self) -> "NaturalnessHead":
        if self._session is None:
            self._session = make_session(self.path, self.threads)
            names = {i.name for i in self._session.get_inputs()}
            self.uses_stats, self.uses_pool = "stats" in names, "nsfw_pool" in names
        return self

    def __call__(self, embeddings: np.ndarray, views=None, stats=None, pooled=None) -> np.ndarray:
        """Probabilities for ``embeddings``; ``views`` (the same images' 224-px views) give
        the pixel statistics when the head reads them (or ``stats``, computed already)."""
        self.load()
        feeds = {"embedding": np.asarray(embeddings, np.float32)}
        if self.uses_stats:
            if stats is None and views is None:
                raise ValueError(f"{self.path} reads pixel statistics: pass the views")
            feeds["stats"] = stats_batch(views) if stats is None else stats
        if self.uses_pool:
            if pooled is None:
                raise ValueError(f"{self.path} reads open_nsfw's pooled features: pass them")
            feeds["nsfw_pool"] = np.asarray(pooled, np.float32)
        (p,) = self._session.run(["natural"], feeds)
        return p

    def __getstate__(self):
        return {**self.__dict__, "_session": None}


class SecondOpinion:
    """Where the head is unsure (``|p - 0.5| < band``), the second head's probability
    replaces its own.  The NSFW model is int8 without the JPEG round trip, as the second head
    was trained; ``pooled_of(indices)`` gives its pooled features for those images (cached
    on the items in the pipeline)."""

    def __init__(self, band: float, threads: int = 1, head: str = SECOND_HEAD_FILE):
        self.band = band
        self.head = NaturalnessHead(head, threads)
        self.nsfw = NsfwModel("int8", threads, jpeg_reencode=False)

    def load(self) -> None:
        if self.band > 0:
            self.head.load()
            self.nsfw.load()

    def __call__(self, probs, embeddings, stats, pooled_of) -> np.ndarray:
        """The head's ``probs`` with the unsure ones replaced (``stats``: the views' pixel
        statistics, computed once for both heads)."""
        probs = np.array(probs, np.float32)
        unsure = np.flatnonzero(np.abs(probs - np.float32(0.5)) < self.band)
        if len(unsure):
            probs[unsure] = self.head(embeddings[unsure], stats=stats[unsure],
                                      pooled=pooled_of(unsure))
        return probs


class Naturalness:
    """Pre-check + backbone + head for callers outside the pipeline (the CLI, tests, tools):
    scores as the filter decides, a flat graphic scoring 0.0 (``flat_check=False``: the
    head's probability for every image)."""

    def __init__(self, backbone: str = NaturalnessConfig.backbone, threads: int = 1,
                 head: str = HEAD_FILE, flat_check: bool = NaturalnessConfig.flat_check,
                 second_opinion: float = NaturalnessConfig.second_opinion,
                 second_head: str = SECOND_HEAD_FILE):
        self.backbone = Backbone(backbone, threads)
        self.head = NaturalnessHead(head, threads)
        self.config = NaturalnessConfig(flat_check=flat_check, second_opinion=second_opinion).check()
        self.second = SecondOpinion(self.config.second_opinion, threads, second_head)

    def flat(self, pixels: list) -> np.ndarray:
        """Which images the pre-check drops (all False when it is off)."""
        return np.array([is_flat_graphic(px, self.config) for px in pixels], bool)

    def score_pixels(self, pixels: list[np.ndarray]) -> np.ndarray:
        views = [square_view(px) for px in pixels]
        emb, _ = self.backbone.run(views)
        stats = stats_batch(views)
        p = self.second(self.head(emb, stats=stats), emb, stats,
                        lambda idx: self.second.nsfw.run([views[i] for i in idx])[1])
        return np.where(self.flat(pixels), np.float32(0.0), p)

    def score_files(self, paths: list[str]) -> np.ndarray:
        pixels = []
        for p in paths:
            with open(p, "rb") as f:
                pixels.append(decode_pixels(f.read()))
        return self.score_pixels(pixels)


class NaturalnessFilter(ImageBatchStage):
    """Keeps natural photographs: sets ``item.natural``; drops ``naturalness_flat_graphic`` (the
    pre-check, no score) and ``naturalness_not_natural`` (the head, below the threshold)."""

    name = "naturalness"

    def __init__(self, config: NaturalnessConfig | None = None):
        self.config = (config or NaturalnessConfig()).check()
        self.batch_size = self.config.batch_size
        self._backbone = Backbone(self.config.backbone, self.config.threads)
        self._head = NaturalnessHead(threads=self.config.threads)
        self._second = SecondOpinion(self.config.second_opinion, self.config.threads)

    def setup(self) -> None:
        self._backbone.load()
        self._head.load()
        self._second.load()

    def describe(self):
        return {"threshold": self.config.threshold, "backbone": self._backbone.precision,
                "flat_check": self.config.flat_check,
                "second_opinion": self.config.second_opinion}

    def _flat(self, item: ImageItem) -> bool:
        try:
            return is_flat_graphic(pixels_of(item), self.config)
        except Exception:  # undecodable: split_viewable counts it
            return False

    def process_batch(self, items: list[ImageItem]) -> list:
        # The pre-check first: a flat graphic costs neither the 224-px view nor the backbone.
        results = [self.drop("flat_graphic") if self._flat(it) else None for it in items]
        rest = [i for i, r in enumerate(results) if r is None]
        ok, sub = self.split_viewable([items[i] for i in rest])
        ok = [rest[j] for j in ok]
        for j, r in enumerate(sub):
            if r is not None:
                results[rest[j]] = r
        if ok:
            outs = self._backbone.outputs([items[i] for i in ok])
            emb = np.stack([e for e, _ in outs])
            stats = stats_batch([view_of(items[i]) for i in ok])
            probs = self._second(self._head(emb, stats=stats), emb, stats, lambda idx: np.stack(
                [pool for _, pool in self._second.nsfw.outputs([items[ok[j]] for j in idx])]))
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
