"""NSFW filter: real SFW photos are kept, the threshold drives the drop, int8 tracks float."""
from __future__ import annotations

import numpy as np
import pytest

from filters.backbone import square_view
from filters.nsfw import NsfwConfig, NsfwFilter, NsfwModel
from pipeline.core.errors import ConfigError
from pipeline.core.stage import Drop
from tests.filters.image_helpers import asset, decoded_item, image_models  # noqa: F401

# scikit-image's photos (tools/sampleweb_assets/SOURCES.md): never used to calibrate int8.
SKIMAGE_PHOTOS = ["astronaut.jpg", "brick.jpg", "cameraman.jpg", "cat.jpg", "clock.jpg",
                  "coffee.jpg", "coins.jpg", "grass.jpg", "gravel.jpg", "hubble.jpg",
                  "retina.jpg", "rocket.jpg"]
PHOTOS = ["cat.jpg", "coffee.jpg", "rocket.jpg", "astronaut.jpg", "pagoda.jpg", "grace_hopper.jpg"]


def test_sfw_photos_are_kept_with_their_score(image_models):
    stage = NsfwFilter()
    stage.setup()
    items = [decoded_item(asset("photos", p)) for p in PHOTOS]
    results = stage.process_batch(items)
    for item, res in zip(items, results):
        assert res == [item], (item.image_url, item.nsfw)
        assert 0.0 <= item.nsfw < 0.5


def test_threshold_decides_the_drop(image_models):
    item = decoded_item(asset("photos", "astronaut.jpg"))
    (kept,) = NsfwFilter(NsfwConfig(threshold=1.0)).process(item)
    score = kept.nsfw
    assert score > 0.0  # a person in a photo always has some NSFW probability
    # At the score the image is unsafe (>=); just above it, it is kept.
    assert NsfwFilter(NsfwConfig(threshold=score)).process(decoded_item(asset("photos", "astronaut.jpg"))) \
        == Drop("nsfw_unsafe")
    assert NsfwFilter(NsfwConfig(threshold=min(1.0, score + 1e-3))).process(
        decoded_item(asset("photos", "astronaut.jpg")))[0].nsfw == score


def test_events_count_an_undecodable_item(image_models):
    from pipeline.core.records import ImageItem

    stage = NsfwFilter()
    bad = ImageItem(image_url="http://x/broken.jpg", data=b"\xff\xd8 not really", candidates=[])
    good = decoded_item(asset("photos", "cat.jpg"))
    events = list(stage.events_batch([bad, good]))
    assert events[0] == Drop("nsfw_undecodable")
    assert events[1].outputs == (good,)


def test_int8_model_tracks_the_float_model_on_real_photos(image_models):
    # The int8 model was calibrated on other photos (tools/image_sources.calibration_photos),
    # so these measure how far quantisation moves real scores.
    paths = [asset("photos", p) for p in SKIMAGE_PHOTOS]
    views = [square_view(decoded_item(p).pixels) for p in paths]
    f32 = NsfwModel("float").scores(views)
    i8 = NsfwModel("int8").scores(views)
    diff = np.abs(f32 - i8)
    print(f"\nNSFW int8 vs float on {len(paths)} real photos: max |diff| {diff.max():.4f}, "
          f"mean {diff.mean():.4f}")
    assert diff.max() <= 0.09
    assert ((f32 >= 0.5) == (i8 >= 0.5)).all()


def test_bad_config_fails_fast():
    with pytest.raises(ConfigError, match="nsfw.threshold"):
        NsfwConfig(threshold=0).check()
    with pytest.raises(ConfigError, match="nsfw.precision"):
        NsfwConfig(precision="fp8").check()


def test_stage_pickles_without_its_session(image_models):
    import pickle

    stage = NsfwFilter()
    stage.setup()
    clone = pickle.loads(pickle.dumps(stage))
    assert clone._model._session is None
    item = decoded_item(asset("photos", "coffee.jpg"))
    assert clone.process(item) == [item]


def test_dropping_the_jpeg_round_trip_changes_no_decision(image_models):
    # The package's preprocessing JPEG-encodes the 224 crop once; the filter skips that by
    # default (nsfw.jpeg_reencode).  A JPEG round trip is a small perturbation that moves a
    # few photos' scores by up to ~0.15 in the float reference model itself (fine textures:
    # seeds, water drops), so no fixed bound per photo holds; what must hold is that no
    # decision changes, that scores move little on average, and that int8 does not move them
    # more than the reference model does (beyond the 0.09 accepted for int8 itself).
    import glob

    from tests.filters.image_helpers import ASSETS

    paths = sorted(glob.glob(f"{ASSETS}/photos/*.jpg"))
    assert len(paths) >= 20
    views = [square_view(decoded_item(p).pixels) for p in paths]
    moved = {}
    for precision in ("float", "int8"):
        on = NsfwModel(precision, jpeg_reencode=True).scores(views)
        off = NsfwModel(precision, jpeg_reencode=False).scores(views)
        moved[precision] = diff = np.abs(on - off)
        print(f"\nNSFW {precision} without the JPEG round trip on {len(paths)} real photos: "
              f"max |diff| {diff.max():.4f}, mean {diff.mean():.4f}")
        assert ((on >= 0.5) == (off >= 0.5)).all()
        assert diff.mean() <= 0.02
    assert moved["int8"].max() <= moved["float"].max() + 0.09
    assert not NsfwConfig().jpeg_reencode


def test_prepare_is_the_reference_arithmetic():
    from filters.nsfw import MEAN_BGR, nsfw_prepare

    rng = np.random.default_rng(0)
    views = [rng.integers(0, 256, (224, 224, 3), dtype=np.uint8) for _ in range(3)]
    want = np.stack([v[:, :, ::-1].astype(np.float32) - MEAN_BGR for v in views])
    got = nsfw_prepare(views, jpeg_reencode=False)
    assert got.dtype == np.float32 and got.flags.c_contiguous and np.array_equal(got, want)
