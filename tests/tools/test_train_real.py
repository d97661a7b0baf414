"""tools/train_real.py's row weights: a photo's crops together weigh as much as the photo
(eighth round, docs/scoring.md), and the shipped model records the recipe it was fitted with."""
import json

import numpy as np

from scoring.scorer_model import DEFAULT_MODEL
from tools import train_real


def test_a_photos_crops_weigh_as_much_as_the_photo():
    # one pair on a photo's own picture, then the same pair on each of its crops
    own = np.array([True] + [False] * len(train_real.CROPS))
    w = train_real.row_weights(own)
    assert w[0] == 1.0
    assert np.isclose(w[1:].sum(), w[0]) and np.all(w[1:] > 0)


def test_the_shipped_model_was_fitted_with_this_crop_weight():
    info = json.load(open(DEFAULT_MODEL))["info"]
    assert np.isclose(info["crop_weight"], train_real.CROP_WEIGHT)
    assert info["splits"] == ["train", "val"]
