"""The shipped scorer on the real test split (photos from sources never trained or tuned on,
captions written by eye): ``tools/eval_relevance.py``'s figures, printed, against issue 13's
targets.  The fourteenth test split (2026-11-25), 84 photos from 19 packages found through Debian's
Contents index: first 57 in dlib's examples (snapshots of people, a street), labelme's (7), Psychtoolbox's
demos (rabbits, apples, a town), Gem's docs, tDiary's themes, goexif's sample, ExpEYES-17's help (lab
gear), Argyll's docs (colorimeters) and the forensics samples (phone photos), scored once with the
thirteenth round's model (recall 0.947, other captions kept 0.175); then widened by 27 found after that
score (darknet's data, Lifeograph's backgrounds, VLFeat, imaging, x/image, node-opencv, gdk-pixbuf,
libsixel, jpeg-decoder, VIGRA: animals, scenery, flowers, cars) and scored once as a whole (84 photos,
756 pairs, threshold 0.4; docs/scoring.md).  The tenth test split (GCompris ``clickgame``, Kodi,
FooBillard++, Allegro, pygame, Inkscape, LibreOffice's templates) was scored four times and is the split
``spent`` since (recall 0.800 there); the ninth (GIMP's manual, Kivy, Scribus), the seventh
(KPhotoAlbum, OpenCV's tutorial scenes), the fifth (GCompris fishes and objects) and the third
(Scratch, ``louis-braille``) are val.

The sixteenth round's second fresh test split, ``test2`` (2026-11-25): 70 photos from 30 packages no
round had opened (GNOME's user pictures, Qt WebEngine's recipe photos, jQuery plugins' examples,
RMagick's docs, ...), scored once with the shipped model (scorer.json b9b683ba, threshold 0.4): recall
0.943, other captions kept 0.119, junk kept 0.000, AUC other 0.949, AUC junk 0.999.

Seventeenth round (2026-11-25): the shipped threshold is 0.5, re-derived on val by a rule fixed
beforehand (``tools/train_real.py --choose-threshold``); the model's weights are unchanged
(scorer.json a8d0c597).  Both splits scored again at 0.5, neither a fresh estimate (``test``'s
fourth score as a whole, ``test2``'s third): test 0.917 / 0.107 / 0.000, test2 0.900 / 0.105 / 0.000
(recall / other kept / junk kept).

The seventeenth round's third fresh test split, ``test3``: 65 photos from 40 packages no round had
opened, built without a score, then scored once by the lead (2026-11-25 10:08 UTC, scorer.json a8d0c597
at its own threshold 0.5): recall 0.923, other captions kept 0.087, junk kept 0.000, AUC other 0.963,
AUC junk 1.000 -- every bound of issue 13's item 3 and done-when met on a split nothing was chosen on.
(At 0.4, printed in the same sitting for the record, deciding nothing: 0.954 / 0.113.)"""
import json

import pytest

from tools import eval_relevance
from tools import relevance_data as rd


def _scored(split):
    """One split's figures, printed (the done-when asks for them printed by a test)."""
    result = eval_relevance.evaluate(split)
    print(f"\n{split}: " + json.dumps(result))
    return result


@pytest.fixture(scope="module")
def figures():
    return _scored("test")


def test_the_met_targets_hold_on_the_test_split(figures):
    f = figures
    assert f["photos"] >= 84 and f["pairs"] == 9 * f["photos"]
    assert f["threshold"] == json.load(open(eval_relevance.ScorerConfig().model_path))["threshold"]
    assert f["auc_boiler"] >= 0.95, f  # own caption above boilerplate, credits, promo, file names
    assert f["kept_boiler"] <= 0.05, f
    # Measured on this split (2026-11-25, fourteenth round, the widened split's one score): AUC
    # other 0.961, recall 0.917 (77 of 84; the lowest own caption kept 0.54, the highest missed
    # 0.396; the first 57 alone: 0.954 / 0.947; the tenth split, spent: 0.800): issue 13's targets, met.
    # At the seventeenth round's threshold 0.5 (fourth score, not fresh): recall 0.917 (77 of 84) again.
    assert f["auc_cross"] >= 0.9, f  # own caption above three other photos' captions
    assert f["recall_at_threshold"] >= 0.9, f  # >= 90% of correct human captions kept
    # A ceiling, not the target (that is the expected failure below): guard against a scorer that
    # keeps far more other photos' captions than measured (0.123: 31 of 252 at 0.4; 0.107: 27 at 0.5).
    assert f["kept_cross"] <= 0.25, f


@pytest.mark.xfail(strict=True, reason="issue 13's bound on other photos' captions is missed on the "
                   "fourteenth test split: 0.107 kept at the shipped threshold 0.5 (27 of 252; seventeenth "
                   "round, fourth score, not fresh); 0.123 at the earlier threshold 0.4 (31 of 252) on the "
                   "widened split's one score (84 photos; the first 57 alone, first score: 0.175; the 27 "
                   "added: 0.099), the thirteenth round's model (844 photos); 22 of the 31 are captions "
                   "of photos of the same kind (rabbits, colorimeters and lab boxes, groups of people, "
                   "vehicles), 9 of another kind; docs/scoring.md")
def test_other_captions_bound_at_the_default_threshold(figures):
    """<= 10% of other photos' captions reach the model's own threshold."""
    assert figures["kept_cross"] <= 0.10, figures


