"""The ``image_size`` step: the size check on the header, before any pixel is decoded (cheap
filters first).  Width and height come from the fetch step, which read them from the header."""
from __future__ import annotations

from pipeline.core.records import ImageItem
from pipeline.core.stage import MapStage


class ImageSize(MapStage):
    """Keeps images whose width AND height are >= the minimum (ImageBERT: 300 px)."""

    name = "image_size"

    def __init__(self, min_width: int = 300, min_height: int = 300, max_pixels: int = 100_000_000):
        self.min_width = min_width
        self.min_height = min_height
        self.max_pixels = max_pixels

    def process(self, item: ImageItem):
        if item.orig_width < self.min_width or item.orig_height < self.min_height:
            return self.drop("too_small")
        if item.orig_width * item.orig_height > self.max_pixels:
            return self.drop("too_many_pixels")  # a decompression bomb
        return [item]
