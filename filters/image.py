"""Basic image stages: the size check on the header, then one decode to the stored image.

``ImageSize`` runs before any pixel is decoded (cheap filters first).  ``ImageDecode`` decodes
once, fixes orientation and colour mode, resizes and re-encodes the stored JPEG, and leaves the
decoded pixels on the item for the model-based filters that follow in the same bundle.
"""
from __future__ import annotations

import hashlib
import io

import numpy as np
from PIL import Image, ImageOps

from pipeline.records import ImageItem
from pipeline.stage import MapStage

Image.MAX_IMAGE_PIXELS = None  # ImageSize rejects bombs from the header before decoding


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


def to_rgb(im: Image.Image) -> Image.Image:
    """Any PIL mode to 8-bit RGB; transparency is composited on white, 16-bit is scaled."""
    if im.mode == "RGB":
        return im
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):
        arr = np.asarray(im, dtype=np.float64)
        top = 65535.0 if im.mode.startswith("I;16") or arr.max() > 255 else 255.0
        return Image.fromarray(np.clip(arr / top * 255.0 + 0.5, 0, 255).astype(np.uint8)).convert("RGB")
    if im.mode == "P" and "transparency" in im.info:
        im = im.convert("RGBA")
    if im.mode in ("RGBA", "LA", "PA"):
        im = im.convert("RGBA")
        bg = Image.new("RGBA", im.size, (255, 255, 255, 255))
        return Image.alpha_composite(bg, im).convert("RGB")
    return im.convert("RGB")


class ImageDecode(MapStage):
    """Decodes once, stores the image upright, RGB, longest side <= ``resize_longest``."""

    name = "image_decode"

    def __init__(self, resize_longest: int = 512, jpeg_quality: int = 90):
        self.resize_longest = resize_longest
        self.jpeg_quality = jpeg_quality

    def process(self, item: ImageItem):
        try:
            im = Image.open(io.BytesIO(item.data))
            if self.resize_longest and im.format == "JPEG":
                # JPEG draft mode decodes at 1/2, 1/4 or 1/8 scale directly: far cheaper than
                # decoding full size and shrinking; it never goes below the requested size.
                im.draft("RGB", (self.resize_longest, self.resize_longest))
            im.seek(0)  # first frame of animations
            im.load()
        except Image.DecompressionBombError:
            return self.drop("bomb")
        except Exception:
            return self.drop("failed")
        im = to_rgb(ImageOps.exif_transpose(im))
        if self.resize_longest and max(im.size) > self.resize_longest:
            scale = self.resize_longest / max(im.size)
            size = (max(1, round(im.width * scale)), max(1, round(im.height * scale)))
            im = im.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=self.jpeg_quality)
        item.data = buf.getvalue()
        item.width, item.height = im.size
        item.sha256 = hashlib.sha256(item.data).hexdigest()
        item.pixels = np.asarray(im)
        return [item]
