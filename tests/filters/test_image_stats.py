"""The naturalness head's pixel statistics: what each one measures, on images built to show it."""
from __future__ import annotations

import numpy as np
import pytest

from filters.backbone import square_view
from filters.image_stats import DIM, NAMES, image_stats, stats_batch
from tests.filters.image_helpers import asset, decoded_item


def _named(view) -> dict[str, float]:
    return dict(zip(NAMES, image_stats(view).tolist()))


def test_a_flat_colour_has_no_grain_no_edges_one_colour():
    s = _named(np.full((224, 224, 3), (200, 60, 30), np.uint8))
    assert s["lap_zero"] == s["grad_zero"] == s["flat_share"] == s["top1"] == 1.0
    assert s["lap_mean"] == s["flat_lap_mean"] == s["luma_std"] == s["chroma_lap"] == 0.0
    assert s["colours"] == 1 / 4096 and s["sat_high"] == 1.0 and s["sat_low"] == 0.0


def test_sensor_like_noise_is_grain_everywhere():
    rng = np.random.default_rng(0)
    base = np.full((224, 224, 3), 128.0)
    noisy = np.clip(base + rng.normal(0, 6, base.shape), 0, 255).astype(np.uint8)
    flat, grain = _named(base.astype(np.uint8)), _named(noisy)
    assert grain["lap_zero"] < 0.1 < flat["lap_zero"]
    assert grain["lap_mean"] > flat["lap_mean"] and grain["colours"] > flat["colours"]
    assert grain["chroma_lap"] > 0.5  # independent noise per channel: colour noise too


def test_a_linear_gradient_is_smooth_but_not_flat():
    ramp = np.tile(np.linspace(0, 255, 224).astype(np.uint8)[None, :, None], (224, 1, 3))
    s = _named(ramp)
    assert s["luma_std"] > 0.5 and s["grad_zero"] < 0.5  # it changes everywhere ...
    assert s["lap_small"] == 1.0 and s["lap_large"] == 0.0  # ... by a constant step


def test_a_photo_has_more_grain_than_its_posterised_copy():
    view = square_view(decoded_item(asset("photos", "meadow.jpg")).pixels)
    poster = (view >> 5) << 5  # 8 levels a channel: flat patches with hard steps
    photo, painted = _named(view), _named(poster)
    assert photo["colours"] > painted["colours"] and photo["top8"] < painted["top8"]
    assert photo["lap_zero"] < painted["lap_zero"]


def test_values_are_bounded_and_batches_agree():
    views = [square_view(decoded_item(asset("photos", p)).pixels) for p in ("cat.jpg", "rocket.jpg")]
    batch = stats_batch(views)
    assert batch.shape == (2, DIM) and batch.dtype == np.float32
    assert np.array_equal(batch[1], image_stats(views[1]))
    assert (batch >= 0).all() and (batch <= 4).all()
    assert stats_batch([]).shape == (0, DIM)


@pytest.mark.parametrize("bad", [np.zeros((224, 224), np.uint8), np.zeros((4, 4, 3), np.uint8),
                                 np.zeros((32, 32, 3), np.float32)])
def test_bad_views_raise(bad):
    with pytest.raises(ValueError, match="image_stats"):
        image_stats(bad)
