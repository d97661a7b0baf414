"""The object region of a view (filters/object_region.py: issue 15's fifth round)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from filters.backbone import square_view
from filters.object_region import DIM, object_crop, object_region, object_stats
from tests.filters.image_helpers import ASSETS, REPO


def _noise(shape, seed=0):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def test_an_object_on_white_is_found_with_its_box():
    view = np.full((224, 224, 3), 250, np.uint8)
    view[60:120, 80:150] = _noise((60, 70, 3))
    uniform, mask, box = object_region(view)
    assert uniform == 1.0 and box == (60, 119, 80, 149)
    assert mask[60:120, 80:150].mean() > 0.9 and not mask[:60].any() and not mask[:, 150:].any()
    s = object_stats(view)
    assert s.shape == (DIM,) and s.dtype == np.float32
    assert s[2] == pytest.approx(60 * 70 / 224 ** 2)  # the box's share of the view
    assert 0.8 * s[2] <= s[1] <= s[2]  # the object's share: noise pixels near 250 are background


def test_a_frame_without_a_plain_border_is_the_whole_object():
    view = _noise((224, 224, 3))
    assert object_region(view)[1:] == (None, None)
    s = object_stats(view)
    assert s[1] == 1.0 and s[2] == 1.0
    px = _noise((300, 400, 3), 1)
    assert object_crop(px, square_view(px)) is px


def test_a_near_empty_frame_has_no_object_region():
    view = np.full((224, 224, 3), 30, np.uint8)
    view[100:105, 100:105] = 200  # 25 pixels: under 0.5% of the view
    assert object_region(view)[2] is None
    assert object_stats(view)[1] == 1.0


def test_the_crop_of_the_stored_pixels_holds_the_object():
    px = np.full((384, 512, 3), 255, np.uint8)
    px[150:250, 200:330] = _noise((100, 130, 3), 2)
    crop = object_crop(px, square_view(px))
    assert crop is not px and crop.shape[0] < 384 and crop.shape[1] < 512
    assert crop.shape[0] >= 100 and crop.shape[1] >= 130  # the whole object, a margin at most
    assert (crop != 255).any(2).sum() == (px != 255).any(2).sum()


def test_bad_views_are_refused():
    with pytest.raises(ValueError):
        object_stats(np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(ValueError):
        object_stats(np.zeros((32, 32), np.uint8))


_SCRIPT = """
import glob, hashlib, sys
sys.path.insert(0, {repo!r})
import numpy as np
from filters.backbone import square_view
from filters.object_region import object_crop, object_stats
from tests.filters.image_helpers import decoded_item
h = hashlib.sha256()
for p in sorted(glob.glob({assets!r} + "/*/*.*")):
    if p.endswith((".jpg", ".png")):
        px = np.asarray(decoded_item(p).pixels)
        view = square_view(px)
        h.update(object_stats(view).tobytes())
        h.update(np.ascontiguousarray(object_crop(px, view)).tobytes())
print(h.hexdigest())
"""


def test_object_statistics_are_the_same_without_numpy_simd():
    """Integer counts and sums only: the numbers do not depend on which of numpy's vector
    kernels ran (its dispatch switched off down to the baseline), as image_stats'."""
    from numpy._core import _multiarray_umath as npu  # numpy >= 2
    script = _SCRIPT.format(repo=REPO, assets=ASSETS)

    def digest(extra_env: dict) -> str:
        return subprocess.run([sys.executable, "-c", script], env={**os.environ, **extra_env},
                              capture_output=True, text=True, check=True, cwd=REPO).stdout.strip()

    best = digest({})
    assert len(best) == 64
    assert best == digest({"NPY_DISABLE_CPU_FEATURES": " ".join(npu.__cpu_dispatch__)})
