"""The ``text_share`` step: no text shared by too many images.

Pairs are grouped by normalised text, and every pair of a text that more than K distinct
images share ("Stock photo", "Our team") is dropped as ``text_share_too_many_images``: such
texts describe no image in particular.
"""
from __future__ import annotations

import re
import unicodedata

from pipeline.core.records import Pair
from pipeline.core.stage import GroupStage, Keep


def normalise_text(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\W_]+", " ", text).strip()


class SharedText(GroupStage):
    """Drops the pairs of a text that more than ``max_images_per_text`` images share."""

    name = "text_share"

    def __init__(self, max_images_per_text: int = 10):
        self.max_images_per_text = max_images_per_text

    def key(self, pair: Pair) -> str:
        return normalise_text(pair.candidate.text)

    def reduce(self, key, pairs):
        if len({p.image.sha256 for p in pairs}) > self.max_images_per_text:
            return [self.drop("too_many_images")] * len(pairs)
        return [Keep((p,)) for p in pairs]
