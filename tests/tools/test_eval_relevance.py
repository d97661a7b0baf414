"""The shipped scorer on the real test split (photos from sources never trained or tuned on,
captions written by eye): ``tools/eval_relevance.py``'s figures, printed, against issue 13's
targets.  The ninth test split (2026-11-24): the photos in GIMP's manual (13: a rose, daisies, a
ground squirrel, a green valley, a park square, a mallard, soldiers in kilts, a vintage car, a
stained glass window, a pickup in an orchard, power lines, a yellow flower, a baby's red eyes),
Kivy's examples (3: abbey ruins, a cat behind a mug, skyscrapers at night) and Scribus's
templates (3: flower heads in black and white, a cyclist, a young man), 19 photos, 171 pairs,
scored once in the ninth round with the eighth round's model (crops weigh 1/3, fitted on the
seventh round's train + val; threshold 0.4; docs/scoring.md).  The seventh test split
(KPhotoAlbum, OpenCV's tutorial scenes), the fifth (GCompris fishes and objects) and the third
(Scratch, ``louis-braille``) are val since."""
import json

import pytest

from tools import eval_relevance


@pytest.fixture(scope="module")
def figures():
    result = eval_relevance.evaluate("test")
    print("\n" + json.dumps(result))
    return result


def test_the_met_targets_hold_on_the_test_split(figures):
    f = figures
    assert f["photos"] >= 19 and f["pairs"] == 9 * f["photos"]
    assert f["threshold"] == json.load(open(eval_relevance.ScorerConfig().model_path))["threshold"]
    assert f["auc_boiler"] >= 0.95, f  # own caption above boilerplate, credits, promo, file names
    assert f["kept_boiler"] <= 0.05, f
    # Measured 0.965 / 0.053 on this split (2026-11-24, ninth round): issue 13's targets, met.
    assert f["auc_cross"] >= 0.9, f  # own caption above three other photos' captions
    assert f["kept_cross"] <= 0.10, f
    # A floor, not the target (that is the expected failure below): guard against a scorer that
    # keeps far fewer own captions than measured (0.895: 17 of 19).
    assert f["recall_at_threshold"] >= 0.75, f


@pytest.mark.xfail(strict=True, reason="issue 13's recall target is missed on the ninth test "
                   "split: 0.895 of own captions at the shipped threshold 0.4 (17 of 19; below it "
                   "a stained glass window in a stone wall and flower heads in black and white; "
                   "by source: GIMP's manual 0.923, Kivy's examples 1.000, Scribus's templates "
                   "0.667; docs/scoring.md)")
def test_recall_target_at_the_default_threshold(figures):
    """>= 90% of correct human captions reach the model's own threshold."""
    assert figures["recall_at_threshold"] >= 0.9, figures


def test_the_last_line_printed_is_the_json(capsys, monkeypatch):
    monkeypatch.setattr(eval_relevance, "evaluate", lambda split, model, threshold, data: {"split": split, "photos": 1})
    assert eval_relevance.main(["--split", "val"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last) == {"split": "val", "photos": 1}


def test_another_labelled_file_is_scored_the_same_way(tmp_path):
    """An independent held-out set in the same format, with its own split name."""
    from tools import relevance_data as rd

    rows = rd.photos("val")[:4]
    path = tmp_path / "held_out.jsonl"
    path.write_text("".join(json.dumps({**r, "split": "holdout"}) + "\n" for r in rows))
    f = eval_relevance.evaluate("holdout", data=str(path))
    assert f["photos"] == 4 and f["pairs"] == 36 and 0.0 <= f["auc_cross"] <= 1.0
