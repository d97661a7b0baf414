"""The shipped scorer on the real test split (photos from sources never trained or tuned on,
captions written by eye): ``tools/eval_relevance.py``'s figures, printed, against issue 13's
targets.  The fourteenth test split (2026-11-25): 57 photos found through Debian's Contents index in
dlib's examples (11: family and party snapshots, a portrait, a street), labelme's (7), Psychtoolbox's
demos (7: rabbits, apples, a town), Gem's docs (4), tDiary's themes (4), goexif's sample (1), ExpEYES-17's
help (6: a lab box, parts, a pendulum), Argyll's docs (11: colorimeters) and the forensics samples (6
phone photos), 513 pairs, scored first in the fourteenth round with the thirteenth round's model (the
eighth round's recipe fitted on train + val, 531 + 313 photos; threshold 0.4; docs/scoring.md).  The
tenth test split (GCompris ``clickgame``, Kodi, FooBillard++, Allegro, pygame, Inkscape, LibreOffice's
templates) was scored four times and is the split ``spent`` since (recall 0.800 there); the ninth
(GIMP's manual, Kivy, Scribus), the seventh (KPhotoAlbum, OpenCV's tutorial scenes), the fifth (GCompris
fishes and objects) and the third (Scratch, ``louis-braille``) are val."""
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
    assert f["photos"] >= 57 and f["pairs"] == 9 * f["photos"]
    assert f["threshold"] == json.load(open(eval_relevance.ScorerConfig().model_path))["threshold"]
    assert f["auc_boiler"] >= 0.95, f  # own caption above boilerplate, credits, promo, file names
    assert f["kept_boiler"] <= 0.05, f
    # Measured on this split (2026-11-25, fourteenth round, its first score): AUC other 0.954,
    # recall 0.947 (54 of 57; the tenth split, spent, gave 0.800): issue 13's targets, met.
    assert f["auc_cross"] >= 0.9, f  # own caption above three other photos' captions
    assert f["recall_at_threshold"] >= 0.9, f  # >= 90% of correct human captions kept
    # A ceiling, not the target (that is the expected failure below): guard against a scorer that
    # keeps far more other photos' captions than measured (0.175: 30 of 171).
    assert f["kept_cross"] <= 0.25, f


@pytest.mark.xfail(strict=True, reason="issue 13's bound on other photos' captions is missed on the "
                   "fourteenth test split: 0.175 kept at the shipped threshold 0.4 (30 of 171) on its "
                   "first score (the thirteenth round's model, 844 photos); 22 of the 30 are captions "
                   "of photos of the same kind in this split (another colorimeter, another group of "
                   "people, another white dog or lying pet, another street), 8 of another kind (a "
                   "group in a bar on a throne hall and on a panel of sockets); docs/scoring.md")
def test_other_captions_bound_at_the_default_threshold(figures):
    """<= 10% of other photos' captions reach the model's own threshold."""
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
