"""tools/train_real.py's row weights: a photo's crops together weigh as much as the photo
(eighth round, docs/scoring.md), the shipped model records the recipe and the photos it was fitted
with, and trying the recipe writes into its work folder, not over the shipped model."""
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


def test_the_shipped_model_was_fitted_on_the_current_train_and_val():
    """The documented command reproduces what ships (eleventh round): the shipped model's real
    rows are those of today's train + val photos: each photo's labelled texts (own caption, other
    captions, junk, file name) and its own and other captions again on each crop.  A photo moved
    into val without a refit fails here."""
    from tools import relevance_data as rd

    info = json.load(open(DEFAULT_MODEL))["info"]
    photos = len(rd.photos("train")) + len(rd.photos("val"))
    texts, captions = 1 + rd.N_CROSS + rd.N_JUNK + 1, 1 + rd.N_CROSS
    assert info["real_pairs"] == photos * (texts + captions * len(train_real.CROPS)), (info["real_pairs"], photos)


def _main_out(monkeypatch, argv):
    seen = {}

    def train(out, splits, work, *rest):
        seen.update(out=out, splits=list(splits), work=work)
        return {"model": out}

    monkeypatch.setattr(train_real, "train", train)
    assert train_real.main(argv) == 0
    return seen


def test_the_model_goes_into_the_work_folder_by_default(monkeypatch, tmp_path):
    seen = _main_out(monkeypatch, ["--work", str(tmp_path)])
    assert seen["out"] == str(tmp_path / "scorer.json") and seen["splits"] == ["train"]
    assert seen["out"] != DEFAULT_MODEL


def test_the_shipped_model_is_written_only_when_out_names_it(monkeypatch):
    seen = _main_out(monkeypatch, ["--splits", "train", "val", "--out", DEFAULT_MODEL])
    assert seen["out"] == DEFAULT_MODEL and seen["splits"] == ["train", "val"]
