"""The shipped scorer on the real test split (photos from sources never trained or tuned on,
captions written by eye): ``tools/eval_relevance.py``'s figures, printed, against issue 13's
targets.  The tenth test split (2026-11-24): GCompris ``clickgame``'s underwater backgrounds (6),
the photos in Kodi's skin (2: a cinema, a concert), FooBillard++'s data (2: a city at night, a
fire), Allegro's examples (2: a parrot, a white mouse), pygame's docs (2: a brick house by a tree,
a fist), Inkscape (1: a sparrow) and LibreOffice's presentation templates (5: a grass field, a hot
air balloon, a sky, misty pines, a bowl of sweets), 20 photos, 180 pairs, scored first in the tenth
round with the eighth round's model (crops weigh 1/3, fitted on the seventh round's train + val),
then a second time in the eleventh round with the same recipe refitted on train + val (531 + 303
photos), and a third time in the thirteenth round with the same recipe refitted on today's train + val
(531 + 313 photos; threshold 0.4; docs/scoring.md): a split scored again after a change is no longer a
fresh estimate.  The ninth test split (GIMP's manual, Kivy, Scribus), the seventh
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
    assert f["photos"] >= 20 and f["pairs"] == 9 * f["photos"]
    assert f["threshold"] == json.load(open(eval_relevance.ScorerConfig().model_path))["threshold"]
    assert f["auc_boiler"] >= 0.95, f  # own caption above boilerplate, credits, promo, file names
    assert f["kept_boiler"] <= 0.05, f
    # Measured 0.973 / 0.033 on this split (2026-11-25, thirteenth round, its third score; the
    # eleventh round's second: 0.970 / 0.033; the tenth round's first: 0.974 / 0.033): issue 13's
    # targets, met.
    assert f["auc_cross"] >= 0.9, f  # own caption above three other photos' captions
    assert f["kept_cross"] <= 0.10, f
    # A floor, not the target (that is the expected failure below): guard against a scorer that
    # keeps far fewer own captions than measured (0.800: 16 of 20, all three scores).
    assert f["recall_at_threshold"] >= 0.75, f


@pytest.mark.xfail(strict=True, reason="issue 13's recall target is missed on the tenth test "
                   "split: 0.800 of own captions at the shipped threshold 0.4 (16 of 20) on its "
                   "third score (thirteenth round, the recipe refitted on train + val, 844 photos), "
                   "as on its second (eleventh round, 834 photos) and first (tenth round, 788 "
                   "photos); below it a basket star on the seabed, "
                   "a city's lights at night, a turquoise sky with a cloud and a bowl of sweets; by "
                   "source: GCompris clickgame 0.833, LibreOffice's templates 0.600, FooBillard++ "
                   "0.500, the four others 1.000; docs/scoring.md)")
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
