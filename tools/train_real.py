"""The shipped scorer's recipe: real photos with human captions, the sample web a minor part.

    python -m tools.train_scorer real [--splits train] [--out scoring/models/scorer.json]

Training rows (``tools/relevance_data.py``, ``tools/eval_relevance.py``): each photo of the
given splits with its own caption (1), three other photos' captions, four junk texts and its
file name (0); the same captions on three crops of each training photo (a caption still fits
three quarters of its picture: more views for the match part); and the sample web's labelled
pairs (``generate`` with seed 1; the demo uses seed 0), weighing ``SAMPLEWEB_SHARE`` of each
part.  The model is a :class:`scoring.product.ProductModel`:

- ``text``: ``TEXT_INTRINSIC`` features, own captions against junk texts and file names;
- ``match``: ``MATCH_FEATURES``, own captions against other photos' captions.

Each part is fitted with balanced classes.  When ``val`` is not among the training splits, the
figures of ``tools/eval_relevance.py`` on val are printed (the recipe was chosen on them);
the last line is JSON.
"""
from __future__ import annotations

import io
import json
import os
import sys

import numpy as np

from scoring.label_space import FEATURES as WN_FEATURES

MATCH_FEATURES = ["label_entropy", "label_margin", "label_p1", *WN_FEATURES]
TEXT_KINDS = ("own", "junk", "filename")
MATCH_KINDS = ("own", "cross")
SAMPLEWEB_SHARE = 0.2
CROPS = ((0.0, 0.0, 0.75, 0.75), (0.25, 0.25, 1.0, 1.0), (0.125, 0.0, 0.875, 1.0))
C_TEXT, C_MATCH = 1.0, 1.0
SAMPLEWEB_KIND = {"descriptive": "own", "other_photo": "cross", "filename": "filename"}


def crop_bytes(data: bytes, box) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        im = im.convert("RGB")
        w, h = im.size
        c = im.crop((int(box[0] * w), int(box[1] * h), int(box[2] * w), int(box[3] * h)))
        out = io.BytesIO()
        c.save(out, "JPEG", quality=90)
        return out.getvalue()


def real_rows(splits, crops: bool = True, facts=None):
    """(pairs, kinds) of the real labelled pairs of ``splits``, plus crops of their photos."""
    from tools import relevance_data as rd
    from tools.eval_relevance import image_facts, make_pair, neutral_url, real_pairs
    from tools.train_scorer import ImageFacts

    facts = facts or ImageFacts()
    pairs, kinds = [], []
    for split in splits:
        rows = rd.photos(split)
        items = image_facts(rows, facts)
        p, _, k, photo = real_pairs(split, items)
        pairs += p
        kinds += list(k)
        if not crops:
            continue
        for i, r in enumerate(rows):
            data = rd.read_bytes(r["path"])
            texts = [(x.candidate.text, kk) for x, kk, ph in zip(p, k, photo)
                     if ph == i and kk in MATCH_KINDS]
            for j, box in enumerate(CROPS):
                item = facts.item(crop_bytes(data, box), neutral_url(r["sha256"]) + f"?crop={j}")
                for text, kk in texts:
                    pairs.append(make_pair(item, text))
                    kinds.append(kk)
    return pairs, np.array(kinds)


def sampleweb_rows(work: str, seed: int = 1):
    """(pairs, kinds) of the generated sample web's labelled pairs."""
    import pyarrow.parquet as pq

    from tools import sampleweb
    from tools.train_scorer import export_sampleweb, labelled_pairs

    web = os.path.join(work, "web")
    if not os.path.isfile(os.path.join(web, "truth.jsonl")):
        sampleweb.generate(web, seed=seed)
    path = os.path.join(work, "labelled.parquet")
    export_sampleweb(web, path)
    pairs, _, _ = labelled_pairs(path)
    kinds = [SAMPLEWEB_KIND.get(k, "junk") for k in pq.read_table(path, columns=["text_kind"]).column(0).to_pylist()]
    return pairs, np.array(kinds)


def fit_part(X, kinds, weights, names_all, names, sel, C):
    from scoring.model import ScorerModel

    keep = np.isin(kinds, sel)
    X, y, w = X[keep][:, [names_all.index(n) for n in names]], (kinds[keep] == "own").astype(int), weights[keep]
    w = w * np.where(y == 1, w[y == 0].sum() / w[y == 1].sum(), 1.0)  # balanced classes
    return ScorerModel.fit(X, y, names, C=C, weight=w / w.mean())


def train(out: str, splits=("train",), work: str = "out/scorer-real", sampleweb_share: float = SAMPLEWEB_SHARE,
          crops: bool = True) -> dict:
    from scoring.features import FEATURE_NAMES, TEXT_INTRINSIC, FeatureExtractor
    from scoring.product import ProductModel
    from tools.train_scorer import ImageFacts

    fx, facts = FeatureExtractor(), ImageFacts()
    rp, rk = real_rows(splits, crops, facts)
    Xr = fx.transform(rp, progress=True)
    X, kinds, w = Xr, rk, np.ones(len(rk))
    result = {"recipe": "real", "splits": list(splits), "real_pairs": len(rk), "crops": crops}
    if sampleweb_share > 0:
        os.makedirs(work, exist_ok=True)
        sp, sk = sampleweb_rows(work)
        Xs = fx.transform(sp, progress=True)
        # The sample web weighs sampleweb_share of each kind group's total.
        ws = np.ones(len(sk)) * (len(rk) / max(len(sk), 1)) * sampleweb_share / (1 - sampleweb_share)
        X, kinds, w = np.vstack([Xr, Xs]), np.r_[rk, sk], np.r_[w, ws]
        result["sampleweb_pairs"] = len(sk)
    names = list(FEATURE_NAMES)
    parts = {"text": fit_part(X, kinds, w, names, TEXT_INTRINSIC, TEXT_KINDS, C_TEXT),
             "match": fit_part(X, kinds, w, names, MATCH_FEATURES, MATCH_KINDS, C_MATCH)}
    info = {**result, "sampleweb_share": sampleweb_share, "C": [C_TEXT, C_MATCH]}
    model = ProductModel(parts, info=info)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    model.save(out)
    result["model"] = out
    result["top_weights"] = model.top_weights(6)
    if "val" not in splits:
        from tools.eval_relevance import evaluate

        result["val"] = evaluate("val", out)
    return result


def main(argv=None) -> int:
    import argparse

    from tools.relevance_data import SPLITS

    ap = argparse.ArgumentParser(prog="python -m tools.train_scorer real", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="scoring/models/scorer.json")
    ap.add_argument("--splits", nargs="+", default=["train"], choices=SPLITS)
    ap.add_argument("--work", default="out/scorer-real")
    ap.add_argument("--sampleweb-share", type=float, default=SAMPLEWEB_SHARE)
    ap.add_argument("--no-crops", action="store_true")
    a = ap.parse_args(argv)
    if "test" in a.splits:
        print("train_scorer real: the test split is never trained on", file=sys.stderr)
        return 2
    result = train(a.out, a.splits, a.work, a.sampleweb_share, not a.no_crops)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
