"""The shipped scorer's recipe: real photos with human captions, the sample web a minor part.

    python -m tools.train_real [--splits train] [--work out/scorer-real]   # WORK/scorer.json
    python -m tools.train_real --splits train val --out scoring/models/scorer.json   # the shipped one

Training rows (``tools/relevance_data.py``, ``tools/eval_relevance.py``): each photo of the
given splits with its own caption (1), three other photos' captions, four junk texts and its
file name (0); the same captions on three crops of each training photo (a caption still fits
three quarters of its picture: more views for the match part), each crop weighing ``CROP_WEIGHT``
(1/3: a photo's crops together weigh as much as the photo); and the sample web's labelled
pairs (``generate`` with seed 1; the demo uses seed 0), weighing ``SAMPLEWEB_SHARE`` of each
part.  The model is a :class:`scoring.scorer_model.ProductModel`:

- ``text``: ``TEXT_INTRINSIC`` features, own captions against junk texts and file names;
- ``match``: ``MATCH_FEATURES``, own captions against other photos' captions.

The scene-word regressions (``scoring/scene.py``, ``scn_*``) are fitted on the training photos'
layouts and captions and stored in the model; a training photo's rows (its own picture and its
crops) get the ``scn_*`` features from regressions fitted without its fold (``SCENE_FOLDS``, by
photo), as a new picture would, so the match part does not learn an in-sample fit.

With ``--scenery`` (twelfth round; not the shipped recipe) the scenery crops of train photos
(``scoring/data/scenery_crops.jsonl``: a sky, water, grass or city lights cut out of a train photo and
captioned by eye) are photos of their own, each under its photo's picture id; those whose grey levels
vary less than ``SCENERY_MIN_STD`` are left out.

Each part is fitted with balanced classes.  When ``val`` is not among the training splits, the
figures of ``tools/eval_relevance.py`` on val are printed (the recipe was chosen on them);
the last line is JSON.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import json
import os
import sys

import numpy as np
from PIL import Image

from filters.backbone import HEAD_FILE, MODELS_DIR, SECOND_HEAD_FILE
from filters.naturalness import NaturalnessConfig
from scoring.features import FEATURE_NAMES, TEXT_INTRINSIC, FeatureExtractor, decode_embedding
from scoring.label_space import FEATURES as WN_FEATURES
from scoring.memory import FEATURES as MEMORY_FEATURES
from scoring.memory import NEIGHBOUR_FEATURES
from scoring.memory import CaptionMemory
from scoring.minilm import MiniLM
from scoring.scene import FEATURES as SCENE_FEATURES
from scoring.scene import SceneModel, scene_features
from scoring.scorer_model import GatedModel, ProductModel, ScorerModel, model_threshold
from tools import relevance_data as rd
from tools import sampleweb
from tools.eval_relevance import figures, image_facts, make_pair, neutral_url, real_pairs, split_scores, sweep
from tools.relevance_data import SPLITS
from tools.train_scorer import ImageAnalyser, export_sampleweb, labelled_pairs

MATCH_FEATURES = ["label_entropy", "label_margin", "label_p1", "natural", *WN_FEATURES, *NEIGHBOUR_FEATURES,
                  "col_any", "col_mean", "col_min", *SCENE_FEATURES]
TEXT_KINDS = ("own", "junk", "filename")
MATCH_KINDS = ("own", "cross", "hard")
# Hard negatives (fifteenth round, docs/scoring.md): the captions of a training photo's nearest
# other training photos (image embedding), as match-part negatives on its own picture, each
# weighing HARD_WEIGHT (1/k).  0: none (the shipped recipe unless the round's rule passed).
HARD_NEGATIVES = 0
HARD_WEIGHT = None  # None: 1 / k, a photo's hard negatives together weigh as much as one pair
# Sixteenth round (docs/scoring.md, not the shipped recipe unless its rule passed): hard negatives
# drawn only from photos of another source (a training photo's nearest photos are mostly of its own
# source, whose captions are often true of it too), and the ``knn_*`` features of a training photo's
# own rows computed without its whole source, as a picture from a new source meets the memory.
HARD_OTHER_SOURCES = False
KNN_LEAVE_OUT_SOURCE = False
SAMPLEWEB_SHARE = 0.1
# The shipped model's operating point (score.threshold's default), chosen on val with the model
# fitted on train by a rule fixed before the sweep: the highest of 0.5, 0.45, 0.4, 0.35, 0.3 at
# which val keeps >= 90% of own captions, <= 10% of other photos' captions and <= 5% of junk
# (2026-11-24: 0.4 -> 0.903 / 0.095 / 0.000; 0.45 -> 0.864 / 0.089; docs/scoring.md).  Fifth
# round (val of 214 photos, scene words; the rule: the highest meeting recall >= 0.90): 0.4 ->
# 0.911 / 0.089 / 0.000; 0.45 -> 0.888 / 0.084.  Seventeenth round (2026-11-25, the rule below,
# ``--choose-threshold``; val of 313, today's recipe fitted on train): t* = 0.5, m(t*) = +0.0042
# (0.904 own / 0.086 other / 0.000 junk; at 0.4 0.949 / 0.122 missed the other-caption bound).
SHIPPED_THRESHOLD = 0.5
# Seventeenth round (docs/scoring.md): the operating point is the model's and is re-derived with it,
# by a rule a tool applies (``--choose-threshold``, :func:`choose_threshold`): the recipe fitted on
# train, val swept over THRESHOLD_GRID, t* maximises the margin min(recall - RECALL_TARGET,
# CROSS_BOUND - other kept) among thresholds keeping <= JUNK_BOUND of junk; ties to the higher t.
THRESHOLD_GRID = tuple(round(0.3 + 0.025 * i, 3) for i in range(13))  # 0.300, 0.325, ..., 0.600
RECALL_TARGET, CROSS_BOUND, JUNK_BOUND = 0.90, 0.10, 0.05
CROPS = ((0.0, 0.0, 0.75, 0.75), (0.25, 0.25, 1.0, 1.0), (0.125, 0.0, 0.875, 1.0))
# Each crop row weighs 1/len(CROPS): a photo's crops together weigh as much as the photo itself.
# At weight 1 the crops were three quarters of the real rows, near-copies whose neighbours and
# memory know their photo, and the match part learnt to trust the neighbours more than a new
# picture warrants (eighth round, docs/scoring.md: val recall at 0.4 0.911 -> 0.946, other
# captions kept 103 -> 98 of 771, AUC other 0.955 -> 0.963, fitted on train).
CROP_WEIGHT = 1.0 / len(CROPS)
C_TEXT, C_MATCH = 1.0, 1.0
# Scenery crops (twelfth round) whose grey levels vary less than this are left out: to the
# embedding a near-uniform sky is much like the white background of a cut-out, whose nearest
# memory pictures they became (docs/scoring.md, "Twelfth round": S and S2).
SCENERY_MIN_STD = 20.0
SCENE_FOLDS = 5
SAMPLEWEB_KIND = {"descriptive": "own", "other_photo": "cross", "filename": "filename"}


def crop_bytes(data: bytes, box) -> bytes:
    with Image.open(io.BytesIO(data)) as im:
        im = im.convert("RGB")
        w, h = im.size
        c = im.crop((int(box[0] * w), int(box[1] * h), int(box[2] * w), int(box[3] * h)))
        out = io.BytesIO()
        c.save(out, "JPEG", quality=90)
        return out.getvalue()


def scenery_rows(min_std: float = SCENERY_MIN_STD) -> list[dict]:
    """The scenery crops whose ``grey_std`` reaches ``min_std``."""
    return [r for r in rd.photos("train", rd.SCENERY) if r["grey_std"] >= min_std]


def groups(splits, scenery: bool = False):
    """(split, data file) groups of real photos: each split's photos, then, with ``scenery`` and
    ``train`` among the splits, the scenery crops of train photos (twelfth round), whose other
    captions are drawn among themselves so the photos' own labelled pairs do not change."""
    out = [(split, rd.DATA) for split in splits]
    return out + [("train", rd.SCENERY)] if scenery and "train" in splits else out


