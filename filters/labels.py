"""ImageNet labeler and image facts: top-k labels, label entropy, embedding, perceptual hash.

Runs last among the image filters, on the images that survived them, and reuses the backbone
pass that the naturalness filter cached on the item (it runs the backbone itself only when
naturalness is switched off).  It never drops an image except one it cannot read.

Facts written to ``item.meta`` (JSON-serialisable, stored in ``<key>.json`` / parquet):

* ``labels``: ``[{"name": class name, "p": probability}, ...]``, the top-k ImageNet classes
  (a list of structs, so Arrow and Hugging Face ``datasets`` infer one type; read them with
  ``pipeline.core.records.label_pairs``, which also reads the older ``[[name, p], ...]``);
* ``label_entropy``: entropy (nats) of the full 1000-class distribution (low = one clear
  object; high = a scene or something ImageNet has no class for);
* ``phash``: imagehash's 64-bit perceptual hash (hex) of the stored image (near-duplicates);
* ``colors``: the shares of the pixels in eleven basic colours (``filters/colors.py``), which
  the scorer compares with the colour words of a text;
* ``embedding``: the pooled 1280-d EfficientNet-lite0 embedding as a float16 array, for the
  image-text scoring features, always (the scorer needs it); the writer stores it as base64
  when ``store_embedding`` (else it leaves it out of the shards)
  (``pipeline.core.records.encode_embedding`` / ``decode_embedding``: the one codec).

Width, height, original format and size, sha256, NSFW and natural scores are typed fields of
the item (set by the fetch, decode, NSFW and naturalness steps).
"""
from __future__ import annotations

from dataclasses import dataclass

import imagehash
import numpy as np

from filters.backbone import Backbone, as_image, pixels_of
from filters.batched import ImageBatchStage
from filters.colors import color_layout, color_shares
from filters.imagenet import imagenet_classes
from pipeline.core.errors import ConfigError
from pipeline.core.records import ImageItem


@dataclass
class LabelsConfig:
    """``labels:`` section (the backbone precision is the naturalness section's)."""

    topk: int = 5
    """ImageNet classes kept in image_meta.labels (1..1000)"""
    store_embedding: bool = True
    """store the 1280-d EfficientNet-lite0 embedding in the shards' image_meta (base64
    float16); the scorer reads it either way"""
    phash: bool = True
    """store a 64-bit perceptual hash in image_meta (near-duplicate search)"""
    batch_size: int = 16
    """images per backbone batch"""

    def check(self) -> "LabelsConfig":
        if not 1 <= self.topk <= 1000:
            raise ConfigError(f"labels.topk must be within 1..1000 (got {self.topk!r})")
        if self.batch_size < 1:
            raise ConfigError("labels.batch_size must be >= 1")
        return self


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits.astype(np.float64) - logits.max()
    e = np.exp(z)
    return e / e.sum()


def phash(pixels) -> str:
    """imagehash's phash of the stored image (PIL, or an RGB uint8 array)."""
    return str(imagehash.phash(as_image(pixels)))


class ImageLabeler(ImageBatchStage):
    """Writes ImageNet labels, label entropy, embedding and perceptual hash into ``item.meta``."""

    name = "labels"

    def __init__(self, config: LabelsConfig | None = None, backbone: str = "auto", threads: int = 1):
        self.config = (config or LabelsConfig()).check()
        self.batch_size = self.config.batch_size
        self._backbone = Backbone(backbone, threads)  # loads only if no cached pass is found
        self._names: list[str] | None = None

    def setup(self) -> None:
        self._names = imagenet_classes()

    def describe(self):
        return {"topk": self.config.topk, "store_embedding": self.config.store_embedding}

    def process_batch(self, items: list[ImageItem]) -> list:
        if self._names is None:
            self.setup()
        ok, results = self.split_viewable(items)
        if ok:
            outs = self._backbone.outputs([items[i] for i in ok])
            for i, (emb, logits) in zip(ok, outs):
                item = items[i]
                p = softmax(logits)
                top = np.argsort(-p, kind="stable")[: self.config.topk]
                item.meta["labels"] = [{"name": self._names[c], "p": round(float(p[c]), 4)}
                                       for c in top]
                item.meta["label_entropy"] = round(float(-(p * np.log(p + 1e-12)).sum()), 4)
                if self.config.phash and "phash" not in item.meta:
                    # dedup_evaluation hashed these pixels already, when dedup.exclude is set
                    item.meta["phash"] = phash(pixels_of(item))
                item.meta["colors"] = color_shares(np.asarray(pixels_of(item)))
                # where the colours are (top / middle / bottom): the scorer's scene words
                item.meta["layout"] = color_layout(np.asarray(pixels_of(item)))
                # float16 now: what the shards store, so the scorer in this job sees the
                # same values as one reading the shards later.  Kept whatever
                # store_embedding says: the scorer's projection and label-space features
                # read it (without it the demo's corpus fell from 49 samples to 4); the
                # writer leaves it out of the shards when it is not to be stored.
                item.meta["embedding"] = np.asarray(emb, "<f2")
                item.clear_model_cache()  # the last model of the chain has read them
                results[i] = [item]
        return results
