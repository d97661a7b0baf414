"""The ``image_decode`` step: one decode, orientation and colour mode fixed, resized.

``ImageDecode`` leaves the decoded image (PIL, RGB) on the item for the model-based filters
that follow in the same bundle; ``image_store`` (``filters/image_store.py``) encodes the stored
JPEG after them, so the images they drop never pay for it (~1.1 ms each).  Standalone,
``ImageDecode(store=True)`` (the default) does both at once.
"""
from __future__ import annotations

import hashlib
import io

import numpy as np
from PIL import Image

from filters.resample import resize
from pipeline.core.records import ImageItem
from pipeline.core.stage import MapStage

Image.MAX_IMAGE_PIXELS = None  # image_size rejects bombs from the header before decoding


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


# EXIF orientation -> the transpose that shows the image upright (as ImageOps.exif_transpose).
_ORIENTATION = {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180,
                4: Image.Transpose.FLIP_TOP_BOTTOM, 5: Image.Transpose.TRANSPOSE,
                6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
                8: Image.Transpose.ROTATE_90}


def orientation_of(im: Image.Image) -> int:
    """The EXIF orientation (1..8); 1 (as stored) when there is none or it cannot be read."""
    try:
        return int(im.getexif().get(0x0112, 1))
    except Exception:
        return 1


def stored_size(width: int, height: int, longest: int) -> tuple[int, int]:
    """The stored image's size: longest side ``longest`` (0 or already small: unchanged)."""
    if not longest or max(width, height) <= longest:
        return width, height
    scale = longest / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


class ImageDecode(MapStage):
    """Decodes once, stores the image upright, RGB, longest side <= ``resize_longest``.

    The cheap order (bench/images.py): a JPEG is decoded in draft mode straight to the
    smallest 1/2, 1/4 or 1/8 scale that is still >= the stored size (libjpeg's scaled IDCT:
    no full-size decode, often no resize left to do); the resize and colour conversion run on
    the file's own orientation and the EXIF rotation last, on the small image.  The stored
    image (PIL, RGB) stays on the item as ``pixels`` for the model filters of the bundle.
    """

    name = "image_decode"

    def __init__(self, resize_longest: int = 512, jpeg_quality: int = 90, store: bool = True):
        self.resize_longest = resize_longest
        self.jpeg_quality = jpeg_quality
        self.store = store  # False: ImageStore encodes later (the plan's order)

    def process(self, item: ImageItem):
        if item.pixels is not None:
            # decoded already, by this very code, in dedup_evaluation (same bundle): once only
            if self.store:
                store_jpeg(item, self.jpeg_quality)
            return [item]
        try:
            im = Image.open(io.BytesIO(item.data))
            size = stored_size(*im.size, self.resize_longest)
            if im.format == "JPEG" and size != im.size:
                im.draft("RGB", size)  # never decodes below the requested size
            im.seek(0)  # first frame of animations
            im.load()
        except Image.DecompressionBombError:
            return self.drop("bomb")
        except Exception:
            return self.drop("failed")
        orientation = orientation_of(im)
        im = to_rgb(im)
        if im.size != size:
            # Bicubic: left with a factor < 2 after draft mode (or a PNG / WebP), it looks the
            # same as Lanczos at 512 px and costs less (3-lobe Lanczos reads 1.5x the taps);
            # torch's kernel computes Pillow's bicubic in about half the time.
            im = Image.fromarray(resize(np.asarray(im), size, "bicubic"))
        if orientation in _ORIENTATION:
            im = im.transpose(_ORIENTATION[orientation])
        item.width, item.height = im.size
        item.pixels = im
        if self.store:
            store_jpeg(item, self.jpeg_quality)
        return [item]


def store_jpeg(item: ImageItem, quality: int) -> None:
    """Replaces ``item.data`` by the stored JPEG of ``item.pixels`` and sets its sha256."""
    buf = io.BytesIO()
    item.pixels.save(buf, format="JPEG", quality=quality)
    item.data = buf.getvalue()
    item.sha256 = hashlib.sha256(item.data).hexdigest()
