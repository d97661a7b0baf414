"""The dedup_evaluation step: evaluation images dropped right after the decode, hashed as
``lait hashes`` hashes them, the hash kept for the labels step."""
from __future__ import annotations

import io
import pickle

from PIL import Image

from filters.dedup import DedupConfig
from filters.dedup_evaluation import DedupEvaluation
from filters.eval_images import phash_of
from filters.image_decode import ImageDecode
from filters.labels import ImageLabeler
from pipeline.core.records import ImageItem
from pipeline.core.stage import Drop
from tests.filters.image_helpers import asset, image_models  # noqa: F401 (fixture)


def decoded(data: bytes, longest: int = 512) -> ImageItem:
    item = ImageItem(image_url="http://x/a.jpg", data=data)
    assert not isinstance(ImageDecode(longest, store=False).process(item), Drop)
    return item


def jpeg(path: str, size=None, quality=90) -> bytes:
    im = Image.open(path).convert("RGB")
    if size:
        im = im.resize(size)
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def test_evaluation_images_and_their_copies_are_dropped(tmp_path):
    cat, coffee = asset("photos", "cat.jpg"), asset("photos", "coffee.jpg")
    ev = tmp_path / "eval"
    ev.mkdir()
    (ev / "cat.jpg").write_bytes(open(cat, "rb").read())
    step = DedupEvaluation.from_config(DedupConfig(exclude=[str(ev)]), 512)
    step = pickle.loads(pickle.dumps(step))  # as an engine ships it to a worker
    w, h = Image.open(cat).size
    for data in (open(cat, "rb").read(), jpeg(cat, (w // 2, h // 2), 50)):
        got = step.process(decoded(data))
        assert isinstance(got, Drop) and got.reason == "dedup_evaluation_image"
    other = decoded(open(coffee, "rb").read())
    assert step.process(other) == [other]
    # the hash is the one the exclude side computes, kept for the labels step
    assert int(other.meta["phash"], 16) == phash_of(open(coffee, "rb").read(), 512)
    assert step.withhold_rejects


def test_no_list_no_step_and_labels_reuse_the_hash(image_models):
    assert DedupEvaluation.from_config(DedupConfig()) is None
    item = decoded(open(asset("photos", "coffee.jpg"), "rb").read())
    item.meta["phash"] = "0123456789abcdef"  # as dedup_evaluation left it
    (out,) = ImageLabeler().process_batch([item])
    assert out[0].meta["phash"] == "0123456789abcdef"  # not hashed a second time
