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
from scoring.projection import Projection

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
    def load(cls, path: str) -> "ScorerModel":
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        if d.get("kind") != "logistic_regression":
            raise ValueError(f"{path}: not a scorer model (kind {d.get('kind')!r})")
        return cls(d["features"], d["median"], d["mean"], d["scale"], d["coef"], d["intercept"],
                   d.get("projection", ""), d.get("info"))

    def top_weights(self, n: int = 15) -> list[tuple[str, float]]:
        order = np.argsort(-np.abs(self.coef), kind="stable")[:n]
        return [(self.names[i], round(float(self.coef[i]), 3)) for i in order]


def _impute(X: np.ndarray, median: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(X), X, median)


def load_scorer(path: str):
    """(model, feature extractor) for a scorer JSON and the projection beside it."""
    model = ScorerModel.load(path)
    proj = None
    if model.projection:
        proj = Projection.load(os.path.join(os.path.dirname(os.path.abspath(path)), model.projection))
    return model, FeatureExtractor(projection=proj)
