"""tools/train_real.py's row weights: a photo's crops together weigh as much as the photo
(eighth round, docs/scoring.md), the shipped model records the recipe and the photos it was fitted
with, and trying the recipe writes into its work folder, not over the shipped model."""
import dataclasses
import json

import numpy as np
import pytest

from scoring.scorer_model import DEFAULT_MODEL
from tools import relevance_data as rd
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


def test_the_shipped_model_was_fitted_on_todays_naturalness():
    """The scorer's ``natural`` feature is the naturalness filter's score: a naturalness head or
    band shipped without refitting the scorer leaves it fitted on one score and run on another
    (the fifteenth round found this after the sixth naturalness round). Refit with the documented
    command (docs/scoring.md, "The shipped default") when this fails."""
    info = json.load(open(DEFAULT_MODEL))["info"]
    assert info.get("image_models") == train_real.image_models()


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


def test_the_score_only_splits_cannot_be_trained_on(monkeypatch, capsys):
    """test2 (sixteenth round), test3 (seventeenth) and spent are scored, never fitted: ``--splits``
    refuses them."""
    monkeypatch.setattr(train_real, "train", lambda *a, **k: pytest.fail("train called"))
    assert {rd.SPENT, rd.TEST2, rd.TEST3} <= set(rd.SCORE_ONLY) and not set(rd.SCORE_ONLY) & set(rd.SPLITS)
    for split in rd.SCORE_ONLY:
        with pytest.raises(SystemExit):
            train_real.main(["--splits", "train", split])
        assert "invalid choice" in capsys.readouterr().err


class _Item:
    """The fields of an ImageItem that real_pairs and real_rows read."""

    def __init__(self, sha):
        self.sha256, self.image_url, self.meta = sha * 4, "https://images.example.org/" + sha, {"embedding": None}

    def facts(self):
        from pipeline.core.records import ImageFacts

        return ImageFacts(image_url=self.image_url, data=b"", sha256=self.sha256)


def _rows(monkeypatch, scenery):
    from tools import relevance_data as rd

    photos = [{"source": "s", "package": "p", "path": f"/x/{c}.jpg", "sha256": c * 16, "split": "train",
               "caption": f"photo {c} of a thing on a table in a room"} for c in "abcd"]
    crops = [{"source": "train_scenery", "package": "p", "path": "/x/c.jpg", "box": [0, 0, 0.5, 0.5],
              "parent_sha256": "c" * 16, "sha256": "e" * 16, "split": "train", "grey_std": 30.0,
              "caption": "white clouds in a blue sky above the roof"},
             {"source": "train_scenery", "package": "p", "path": "/x/a.jpg", "box": [0, 0.5, 1, 1],
              "parent_sha256": "a" * 16, "sha256": "f" * 16, "split": "train", "grey_std": 5.0,
              "caption": "a plain grey wall with nothing on it at all"}]
    monkeypatch.setattr(rd, "photos", lambda split=None, path=rd.DATA: crops if path == rd.SCENERY else photos)
    monkeypatch.setattr(train_real, "image_facts", lambda rows, facts=None: [_Item(r["sha256"][0]) for r in rows])
    return train_real.real_rows(["train"], crops=False, facts=object(), scenery=scenery)


def test_a_scenery_crop_takes_its_photos_picture_id_and_leaves_the_photos_pairs_alone(monkeypatch):
    """Twelfth round: a crop's own rows and its photo's leave each other out of the memory (one
    picture id), and the photos' labelled pairs are the same with or without the crops; a crop
    whose grey levels hardly vary (a plain wall, under SCENERY_MIN_STD) is left out."""
    pairs0, kinds0, pics0, _, entries0, _, sources0 = _rows(monkeypatch, False)
    pairs1, kinds1, pics1, own1, entries1, scenes1, sources1 = _rows(monkeypatch, True)
    n = len(pairs0)
    assert [p.candidate.text for p in pairs1[:n]] == [p.candidate.text for p in pairs0]
    assert list(pics1[:n]) == list(pics0) and list(kinds1[:n]) == list(kinds0)
    crop_pics = set(pics1[n:].tolist())
    assert crop_pics == {2} and own1[n:].all()  # photo "c" is the third photo: id 2
    assert (2, None, "white clouds in a blue sky above the roof") in entries1
    assert len(entries1) == len(entries0) + 1  # the plain wall is not in
    assert {pid for pid, _, cap in scenes1 if "clouds" in cap} == {2}
    crop_texts = [p.candidate.text for p in pairs1[n:]]
    assert crop_texts[0] == "white clouds in a blue sky above the roof"
    assert "a plain grey wall with nothing on it at all" not in crop_texts
    assert sources0 == sources1 == {0: "s", 1: "s", 2: "s", 3: "s"}  # a crop is of its photo's source


