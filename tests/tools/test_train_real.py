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
