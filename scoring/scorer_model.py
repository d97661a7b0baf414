"""LAIT step 4: the weak image-text semantic model (the ``score`` step is ``scoring/score.py``).

The model is a logistic regression over the named features of ``scoring/features.py``
(standardised, missing values imputed with the training medians): small, readable, and its
output is a calibrated probability that the text describes the image.  It is stored as JSON
(feature names, medians, means, scales, coefficients), so loading it runs no code and
depends on no library version; scoring is a dot product in numpy.  The optional image->text
projection it was trained with sits beside it as ``.npz`` (``scoring/projection.py``).

"""
from __future__ import annotations

import json
import os
import warnings

import numpy as np

from scoring.features import FeatureExtractor
from scoring.memory import CaptionMemory
from scoring.projection import Projection
from scoring.scene import SceneModel

MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
DEFAULT_MODEL = os.path.join(MODELS_DIR, "scorer.json")


class ScorerModel:
    """Logistic regression over named features; ``predict(X)`` -> probabilities."""

    def __init__(self, names, median, mean, scale, coef, intercept, projection: str = "", info=None):
        self.names = list(names)
        self.median = np.asarray(median, np.float64)
        self.mean = np.asarray(mean, np.float64)
        self.scale = np.asarray(scale, np.float64)
        self.coef = np.asarray(coef, np.float64)
        self.intercept = float(intercept)
        self.projection = projection  # file name of the projection, beside the JSON
        self.info = info or {}

    @classmethod
    def fit(cls, X: np.ndarray, y: np.ndarray, names: list[str], C: float = 0.5,
            weight: np.ndarray | None = None, **kw) -> "ScorerModel":
        from sklearn.linear_model import LogisticRegression  # training only (heavy import)

        X = np.asarray(X, np.float64)
        with warnings.catch_warnings():  # a feature missing everywhere gets median 0
            warnings.simplefilter("ignore", RuntimeWarning)
            median = np.nanmedian(np.where(np.isfinite(X), X, np.nan), axis=0)
        median = np.where(np.isfinite(median), median, 0.0)
        Xi = _impute(X, median)
        mean, scale = Xi.mean(0), Xi.std(0)
        scale = np.where(scale > 1e-9, scale, 1.0)
        lr = LogisticRegression(C=C, max_iter=5000)
        lr.fit((Xi - mean) / scale, y, sample_weight=weight)
        return cls(names, median, mean, scale, lr.coef_[0], lr.intercept_[0], **kw)

    def predict(self, X: np.ndarray) -> np.ndarray:
        z = (_impute(np.asarray(X, np.float64), self.median) - self.mean) / self.scale
        logit = np.clip(z, -8, 8) @ self.coef + self.intercept  # clip: no feature runs away
        return 1.0 / (1.0 + np.exp(-logit))

    def to_dict(self) -> dict:
        r = lambda a: [round(float(v), 6) for v in a]  # noqa: E731
        return {"kind": "logistic_regression", "features": self.names, "median": r(self.median),
                "mean": r(self.mean), "scale": r(self.scale), "coef": r(self.coef),
                "intercept": round(self.intercept, 6), "projection": self.projection,
                "info": self.info}

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1, sort_keys=True)
            f.write("\n")

    @classmethod
    def load(cls, path: str):
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        if d.get("kind") == KIND:  # two regressions multiplied (ProductModel below)
            return ProductModel.from_dict(d)
        if d.get("kind") != "logistic_regression":
            raise ValueError(f"{path}: not a scorer model (kind {d.get('kind')!r})")
        return cls(d["features"], d["median"], d["mean"], d["scale"], d["coef"], d["intercept"],
                   d.get("projection", ""), d.get("info"))

    def top_weights(self, n: int = 15) -> list[tuple[str, float]]:
        order = np.argsort(-np.abs(self.coef), kind="stable")[:n]
        return [(self.names[i], round(float(self.coef[i]), 3)) for i in order]


def _impute(X: np.ndarray, median: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(X), X, median)


