"""A basic text check: non-empty, and within length bounds in words and characters."""
from __future__ import annotations

import re

from pipeline.records import Candidate
from pipeline.stage import MapStage

_WS = re.compile(r"\s+")


class TextLength(MapStage):
    name = "text"

    def __init__(self, min_words: int = 3, max_words: int = 50, min_chars: int = 5, max_chars: int = 400):
        self.min_words = min_words
        self.max_words = max_words
        self.min_chars = min_chars
        self.max_chars = max_chars

    def process(self, c: Candidate):
        text = _WS.sub(" ", c.text).strip()
        if not text:
            return self.drop("empty")
        n = len(text.split())
        if n < self.min_words or len(text) < self.min_chars:
            return self.drop("too_short")
        if n > self.max_words or len(text) > self.max_chars:
            return self.drop("too_long")
        c.text = text
        return [c]