def real_rows(splits, crops: bool = True, facts=None, scenery: bool = False,
              scenery_min_std: float = SCENERY_MIN_STD):
    """(pairs, kinds, picture ids, own-picture flags, memory entries, scene rows, sources) of the
    real labelled pairs of ``splits`` plus crops of their photos (sources: picture id -> the
    photo's ``source``).  A photo's own rows are flagged
    (the memory leaves the picture out for them); a crop's rows are not (a near-copy of a known
    picture).  Memory entries: (picture id, embedding, caption); scene rows: (picture id,
    layout, caption).  A scenery crop (``scenery``) takes its photo's picture id: the photo's own
    rows leave the crop out of the memory, the crop's own rows leave the photo out, and both
    fall in the same scene-word fold."""

    facts = facts or ImageAnalyser()
    pairs, kinds, pics, own, entries, scenes = [], [], [], [], [], []
    base, pid_of, source_of = 0, {}, {}
    for split, data in groups(splits, scenery):
        rows = scenery_rows(scenery_min_std) if data == rd.SCENERY else rd.photos(split, data)
        items = image_facts(rows, facts)
        p, _, k, photo = real_pairs(split, items, data=data, rows=rows)
        ids = [pid_of[r["parent_sha256"]] if r.get("parent_sha256") else base + i for i, r in enumerate(rows)]
        pid_of.update((r["sha256"], pid) for r, pid in zip(rows, ids) if not r.get("parent_sha256"))
        for r, pid in zip(rows, ids):  # a scenery crop is of its photo's source
            source_of.setdefault(pid, r["source"])
        pairs += p
        kinds += list(k)
        pics += [ids[int(i)] for i in photo]
        own += [True] * len(p)
        entries += [(ids[i], decode_embedding(it.meta.get("embedding")), r["caption"])
                    for i, (r, it) in enumerate(zip(rows, items))]
        scenes += [(ids[i], (it.meta or {}).get("layout"), r["caption"]) for i, (r, it) in enumerate(zip(rows, items))]
        if not crops:
            base += len(rows)
            continue
        for i, r in enumerate(rows):
            data_i = rd.photo_bytes(r)
            texts = [(x.candidate.text, kk) for x, kk, ph in zip(p, k, photo)
                     if ph == i and kk in MATCH_KINDS]
            for j, box in enumerate(CROPS):
                item = facts.item(crop_bytes(data_i, box), neutral_url(r["sha256"]) + f"?crop={j}")
                for text, kk in texts:
                    pairs.append(make_pair(item, text))
                    kinds.append(kk)
                    pics.append(ids[i])
                    own.append(False)
        base += len(rows)
    return pairs, np.array(kinds), np.array(pics), np.array(own), entries, scenes, source_of


