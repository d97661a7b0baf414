"""Score real photos with human captions: does the relevance score hold on real data?

Each photo of a split of ``scoring/data/real_captions.jsonl`` (``tools/relevance_data.py``)
goes through the pipeline's own image stages (decode, NSFW, naturalness, labels and
embedding: ``tools.train_scorer.ImageAnalyser``) and is paired with its own caption, three
other photos' captions, four junk texts (boilerplate, credits, promo, file names) and its own
file name.  The pairs look like an ``alt`` text on a page with no title, and the image URL is
neutral (digits of the file's hash), so neither the URL nor the page can give the answer away:
only what the image shows and what the text says.

Figures (the last line printed is a JSON object):

- ``recall_at_threshold``: share of own captions scoring >= the threshold;
- ``auc_cross``: ROC AUC of own captions against the other photos' captions;
- ``auc_boiler``: ROC AUC of own captions against the junk texts and file names;
- ``kept_cross`` / ``kept_boiler``: shares of those negatives scoring >= the threshold;
- ``photos``, ``pairs``, ``mean_own``: counts and the mean score of an own caption.

    python -m tools.eval_relevance [--split val] [--model scoring/models/scorer.json] [--threshold T]
    python -m tools.eval_relevance --data HELD_OUT.jsonl --split NAME   # another labelled set
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from pipeline.core.records import Candidate, Pair
from scoring.score import Scorer, ScorerConfig
from scoring.scorer_model import model_threshold
from tools import relevance_data as rd
from tools.train_scorer import ImageAnalyser


def neutral_url(sha256: str) -> str:
    """An image URL that says nothing about the picture: digits of its hash."""
    return f"https://images.example.org/media/{int(sha256[:12], 16):015d}.jpg"


def image_facts(rows: list[dict], facts=None) -> list:
    """The pipeline's facts (``ImageItem``) of every row's photo, in order."""
    facts = facts or ImageAnalyser()
    items = []
    for r in rows:
        data = rd.photo_bytes(r)
        items.append(facts.item(data, neutral_url(r["sha256"])))
    return items


def make_pair(item, text: str, text_source: str = "alt") -> Pair:
    c = Candidate(page_url="https://www.example.org/article", image_url=item.image_url,
                  text_source=text_source, text=text, raw_text=text)
    return Pair(key=item.sha256[:24], candidate=c, image=item.facts())


def real_pairs(split: str, items=None, data: str = rd.DATA, rows=None):
    """(pairs, labels, kinds, photo index) of a split's labelled texts (of ``rows`` when given:
    some of the split's photos)."""
    rows = rd.photos(split, data) if rows is None else rows
    items = items if items is not None else image_facts(rows)
    lab = rd.labelled_pairs(rows, split)
    pairs = [make_pair(items[x["photo"]], x["text"]) for x in lab]
    return (pairs, np.array([x["label"] for x in lab]), np.array([x["kind"] for x in lab]),
            np.array([x["photo"] for x in lab]))


def _auc(pos, neg) -> float:
    from sklearn.metrics import roc_auc_score

    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    return float(roc_auc_score(y, np.r_[pos, neg])) if len(pos) and len(neg) else float("nan")


def by_kind(scores: np.ndarray, kinds: np.ndarray):
    """(own captions, other photos' captions, junk texts and file names): the scores of each."""
    return scores[kinds == "own"], scores[kinds == "cross"], scores[(kinds == "junk") | (kinds == "filename")]


def figures(scores: np.ndarray, kinds: np.ndarray, threshold: float) -> dict:
    own, cross, boiler = by_kind(scores, kinds)
    return {
        "threshold": threshold,
        "recall_at_threshold": round(float((own >= threshold).mean()), 4),
        "kept_cross": round(float((cross >= threshold).mean()), 4),
        "kept_boiler": round(float((boiler >= threshold).mean()), 4),
        "auc_cross": round(_auc(own, cross), 4),
        "auc_boiler": round(_auc(own, boiler), 4),
        "mean_own": round(float(own.mean()), 4),
        "photos": int(len(own)),
        "pairs": int(len(scores)),
    }


def sweep(scores: np.ndarray, kinds: np.ndarray, grid) -> list[dict]:
    """At each threshold of ``grid``: how many own captions, other photos' captions and junk texts
    (with file names, as ``kept_boiler``) reach it, of how many, and the shares (unrounded: the
    operating-point rule of ``tools/train_real.py`` compares them)."""
    own, cross, boiler = by_kind(scores, kinds)
    out = []
    for t in grid:
        k = [int((x >= t).sum()) for x in (own, cross, boiler)]
        out.append({"threshold": float(t), "own": k[0], "cross": k[1], "boiler": k[2],
                    "n_own": len(own), "n_cross": len(cross), "n_boiler": len(boiler),
                    "recall": k[0] / max(len(own), 1), "kept_cross": k[1] / max(len(cross), 1),
                    "kept_boiler": k[2] / max(len(boiler), 1)})
    return out


def score_pairs(pairs: list[Pair], model_path: str) -> np.ndarray:
    """Scores as the ``score`` stage stores them (rounded to 6 decimals)."""
    scorer = Scorer(ScorerConfig(model=model_path))
    return np.round(scorer.score(pairs), 6)


def split_scores(split: str = "val", model: str = "", data: str = rd.DATA):
    """(model path, scores, kinds) of a split's labelled pairs under a model (default: the shipped one)."""
    rows = rd.photos(split, data)
    if not rows:
        raise SystemExit(f"eval_relevance: no photos of split {split!r} in {data}")
    gone = rd.missing(rows)
    if gone:
        raise SystemExit(f"eval_relevance: packages not installed: {' '.join(gone)}")
    path = ScorerConfig(model=model).model_path
    pairs, _, kinds, _ = real_pairs(split, rows=rows, data=data)
    return path, score_pairs(pairs, path), kinds


def evaluate(split: str = "val", model: str = "", threshold: float | None = None, data: str = rd.DATA) -> dict:
    path, scores, kinds = split_scores(split, model, data)
    threshold = model_threshold(path) if threshold is None else threshold
    return {"split": split, "model": path, **figures(scores, kinds, threshold)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.eval_relevance", description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="val", help=f"one of {rd.SPLITS + rd.SCORE_ONLY}, or another file's split")
    ap.add_argument("--data", default=rd.DATA, help="a JSONL of photos and captions in the same format "
                    "(source, package, path, sha256, caption, split): an independent held-out set")
    ap.add_argument("--model", default="", help="a scorer JSON (default: the shipped one)")
    ap.add_argument("--threshold", type=float, default=None, help="default: the model's own (score.threshold's default)")
    a = ap.parse_args(argv)
    result = evaluate(a.split, a.model, a.threshold, a.data)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
