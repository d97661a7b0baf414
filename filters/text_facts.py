"""Cheap facts about one text version, computed once and shared by the cleaning rules.

Python's ``re`` tests Unicode classes such as ``\\w`` or ``[^\\W\\d_]`` character by character,
and most rules only need to know whether a text *could* match (three digits in a row? three
symbols in a row? a period before a letter?) before running their real pattern.  For a text
of Latin-1 characters (every ASCII text, and most German or French ones), :class:`TextFacts`
answers those questions from a *class string*: the text encoded to Latin-1 (a copy) and
translated byte by byte (one C loop) to one class letter per character:

====  ======================================================================================
``l``  a letter ``a``-``z``          ``u``  any other letter (``[^\\W\\d_]``): ``A``-``Z``, ``ä``, ``²``
``d``  a digit (``\\d``)              ``.``  the period
`` `` the space                      ``s``  other whitespace (``\\s``)
``e``  an emoji (``©``, ``®``)        ``p``  anything else: punctuation, symbols, ``_``, controls
====  ======================================================================================

so that ``b"ddd" in cls`` is exactly "``\\d{3}`` matches" and ``cls.count(b"uu")`` is exactly
``len(re.findall("[^\\W\\d_a-z]{2}", text))``.  Other texts (``’``, ``–``, Cyrillic, emoji) have
no class string and the rules run their patterns, so what a rule decides never depends on the
shortcut.  The tables are *derived from the rules' own patterns* at import (each of the 256
characters is matched against them), so the shortcuts cannot drift from the patterns.
"""
from __future__ import annotations

import re

import regex  # for \p{Extended_Pictographic} (emoji); wordfreq depends on it anyway

HAS_LETTER = re.compile(r"[^\W\d_]")
WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")  # letter words ("don't" is one word)
NON_LETTERS_RE = re.compile(r"[\W\d_]+")
NOT_LETTER_RE = re.compile(r"[^\w\s]|[\d_]")  # what the punctuation rule counts as not a letter
DIGIT_RE = re.compile(r"\d")
EMOJI_RE = regex.compile(r"[\p{Extended_Pictographic}\p{Emoji_Modifier}\u200d\ufe0f\u20e3"
                         r"\U0001F1E6-\U0001F1FF]+")
_SPACE_RE = re.compile(r"\s")


def _char_class(c: str) -> str:
    low = c.lower()
    if len(low) != 1 or ord(low) > 255 or bool(HAS_LETTER.match(c)) != bool(HAS_LETTER.match(low)):
        return "x"  # lowercasing would change the letter runs: no shortcut for such texts
    if c == " ":
        return " "
    if c == ".":
        return "."
    if EMOJI_RE.fullmatch(c):
        return "e"
    if HAS_LETTER.fullmatch(c):
        return "l" if "a" <= c <= "z" else "u"
    if DIGIT_RE.fullmatch(c):
        return "d"
    return "s" if _SPACE_RE.fullmatch(c) else "p"


CLASS_BYTES = bytes(ord(_char_class(chr(i))) for i in range(256))
# Latin-1 characters that NON_LETTERS_RE replaces -> a space; letters stay.
NON_LETTER_TO_SPACE = bytes(32 if NON_LETTERS_RE.fullmatch(chr(i)) else i for i in range(256))


def classes(text: str) -> bytes | None:
    """The class string of ``text``, or ``None`` when it is not all Latin-1."""
    try:
        cls = text.encode("latin-1").translate(CLASS_BYTES)
    except UnicodeEncodeError:
        return None
    return None if b"x" in cls else cls


def _letter_runs(low: str) -> list[str] | None:
    """``NON_LETTERS_RE.sub(" ", low).split()`` for a Latin-1 text, else ``None``."""
    try:
        raw = low.encode("latin-1")
    except UnicodeEncodeError:
        return None
    return raw.translate(NON_LETTER_TO_SPACE).decode("latin-1").split()


def letter_norm(low: str) -> str:
    """``" ".join(NON_LETTERS_RE.sub(" ", low).split())``: the letter runs joined by spaces."""
    runs = _letter_runs(low)
    return " ".join(NON_LETTERS_RE.sub(" ", low).split() if runs is None else runs)


class TextFacts:
    """``text``, ``low`` (lowercased), ``cls`` (the class string, ``None`` for texts that are
    not all Latin-1) and ``words`` (lowercased letter words: ``WORD_RE.findall(low)``)."""

    __slots__ = ("text", "low", "cls", "_words")

    def __init__(self, text: str):
        self.text = text
        self.low = text.lower()
        self.cls = classes(text)
        self._words = None

    @property
    def words(self) -> list[str]:
        if self._words is None:
            low = self.low
            # Without apostrophes (which WORD_RE keeps inside words) the words are the runs
            # of letters; lowercasing a class-string text keeps every letter a letter.
            runs = _letter_runs(low) if self.cls is not None and "'" not in low else None
            self._words = WORD_RE.findall(low) if runs is None else runs
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
