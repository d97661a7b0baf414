"""The relevance score as a product of two logistic regressions: "is this a caption?" times
"does it fit this image?".

One regression over every feature learns that long, fluent texts are captions, and then
keeps another photo's caption as readily as the right one: on real photos its score ranks
the right caption first (ROC AUC 0.95) but no threshold keeps 90% of right captions without
also keeping a fifth of wrong ones (docs/scoring.md).  Splitting the question fixes that:

- ``text``: own captions against boilerplate, credits, promo and file names, on the text's
  own features (``TEXT_INTRINSIC``): whether the text could describe any picture;
- ``match``: own captions against other photos' captions, on the cross-modal features and
  the label confidence: whether it describes this one.

Both are calibrated probabilities (balanced classes), and the score is their product, so a
pair passes 0.5 only when both answers are confidently yes.  Stored as JSON like
:class:`scoring.model.ScorerModel` (``kind: "product"``, the parts inside), scored with numpy.
"""
from __future__ import annotations

import json

import numpy as np

KIND = "product"


class ProductModel:
    """``predict(X)`` over ``names`` (the parts' features, in first-seen order)."""

    def __init__(self, parts: dict, projection: str = "", info=None):
        self.parts = dict(parts)  # part name -> ScorerModel
        self.names: list[str] = []
        for m in self.parts.values():
            self.names += [n for n in m.names if n not in self.names]
        self._cols = {k: [self.names.index(n) for n in m.names] for k, m in self.parts.items()}
        self.projection = projection
        self.info = info or {}

    def predict_parts(self, X: np.ndarray) -> dict[str, np.ndarray]:
        X = np.asarray(X, np.float64)
        return {k: m.predict(X[:, self._cols[k]]) for k, m in self.parts.items()}

    def predict(self, X: np.ndarray) -> np.ndarray:
        out = np.ones(len(X))
        for p in self.predict_parts(X).values():
            out = out * p
        return out

    def to_dict(self) -> dict:
        return {"kind": KIND, "parts": {k: m.to_dict() for k, m in self.parts.items()},
                "projection": self.projection, "info": self.info}

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1, sort_keys=True)
            f.write("\n")

    @classmethod
    def from_dict(cls, d: dict) -> "ProductModel":
        from scoring.model import ScorerModel

        parts = {}
        for k, p in d["parts"].items():
            if p.get("kind") != "logistic_regression":
                raise ValueError(f"product part {k!r}: not a logistic regression")
            parts[k] = ScorerModel(p["features"], p["median"], p["mean"], p["scale"], p["coef"],
                                   p["intercept"])
        return cls(parts, d.get("projection", ""), d.get("info"))

    def top_weights(self, n: int = 15) -> dict[str, list[tuple[str, float]]]:
        return {k: m.top_weights(n) for k, m in self.parts.items()}