@pytest.fixture(scope="module")
def figures_test2():
    return _scored(rd.TEST2)


def test_the_met_targets_hold_on_the_second_test_split(figures_test2):
    """Issue 13's targets on test2, the split built and scored once in the sixteenth round (nothing
    tuned on it; docs/scoring.md, "Sixteenth round")."""
    f = figures_test2
    assert f["photos"] >= 70 and f["pairs"] == 9 * f["photos"]
    assert f["threshold"] == json.load(open(eval_relevance.ScorerConfig().model_path))["threshold"]
    # Measured on its one score (2026-11-25, the shipped scorer.json b9b683ba, threshold 0.4): recall
    # 0.943 (66 of 70; the lowest own caption kept 0.459, the highest missed 0.364), AUC other 0.949,
    # AUC junk 0.999, junk kept 0.000 (the highest junk score 0.023): issue 13's targets, met.
    # At the seventeenth round's threshold 0.5 (third score, scorer.json a8d0c597, not fresh): recall
    # 0.900 (63 of 70: met exactly, at the bound), AUC other 0.949, AUC junk 0.999, junk kept 0.000.
    assert f["recall_at_threshold"] >= 0.9, f
    assert f["auc_cross"] >= 0.9, f
    assert f["auc_boiler"] >= 0.95, f
    assert f["kept_boiler"] <= 0.05, f
    # A ceiling, not the target (the expected failure below): measured 0.119 (25 of 210) at 0.4, 0.105 (22) at 0.5.
    assert f["kept_cross"] <= 0.25, f


@pytest.mark.xfail(strict=True, reason="issue 13's bound on other photos' captions is missed on test2 "
                   "(seventeenth round, its third score, not fresh: 0.105 kept at the shipped threshold 0.5, 22 of 210, "
                   "scorer.json a8d0c597; sixteenth round, its one score, 2026-11-25): 0.119 kept at the threshold 0.4 "
                   "(25 of 210; 15 of them captions of photos of the same kind: cats, flowers, food, "
                   "scenery; 10 of another kind), scorer.json b9b683ba; second score after the naturalness refit (219f143e): 0.110; docs/scoring.md")
def test_other_captions_bound_on_the_second_test_split(figures_test2):
    """<= 10% of other photos' captions reach the model's own threshold."""
    assert figures_test2["kept_cross"] <= 0.10, figures_test2


@pytest.fixture(scope="module")
def figures_test3():
    return _scored(rd.TEST3)


def test_every_bound_holds_on_the_third_test_split(figures_test3):
    """Issue 13's bounds on test3, the seventeenth round's split: built without a score, scored once
    with the model whose threshold the registered rule chose on val (docs/scoring.md, "Seventeenth
    round").  Every later run is a re-score of the same model, not a new estimate."""
    f = figures_test3
    assert f["photos"] >= 65 and f["pairs"] == 9 * f["photos"]
    assert f["threshold"] == json.load(open(eval_relevance.ScorerConfig().model_path))["threshold"]
    # Measured on its one score (2026-11-25, scorer.json a8d0c597, threshold 0.5): recall 0.923 (60 of
    # 65), other captions kept 0.087 (17 of 195), junk kept 0.000, AUC other 0.963, AUC junk 1.000.
    assert f["recall_at_threshold"] >= 0.9, f  # >= 90% of correct human captions kept
    assert f["kept_cross"] <= 0.10, f  # <= 10% of other photos' captions kept
    assert f["kept_boiler"] <= 0.05, f  # <= 5% of boilerplate kept
    assert f["auc_cross"] >= 0.9, f
    assert f["auc_boiler"] >= 0.95, f


def test_the_last_line_printed_is_the_json(capsys, monkeypatch):
    monkeypatch.setattr(eval_relevance, "evaluate", lambda split, model, threshold, data: {"split": split, "photos": 1})
    assert eval_relevance.main(["--split", "val"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last) == {"split": "val", "photos": 1}


def test_the_command_takes_the_third_test_split(capsys, monkeypatch):
    """``python -m tools.eval_relevance --split test3`` (the seventeenth round's one score was run
    this way) takes the split and prints its JSON last; ``evaluate`` is replaced here, the figures
    are scored above."""
    seen = []
    monkeypatch.setattr(eval_relevance, "evaluate",
                        lambda split, model, threshold, data: seen.append(split) or {"split": split})
    assert eval_relevance.main(["--split", rd.TEST3]) == 0
    assert seen == ["test3"] and json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == {"split": "test3"}
    rows = rd.photos(rd.TEST3)
    assert len(rows) >= 60 and len(rd.labelled_pairs(rows, rd.TEST3)) == 9 * len(rows)


def test_another_labelled_file_is_scored_the_same_way(tmp_path):
    """An independent held-out set in the same format, with its own split name."""
    from tools import relevance_data as rd

    rows = rd.photos("val")[:4]
    path = tmp_path / "held_out.jsonl"
    path.write_text("".join(json.dumps({**r, "split": "holdout"}) + "\n" for r in rows))
    f = eval_relevance.evaluate("holdout", data=str(path))
    assert f["photos"] == 4 and f["pairs"] == 36 and 0.0 <= f["auc_cross"] <= 1.0