def hard_rows(pairs, kinds, pics, own, entries, k: int, source_of=None):
    """(pairs, picture ids, neighbour ids) of the hard negatives: for each photo with an own
    caption row, the captions of its ``k`` nearest other photos among ``entries`` (cosine of the
    image embedding; a neighbour whose caption is the photo's own is skipped), paired with the
    photo's own picture.  The neighbour's id goes with the row so that the memory can leave it
    out: on a new source a look-alike's caption is not in the memory.  With ``source_of``
    (picture id -> source) only photos of another source are neighbours (sixteenth round)."""

    first = {}
    for p, kk, pid, o in zip(pairs, kinds, pics, own):
        if o and kk == "own":
            first.setdefault(int(pid), p)
    ents, seen = [], set()
    for pid, emb, cap in entries:
        if emb is not None and pid in first and pid not in seen:
            seen.add(pid)
            ents.append((pid, np.asarray(emb, np.float64), cap))
    if k <= 0 or len(ents) < 2:
        return [], np.zeros(0, np.int64), np.zeros(0, np.int64)
    E = np.array([e for _, e, _ in ents])
    E /= np.linalg.norm(E, axis=1, keepdims=True) + 1e-12
    S = E @ E.T
    out, out_pics, out_nb = [], [], []
    for a, (pid, _, cap) in enumerate(ents):
        p, got = first[pid], 0
        for b in np.argsort(-S[a], kind="stable"):
            nb_pid, _, nb_cap = ents[int(b)]
            if nb_pid == pid or nb_cap == cap:
                continue
            if source_of is not None and source_of.get(nb_pid) == source_of.get(pid):
                continue
            c = dataclasses.replace(p.candidate, text=nb_cap, raw_text=nb_cap)
            out.append(dataclasses.replace(p, candidate=c))
            out_pics.append(pid)
            out_nb.append(nb_pid)
            got += 1
            if got == k:
                break
    return out, np.array(out_pics, np.int64), np.array(out_nb, np.int64)


