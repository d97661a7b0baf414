"""Train the weak image-text semantic model (``scoring/scorer_model.py``) and measure it.

Two kinds of training data, used together:

(a) labelled pairs: a parquet with ``image`` (bytes) or ``image_path``, ``text``, ``label``
    (1 = the text describes the image) and optionally ``group`` (pairs of one photo share a
    group; the held-out evaluation never splits a group), ``image_url``, ``text_source``,
    ``page_title``.  The image facts (size, NSFW, naturalness, ImageNet labels, embedding)
    are computed by the pipeline's own image stages;
(b) self-supervision from built corpora (``--corpus OUT``, the shards' parquet): every real
    pair is a positive, and the same texts shuffled onto other pictures are the negatives.
    The image->text projection (``scoring/projection.py``) is fitted on the real pairs; the
    self-supervised rows get out-of-fold projections, so the model sees the cosines it will
    see on new pairs.

It prints the ROC AUC on held-out labelled pairs (folds by photo) of three models: text-only
features trained on the labels, the self-supervised model (no labels at all), and the
combined model, which it then fits on everything and saves (JSON + projection ``.npz``).
The last line printed is a JSON object with the figures.

    python -m tools.train_scorer --labelled L.parquet --corpus OUT [--corpus OUT2] --out M.json
    python -m tools.train_scorer labelled-from-sampleweb WEB_DIR L.parquet
    python -m tools.train_scorer recipe [--work out/scorer-recipe] [--out M.json]   # WORK/scorer.json
    python -m tools.train_real --splits train val --out scoring/models/scorer.json   # the shipped default
"""
from __future__ import annotations

import argparse
import copy
import io
import json
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold
from tqdm import tqdm

from filters.image_decode import ImageDecode
from filters.labels import ImageLabeler
from filters.naturalness import NaturalnessFilter
from filters.nsfw import NsfwFilter
from pipeline.build import build
from pipeline.core.records import (
    Candidate,
    ImageFacts,
    ImageItem,
    Pair,
    decode_embedding,
    label_pairs,
)
from scoring.features import (
    CROSS_FEATURES,
    FEATURE_NAMES,
    TEXT_ONLY,
    TOPK,
    FeatureExtractor,
)
from scoring.projection import Projection
from scoring.scorer_model import ScorerModel
from tools import sampleweb
from tools.sampleweb import labelled_pairs as sw_pairs
from tools.sampleweb.evaluate import read_output

SEED = 0


# ---------------------------------------------------------------- loading data
def corpus_pairs(out_dirs: list[str]) -> list[Pair]:
    """The real pairs of built corpora (rows of ``OUT/parquet/*.parquet``), in a fixed order."""
    pairs = []
    for d in out_dirs:
        for r in read_output(d):
            pairs.append(row_pair(r))
    pairs.sort(key=lambda p: (p.key, p.candidate.text))
    return pairs


def row_pair(r: dict) -> Pair:
    """A shard parquet row (or ``Pair.metadata()`` dict) back into a Pair, without the image."""
    meta = lambda v: json.loads(v) if isinstance(v, str) else (v or {})  # noqa: E731
    c = Candidate(page_url=r.get("page_url") or "", image_url=r.get("image_url") or "",
                  text_source=r.get("text_source") or "", text=r.get("caption") or "",
                  raw_text=r.get("raw_text") or r.get("caption") or "",
                  page_title=r.get("page_title") or "", page_lang=r.get("page_lang") or "",
                  meta=meta(r.get("text_meta")))
    image = ImageFacts(image_url=c.image_url, data=b"", width=r.get("width") or 0,
                       height=r.get("height") or 0, orig_width=r.get("original_width") or 0,
                       orig_height=r.get("original_height") or 0,
                       orig_format=r.get("original_format") or "",
                       orig_bytes=r.get("original_bytes") or 0, sha256=r.get("sha256") or "",
                       nsfw=r.get("nsfw"), natural=r.get("natural"), meta=meta(r.get("image_meta")))
    return Pair(key=r.get("key") or "", candidate=c, image=image, score=r.get("score"))


class ImageAnalyser:
    """Runs the pipeline's image stages on raw bytes (without dropping anything) to get the
    facts a Pair carries: stored size, NSFW, naturalness, labels and embedding."""

    def __init__(self):
        self.decode = ImageDecode()
        self.models = [NsfwFilter(), NaturalnessFilter(), ImageLabeler()]

    def item(self, data: bytes, url: str) -> ImageItem:
        item = ImageItem(image_url=url, data=data, candidates=[], orig_bytes=len(data))
        with Image.open(io.BytesIO(data)) as im:
            item.orig_width, item.orig_height, item.orig_format = im.width, im.height, (im.format or "").lower()
        self.decode.process(item)
        for stage in self.models:
            stage.process_batch([item])  # sets the item's facts; the keep/drop answer is ignored
        item.pixels = None
        return item