# The product model.
#
# The relevance score as a product of two logistic regressions: "is this a caption?" times
# "does it fit this image?".
#
# One regression over every feature learns that long, fluent texts are captions, and then
# keeps another photo's caption as readily as the right one: on real photos its score ranks
# the right caption first (ROC AUC 0.95) but no threshold keeps 90% of right captions without
# also keeping a fifth of wrong ones (docs/scoring.md).  Splitting the question fixes that:
#
# - ``text``: own captions against boilerplate, credits, promo and file names, on the text's
#   own features (``TEXT_INTRINSIC``): whether the text could describe any picture;
# - ``match``: own captions against other photos' captions, on the cross-modal features and
#   the label confidence: whether it describes this one.
#
# Both are calibrated probabilities (balanced classes), and the score is their product, so a
# pair passes 0.5 only when both answers are confidently yes.  A part may be a
# :class:`GatedModel`: two regressions mixed by a gate feature in [0, 1] (the caption memory's
# ``mem_gate``: the match part for pictures the memory knows is fitted apart from the one for
# new pictures, so neither bends the other's calibration).  Stored as JSON like
# ScorerModel (``kind: "product"``, the parts inside), scored with numpy.

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
    if p.get("kind") == "gated":
        return GatedModel(p["gate"], _part(p["low"]), _part(p["high"]))
    if p.get("kind") != "logistic_regression":
        raise ValueError(f"product part of kind {p.get('kind')!r}: not a logistic regression")
    return ScorerModel(p["features"], p["median"], p["mean"], p["scale"], p["coef"], p["intercept"])


class ProductModel:
    """``predict(X)`` over ``names`` (the parts' features, in first-seen order)."""

    def __init__(self, parts: dict, projection: str = "", info=None, memory: str = "",
                 threshold: float | None = None, scene: dict | None = None):
        self.parts = dict(parts)  # part name -> ScorerModel
        self.names: list[str] = []
        for m in self.parts.values():
            self.names += [n for n in m.names if n not in self.names]
        self._cols = {k: [self.names.index(n) for n in m.names] for k, m in self.parts.items()}
        self.projection = projection
        self.memory = memory  # file name of the caption memory (scoring/memory.py), beside the JSON
        self.info = info or {}
        # The operating point chosen for this model on validation data (score.threshold's
        # default when a run names none: model_threshold below); None: DEFAULT_THRESHOLD.
        self.threshold = threshold
        # The scene-word regressions (scoring/scene.py, SceneModel.to_dict()), or None.
        self.scene = scene

    def predict_parts(self, X: np.ndarray) -> dict[str, np.ndarray]:
        X = np.asarray(X, np.float64)
        return {k: m.predict(X[:, self._cols[k]]) for k, m in self.parts.items()}

    def predict(self, X: np.ndarray) -> np.ndarray:
        out = np.ones(len(X))
        for p in self.predict_parts(X).values():
            out = out * p
        return out

    def to_dict(self) -> dict:
        d = {"kind": KIND, "parts": {k: m.to_dict() for k, m in self.parts.items()},
             "projection": self.projection, "memory": self.memory, "info": self.info}
        if self.threshold is not None:
            d["threshold"] = self.threshold
        if self.scene is not None:
            d["scene"] = self.scene
        return d

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1, sort_keys=True)
            f.write("\n")

    @classmethod
    def from_dict(cls, d: dict) -> "ProductModel":
        parts = {k: _part(p) for k, p in d["parts"].items()}
        return cls(parts, d.get("projection", ""), d.get("info"), d.get("memory", ""),
                   d.get("threshold"), d.get("scene"))

    def top_weights(self, n: int = 15) -> dict:
        return {k: m.top_weights(n) for k, m in self.parts.items()}


# A probability's natural cut: where a calibrated model is more sure than not.  Models that
# carry no operating point of their own (the self-supervised path's regressions) use it.
DEFAULT_THRESHOLD = 0.5


def model_threshold(path: str) -> float:
    """The threshold a scorer JSON was shipped with (its ``threshold`` key, chosen on
    validation data: tools/train_real.py), else :data:`DEFAULT_THRESHOLD`."""
    with open(path, encoding="utf-8") as f:
        value = json.load(f).get("threshold")
    if value is None:
        return DEFAULT_THRESHOLD
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ValueError(f"{path}: threshold must be a number in [0, 1), got {value!r}")
    return float(value)


def load_scorer(path: str):
    """(model, feature extractor) for a scorer JSON and the projection beside it."""
    model = ScorerModel.load(path)
    here = os.path.dirname(os.path.abspath(path))
    proj = None
    if model.projection:
        proj = Projection.load(os.path.join(here, model.projection))
    mem = None
    if getattr(model, "memory", ""):  # a product model's caption memory (scoring/memory.py)
        mem = CaptionMemory.load(os.path.join(here, model.memory))
    scene = getattr(model, "scene", None)  # a product model's scene-word regressions
    return model, FeatureExtractor(projection=proj, memory=mem,
                                   scene=SceneModel.from_dict(scene) if scene else None)
