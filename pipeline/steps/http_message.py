"""The HTTP response a WARC record holds: its head parsed, its type sniffed, its body decoded.

Written for archives as they are: ClueWeb09 (WARC/0.18) ends header lines with a bare LF, and
crawlers disagree on whether a stored body still carries its transfer and content encodings
(:func:`decode_body`).  Compressed bodies are inflated against a size cap (a few KB can decode
to gigabytes).  :mod:`pipeline.steps.read` turns a record into a page with these.
"""
from __future__ import annotations

import re
import zlib

MAX_HEAD = 64 * 1024  # an HTTP head longer than this is not a head (read_bad_record)

_STATUS_RE = re.compile(rb"^HTTP/\d(?:\.\d)?[ \t]+(\d{3})\b")
_CHUNK_LINE_RE = re.compile(rb"[0-9a-fA-F]+[ \t]*(?:;[^\r\n]*)?\r?\n")
# WHATWG MIME sniffing: the tags that make an untyped body HTML (after leading whitespace).
_HTML_SNIFF_RE = re.compile(
    rb"^(?:<!--|<(?:!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b"
    rb"|body|br|p)(?=[ \t\n\f\r>]|$))", re.I)
_BOMS = (b"\xef\xbb\xbf", b"\xfe\xff", b"\xff\xfe")


class BadRecord(ValueError):
    """A response whose HTTP message cannot be parsed or decoded."""


class Truncated(ValueError):
    """A response whose body ends before its declared end."""


class TooLarge(ValueError):
    """A response whose decoded body exceeds ``max_page_bytes``."""


def parse_http_head(block: bytes) -> tuple[int, dict[str, str], int]:
    """``(status, headers, body_offset)`` of an HTTP response message.

    Header names are lower-cased; repeated headers are joined with ``", "``.  Lines may end in
    CRLF or a bare LF (ClueWeb09); folded continuation lines are joined to the previous one.
    """
    m = _STATUS_RE.match(block)
    if not m:
        raise BadRecord("no HTTP status line")
    ends = [(i, n) for i, n in ((block.find(b"\r\n\r\n"), 4), (block.find(b"\n\n"), 2)) if i >= 0]
    if not ends:
        raise BadRecord("HTTP head never ends")
    end, sep = min(ends)
    if end > MAX_HEAD:
        raise BadRecord("HTTP head too long")
    headers: dict[str, str] = {}
    last = None
    for line in block[:end].decode("latin-1").split("\n")[1:]:
        line = line.rstrip("\r")
        if line[:1] in (" ", "\t") and last:  # obsolete line folding
            headers[last] += " " + line.strip()
            continue
        name, colon, value = line.partition(":")
        name = name.strip().lower()
        if not colon or not name:
            continue  # junk line: browsers ignore it too
        value = value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
        last = name
    return int(m.group(1)), headers, end + sep


def mime_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def sniff_html(body: bytes) -> bool:
    """True when an untyped body starts like HTML (WHATWG MIME sniffing, simplified)."""
    head = body[:1024]
    for bom in _BOMS:
        if head.startswith(bom):
            head = head[len(bom):]
            break
    return bool(_HTML_SNIFF_RE.match(head.lstrip(b" \t\n\f\r")))


def dechunk(body: bytes) -> bytes:
    """Decodes a body stored with its HTTP/1.1 chunked framing."""
    out, pos = [], 0
    while True:
        m = _CHUNK_LINE_RE.match(body, pos)
        if not m:
            if pos >= len(body):
                raise Truncated("chunked body without its last chunk")
            raise BadRecord("bad chunk header")
        size = int(m.group(0).split(b";")[0], 16)
        pos = m.end()
        if size == 0:
            return b"".join(out)
        if pos + size > len(body):
            raise Truncated("chunk runs past the end of the body")
        out.append(body[pos:pos + size])
        pos += size
        if body.startswith(b"\r\n", pos):
            pos += 2
        elif body.startswith(b"\n", pos):
            pos += 1


def _inflate(body: bytes, wbits: int, limit: int) -> bytes:
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(body, limit + 1)
    except zlib.error as exc:
        raise BadRecord(f"bad compressed body: {exc}") from exc
    if len(out) > limit:  # also stops decompression bombs early
        raise TooLarge("decoded body too large")
    if not d.eof:
        raise Truncated("compressed body ends early")
    return out


def decode_body(body: bytes, headers: dict[str, str], limit: int) -> bytes:
    """Undoes transfer and content encodings that a WARC kept raw.

    Crawlers disagree on this: Common Crawl stores decoded bodies and renames the headers
    (``X-Crawler-Content-Encoding``), ClueWeb09 stores decoded bodies under the original
    ``Content-Encoding: gzip``.  So an encoding is undone only when the bytes carry it.
    """
    if "chunked" in headers.get("transfer-encoding", "").lower() and _CHUNK_LINE_RE.match(body):
        body = dechunk(body)
    codings = [c.strip().lower() for c in headers.get("content-encoding", "").split(",")]
    for coding in reversed([c for c in codings if c and c != "identity"]):
        if coding in ("gzip", "x-gzip") and body[:2] == b"\x1f\x8b":
            body = _inflate(body, 16 + zlib.MAX_WBITS, limit)
        elif coding == "deflate" and body[:1] == b"\x78":
            body = _inflate(body, zlib.MAX_WBITS, limit)
        elif coding == "deflate" and body and not body.lstrip()[:1] == b"<":
            body = _inflate(body, -zlib.MAX_WBITS, limit)
        elif coding == "br" and body and not body.lstrip()[:1] == b"<":
            body = _unbrotli(body, limit)
    return body


def _unbrotli(body: bytes, limit: int) -> bytes:
    try:
        import brotli
    except ImportError as exc:
        raise BadRecord("brotli body, but the brotli module is not installed") from exc
    # Incrementally, against the cap: a few KB of brotli can decode to gigabytes, and
    # brotli.decompress would hold all of them before the size could be checked.
    d = brotli.Decompressor()
    out = bytearray()
    try:
        out += d.process(body, output_buffer_limit=limit + 1)
        while len(out) <= limit and not d.is_finished() and not d.can_accept_more_data():
            out += d.process(b"", output_buffer_limit=limit + 1 - len(out))
    except brotli.error as exc:
        raise BadRecord(f"bad brotli body: {exc}") from exc
    if len(out) > limit:
        raise TooLarge("decoded body too large")
    if not d.is_finished():
        raise Truncated("brotli body ends early")
    return bytes(out)