def labelled_pairs(path: str) -> tuple[list[Pair], np.ndarray, np.ndarray]:
    """(pairs, labels, groups) from a labelled parquet."""
    rows = pq.read_table(path).to_pylist()
    facts, items = ImageAnalyser(), {}
    pairs, y, groups = [], [], []
    for r in tqdm(rows, desc="labelled images", unit="pair", mininterval=1.0):
        url = r.get("image_url") or r.get("image_path") or ""
        if url not in items:
            data = r.get("image")
            if data is None:
                with open(r["image_path"], "rb") as f:
                    data = f.read()
            items[url] = facts.item(data, url)
        it = items[url]
        c = Candidate(page_url="", image_url=url, text_source=r.get("text_source") or "",
                      text=r["text"], raw_text=r["text"], page_title=r.get("page_title") or "")
        image = it.facts()
        image.data = b""
        pairs.append(Pair(key=it.sha256[:24], candidate=c, image=image))
        y.append(int(r["label"]))
        groups.append(str(r.get("group") or url))
    return pairs, np.array(y), np.array(groups)


def export_sampleweb(web_dir: str, out_path: str) -> int:
    """The sample web's labelled pairs as a labelled parquet (image bytes inline)."""
    rows = []
    for p in sw_pairs(os.path.join(web_dir, "truth.jsonl")):
        with open(p["image_path"], "rb") as f:
            rows.append({"image": f.read(), "image_url": p["image_url"], "text": p["text"],
                         "label": p["label"], "group": p["group"], "text_kind": p["text_kind"]})
    pq.write_table(pa.Table.from_pylist(rows), out_path)
    return len(rows)


# ---------------------------------------------------------------- self-supervision
def _phash_groups(pairs: list[Pair], max_distance: int = 10) -> np.ndarray:
    """Near-duplicate groups of the corpus's images (perceptual hashes within a distance),
    so that a shuffled text never lands on another copy of its own picture."""
    hashes = {}
    for p in pairs:
        h = (p.image.meta or {}).get("phash")
        hashes.setdefault(p.image.sha256, int(h, 16) if h else None)
    keys = sorted(hashes)
    parent = {k: k for k in keys}

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    if len(keys) <= 5000:  # quadratic; larger corpora group by content hash only
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                ha, hb = hashes[a], hashes[b]
                if ha is not None and hb is not None and bin(ha ^ hb).count("1") <= max_distance:
                    parent[find(b)] = find(a)
    return np.array([find(p.image.sha256) for p in pairs])


def shuffled_negatives(pairs: list[Pair], groups: np.ndarray, seed: int = SEED) -> list[Pair]:
    """The corpus's texts dealt out again onto its images: a permutation, so every text is a
    negative exactly once and the negatives' texts look like the positives' (only the match
    differs).  A text never lands on a near-duplicate of its own picture nor on an image
    that already has that text."""
    rng = np.random.default_rng(seed)
    texts_of: dict[str, set] = {}
    for p, g in zip(pairs, groups):
        texts_of.setdefault(g, set()).add(p.candidate.text)
    n = len(pairs)
    perm = rng.permutation(n)
    bad = lambda i, j: groups[j] == groups[i] or pairs[j].candidate.text in texts_of[groups[i]]  # noqa: E731
    for i in range(n):
        for _ in range(50):
            if not bad(i, perm[i]):
                break
            k = int(rng.integers(n))  # swap with another slot if that suits both
            if not bad(i, perm[k]) and not bad(k, perm[i]):
                perm[i], perm[k] = perm[k], perm[i]
    out = []
    for i in range(n):
        if not bad(i, perm[i]):
            neg = copy.copy(pairs[i])
            neg.candidate = pairs[perm[i]].candidate
            out.append(neg)
    return out


