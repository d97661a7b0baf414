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
# Raw-text elements: what is inside is not markup (a "<div>" in a script is no tag).
_RAW = frozenset(b"script style textarea xmp noembed noframes plaintext title".split())
_TAG_RE = re.compile(rb"<(/?)([A-Za-z][A-Za-z0-9:-]*)|<!--")


class TooDeep(ValueError):
    """The page's elements nest deeper than :data:`MAX_DEPTH`."""


def nesting_depth(html: str, stop: int = MAX_DEPTH) -> int:
    """How deep the page's elements nest: an upper bound (an element left open counts until
    a close tag of any counted element takes it off); stops counting once past ``stop``.

    One pass over the tags of the UTF-8 bytes (a bytes regex is several times faster than
    one on str); on the real pages of the tests it costs about a fifth of what language
    identification and extraction cost together."""
    data = html.encode("utf-8", "replace")
    if data.count(b"<") <= stop:
        return data.count(b"<")  # cannot nest deeper than it has tags
    depth = deepest = skip = 0
    find = data.find
    for m in _TAG_RE.finditer(data):
        if m.start() < skip:
            continue  # inside a comment or raw text
        close, name = m.groups()
        if name is None:  # <!--
            end = find(b"-->", m.end())
            skip = len(data) if end < 0 else end + 3
            continue
        name = name.lower()
        if name in _FLAT:
            continue
        if close:
            depth -= depth > 0
            continue
        if name in _RAW:
            end = _raw_end(data, name, m.end())
            skip = len(data) if end < 0 else end
            continue
        end = find(b">", m.end())
        if end > 0 and data[end - 1] == 0x2F:  # "/>": self-closed (svg, math)
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > stop:
                break
    return deepest


def _raw_end(data: bytes, name: bytes, start: int) -> int:
    """Where the raw-text element ``name`` opened before ``start`` is closed (any case)."""
    m = re.compile(rb"</" + name + rb"\b", re.I).search(data, start)
    return m.start() if m else -1


class ParsedPage:
    """A page's decoded text (``html``, ``codec``, ``how`` as :func:`decode_html` gives them)
    and its lexbor tree, parsed on first use and refused when too deep."""

    def __init__(self, body: bytes, content_type: str, max_depth: int = MAX_DEPTH):
        self.html, self.codec, self.how = decode_html(body, content_type)
        self.max_depth = max_depth
        self._tree = None
        self._too_deep: bool | None = None

    def tree(self) -> LexborHTMLParser:
        """The page's tree (share it: never mutate it; clone first).  Raises
        :class:`TooDeep` instead of parsing a page nested deeper than ``max_depth``."""
        if self._too_deep is None:
            self._too_deep = nesting_depth(self.html, self.max_depth) > self.max_depth
        if self._too_deep:
            raise TooDeep(f"elements nest deeper than {self.max_depth}")
        if self._tree is None:
            self._tree = LexborHTMLParser(self.html)
        return self._tree


def parsed(page) -> ParsedPage:
    """The page's :class:`ParsedPage`, made once per page and kept on it (``page.parsed``)."""
    got = getattr(page, "parsed", None)
    if got is None:
        body = page.body.encode("utf-8") if isinstance(page.body, str) else (page.body or b"")
        got = ParsedPage(body, page.headers.get("content-type") or page.content_type)
        page.parsed = got
    return got
