"""Size check and the single decode: orientation, colour modes, resize, stored bytes."""
import io

import numpy as np
import pytest
from PIL import Image

from filters.image import ImageDecode, ImageSize
from pipeline.fetch import ImageFetcher
from pipeline.records import ImageItem


def encode(im, fmt, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def item(data: bytes) -> ImageItem:
    return ImageFetcher.probe("http://x/a", data, "image/jpeg")


def test_size_keeps_both_sides_at_least_300():
    size = ImageSize(300, 300)
    assert size.events(item(encode(Image.new("RGB", (300, 300)), "PNG"))).__next__().outputs
    for w, h in ((299, 800), (800, 299)):
        (ev,) = size.events(item(encode(Image.new("RGB", (w, h)), "PNG")))
        assert ev.reason == "image_size_too_small"


def test_bomb_rejected_from_header():
    it = item(encode(Image.new("1", (20000, 20000)), "PNG"))
    (ev,) = ImageSize(300, 300, max_pixels=100_000_000).events(it)
    assert ev.reason == "image_size_too_many_pixels"


def test_decode_resizes_and_stores_rgb_jpeg():
    rng = np.random.default_rng(0)
    arr = rng.integers(0, 255, (900, 1200, 3), dtype=np.uint8)
    it = item(encode(Image.fromarray(arr), "JPEG", quality=95))
    (ev,) = ImageDecode(512, 90).events(it)
    out = ev.outputs[0]
    assert (out.width, out.height) == (512, 384)
    assert np.asarray(out.pixels).shape == (384, 512, 3)
    with Image.open(io.BytesIO(out.data)) as im:
        assert im.format == "JPEG" and im.mode == "RGB" and im.size == (512, 384)
    assert len(out.sha256) == 64


def test_exif_rotated_jpeg_is_stored_upright():
    im = Image.new("RGB", (400, 300), (0, 0, 255))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 CW to display
    (ev,) = ImageDecode(0).events(item(encode(im, "JPEG", exif=exif.tobytes())))
    assert (ev.outputs[0].width, ev.outputs[0].height) == (300, 400)


@pytest.mark.parametrize("im, fmt", [
    (Image.new("CMYK", (320, 320), (0, 255, 255, 0)), "JPEG"),
    (Image.fromarray(np.full((320, 320), 65535, dtype=np.uint16)), "PNG"),
    (Image.new("RGBA", (320, 320), (255, 0, 0, 0)), "PNG"),
    (Image.new("P", (320, 320)), "GIF"),
    (Image.new("LA", (320, 320)), "PNG"),
])
def test_colour_modes_become_rgb(im, fmt):
    (ev,) = ImageDecode(512).events(item(encode(im, fmt)))
    px = np.asarray(ev.outputs[0].pixels)
    assert px.dtype == np.uint8 and px.shape == (320, 320, 3)
    if im.mode == "CMYK":
        assert px[0, 0, 0] > 200 and px[0, 0, 1] < 60  # red, not inverted
    if im.mode == "I;16":
        assert px.min() > 250  # full-scale 16-bit white stays white
    if im.mode == "RGBA":
        assert px.min() > 250  # transparent -> white background


def test_corrupt_data_is_a_reason():
    good = encode(Image.new("RGB", (400, 400), (9, 9, 9)), "JPEG")
    it = item(good)
    it.data = good[:200]
    (ev,) = ImageDecode(512).events(it)
    assert ev.reason == "image_decode_failed"