def fit_scene(scenes, pids=None) -> SceneModel:
    """The scene-word regressions on the photos of ``scenes`` (those in ``pids`` when given)."""
    keep = [(lay, cap) for pid, lay, cap in scenes if lay and (pids is None or pid in pids)]
    return SceneModel.fit([lay for lay, _ in keep], [cap for _, cap in keep])


def scene_columns(X, names, pairs, pics, scenes) -> SceneModel:
    """Overwrite the scn_* columns of the real rows X with out-of-fold regressions (by photo:
    a photo's own rows and its crops); returns the regressions fitted on every photo."""

    cols = [names.index(n) for n in SCENE_FEATURES]
    all_ids = {pid for pid, _, _ in scenes}
    for f in range(SCENE_FOLDS):
        model = fit_scene(scenes, {pid for pid in all_ids if pid % SCENE_FOLDS != f})
        for i in np.where(pics % SCENE_FOLDS == f)[0]:
            p = pairs[i]
            v = scene_features(p.candidate.text, (p.image.meta or {}).get("layout"), model)
            X[i, cols] = [v[n] for n in SCENE_FEATURES]
    return fit_scene(scenes)


def sampleweb_rows(work: str, seed: int = 1):
    """(pairs, kinds) of the generated sample web's labelled pairs."""
    import pyarrow.parquet as pq


    web = os.path.join(work, "web")
    if not os.path.isfile(os.path.join(web, "truth.jsonl")):
        sampleweb.generate(web, seed=seed)
    path = os.path.join(work, "labelled.parquet")
    export_sampleweb(web, path)
    pairs, _, _ = labelled_pairs(path)
    kinds = [SAMPLEWEB_KIND.get(k, "junk") for k in pq.read_table(path, columns=["text_kind"]).column(0).to_pylist()]
    return pairs, np.array(kinds)


def build_memory(entries, sw_pairs=(), sw_kinds=(), first_id: int = 0):
    """A :class:`scoring.memory.CaptionMemory` of the real photos' captions and the sample
    web's descriptive texts (one picture id per distinct stored image); returns it and the
    sample web pairs' picture ids."""

    enc = MiniLM()
    ids, embs, caps, seen = [], [], [], set()
    for pid, emb, cap in entries:
        if emb is not None and (pid, cap) not in seen:
            seen.add((pid, cap))
            ids.append(pid), embs.append(emb), caps.append(cap)
    sw_ids, by_sha = [], {}
    for p, k in zip(sw_pairs, sw_kinds):
        pid = by_sha.setdefault(p.image.sha256, first_id + len(by_sha))
        sw_ids.append(pid)
        emb = decode_embedding((p.image.meta or {}).get("embedding"))
        if k == "own" and emb is not None and (pid, p.candidate.text) not in seen:
            seen.add((pid, p.candidate.text))
            ids.append(pid), embs.append(emb), caps.append(p.candidate.text)
    vecs = np.array([enc.encode([c])[0] for c in caps])
    return CaptionMemory(ids, np.array(embs), vecs), np.array(sw_ids, np.int64)


def source_pictures(source_of) -> dict:
    """Picture id -> the ids of every picture of its source (itself included)."""
    by_source = {}
    for pid, src in source_of.items():
        by_source.setdefault(src, []).append(pid)
    return {pid: by_source[src] for pid, src in source_of.items()}


def memory_columns(X, names, pairs, fx, memory, pics, own, also=None, knn_out=None) -> None:
    """Overwrite the mem_* columns of X: rows of a photo's own picture see the memory
    without that picture (as a new picture would); crops and the sample web see it whole.
    ``also``: per row, one more picture id to leave out (a hard negative's neighbour), -1: none.
    ``knn_out`` (picture id -> picture ids, :func:`source_pictures`): the ``knn_*`` features of
    a photo's own rows leave out those pictures too (sixteenth round's E: its whole source)."""

    feats = MEMORY_FEATURES + NEIGHBOUR_FEATURES
    cols = [names.index(n) for n in feats]
    for i, p in enumerate(pairs):
        emb = decode_embedding((p.image.meta or {}).get("embedding"))
        if emb is None:
            continue
        ex = int(pics[i]) if own[i] else None
        if ex is not None and also is not None and also[i] >= 0:
            ex = [ex, int(also[i])]
        vec = fx.embed(p.candidate.text)
        f = memory.features(emb, vec, exclude=ex)
        if ex is not None and knn_out is not None:
            wide = list(knn_out.get(int(pics[i]), [])) + list(np.atleast_1d(ex))
            f.update({n: v for n, v in memory.features(emb, vec, exclude=wide).items() if n in NEIGHBOUR_FEATURES})
        X[i, cols] = [f[n] for n in feats]


