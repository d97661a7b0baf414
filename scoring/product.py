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
pair passes 0.5 only when both answers are confidently yes.  A part may be a
:class:`GatedModel`: two regressions mixed by a gate feature in [0, 1] (the caption memory's
``mem_gate``: the match part for pictures the memory knows is fitted apart from the one for
new pictures, so neither bends the other's calibration).  Stored as JSON like
:class:`scoring.model.ScorerModel` (``kind: "product"``, the parts inside), scored with numpy.
"""
from __future__ import annotations

import json

import numpy as np

KIND = "product"


class GatedModel:
    """``gate * high(X) + (1 - gate) * low(X)``, the gate a feature clipped to [0, 1]
    (missing: 0)."""

    def __init__(self, gate: str, low, high):
        self.gate, self.low, self.high = gate, low, high
        self.names = [gate] + [n for n in low.names + high.names if n != gate]
        self.names = list(dict.fromkeys(self.names))

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, np.float64)
        g = np.clip(np.nan_to_num(X[:, 0], nan=0.0), 0.0, 1.0)
        lo = X[:, [self.names.index(n) for n in self.low.names]]
        hi = X[:, [self.names.index(n) for n in self.high.names]]
        return g * self.high.predict(hi) + (1.0 - g) * self.low.predict(lo)

    def to_dict(self) -> dict:
        return {"kind": "gated", "gate": self.gate, "low": self.low.to_dict(), "high": self.high.to_dict()}

    def top_weights(self, n: int = 15) -> dict:
        return {"low": self.low.top_weights(n), "high": self.high.top_weights(n)}


def _part(p: dict):
    from scoring.model import ScorerModel

    if p.get("kind") == "gated":
        return GatedModel(p["gate"], _part(p["low"]), _part(p["high"]))
    if p.get("kind") != "logistic_regression":
        raise ValueError(f"product part of kind {p.get('kind')!r}: not a logistic regression")
    return ScorerModel(p["features"], p["median"], p["mean"], p["scale"], p["coef"], p["intercept"])


class ProductModel:
    """``predict(X)`` over ``names`` (the parts' features, in first-seen order)."""

    def __init__(self, parts: dict, projection: str = "", info=None, memory: str = ""):
        self.parts = dict(parts)  # part name -> ScorerModel
        self.names: list[str] = []
        for m in self.parts.values():
            self.names += [n for n in m.names if n not in self.names]
        self._cols = {k: [self.names.index(n) for n in m.names] for k, m in self.parts.items()}
        self.projection = projection
        self.memory = memory  # file name of the caption memory (scoring/memory.py), beside the JSON
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
                "projection": self.projection, "memory": self.memory, "info": self.info}

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1, sort_keys=True)
            f.write("\n")

    @classmethod
    def from_dict(cls, d: dict) -> "ProductModel":
        parts = {k: _part(p) for k, p in d["parts"].items()}
        return cls(parts, d.get("projection", ""), d.get("info"), d.get("memory", ""))

    def top_weights(self, n: int = 15) -> dict:
        return {k: m.top_weights(n) for k, m in self.parts.items()}
