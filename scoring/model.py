"""LAIT step 4: the weak image-text semantic model and the ``score`` stage.

The model is a logistic regression over the named features of ``scoring/features.py``
(standardised, missing values imputed with the training medians): small, readable, and its
output is a calibrated probability that the text describes the image.  It is stored as JSON
(feature names, medians, means, scales, coefficients), so loading it runs no code and
depends on no library version; scoring is a dot product in numpy.  The optional image->text
projection it was trained with sits beside it as ``.npz`` (``scoring/projection.py``).

``Scorer`` (a map stage on :class:`~pipeline.records.Pair`) sets ``pair.score`` and drops a
pair whose score is below the threshold as ``score_irrelevant``.  It runs in the images job,
right after the pairs are made, so each pair is scored once and a resumed run keeps scores.
"""
from __future__ import annotations

import json
import math
import os
import warnings
from dataclasses import dataclass

import numpy as np

from pipeline.errors import ConfigError
from pipeline.records import Pair
from pipeline.stage import MapStage

MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
DEFAULT_MODEL = os.path.join(MODELS_DIR, "scorer.json")


@dataclass
class ScorerConfig:
    """``score:`` section.  ``model`` is a scorer JSON written by ``tools/train_scorer.py``
    (empty: the shipped default); pairs scoring below ``threshold`` are dropped."""

    enabled: bool = True
    model: str = ""
    threshold: float = 0.5
    threads: int = 1  # torch threads per worker for MiniLM

    def check(self) -> "ScorerConfig":
        if not 0.0 <= self.threshold < 1.0:
            raise ConfigError(f"score.threshold must be within [0, 1) (got {self.threshold!r})")
        if self.threads < 1:
            raise ConfigError(f"score.threads must be >= 1 (got {self.threads!r})")
        if self.enabled and self.model and not os.path.isfile(self.model):
            raise ConfigError(f"score.model: no such file {self.model!r}")
        return self

    @property
    def model_path(self) -> str:
        return self.model or DEFAULT_MODEL


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
        from sklearn.linear_model import LogisticRegression

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
        if d.get("kind") == "product":  # two regressions multiplied (scoring/product.py)
            from scoring.product import ProductModel

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


def load_scorer(path: str):
    """(model, feature extractor) for a scorer JSON and the projection beside it."""
    from scoring.features import FeatureExtractor
    from scoring.projection import Projection

    model = ScorerModel.load(path)
    here = os.path.dirname(os.path.abspath(path))
    proj = None
    if model.projection:
        proj = Projection.load(os.path.join(here, model.projection))
    mem = None
    if getattr(model, "memory", ""):  # a product model's caption memory (scoring/memory.py)
        from scoring.memory import CaptionMemory

        mem = CaptionMemory.load(os.path.join(here, model.memory))
    return model, FeatureExtractor(projection=proj, memory=mem)


class Scorer(MapStage):
    """Sets ``pair.score`` (probability that the text describes the image); drops a pair
    below the threshold as ``score_irrelevant``.  Model, projection and MiniLM load once per
    worker in :meth:`setup`."""

    name = "score"

    def __init__(self, config: ScorerConfig | None = None):
        self.config = (config or ScorerConfig()).check()
        self._model = None
        self._features = None

    def describe(self):
        return {"model": os.path.basename(self.config.model_path), "threshold": self.config.threshold}

    def __getstate__(self):
        return {**self.__dict__, "_model": None, "_features": None}

    def setup(self) -> None:
        if self._model is None:
            self._model, self._features = load_scorer(self.config.model_path)
            self._features.encoder.threads = self.config.threads
            missing = set(self._model.names) - set(self._features.names)
            if missing:
                raise ValueError(f"scorer model needs unknown features {sorted(missing)}")

    def score(self, pairs: list[Pair]) -> np.ndarray:
        self.setup()
        X = self._features.transform(pairs)
        cols = [self._features.names.index(n) for n in self._model.names]
        return self._model.predict(X[:, cols])

    def process(self, pair: Pair):
        if not (pair.candidate.text or "").strip():
            return self.drop("empty_text")
        (p,) = self.score([pair])
        if not math.isfinite(p):
            return self.drop("no_score")
        # Rounded: the stored score is the same bytes on every machine and engine.
        pair.score = round(float(p), 6)
        if pair.score < self.config.threshold:
            return self.drop("irrelevant")
        return [pair]
