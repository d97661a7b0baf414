"""Size check and the single decode: orientation, colour modes, resize, stored bytes."""
import io

import numpy as np
import pytest
from PIL import Image

from filters.image_decode import ImageDecode
from filters.image_size import ImageSize
from pipeline.steps.fetch import ImageFetcher
from pipeline.core.records import ImageItem


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


def photo(name: str) -> Image.Image:
    from tests.filters.image_helpers import asset

    with Image.open(asset("photos", name)) as im:
        return im.convert("RGB")


def reference_decode(data: bytes, longest: int = 512) -> np.ndarray:
    """The slow path draft mode replaces: full-size decode, then a Lanczos resize."""
    im = Image.open(io.BytesIO(data)).convert("RGB")
    scale = longest / max(im.size)
    size = (round(im.width * scale), round(im.height * scale))
    return np.asarray(im.resize(size, Image.Resampling.LANCZOS), dtype=np.float32)


@pytest.mark.parametrize("size", [(2048, 1280), (1500, 1000), (1024, 683)])
def test_draft_decode_matches_a_full_decode(size):
    # 1/4 scale, 1/2 scale then a resize, no draft scale at all: same stored size as the
    # full-size path, and the same picture (a real photo, scaled up to the test size).
    data = encode(photo("storm.jpg").resize(size, Image.Resampling.BICUBIC), "JPEG", quality=95)
    (ev,) = ImageDecode(512, 90).events(item(data))
    out = ev.outputs[0]
    want = reference_decode(data)
    got = np.asarray(out.pixels, dtype=np.float32)
    assert got.shape == want.shape and (out.width, out.height) == (512, want.shape[0])
    assert np.abs(got - want).mean() < 2.0  # out of 255: resampling differences only


def test_draft_decode_of_a_rotated_jpeg_is_upright():
    # Red top half, blue bottom half, stored sideways: EXIF 6 says "rotate 90 CW to show";
    # upright, the red half is on the right.  Draft mode (1/2 scale) must not lose that.
    arr = np.zeros((1200, 1600, 3), np.uint8)
    arr[:600, :, 0] = 255
    arr[600:, :, 2] = 255
    exif = Image.Exif()
    exif[0x0112] = 6
    (ev,) = ImageDecode(512, 90).events(item(encode(Image.fromarray(arr), "JPEG", exif=exif.tobytes())))
    out = ev.outputs[0]
    px = np.asarray(out.pixels)
    assert (out.width, out.height) == (384, 512) and px.shape == (512, 384, 3)
    assert px[:, 300:, 0].mean() > 200 and px[:, :80, 2].mean() > 200


def test_decode_is_deterministic():
    data = encode(photo("meadow.jpg"), "JPEG", quality=92)
    a, b = (ImageDecode(512, 90).process(item(data))[0] for _ in range(2))
    assert a.data == b.data and a.sha256 == b.sha256 and a.sha256 != ""
    with Image.open(io.BytesIO(a.data)) as im:
        assert im.size == (512, 410)


def test_store_after_the_filters_gives_the_decode_stage_bytes():
    """The plan encodes the stored JPEG in ``image_store``, after the model filters: the same
    bytes and sha256 as encoding at decode; until then the item keeps the fetched bytes."""
    from filters.image_store import ImageStore

    data = encode(photo("meadow.jpg").rotate(90, expand=True), "PNG")
    (early,) = ImageDecode(512, 90).process(item(data))
    (late,) = ImageDecode(512, 90, store=False).process(item(data))
    assert late.data == data and late.sha256 == "" and late.pixels.size == early.pixels.size
    assert (late.width, late.height) == (early.width, early.height)
    (stored,) = ImageStore(90).process(late)
    assert stored.data == early.data and stored.sha256 == early.sha256
    # stored already (decode stage with store on): passed on as it is
    assert ImageStore(50).process(early) == [early] and early.data == stored.data
    # no pixels to store from: a counted drop, never the fetched bytes stored as if resized
    (gone,) = ImageDecode(512, 90, store=False).process(item(data))
    gone.pixels = None
    (ev,) = ImageStore(90).events(gone)
    assert ev.reason == "image_store_no_pixels"
