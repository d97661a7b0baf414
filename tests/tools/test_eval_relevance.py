"""The shipped scorer on the real test split (photos from sources never trained or tuned on,
captions written by eye): ``tools/eval_relevance.py``'s figures, printed, against issue 13's
targets.  The seventh test split (2026-11-24): KPhotoAlbum's demo photos (21 snapshots: people,
pets, a beach, a canyon, the sea from the shore and the air, a sunset) and OpenCV's tutorial
scene photos (6: a campus path, a harbour, a bus by Big Ben, a courthouse at night, heathland,
a lecture hall), 27 photos, 243 pairs, scored in the seventh round with the fifth round's model
(0.852 / 0.062 / AUC 0.963) and, once more, in the eighth with the model that replaced it (crops
weigh 1/3, fitted on the seventh round's train + val; threshold 0.4; docs/scoring.md).  The fifth
test split (GCompris fishes and objects) and the third (Scratch, ``louis-braille``) are val
since."""
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
    assert f["photos"] >= 25 and f["pairs"] == 9 * f["photos"]
    assert f["threshold"] == json.load(open(eval_relevance.ScorerConfig().model_path))["threshold"]
    assert f["auc_boiler"] >= 0.95, f  # own caption above boilerplate, credits, promo, file names
    assert f["kept_boiler"] <= 0.05, f
    # Measured 0.968 / 0.086 on this split (2026-11-24, eighth round): issue 13's targets, met.
    assert f["auc_cross"] >= 0.9, f  # own caption above three other photos' captions
    assert f["kept_cross"] <= 0.10, f
    # A floor, not the target (that is the expected failure below): guard against a scorer that
    # keeps far fewer own captions than measured (0.889: 24 of 27).
    assert f["recall_at_threshold"] >= 0.75, f


@pytest.mark.xfail(strict=True, reason="issue 13's recall target is missed on the seventh test "
                   "split: 0.889 of own captions at the shipped threshold 0.4 (24 of 27; below it "
                   "an aerial view of a sandy peninsula, a sunset behind trees, a man talking "
                   "indoors; by source: KPhotoAlbum 0.857, OpenCV's scenes 1.000; "
                   "docs/scoring.md)")
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
