"""The ``pairs`` step: each surviving image becomes one (image, text) pair per candidate text.

The pairs of one image share one :class:`~pipeline.core.records.ImageFacts` (its stored
bytes, size, hash, scores and metadata) instead of each copying them; the sample key comes
from the stored image's content.
"""
from __future__ import annotations

from pipeline.core.records import ImageItem, Pair
from pipeline.core.stage import MapStage


class ImagePairs(MapStage):
    """ImageItem -> one Pair per candidate text (the sample key comes from the image bytes)."""

    name = "pairs"

    def process(self, item: ImageItem):
        facts = item.facts()  # never carries decoded pixels or cached model passes
        return [Pair(key=item.sha256[:24], candidate=c, image=facts) for c in item.candidates]