def row_weights(own: np.ndarray) -> np.ndarray:
    """Weights of the real rows: a photo's own rows 1, a crop's ``CROP_WEIGHT``."""
    return np.where(np.asarray(own, bool), 1.0, CROP_WEIGHT)


def fit_part(X, kinds, weights, names_all, names, sel, C):
    keep = np.isin(kinds, sel)
    X, y, w = X[keep][:, [names_all.index(n) for n in names]], (kinds[keep] == "own").astype(int), weights[keep]
    w = w * np.where(y == 1, w[y == 0].sum() / w[y == 1].sum(), 1.0)  # balanced classes
    return ScorerModel.fit(X, y, names, C=C, weight=w / w.mean())


def image_models() -> dict:
    """What the scorer's ``natural`` feature depends on beyond the photos: the committed
    naturalness heads and the second opinion's band.  Recorded in the model's info so that a
    naturalness change shipped without refitting the scorer (a training / serving skew: the
    fifteenth round found one) fails a test instead of passing unseen."""
    digest = {f: hashlib.sha256(open(os.path.join(MODELS_DIR, f), "rb").read()).hexdigest()[:16]
              for f in (HEAD_FILE, SECOND_HEAD_FILE)}
    return {**digest, "second_opinion": NaturalnessConfig.second_opinion}


def margin(row: dict) -> float:
    """m(t) = min(r(t) - 0.90, 0.10 - o(t)): how far the worse of issue 13's two bounds is met
    (negative: missed by that much)."""
    return min(row["recall"] - RECALL_TARGET, CROSS_BOUND - row["kept_cross"])


def choose_threshold(table: list[dict], default: float = SHIPPED_THRESHOLD) -> dict:
    """The seventeenth round's rule on a val sweep (``tools.eval_relevance.sweep`` rows): among
    the thresholds keeping <= JUNK_BOUND of junk, the one of the largest :func:`margin`, ties to
    the higher threshold (fewer wrong texts kept).  ``ship``: the margin there is >= 0 (both
    bounds met on val).  No feasible threshold: ``default`` stays, not shipped."""
    feasible = [r for r in table if r["kept_boiler"] <= JUNK_BOUND]
    if not feasible:
        return {"threshold": default, "margin": None, "ship": False, "feasible": False}
    # Margins are shares of whole pairs: round away float noise so that equal margins tie exactly.
    best = max(feasible, key=lambda r: (round(margin(r), 9), r["threshold"]))
    m = margin(best)
    return {"threshold": best["threshold"], "margin": m, "ship": round(m, 9) >= 0, "feasible": True}


def threshold_table(table: list[dict]) -> str:
    """The val sweep as a table: t, own / other / junk kept (counts and shares), m(t)."""
    lines = ["t      own kept        other kept      junk kept     m(t)    (junk <= %.2f)" % JUNK_BOUND]
    for r in table:
        lines.append(f"{r['threshold']:.3f}  {r['own']:3d}/{r['n_own']} {r['recall']:.3f}  "
                     f"{r['cross']:4d}/{r['n_cross']} {r['kept_cross']:.3f}  "
                     f"{r['boiler']:3d}/{r['n_boiler']} {r['kept_boiler']:.3f}  {margin(r):+.4f}"
                     + ("" if r["kept_boiler"] <= JUNK_BOUND else "  (junk over the bound)"))
    return "\n".join(lines)