def _pair(text, sha):
    from pipeline.core.records import Candidate, ImageFacts, Pair

    c = Candidate(page_url="u", image_url="i" + sha, text_source="alt", text=text, raw_text=text)
    return Pair(key=sha, candidate=c, image=ImageFacts(image_url="i" + sha, data=b"", sha256=sha))


_CAPS = ["a red car on a road", "a blue car on a road", "a cat on a sofa", "a red car on a road"]
_EMBS = [np.array([1.0, 0, 0]), np.array([0.9, 0.1, 0]), np.array([0, 1.0, 0]), np.array([0.95, 0.05, 0])]


def _hard_inputs():
    pairs = [_pair(c, str(i)) for i, c in enumerate(_CAPS)] + [_pair("click to enlarge", "0")]
    kinds = np.array(["own"] * 4 + ["junk"])
    pics, own = np.array([0, 1, 2, 3, 0]), np.ones(5, bool)
    entries = [(i, e, c) for i, (e, c) in enumerate(zip(_EMBS, _CAPS))]
    return pairs, kinds, pics, own, entries


def test_hard_negatives_are_the_nearest_photos_captions_on_the_photos_own_picture():
    """Fifteenth round: each photo gets the captions of its k nearest other photos (image
    embedding) as match negatives on its own picture; a neighbour with the same caption is
    skipped, and each row names the neighbour so the memory can leave it out."""
    pairs, kinds, pics, own, entries = _hard_inputs()
    caps = _CAPS
    hp, hpics, hnb = train_real.hard_rows(pairs, kinds, pics, own, entries, 1)
    assert list(hpics) == [0, 1, 2, 3]
    assert list(hnb) == [1, 3, 1, 1]  # photo 0's nearest, photo 3, has its caption: skipped
    assert [p.candidate.text for p in hp] == [caps[1], caps[3], caps[1], caps[1]]
    assert [p.image.sha256 for p in hp] == ["0", "1", "2", "3"]  # on the photo's own picture
    assert train_real.hard_rows(pairs, kinds, pics, own, entries, 0)[0] == []


def test_hard_negatives_from_other_sources_skip_the_photos_own_source():
    """Sixteenth round's D: with sources, a neighbour of the photo's own source is skipped (its
    caption is often true of the photo too) and the next photo of another source is taken."""
    pairs, kinds, pics, own, entries = _hard_inputs()
    source_of = {0: "cars", 1: "cars", 2: "pets", 3: "street"}
    hp, hpics, hnb = train_real.hard_rows(pairs, kinds, pics, own, entries, 1, source_of)
    assert list(hpics) == [0, 1, 2, 3]
    # photo 0: 3 has its caption, 1 is of its source -> 2; photo 1: 3 (another source);
    # photo 2: 1 (nearest at [0, 1, 0] after itself, another source); photo 3: 1
    assert list(hnb) == [2, 3, 1, 1]
    assert all(source_of[int(a)] != source_of[int(b)] for a, b in zip(hpics, hnb))
    assert [p.image.sha256 for p in hp] == ["0", "1", "2", "3"]
    # no other source left: no row for that photo
    one = {0: "x", 1: "x", 2: "x", 3: "x"}
    assert train_real.hard_rows(pairs, kinds, pics, own, entries, 2, one)[0] == []


class _Embed:
    def embed(self, text):
        return {"t": np.array([0, 1.0, 0])}[text]


