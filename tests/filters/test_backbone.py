"""The shared view, the backbone's input and its precision (which follows the head)."""
from __future__ import annotations

import json

import numpy as np
from PIL import Image

from filters.backbone import Backbone, head_backbone, square_view
from tests.filters.image_helpers import asset


def test_view_is_squash_to_256_then_centre_crop_224():
    # square_view resizes with torch's kernel; it must give Pillow's view within one level.
    for name, size in (("cat.jpg", None), ("storm.jpg", (512, 341)), ("grace_hopper.jpg", None)):
        with Image.open(asset("photos", name)) as im:
            im = im.convert("RGB")
        if size:
            im = im.resize(size)
        ref = np.asarray(im.resize((256, 256), Image.Resampling.BILINEAR).crop((16, 16, 240, 240)))
        view = square_view(im)
        assert view.shape == (224, 224, 3) and view.dtype == np.uint8 and view.flags.c_contiguous
        assert np.abs(view.astype(int) - ref).max() <= 1
        assert np.array_equal(square_view(np.asarray(im)), view)  # arrays are accepted too


def test_resize_is_pillows_bicubic():
    from filters.resample import resize

    with Image.open(asset("photos", "hubble.jpg")) as im:
        im = im.convert("RGB")
    for size in ((512, 446), (300, 700), (1200, 1000)):  # shrink, both ways, enlarge
        ref = np.asarray(im.resize(size, Image.Resampling.BICUBIC)).astype(int)
        got = resize(np.asarray(im), size, "bicubic")
        assert got.shape == ref.shape and np.abs(got - ref).max() <= 1


def test_prepare_scales_and_transposes():
    rng = np.random.default_rng(1)
    views = [rng.integers(0, 256, (224, 224, 3), dtype=np.uint8) for _ in range(2)]
    x = Backbone.prepare(views)
    want = ((np.stack(views).astype(np.float32) - 127.0) / 128.0).transpose(0, 3, 1, 2)
    assert x.shape == (2, 3, 224, 224) and x.flags.c_contiguous and np.array_equal(x, want)


def test_auto_precision_follows_the_heads_training_report(tmp_path):
    report = tmp_path / "head.json"
    for said, got in (("float", "float"), ("int8", "int8"), ("fp16", "int8"), (None, "int8")):
        report.write_text(json.dumps({"backbone": said} if said else {}))
        assert head_backbone(str(report)) == got
    assert head_backbone(str(tmp_path / "missing.json")) == "int8"
    assert Backbone("auto").precision == head_backbone()
    assert Backbone("float").precision == "float"