def train(out: str, splits=("train",), work: str = "out/scorer-real", sampleweb_share: float = SAMPLEWEB_SHARE,
          crops: bool = True, use_memory: bool = True,
          threshold: float | None = None, scenery: bool = False,
          scenery_min_std: float = SCENERY_MIN_STD, hard_negatives: int = HARD_NEGATIVES,
          hard_other_sources: bool = HARD_OTHER_SOURCES, knn_leave_out_source: bool = KNN_LEAVE_OUT_SOURCE) -> dict:

    fx, facts = FeatureExtractor(), ImageAnalyser()
    names = list(FEATURE_NAMES)
    rp, rk, pics, own, entries, scenes, source_of = real_rows(splits, crops, facts, scenery, scenery_min_std)
    n_real = len(rk)
    hp, hpics, hnb = hard_rows(rp, rk, pics, own, entries, hard_negatives,
                               source_of if hard_other_sources else None)
    also = np.r_[np.full(n_real, -1, np.int64), hnb]
    rp, rk = rp + hp, np.r_[rk, np.array(["hard"] * len(hp))] if hp else rk
    pics, own = np.r_[pics, hpics], np.r_[own, np.ones(len(hp), bool)]
    Xr = fx.transform(rp, progress=True)
    fx.scene = scene_columns(Xr, names, rp, pics, scenes)  # the sample web sees the full fit
    hard_w = HARD_WEIGHT if HARD_WEIGHT is not None else 1.0 / max(hard_negatives, 1)
    X, kinds, w = Xr, rk, np.where(rk == "hard", hard_w, row_weights(own))
    result = {"recipe": "real", "splits": list(splits), "real_pairs": n_real, "crops": crops}
    if scenery:  # only then: the shipped recipe's model info (and so its file) stays as it was
        result.update(scenery=True, scenery_min_std=scenery_min_std)
    if hp:  # likewise
        result.update(hard_negatives=hard_negatives, hard_pairs=len(hp))
        if hard_other_sources:
            result["hard_other_sources"] = True
    if knn_leave_out_source:
        result["knn_leave_out_source"] = True
    sp, sk = [], []
    if sampleweb_share > 0:
        os.makedirs(work, exist_ok=True)
        sp, sk = sampleweb_rows(work)
    mem_name = ""
    if use_memory:
        memory, sw_ids = build_memory(entries, sp, sk, first_id=int(pics.max()) + 1)
        memory_columns(Xr, names, rp, fx, memory, pics, own, also,
                       source_pictures(source_of) if knn_leave_out_source else None)
        mem_name = os.path.splitext(os.path.basename(out))[0] + "_memory.npz"
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        memory.save(os.path.join(os.path.dirname(os.path.abspath(out)), mem_name))
        result["memory_rows"] = len(memory.ids)
    if sampleweb_share > 0:
        Xs = fx.transform(sp, progress=True)
        if use_memory:
            memory_columns(Xs, names, sp, fx, memory, sw_ids, np.zeros(len(sp), bool))
        # The sample web weighs sampleweb_share of the real rows' count (crops counted whole, as
        # when the recipe was chosen; with crops at 1/3 its share of the weight is about 15%).
        ws = np.ones(len(sk)) * (len(rk) / max(len(sk), 1)) * sampleweb_share / (1 - sampleweb_share)
        X, kinds, w = np.vstack([Xr, Xs]), np.r_[rk, sk], np.r_[w, ws]
        result["sampleweb_pairs"] = len(sk)
    parts = {"text": fit_part(X, kinds, w, names, TEXT_INTRINSIC, TEXT_KINDS, C_TEXT)}
    if use_memory:
        # New pictures (gate 0) and pictures the memory knows (gate > 0) get their own match
        # regressions, mixed by the gate: the memory cannot bend the new-picture calibration.

        gate = X[:, names.index("mem_gate")]
        lo, hi = gate <= 0, gate > 0
        parts["match"] = GatedModel(
            "mem_gate",
            fit_part(X[lo], kinds[lo], w[lo], names, MATCH_FEATURES, MATCH_KINDS, C_MATCH),
            fit_part(X[hi], kinds[hi], w[hi], names, MATCH_FEATURES + MEMORY_FEATURES[1:], MATCH_KINDS, C_MATCH))
        result["gated_rows"] = int(hi.sum())
    else:
        parts["match"] = fit_part(X, kinds, w, names, MATCH_FEATURES, MATCH_KINDS, C_MATCH)
    info = {**result, "sampleweb_share": sampleweb_share, "C": [C_TEXT, C_MATCH], "crop_weight": round(CROP_WEIGHT, 6),
            "image_models": image_models()}
    model = ProductModel(parts, info=info, memory=mem_name, threshold=threshold, scene=fx.scene.to_dict())
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    model.save(out)
    result["model"] = out
    result["top_weights"] = model.top_weights(6)
    if "val" not in splits:
        # One scoring of val: the figures at the model's threshold and the sweep the operating
        # point is chosen on (seventeenth round, --choose-threshold).
        path, scores, kinds = split_scores("val", out)
        result["val"] = {"split": "val", "model": path, **figures(scores, kinds, model_threshold(path))}
        result["val_sweep"] = sweep(scores, kinds, THRESHOLD_GRID)
    return result