def test_the_neighbours_of_a_photos_own_rows_can_leave_out_its_source():
    """Sixteenth round's E: a photo's own rows get knn_* from the memory without every picture
    of its source (as a new source meets the memory); mem_* still leave out only the photo, and
    crops (not own rows) see the whole memory."""
    from scoring.memory import FEATURES, NEIGHBOUR_FEATURES, CaptionMemory

    names = FEATURES + NEIGHBOUR_FEATURES
    # pictures 0, 1 of source "a" (look-alikes), 2 of source "b"
    m = CaptionMemory([0, 1, 2], np.array([[1.0, 0, 0], [0.95, 0.05, 0], [0.5, 0.5, 0]]), np.eye(3))
    emb = np.array([1.0, 0, 0])
    p = _pair("t", "0")
    p = dataclasses.replace(p, image=dataclasses.replace(p.image, meta={"embedding": emb.astype(np.float16)}))
    pairs = [p, p]
    pics, own = np.array([0, 0]), np.array([True, False])
    knn_out = train_real.source_pictures({0: "a", 1: "a", 2: "b"})
    assert sorted(knn_out[0]) == [0, 1] and knn_out[2] == [2]
    X0, X1 = np.zeros((2, len(names))), np.zeros((2, len(names)))
    train_real.memory_columns(X0, names, pairs, _Embed(), m, pics, own)
    train_real.memory_columns(X1, names, pairs, _Embed(), m, pics, own, knn_out=knn_out)
    col = names.index
    # the own row: the nearest neighbour is picture 2 (of source b), not the look-alike 1
    assert X0[0, col("knn_sim")] > 0.99 and X1[0, col("knn_sim")] < 0.8
    assert np.allclose(X1[0, [col(n) for n in FEATURES]], X0[0, [col(n) for n in FEATURES]])
    assert np.allclose(X1[1], X0[1])  # a crop's row sees the whole memory either way


def test_the_new_options_are_off_by_default_and_named_on_the_command_line(monkeypatch):
    """The shipped recipe is unchanged unless a round's rule passed: the options default off
    (their constants) and main passes them on."""
    seen = {}

    def train(out, splits, work, *rest):
        seen["rest"] = rest
        return {"model": out}

    monkeypatch.setattr(train_real, "train", train)
    assert train_real.main(["--work", "w"]) == 0
    assert seen["rest"][-2:] == (train_real.HARD_OTHER_SOURCES, train_real.KNN_LEAVE_OUT_SOURCE)
    assert train_real.main(["--work", "w", "--hard-negatives", "3", "--hard-other-sources",
                            "--knn-leave-out-source"]) == 0
    assert seen["rest"][-3:] == (3, True, True)
    assert train_real.main(["--work", "w", "--no-hard-other-sources", "--no-knn-leave-out-source"]) == 0
    assert seen["rest"][-2:] == (False, False)


def test_the_memory_leaves_out_several_pictures():
    from scoring.memory import CaptionMemory

    m = CaptionMemory([0, 1, 2], np.array([[1.0, 0, 0], [0.9, 0.1, 0], [0, 1.0, 0]]), np.eye(3))
    emb, text = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    assert m.features(emb, text, exclude=0)["knn_sim"] > 0.9  # picture 1 is left
    assert m.features(emb, text, exclude=[0, 1])["knn_sim"] < 0.1  # only picture 2


def _row(t, own, cross, boiler, n_own=100, n_cross=300, n_boiler=500):
    return {"threshold": t, "own": own, "cross": cross, "boiler": boiler, "n_own": n_own, "n_cross": n_cross,
            "n_boiler": n_boiler, "recall": own / n_own, "kept_cross": cross / n_cross, "kept_boiler": boiler / n_boiler}


def test_the_operating_point_maximises_the_worse_margin():
    """Seventeenth round: t* maximises min(recall - 0.90, 0.10 - other kept); the margin is the
    worse of the two bounds, not their sum."""
    table = [_row(0.30, 99, 60, 0),   # recall +0.09, other -0.10: m = -0.10
             _row(0.35, 95, 27, 0),   # +0.05, +0.01: m = +0.01
             _row(0.40, 93, 24, 0),   # +0.03, +0.02: m = +0.02  <- best
             _row(0.45, 91, 15, 0),   # +0.01, +0.05: m = +0.01
             _row(0.50, 85, 6, 0)]    # -0.05, +0.08: m = -0.05
    c = train_real.choose_threshold(table)
    assert c["threshold"] == 0.40 and c["ship"] and c["feasible"]
    assert np.isclose(c["margin"], 0.02)
    # a sum of margins would pick 0.50 (+0.03) or 0.45 (+0.06): the rule does not
    assert [round(train_real.margin(r), 6) for r in table] == [-0.1, 0.01, 0.02, 0.01, -0.05]


