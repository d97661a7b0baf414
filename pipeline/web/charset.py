"""Decoding HTML bytes to text: BOM, HTTP charset, ``<meta>`` declaration, then sniffing.

The order follows the HTML Standard's encoding sniffing with two changes that real crawls call
for: bytes that are valid UTF-8 (and not plain ASCII) are read as UTF-8 whatever the page
declares, because "says ISO-8859-1, is UTF-8" is the commonest mislabelling on the web and
multi-byte UTF-8 sequences almost never occur by chance in legacy-encoded text; and an
undeclared page that is not UTF-8 is guessed with ``charset_normalizer`` (a dependency of
``requests``), falling back to windows-1252 as browsers in Western locales do.
"""
from __future__ import annotations

import codecs
import re
import threading

# WHATWG encoding labels whose Python codec differs (the web's meaning is the superset).
_WEB_ALIASES = {
    "iso-8859-1": "cp1252", "iso8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252",
    "l1": "cp1252", "ascii": "cp1252", "us-ascii": "cp1252", "iso_8859-1": "cp1252",
    "windows-1252": "cp1252", "x-cp1252": "cp1252",
    "iso-8859-9": "cp1254", "latin5": "cp1254", "tis-620": "cp874", "iso-8859-11": "cp874",
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "gb_2312-80": "gb18030",
    "shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932",
    "ms_kanji": "cp932", "windows-31j": "cp932",
    "euc-kr": "cp949", "ks_c_5601-1987": "cp949", "big5": "big5hkscs",
    "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8",
}
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))
_HTTP_CHARSET_RE = re.compile(r"charset\s*=\s*[\"']?\s*([\w.:+-]+)", re.I)
# <meta charset=x> and <meta http-equiv=content-type content="...; charset=x">, in bytes.
_META_CHARSET_RE = re.compile(rb"<meta\b[^>]*?charset\s*=\s*[\"']?\s*([\w.:+-]+)", re.I)
META_SCAN_BYTES = 8192  # the Standard stops at 1024; real heads often declare later
# Replacement chars and C0 controls other than whitespace: a high share means not text.
_BAD_CHARS_RE = re.compile("[\ufffd\x00-\x08\x0b\x0e-\x1f]")
MAX_BAD_SHARE = 0.05
_ASCII_RUNS_RE = re.compile("[\x00-\x7f]+")
MIN_VALID_PER_STRAY = 2


