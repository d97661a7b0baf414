"""Sentence detection for ``surrounding`` texts: keep the sentences next to the image.

The extractor stores the text before an image in ``candidate.meta["before"]`` and the text
after it in ``candidate.meta["after"]`` (each a bounded window).  Both are split into
sentences with ``sentencex`` (rule-based, ~300 languages, compiled), after splitting on line
breaks, which the extractor uses between block elements.

Which sentences are kept, and why:

* the **last sentence before** the image and the **first sentence after** it, each as its own
  candidate text (``meta["side"]`` = ``before`` / ``after``): they are the text nearest the
  image, typically the lead-in that introduces a figure and the line that comments on it.  The
  sentences farther away are mostly about something else, and the window edges cut them
  anyway (the first sentence of ``before`` and the last of ``after`` are usually fragments).
* when the image sits *inside* a sentence (the text before it does not end a sentence and the
  text after it starts in lower case or with ``, ; : )``, as after an inline formula), the two
  halves are one sentence: they are joined into one candidate (``side`` = ``both``).
"""
from __future__ import annotations

import re

import sentencex

# A sentence (or a block such as a heading) is complete when it ends in one of these.
_ENDS_RE = re.compile(r"[.!?…:;\"'”’»)\]]\s*$")
_LINES_RE = re.compile(r"\s*\n\s*")
_CONTINUES = frozenset(",;:)]}")  # an "after" text starting so continues the sentence before


def split_sentences(text: str, lang: str = "en") -> list[str]:
    """Non-empty, stripped sentences; line breaks always end a sentence."""
    out = []
    for line in _LINES_RE.split(text) if "\n" in text else (text,):
        if line.strip():
            out.extend(s.strip() for s in sentencex.segment(lang or "en", line) if s.strip())
    return out


def edge_sentence(text: str, lang: str, last: bool) -> list[str]:
    """``split_sentences(text, lang)[-1:]`` (``last``) or ``[:1]``: lines end sentences, so
    only the last (first) line with a sentence is split, and no other sentence is stripped."""
    lines = _LINES_RE.split(text) if "\n" in text else (text,)
    for line in reversed(lines) if last else lines:
        if line.strip():
            segments = sentencex.segment(lang or "en", line)
            for s in reversed(segments) if last else segments:
                s = s.strip()
                if s:
                    return [s]
    return []


def sentences_next_to_image(before: str, after: str, lang: str = "en") -> list[tuple[str, str]]:
    """``[(side, sentence), ...]`` in page order; empty when there is no text either side."""
    b = edge_sentence(before, lang, True) if before and before.strip() else []
    a = edge_sentence(after, lang, False) if after and after.strip() else []
    if b and a and not _ENDS_RE.search(b[0]):
        head = a[0][:1]
        if head.islower():
            return [("both", f"{b[0]} {a[0]}")]
        if head in _CONTINUES:
            return [("both", f"{b[0]}{a[0]}")]
    return [("before", s) for s in b] + [("after", s) for s in a]
