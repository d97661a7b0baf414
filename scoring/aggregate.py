"""LAIT step 5: one text per image, and no text shared by too many images.

``ImagePairs`` turns each surviving image into one (image, text) pair per candidate text.
``BestText`` groups pairs by the stored image's content (sha256: the same picture reached
through several URLs or pages counts once) and keeps the best-scored text.  ``SharedText``
groups by normalised text and drops every pair of a text that more than K distinct images
share ("Stock photo", "Our team"): such texts describe no image in particular.
"""
from __future__ import annotations

import re
import unicodedata

from filters.backbone import clear_transient
from pipeline.records import TEXT_SOURCES, ImageItem, Pair
from pipeline.stage import GroupStage, Keep, MapStage

_SOURCE_RANK = {s: i for i, s in enumerate(TEXT_SOURCES)}


class ImagePairs(MapStage):
    """ImageItem -> one Pair per candidate text (the sample key comes from the image bytes)."""

    name = "pairs"

    def process(self, item: ImageItem):
        item.pixels = None  # never shuffle decoded pixels or cached model passes
        clear_transient(item)
        return [
            Pair(key=item.sha256[:24], candidate=c, image_url=item.image_url, data=item.data,
                 width=item.width, height=item.height, orig_width=item.orig_width,
                 orig_height=item.orig_height, orig_format=item.orig_format,
                 orig_bytes=item.orig_bytes, sha256=item.sha256, nsfw=item.nsfw,
                 natural=item.natural, image_meta=dict(item.meta))
            for c in item.candidates
        ]


def rank(pair: Pair) -> tuple:
    """Sort key, best first: score, then text source, then a content tie-break so that the
    choice never depends on the order in which an engine delivers a group."""
    c = pair.candidate
    score = pair.score if pair.score is not None else 0.0
    return (-score, _SOURCE_RANK.get(c.text_source, 99), -len(c.text.split()), c.text,
            pair.image_url, c.page_url, c.img_index)


class BestText(GroupStage):
    name = "aggregate"

    def key(self, pair: Pair) -> str:
        return pair.sha256

    def reduce(self, key, pairs):
        best = min(pairs, key=rank)
        return [Keep((p,)) if p is best else self.drop("not_best") for p in pairs]


def normalise_text(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\W_]+", " ", text).strip()


class SharedText(GroupStage):
    name = "text_share"

    def __init__(self, max_images_per_text: int = 10):
        self.max_images_per_text = max_images_per_text

    def key(self, pair: Pair) -> str:
        return normalise_text(pair.candidate.text)

    def reduce(self, key, pairs):
        if len({p.sha256 for p in pairs}) > self.max_images_per_text:
            return [self.drop("too_many_images")] * len(pairs)
        return [Keep((p,)) for p in pairs]