def codec_for(label: str | None) -> str | None:
    """The Python codec for an encoding label, or None if it names no text encoding."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    name = _WEB_ALIASES.get(label, label)
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True):  # base64, rot13... cannot read text
        return None
    return info.name


def http_charset(content_type: str) -> str | None:
    m = _HTTP_CHARSET_RE.search(content_type or "")
    return codec_for(m.group(1)) if m else None


def meta_charset(body: bytes) -> str | None:
    m = _META_CHARSET_RE.search(body[:META_SCAN_BYTES])
    if not m:
        return None
    codec = codec_for(m.group(1).decode("ascii", "replace"))
    # A <meta> readable as ASCII cannot be in UTF-16: the Standard reads it as UTF-8.
    return "utf-8" if codec and codec.startswith("utf-16") else codec


# Encodings an undeclared web page plausibly uses; on a tie the earlier one wins, so Western
# text that reads the same in several code pages comes out as windows-1252, the browsers'
# fallback (charset_normalizer alone picks e.g. cp1250 and turns "naïve" into "naďve").
SNIFF_ENCODINGS = ("cp1252", "cp1250", "cp1251", "cp1253", "cp1254", "cp1255", "cp1256",
                   "cp1257", "cp1258", "koi8_r", "koi8_u", "cp874", "euc_jp", "cp932",
                   "gb18030", "big5", "cp949", "iso8859_2", "iso8859_15")


def _sniff(body: bytes) -> str:
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        return "cp1252"
    results = list(from_bytes(body[:65536], cp_isolation=list(SNIFF_ENCODINGS)))
    if not results:
        return "cp1252"
    best = min(m.chaos for m in results)
    tied = [m.encoding for m in results if m.chaos <= best + 0.01]
    rank = {e: i for i, e in enumerate(SNIFF_ENCODINGS)}
    return codec_for(min(tied, key=lambda e: rank.get(e, len(rank)))) or "cp1252"


_fallbacks = threading.local()  # bytes the handler below decoded, per thread


def _utf8_or_cp1252(exc: UnicodeDecodeError):
    """Decode error handler: a byte that is not part of valid UTF-8 is read as windows-1252
    (its five unassigned bytes as the C1 controls, as the WHATWG decoder does), one byte at
    a time so that the valid UTF-8 after it is read as UTF-8 again."""
    byte = exc.object[exc.start:exc.start + 1]
    try:
        char = byte.decode("cp1252")
    except UnicodeDecodeError:
        char = chr(byte[0])
    _fallbacks.n = getattr(_fallbacks, "n", 0) + 1
    return char, exc.start + 1


codecs.register_error("lait-utf8-cp1252", _utf8_or_cp1252)


def decode_utf8_mixed(body: bytes) -> tuple[str, int, int]:
    """``(text, valid, stray)``: ``body`` read as UTF-8 with every invalid byte read as
    windows-1252 (never U+FFFD), the number of valid multi-byte characters and the number
    of stray bytes."""
    _fallbacks.n = 0
    text = body.decode("utf-8", "lait-utf8-cp1252")
    stray = _fallbacks.n
    return text, len(_ASCII_RUNS_RE.sub("", text)) - stray, stray


def decode_html(body: bytes, content_type: str = "") -> tuple[str, str, str]:
    """``(text, codec, how)`` where ``how`` is bom / utf8 / utf8_mixed / http / meta /
    sniffed.

    A page that is UTF-8 but for a few stray bytes (a Latin-1 byte pasted into a template, a
    cut character) is read as UTF-8, whatever it declares, with those bytes read as
    windows-1252 (``utf8_mixed``): sending it to an encoding guess would garble every other
    character (one stray byte once made a UTF-8 page cp1250).  "Mostly" means at least
    :data:`MIN_VALID_PER_STRAY` valid multi-byte characters per stray byte: legacy text forms
    valid multi-byte UTF-8 only by rare accident.  And a page declared UTF-8 whose bytes are
    not is read the same way, so a cp1252 page labelled UTF-8 keeps its characters instead
    of turning them into U+FFFD."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return body[len(bom):].decode(codec, "replace"), codec, "bom"
    if body.isascii():
        return body.decode("ascii"), "ascii", "utf8"
    try:
        return body.decode("utf-8"), "utf-8", "utf8"
    except UnicodeDecodeError:
        pass
    mixed, valid, stray = decode_utf8_mixed(body)
    if valid >= MIN_VALID_PER_STRAY * stray:
        return mixed, "utf-8", "utf8_mixed"
    for how, codec in (("http", http_charset(content_type)), ("meta", meta_charset(body))):
        if codec == "utf-8":
            return mixed, codec, how  # declared UTF-8, bytes not: never U+FFFD
        if codec:
            return body.decode(codec, "replace"), codec, how
    # Undeclared and not mostly UTF-8: guess.
    codec = _sniff(body)
    return body.decode(codec, "replace"), codec, "sniffed"


_CONTROL_BYTES = bytes(range(0x09)) + b"\x0b" + bytes(range(0x0e, 0x20))
# Every other byte: deleting these leaves just the control bytes to count, and a translate
# that writes next to nothing (two fifths faster than deleting the control bytes, measured).
_NOT_CONTROL_BYTES = bytes(b for b in range(256) if b not in _CONTROL_BYTES)


def looks_undecodable(text: str, body: bytes, how: str) -> bool:
    """True when replacement and control characters make up more than 5% of the text.

    For bytes read as valid UTF-8 (``how == "utf8"``) no character was replaced, so only
    control bytes are counted, on the bytes (a C-speed ``translate``, no regex pass).
    """
    if how == "utf8":
        sample = body[:200_000]
        bad = len(sample.translate(None, _NOT_CONTROL_BYTES))
        return bad > MAX_BAD_SHARE * len(sample)
    sample = text[:200_000]
    return len(_BAD_CHARS_RE.findall(sample)) > MAX_BAD_SHARE * len(sample)