def main(argv=None) -> int:

    ap = argparse.ArgumentParser(prog="python -m tools.train_real", description=__doc__.split("\n\n")[0])
    # The model (and its memory, beside it) goes into the work folder unless --out says otherwise:
    # trying the recipe must not replace the shipped scoring/models/scorer.json.
    ap.add_argument("--out", help="the model JSON to write (default: WORK/scorer.json; the shipped "
                    "model is scoring/models/scorer.json)")
    ap.add_argument("--splits", nargs="+", default=["train"], choices=SPLITS)
    ap.add_argument("--work", default="out/scorer-real")
    ap.add_argument("--sampleweb-share", type=float, default=SAMPLEWEB_SHARE)
    ap.add_argument("--no-crops", action="store_true")
    ap.add_argument("--no-memory", action="store_true", help="no caption memory (scoring/memory.py)")
    ap.add_argument("--scenery", action="store_true", help="add the scenery crops of train photos "
                    "(scoring/data/scenery_crops.jsonl; twelfth round)")
    ap.add_argument("--scenery-min-std", type=float, default=SCENERY_MIN_STD,
                    help="leave out scenery crops whose grey levels vary less (0: all; S of the twelfth round)")
    ap.add_argument("--threshold", type=float, default=SHIPPED_THRESHOLD,
                    help="the operating point stored in the model (score.threshold's default)")
    ap.add_argument("--hard-negatives", type=int, default=HARD_NEGATIVES,
                    help="captions of each training photo's nearest training photos as extra match "
                    "negatives (fifteenth round)")
    ap.add_argument("--hard-other-sources", action=argparse.BooleanOptionalAction, default=HARD_OTHER_SOURCES,
                    help="hard negatives only from photos of another source (sixteenth round)")
    ap.add_argument("--knn-leave-out-source", action=argparse.BooleanOptionalAction, default=KNN_LEAVE_OUT_SOURCE,
                    help="a training photo's own rows: neighbour features without its whole source "
                    "(sixteenth round)")
    ap.add_argument("--choose-threshold", action="store_true",
                    help="the seventeenth round's rule: fit on train, sweep val over 0.300..0.600, print "
                    "the table and the chosen t* (docs/scoring.md); nothing is shipped")
    a = ap.parse_args(argv)
    if "test" in a.splits:
        print("train_real: the test split is never trained on", file=sys.stderr)
        return 2
    if a.choose_threshold and list(a.splits) != ["train"]:
        print("train_real: --choose-threshold fits on train only (val is where t* is chosen)", file=sys.stderr)
        return 2
    result = train(a.out or os.path.join(a.work, "scorer.json"), a.splits, a.work, a.sampleweb_share, not a.no_crops, not a.no_memory,
                   a.threshold, a.scenery, a.scenery_min_std, a.hard_negatives, a.hard_other_sources,
                   a.knn_leave_out_source)
    if a.choose_threshold:
        choice = choose_threshold(result["val_sweep"])
        result["choice"] = choice
        print(f"val, fitted on train ({result['real_pairs']} real pairs):")
        print(threshold_table(result["val_sweep"]))
        if not choice["feasible"]:
            print(f"no threshold keeps <= {JUNK_BOUND} of junk: {choice['threshold']} stays, nothing ships")
        else:
            verdict = "m(t*) >= 0: ships (refit on train + val with --threshold t*)" if choice["ship"] else \
                f"m(t*) < 0: does not ship, {SHIPPED_THRESHOLD} stays"
            print(f"t* = {choice['threshold']:.3f}, m(t*) = {choice['margin']:+.4f}: {verdict}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
