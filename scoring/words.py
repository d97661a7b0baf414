"""Word helpers shared by the scorer's features and the label space: lower-case letter words,
a crude English lemma, and content lemmas (stop words out)."""
from __future__ import annotations

import re

WORD_RE = re.compile(r"[^\W\d_]+", re.UNICODE)


def words(text: str) -> list[str]:
    return WORD_RE.findall((text or "").lower())


def lemma(word: str) -> str:
    """A crude English lemma (plural s) so "daisies"/"daisy" and "cats"/"cat" meet."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def lemmas(text: str) -> set[str]:
    # sklearn (with scipy) takes about a second to import: only workers that score pay it
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return {lemma(w) for w in words(text) if w not in ENGLISH_STOP_WORDS and len(w) > 1}