def embeddings(pairs: list[Pair], fx) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(image embeddings, text vectors, label vectors, has-embedding mask) of pairs."""
    ok, embs, texts, labels = [], [], [], []
    for p in pairs:
        e = decode_embedding((p.image.meta or {}).get("embedding"))
        ok.append(e is not None)
        if e is None:
            continue
        embs.append(e)
        texts.append(fx.embed(p.candidate.text))
        ls = label_pairs(p.image.meta)[:TOPK]
        probs = sum(q for _, q in ls) or 1.0
        labels.append(sum(q * fx.embed(n) for n, q in ls) / probs if ls else np.zeros(384))
    return np.array(embs), np.array(texts), np.array(labels), np.array(ok)


def fit_projection(pairs, fx, dims=None, alpha=1.0):
    """Ridge from the image embedding to the text vector; by default on half as many PCA
    dimensions as there are pairs (at most 128): a small corpus supports only a coarse map."""
    e, t, lv, ok = embeddings(pairs, fx)
    if ok.sum() < 8:
        return None
    dims = dims or int(min(128, max(8, ok.sum() // 2)))
    return Projection.fit(e, t, lv, dims=dims, alpha=alpha)


def self_supervised_set(pairs: list[Pair], fx, folds: int = 4):
    """Features and labels of the corpus's real pairs (1) and shuffled pairs (0); each row's
    projection features come from a projection fitted without its near-duplicate group."""
    groups = _phash_groups(pairs)
    neg = shuffled_negatives(pairs, groups)
    allp = pairs + neg
    # A negative belongs to its image's group (the image decides which projection it may see).
    img_group = {p.image.sha256: g for p, g in zip(pairs, groups)}
    allg = np.array([img_group[p.image.sha256] for p in allp])
    y = np.array([1] * len(pairs) + [0] * len(neg))
    uniq = sorted(set(allg))
    fold_of = {g: i % folds for i, g in enumerate(uniq)}
    X = np.full((len(allp), len(fx.names)), np.nan, np.float32)
    proj_full = fx.projection
    for k in tqdm(range(folds), desc="self-supervised folds", unit="fold"):
        train = [p for p, g in zip(pairs, groups) if fold_of[g] != k]
        fx.projection = fit_projection(train, fx)
        idx = [i for i, g in enumerate(allg) if fold_of[g] == k]
        if idx:
            X[idx] = fx.transform([allp[i] for i in idx])
    fx.projection = proj_full
    return X, y, allg


# ---------------------------------------------------------------- training and evaluation
def _auc(y, p) -> float:
    return float(roc_auc_score(y, p)) if len(set(y)) == 2 else float("nan")


SELFSUP_C = 0.02  # the shuffled rows are few and alike: a strongly regularised model generalises


def evaluate(XL, yL, gL, XS, yS, names, folds: int = 5, C: float = 0.5) -> dict:
    """Held-out ROC AUC on the labelled pairs, folds by photo group."""
    text_cols = [names.index(n) for n in TEXT_ONLY]
    cross_cols = [names.index(n) for n in CROSS_FEATURES]
    preds = {k: np.zeros(len(yL)) for k in ("text_only", "self_supervised", "combined")}
    # Shuffling keeps every text and every image, so only cross-modal features can tell a
    # real pair from a shuffled one: the self-supervised model uses only those.
    selfsup = ScorerModel.fit(XS[:, cross_cols], yS, CROSS_FEATURES, C=SELFSUP_C) if len(XS) else None
    n_folds = min(folds, len(set(gL)))
    for tr, te in tqdm(list(GroupKFold(n_splits=n_folds).split(XL, yL, gL)), desc="held-out folds", unit="fold"):
        txt = ScorerModel.fit(XL[tr][:, text_cols], yL[tr], TEXT_ONLY, C=C)
        preds["text_only"][te] = txt.predict(XL[te][:, text_cols])
        comb = fit_combined(XL[tr], yL[tr], XS, yS, names, C)
        preds["combined"][te] = comb.predict(XL[te])
        if selfsup is not None:
            preds["self_supervised"][te] = selfsup.predict(XL[te][:, cross_cols])
    return {k: round(_auc(yL, v), 4) for k, v in preds.items() if k != "self_supervised" or selfsup}


def fit_combined(XL, yL, XS, yS, names, C=0.5, **kw):
    """One model on labelled and self-supervised rows, each source weighing half."""
    if not len(XS):
        return ScorerModel.fit(XL, yL, names, C=C, **kw)
    w = np.concatenate([np.full(len(XL), 0.5 / len(XL)), np.full(len(XS), 0.5 / len(XS))])
    w *= len(w)
    return ScorerModel.fit(np.vstack([XL, XS]), np.concatenate([yL, yS]), names, C=C, weight=w, **kw)


def train(labelled: str | None, corpora: list[str], out: str, folds: int = 5, C: float = 0.5) -> dict:
    fx = FeatureExtractor()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    cpairs = corpus_pairs(corpora) if corpora else []
    proj_name = ""
    if cpairs:
        proj = fit_projection(cpairs, fx)
        if proj is not None:
            proj_name = os.path.splitext(os.path.basename(out))[0] + "_projection.npz"
            proj.save(os.path.join(os.path.dirname(os.path.abspath(out)), proj_name))
            fx.projection = Projection.load(os.path.join(os.path.dirname(os.path.abspath(out)), proj_name))
    names = list(FEATURE_NAMES)
    XS, yS = np.zeros((0, len(names)), np.float32), np.zeros(0, int)
    if cpairs and fx.projection is not None:
        XS, yS, _ = self_supervised_set(cpairs, fx)
    result = {"n_corpus_pairs": len(cpairs), "n_selfsup_rows": int(len(yS)), "n_features": len(names)}
    XL, yL, gL = np.zeros((0, len(names)), np.float32), np.zeros(0, int), np.zeros(0)
    if labelled:
        lp, yL, gL = labelled_pairs(labelled)
        XL = fx.transform(lp, progress=True)
        result.update(n_labelled=int(len(yL)), n_labelled_groups=len(set(gL)))
        result["heldout_auc"] = evaluate(XL, yL, gL, XS, yS, names, folds, C)
    if not len(yL) and not len(yS):
        raise SystemExit("train_scorer: no training data (give --labelled and/or --corpus)")
    info = {k: v for k, v in result.items()}
    model = fit_combined(XL, yL, XS, yS, names, C, projection=proj_name, info=info)
    model.save(out)
    result["model"] = out
    result["top_weights"] = model.top_weights(10)
    return result


def recipe(out: str, work: str = "out/scorer-recipe", seed: int = 1, rounds: int = 1,
           port: int = 8643, config: str = "configs/demo.yaml") -> dict:
    """How the shipped default model is made, end to end, with nothing but this repository:
    generate the sample web (seed 1: the demo uses seed 0, so the demo's figures are not
    measured on the training pages), build it with scoring off, export its labelled pairs,
    train; each further round rebuilds with the last model and retrains on the cleaner corpus.
    """
    work = os.path.abspath(work)
    web = os.path.join(work, "web")
    sampleweb.generate(web, seed=seed, base_url=f"http://127.0.0.1:{port}")
    labelled = os.path.join(work, "labelled.parquet")
    export_sampleweb(web, labelled)
    server = sampleweb.serve(web, host="127.0.0.1", port=port)
    model, result = "", {}
    try:
        for r in range(rounds):
            corpus = os.path.join(work, f"round{r}")
            score = {"score.enabled": False} if not model else {"score.model": model}
            print(f"[recipe] round {r}: building the sample web into {corpus}", file=sys.stderr)
            build(config, corpus, engine="local", overrides={
                "input.warc": [os.path.join(web, "pages.warc.gz")], **score})
            model = out if r == rounds - 1 else os.path.join(work, f"model{r + 1}", "scorer.json")
            result = train(labelled, [corpus], model)
    finally:
        server.shutdown()
    return result


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["recipe"]:
        ap = argparse.ArgumentParser(prog="python -m tools.train_scorer recipe")
        # The model goes into the work folder unless --out says otherwise: the shipped
        # scoring/models/scorer.json is tools.train_real's, and trying the recipe must not
        # replace it.
        ap.add_argument("--out", help="the model JSON to write (default: WORK/scorer.json)")
        ap.add_argument("--work", default="out/scorer-recipe")
        ap.add_argument("--rounds", type=int, default=1)
        a = ap.parse_args(argv[1:])
        result = recipe(a.out or os.path.join(a.work, "scorer.json"), a.work, rounds=a.rounds)
        for k, v in result.get("heldout_auc", {}).items():
            print(f"held-out ROC AUC ({k}): {v}")
        print(json.dumps(result))
        return 0
    if argv[:1] == ["labelled-from-sampleweb"]:
        if len(argv) != 3:
            print("usage: python -m tools.train_scorer labelled-from-sampleweb WEB_DIR OUT.parquet", file=sys.stderr)
            return 2
        n = export_sampleweb(argv[1], argv[2])
        print(json.dumps({"labelled_pairs": n, "out": argv[2]}))
        return 0
    ap = argparse.ArgumentParser(prog="python -m tools.train_scorer", description=__doc__.split("\n\n")[0])
    ap.add_argument("--labelled", help="parquet of labelled pairs (image|image_path, text, label[, group])")
    ap.add_argument("--corpus", action="append", default=[], help="a built output dir (repeatable)")
    ap.add_argument("--out", required=True, help="the model JSON to write (projection .npz beside it)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("-C", type=float, default=0.5, help="inverse L2 strength of the regression")
    a = ap.parse_args(argv)
    result = train(a.labelled, a.corpus, a.out, a.folds, a.C)
    auc = result.get("heldout_auc", {})
    for k, v in auc.items():
        print(f"held-out ROC AUC ({k}): {v}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
