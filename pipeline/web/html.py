"""A page's HTML decoded and parsed once, with a bound on what the parse may cost.

The language and extract steps both need the decoded text and the lexbor tree of a page.
:func:`parsed` keeps them on the page (a transient field: it never leaves the fused bundle
of steps, so a page that crosses a process boundary is simply parsed again there).

Lexbor's tree building is super-linear in nesting depth (each start tag checks the stack of
open elements: 10k / 20k / 40k nested ``<div>`` s took 0.12 / 0.7 / 2.8 s, 80k 14.6 s), so a
hostile page could hold a worker for minutes.  Before parsing, :func:`nesting_depth` measures
how deep the page's elements nest with a linear scan of its tags; deeper than
:data:`MAX_DEPTH` and the page is not parsed (the steps drop it as ``<step>_html_too_deep``).
1024 is far beyond real pages (the 110 real pages of the tests nest at most 25 levels deep)
and bounds the parse of a 5 MB page (``input.max_page_bytes``) to about 2.6 s (measured on
one core of an AMD EPYC; 80k nested elements took 14.6 s, a 5 MB page of them hours).
"""
from __future__ import annotations

import re

import numpy as np
from selectolax.lexbor import LexborHTMLParser

from pipeline.web.charset import decode_html

MAX_DEPTH = 1024
# Elements that never hold children (void) or that the parser closes by itself when a sibling
# starts (p, li, td...): neither builds depth, so neither is counted.
_FLAT = frozenset(
    b"area base br col embed hr img input link meta param source track wbr keygen frame "
    b"basefont bgsound image isindex "  # void
    b"p li dt dd option optgroup tr td th thead tbody tfoot colgroup caption rb rt rtc rp "
    b"html head body".split())
# Skipped as a whole: comments and raw-text elements (a "<div>" in a script is no tag); in
# svg and math, elements closed by "/>" are removed first (in HTML "<div/>" opens a div).
_SKIP_RE = re.compile(rb"<!--|<(script|style|textarea|xmp|noembed|noframes|title|svg|math)\b")
_SELF_CLOSED_RE = re.compile(rb"<[a-z][^<>]*/>")
_LT, _SLASH = ord("<"), ord("/")


def _trie(words: list[bytes]) -> bytes:
    """A regex matching exactly ``words``, as a trie ("b(?:ase(?:font)?|r)"): the regex
    engine then tries a few first letters at each tag, not every name in turn."""
    words = sorted(set(words))
    if words == [b""]:
        return b""
    groups: dict[bytes, list[bytes]] = {}
    for w in words:
        if w:
            groups.setdefault(w[:1], []).append(w[1:])
    alts = [re.escape(c) + _trie(rest) for c, rest in sorted(groups.items())]
    body = alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"
    return b"(?:" + body + b")?" if b"" in words else body


# A tag of an element that builds depth: its close mark ("/" or ""), and nothing for the
# _FLAT ones (a name is flat only as a whole: "<brx>" counts).  Matching only these, one
# byte each, keeps the Python loop below to the tags that count (a third of them).
_STEP_RE = re.compile(rb"<(/?)(?!" + _trie(list(_FLAT)) + rb"(?![a-z0-9:-]))[a-z]")


class TooDeep(ValueError):
    """The page's elements nest deeper than :data:`MAX_DEPTH`."""


def nesting_depth(html: str | bytes, stop: int = MAX_DEPTH) -> int:
    """How deep the page's elements nest, as an upper bound (an element left open counts
    until a close tag of any counted element takes it off), or any bound <= ``stop`` that
    shows it cannot be deeper than ``stop``; counting stops once past ``stop``.

    Tags are found by vectorised byte compares (numpy), C-speed byte searches and one
    ``findall``; only the loop over the tags that count is Python.  On the real pages of the
    tests it costs about a fifth of what language identification and extraction cost.
    ``html`` may be its UTF-8 bytes already (a page read as valid UTF-8: its body), which
    saves encoding it again."""
    data = html if isinstance(html, bytes) else html.encode("utf-8", "replace")
    # Where the tags start: a vectorised compare finds them faster than bytes.count counts
    # them, and the "</" are then read at those places only, not searched for again (the
    # two counts 10.9 -> 5.0 ms on the bench's pages; speed pass 18).
    arr = np.frombuffer(data, np.uint8)
    starts = np.flatnonzero(arr == _LT)
    n_tags = len(starts)
    if n_tags <= stop:
        return n_tags  # cannot nest deeper than it has tags
    # Nor deeper than it has start tags: every tag the scan below counts as opening is a "<"
    # not followed by "/" here (it only lower-cases and cuts out stretches that start at a
    # "<").  A count that spares a third of real pages the scan.
    follow = starts + 1
    if follow[-1] == len(arr):
        follow = follow[:-1]  # a "<" that ends the page is followed by nothing
    opens = n_tags - int(np.count_nonzero(arr[follow] == _SLASH))
    if opens <= stop:
        return opens
    depth = deepest = 0
    for close in _STEP_RE.findall(_markup(data.lower())):
        if close:
            depth -= depth > 0
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > stop:
                break
    return deepest


def _markup(low: bytes) -> bytes:
    """Lower-cased ``low`` without comments and raw-text contents, and with the self-closed
    elements of svg / math removed."""
    out, pos = [], 0
    while (m := _SKIP_RE.search(low, pos)) is not None:
        out.append(low[pos:m.start()])
        name = m.group(1)
        if name in (b"svg", b"math"):
            end = low.find(b"</" + name, m.end())
            end = len(low) if end < 0 else end
            out.append(_SELF_CLOSED_RE.sub(b"", low[m.start():end]))
            pos = end
            continue
        close = b"-->" if name is None else b"</" + name
        end = low.find(close, m.end())
        if end < 0:
            return b" ".join(out)  # unclosed: the rest is raw text
        pos = end + len(close)
    out.append(low[pos:])
    return b" ".join(out)


class ParsedPage:
    """A page's decoded text (``html``, ``codec``, ``how`` as :func:`decode_html` gives them)
    and its lexbor tree, parsed on first use and refused when too deep."""

    def __init__(self, body: bytes, content_type: str, max_depth: int = MAX_DEPTH):
        self.html, self.codec, self.how = decode_html(body, content_type)
        # Read as valid UTF-8 (or ASCII), the body is the text's UTF-8 bytes: the depth scan
        # and the parser (which encodes a str to UTF-8 first) read it as is instead of
        # encoding the text again, twice (a tenth of the extract step).
        self._utf8 = body if self.how == "utf8" else None
        self.max_depth = max_depth
        self._tree = None
        self._too_deep: bool | None = None

    def tree(self) -> LexborHTMLParser:
        """The page's tree (share it: never mutate it; clone first).  Raises
        :class:`TooDeep` instead of parsing a page nested deeper than ``max_depth``."""
        if self._too_deep is None:
            self._too_deep = nesting_depth(self._utf8 or self.html,
                                           self.max_depth) > self.max_depth
        if self._too_deep:
            raise TooDeep(f"elements nest deeper than {self.max_depth}")
        if self._tree is None:
            self._tree = LexborHTMLParser(self._utf8 or self.html)
            self._utf8 = None
        return self._tree


def parsed(page) -> ParsedPage:
    """The page's :class:`ParsedPage`, made once per page and kept on it (``page.parsed``)."""
    got = getattr(page, "parsed", None)
    if got is None:
        body = page.body.encode("utf-8") if isinstance(page.body, str) else (page.body or b"")
        got = ParsedPage(body, page.headers.get("content-type") or page.content_type)
        page.parsed = got
    return got
