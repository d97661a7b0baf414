"""Cheap facts about one text version, computed once and shared by the cleaning rules.

Python's ``re`` tests Unicode classes such as ``\\w`` or ``[^\\W\\d_]`` character by character,
a few hundred nanoseconds per short text and pattern; most rules only need to know whether a
text *could* match (does it hold three digits in a row? two symbols in a row? six upper-case
letters?) before running their real pattern.  For an ASCII text, :class:`TextFacts` answers
those questions from one ``str.translate`` into a *class string* (one letter per character:
``l``/``u`` letters, ``d`` digits, ``s`` whitespace other than the space, ``p`` everything
else) and C-speed ``in``/``count`` calls on it.  Non-ASCII texts have no class string and the
rules fall back to their patterns, so what a rule decides never depends on the shortcut.

The translate tables are *derived from the rules' own patterns* at import (each ASCII
character is matched against them), so the shortcuts cannot drift from the patterns.
"""
from __future__ import annotations

import re

HAS_LETTER = re.compile(r"[^\W\d_]")
WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")  # letter words ("don't" is one word)
NON_LETTERS_RE = re.compile(r"[\W\d_]+")
NOT_LETTER_RE = re.compile(r"[^\w\s]|[\d_]")  # what the punctuation rule counts as not a letter
DIGIT_RE = re.compile(r"\d")
_SPACE_RE = re.compile(r"\s")


def _ascii_class(c: str) -> str:
    if c == " ":
        return " "
    if HAS_LETTER.fullmatch(c):
        return "u" if c.isupper() else "l"
    if DIGIT_RE.fullmatch(c):
        return "d"
    return "s" if _SPACE_RE.fullmatch(c) else "p"


# ASCII character -> its class letter; non-letters -> " " (what NON_LETTERS_RE replaces).
CLASS_TABLE = str.maketrans({chr(i): _ascii_class(chr(i)) for i in range(128)})
NON_LETTER_TO_SPACE = str.maketrans({chr(i): " " for i in range(128)
                                     if NON_LETTERS_RE.fullmatch(chr(i))})


def ascii_words(low: str) -> list[str]:
    """``WORD_RE.findall(low)`` for an ASCII text without apostrophes: its letter runs."""
    return low.translate(NON_LETTER_TO_SPACE).split()


def letter_norm(low: str) -> str:
    """``" ".join(NON_LETTERS_RE.sub(" ", low).split())``: the letter words joined by spaces."""
    if low.isascii():
        return " ".join(low.translate(NON_LETTER_TO_SPACE).split())
    return " ".join(NON_LETTERS_RE.sub(" ", low).split())


class TextFacts:
    """``text``, ``low`` (lowercased), ``cls`` (the class string, ``None`` for non-ASCII text)
    and ``words`` (lowercased letter words, as ``WORD_RE.findall(low)``), for one text."""

    __slots__ = ("text", "low", "cls", "_words")

    def __init__(self, text: str):
        self.text = text
        self.low = text.lower()
        self.cls = text.translate(CLASS_TABLE) if text.isascii() else None
        self._words = None

    @property
    def words(self) -> list[str]:
        if self._words is None:
            low = self.low
            self._words = (ascii_words(low) if self.cls is not None and "'" not in low
                           else WORD_RE.findall(low))
        return self._words


def facts(text: str, ctx=None) -> TextFacts:
    """The facts of ``text``, kept on ``ctx`` (one per text being cleaned) until an edit
    makes a new text version."""
    if ctx is None:
        return TextFacts(text)
    f = ctx.facts
    if f is None or f.text is not text:
        f = ctx.facts = TextFacts(text)
    return f
