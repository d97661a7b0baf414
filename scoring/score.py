"""The ``score`` step (LAIT step 4): each (image, text) pair scored by the weak image-text
semantic model (``scoring/scorer_model.py``, on the features of ``scoring/features.py``).

``Scorer`` sets ``pair.score`` and drops a pair whose score is below the threshold as
``score_irrelevant``.  It runs in the images job, right after the pairs are made, so each pair
is scored once and a resumed run keeps scores.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from pipeline.core.errors import ConfigError
from pipeline.core.records import Pair
from pipeline.core.stage import MapStage
from scoring.scorer_model import DEFAULT_MODEL, DEFAULT_THRESHOLD, load_scorer, model_threshold


@dataclass
class ScorerConfig:
    """``score:`` section.  ``model`` is a scorer JSON written by ``tools/train_scorer.py``
    (empty: the shipped default); pairs scoring below ``threshold`` are dropped."""

    enabled: bool = True
    """score pairs (LAIT step 4); false keeps every pair unscored"""
    model: str = ""
    """a scorer JSON written by tools/train_scorer.py; empty: the shipped default"""
    threshold: float | None = None
    """pairs scoring below this are dropped (score_irrelevant); null: the model's own (the shipped model's is 0.5, chosen on real validation photos; a model without one: 0.5)"""
    threads: int = 1  # torch threads per worker for MiniLM

    def check(self) -> "ScorerConfig":
        if self.threads < 1:
            raise ConfigError(f"score.threads must be >= 1 (got {self.threads!r})")
        if self.enabled and self.model and not os.path.isfile(self.model):
            raise ConfigError(f"score.model: no such file {self.model!r}")
        if self.threshold is None and not self.enabled:
            self.threshold = DEFAULT_THRESHOLD  # no pair is scored: nothing to cut
        if self.threshold is None:
            # Resolved here, once, so the run's stored config (resume digest, report) names
            # the number the run used.
            try:
                self.threshold = model_threshold(self.model_path)
            except (OSError, ValueError) as exc:
                raise ConfigError(f"score.model: {exc}") from None
        if not 0.0 <= self.threshold < 1.0:
            raise ConfigError(f"score.threshold must be within [0, 1) (got {self.threshold!r})")
        return self

    @property
    def model_path(self) -> str:
        return self.model or DEFAULT_MODEL


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