def test_equal_margins_go_to_the_higher_threshold():
    table = [_row(0.35, 93, 24, 0), _row(0.375, 92, 24, 0), _row(0.40, 92, 21, 0), _row(0.425, 90, 6, 0)]
    # margins: +0.02 (other-bound), +0.02 (recall-bound), +0.02, 0.00: three tie at 0.02
    c = train_real.choose_threshold(table)
    assert c["threshold"] == 0.40 and c["ship"]
    # float noise does not break a tie: 0.1 - 15/300 is 0.05 in floats, 95/100 - 0.9 is 0.04999...
    noisy = [_row(0.35, 97, 15, 0), _row(0.40, 95, 6, 0)]
    assert train_real.margin(noisy[0]) > train_real.margin(noisy[1])  # the noise this guards against
    assert train_real.choose_threshold(noisy)["threshold"] == 0.40


def test_thresholds_over_the_junk_bound_are_not_candidates():
    """A threshold keeping more than 5% of junk is out, however good its margin."""
    table = [_row(0.30, 96, 12, 30), _row(0.35, 95, 27, 26), _row(0.40, 91, 27, 20)]
    # 0.30: m = +0.06 but junk 0.06; 0.35: m = +0.01 but junk 0.052; 0.40: m = +0.01, junk 0.04
    c = train_real.choose_threshold(table)
    assert c["threshold"] == 0.40 and c["feasible"]
    assert np.isclose(c["margin"], 0.01)


def test_no_feasible_threshold_keeps_the_default_and_a_negative_margin_does_not_ship():
    over = [_row(0.30, 99, 0, 40), _row(0.35, 99, 0, 30)]  # junk 0.08, 0.06: none feasible
    c = train_real.choose_threshold(over, default=0.4)
    assert c == {"threshold": 0.4, "margin": None, "ship": False, "feasible": False}
    short = [_row(0.40, 88, 36, 0), _row(0.45, 85, 33, 0)]  # m = -0.02, -0.05
    c = train_real.choose_threshold(short)
    assert c["threshold"] == 0.40 and not c["ship"] and np.isclose(c["margin"], -0.02)
    edge = [_row(0.45, 90, 30, 0)]  # both bounds met exactly: m = 0 ships
    assert train_real.choose_threshold(edge)["ship"]


def test_the_sweep_counts_what_reaches_each_threshold():
    """tools.eval_relevance.sweep: the counts behind the rule, junk and file names together."""
    from tools.eval_relevance import sweep

    scores = np.array([0.9, 0.45, 0.3, 0.5, 0.2, 0.45, 0.1])
    kinds = np.array(["own", "own", "own", "cross", "cross", "junk", "filename"])
    rows = sweep(scores, kinds, (0.3, 0.45, 0.5))
    assert [(r["own"], r["cross"], r["boiler"]) for r in rows] == [(3, 1, 1), (2, 1, 1), (1, 1, 0)]
    assert rows[1]["recall"] == 2 / 3 and rows[1]["kept_boiler"] == 0.5 and rows[0]["n_boiler"] == 2


def test_choose_threshold_fits_on_train_only(monkeypatch, capsys):
    monkeypatch.setattr(train_real, "train", lambda *a, **k: pytest.fail("train called"))
    assert train_real.main(["--choose-threshold", "--splits", "train", "val"]) == 2
    assert "train only" in capsys.readouterr().err


def test_choose_threshold_prints_the_table_and_the_choice(monkeypatch, capsys):
    table = [_row(t, own, cross, 0) for t, own, cross in ((0.3, 97, 40), (0.4, 93, 27), (0.5, 89, 18))]
    monkeypatch.setattr(train_real, "train", lambda *a: {"real_pairs": 1, "val_sweep": table})
    assert train_real.main(["--choose-threshold", "--work", "w"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert any(line.startswith("0.400") and "+0.0100" in line for line in out)
    assert "t* = 0.400" in out[-2] and "ships" in out[-2]
    assert json.loads(out[-1])["choice"]["threshold"] == 0.4
