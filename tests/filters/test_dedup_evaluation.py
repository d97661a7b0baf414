"""The dedup_evaluation step: evaluation images dropped before any filter could sample them,
decoded once (image_decode reuses the pixels), hashed as ``lait hashes`` hashes them, the hash
kept for the labels step."""
from __future__ import annotations

import io
import pickle

from PIL import Image

from filters.dedup import DedupConfig
from filters.dedup_evaluation import DedupEvaluation
from filters.eval_images import phash_of
from filters.image_decode import ImageDecode
from filters.labels import ImageLabeler
from pipeline.config import ImageConfig
from pipeline.core.stage import Drop
from pipeline.steps.fetch import ImageFetcher
from tests.filters.image_helpers import asset, image_models  # noqa: F401 (fixture)


def fetched(data: bytes):
    """An item as the fetch step hands it on (header read, nothing decoded)."""
    return ImageFetcher.probe("http://x/a.jpg", data, "image/jpeg")


def jpeg(path: str, size=None, quality=90) -> bytes:
    im = Image.open(path).convert("RGB")
    if size:
        im = im.resize(size)
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def step_for(tmp_path, *photos, **image):
    ev = tmp_path / "eval"
    ev.mkdir(exist_ok=True)
    for p in photos:
        (ev / p.rsplit("/", 1)[1]).write_bytes(open(p, "rb").read())
    step = DedupEvaluation.from_config(DedupConfig(exclude=[str(ev)]), ImageConfig(**image))
    return pickle.loads(pickle.dumps(step))  # as an engine ships it to a worker


def test_evaluation_images_and_their_copies_are_dropped(tmp_path):
    cat, coffee = asset("photos", "cat.jpg"), asset("photos", "coffee.jpg")
    step = step_for(tmp_path, cat)
    w, h = Image.open(cat).size
    # the photo, a re-encoded half-size copy, and a thumbnail image_size would drop (too small)
    for data in (open(cat, "rb").read(), jpeg(cat, (w // 2, h // 2), 50), jpeg(cat, (160, 106), 75)):
        got = step.process(fetched(data))
        assert isinstance(got, Drop) and got.reason == "dedup_evaluation_image"
    (other,) = step.process(fetched(open(coffee, "rb").read()))
    # the hash is the one the exclude side computes, kept for the labels step
    assert int(other.meta["phash"], 16) == phash_of(open(coffee, "rb").read(), 512)
    assert step.withhold_rejects and step.withholds("dedup_evaluation_image")
    # image_decode reuses the pixels: the same stored image as a decode of its own
    pixels = other.pixels
    (again,) = ImageDecode(512, store=True).process(other)
    assert again.pixels is pixels
    (fresh,) = ImageDecode(512, store=True).process(fetched(open(coffee, "rb").read()))
    assert (again.width, again.height, again.data) == (fresh.width, fresh.height, fresh.data)


def test_bombs_and_broken_images_are_left_to_their_steps(tmp_path):
    step = step_for(tmp_path, asset("photos", "cat.jpg"), max_pixels=1000)
    big = fetched(open(asset("photos", "coffee.jpg"), "rb").read())
    assert step.process(big) == [big] and big.pixels is None  # image_size drops it, undecoded
    step = step_for(tmp_path, asset("photos", "cat.jpg"))
    data = jpeg(asset("photos", "coffee.jpg"))
    broken = fetched(data[: len(data) // 3])
    assert step.process(broken) == [broken] and "phash" not in broken.meta
    assert ImageDecode(512).process(broken).reason == "image_decode_failed"


def test_no_list_no_step_and_labels_reuse_the_hash(image_models):
    assert DedupEvaluation.from_config(DedupConfig(), ImageConfig()) is None
    (item,) = ImageDecode(512, store=False).process(fetched(open(asset("photos", "coffee.jpg"), "rb").read()))
    item.meta["phash"] = "0123456789abcdef"  # as dedup_evaluation left it
    (out,) = ImageLabeler().process_batch([item])
    assert out[0].meta["phash"] == "0123456789abcdef"  # not hashed a second time
