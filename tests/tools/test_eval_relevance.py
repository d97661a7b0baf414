"""The shipped scorer on the real test split (photos from sources never trained or tuned on,
captions written by eye): ``tools/eval_relevance.py``'s figures, printed, against issue 13's
targets.  The fifth test split (2026-11-24): GCompris ``categorization``'s fishes (28 underwater
photos) and its other objects (15), 43 photos, 387 pairs, scored once with the fifth round's
model (scene words, train + val, threshold 0.4 chosen on val by a rule fixed before the sweep;
docs/scoring.md).  The third test split (Scratch, ``louis-braille``) is val since."""
import json

import pytest

from tools import eval_relevance


@pytest.fixture(scope="module")
def figures():
    result = eval_relevance.evaluate("test")
    print("\n" + json.dumps(result))
    return result


def test_the_junk_targets_hold_on_the_test_split(figures):
    f = figures
    assert f["photos"] >= 40 and f["pairs"] == 9 * f["photos"]
    assert f["auc_boiler"] >= 0.95, f  # own caption above boilerplate, credits, promo, file names
    assert f["kept_boiler"] <= 0.05, f
    # Floors, not the targets (those are the expected failures below): guard against a scorer
    # that ranks other photos' captions far worse or keeps far more of them than measured
    # (0.849 / 0.395, 2026-11-24).
    assert f["auc_cross"] >= 0.8, f
    assert f["kept_cross"] <= 0.45, f


def test_recall_target_at_the_default_threshold(figures):
    """>= 90% of correct human captions reach the model's own threshold."""
    assert figures["threshold"] == json.load(open(eval_relevance.ScorerConfig().model_path))["threshold"]
    assert figures["recall_at_threshold"] >= 0.9, figures


@pytest.mark.xfail(strict=True, reason="issue 13's AUC against other captions is missed on the fifth "
                   "test split: 0.849 (28 of its 43 photos are fish under water, so two thirds of a "
                   "fish photo's other captions are another fish's; by source: fishes 0.805, other "
                   "objects 0.982; docs/scoring.md)")
def test_ranking_target_against_other_captions(figures):
    assert figures["auc_cross"] >= 0.9, figures


@pytest.mark.xfail(strict=True, reason="issue 13's bound on other captions is missed on the fifth "
                   "test split: 0.395 kept at the shipped threshold 0.4 (fishes 0.583: another "
                   "fish's caption on a fish; other objects 0.044; val: 0.089; docs/scoring.md)")
def test_other_captions_bound_at_the_default_threshold(figures):
    assert figures["kept_cross"] <= 0.10, figures


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
