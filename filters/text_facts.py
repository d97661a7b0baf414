"""Cheap facts about one text version, computed once and shared by the cleaning rules.

Python's ``re`` tests Unicode classes such as ``\\w`` or ``[^\\W\\d_]`` character by character,
and most rules only need to know whether a text *could* match (three digits in a row? three
symbols in a row? a period before a letter?) before running their real pattern.  For a text
of Latin-1 characters (every ASCII text, and most German or French ones) or else of Windows-1252
ones (``’ – — “ ” € …`` besides Latin-1), :class:`TextFacts` answers those questions from a
*class string*: the text encoded to one byte per character (a copy for Latin-1) and translated
byte by byte (one C loop) to one class letter per character, read back as a ``str``:

* ``l`` a letter ``a``-``z``; ``u`` any other letter (``[^\\W\\d_]``: ``A``-``Z``, ``ä``, ``²``);
* ``d`` a digit (``\\d``); ``.`` the period; `` `` the space; ``s`` other whitespace (``\\s``);
* ``e`` an emoji (``©``, ``™``); ``p`` anything else (punctuation, symbols, ``_``, controls),

so that ``"ddd" in cls`` is exactly "``\\d{3}`` matches" and ``cls.count("uu")`` is exactly
``len(re.findall("[^\\W\\d_a-z]{2}", text))``.  Emoji beyond Windows-1252 (``😍``, skin
tones) are caseless symbols: :class:`TextFacts` writes them as class ``e`` too (an encoder
error handler), so Latin texts with emoji keep the shortcuts.  Other texts (Cyrillic, Greek,
``ő``) have no class string and the rules run their patterns, so what a rule decides never
depends on the shortcut.  The tables are *derived from the rules' own patterns* at import
(each character the 256 bytes stand for is matched against them), so the shortcuts cannot drift
from the patterns.
"""
from __future__ import annotations

import codecs
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


def _char_class(c: str, codec: str) -> str:
    low = c.lower()
    try:
        low.encode(codec)
    except UnicodeEncodeError:
        return "x"
    if len(low) != 1 or bool(HAS_LETTER.match(c)) != bool(HAS_LETTER.match(low)):
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


# Rare characters: what the markup rule acts on (escapes, tags, TeX, mojibake, the characters
# that are not printable), "@", "©", "%", currency signs, "#" and "×".  The gate
# (filters.text_rules.may_fire) asks the rules that act on them only when a text holds one.
RARE_CHARS = frozenset("\\{&<[ÃÂâ@©%$£¥#×€" + "".join(
    c for c in map(chr, range(256)) if not c.isprintable()))


def _tables(codec: str) -> tuple[str, bytes, bytes, bytes]:
    """``(codec, byte -> class letter, byte -> space for what NON_LETTERS_RE replaces,
    byte -> class letter or "r" for RARE_CHARS)``."""
    chars = [bytes([i]).decode(codec, errors="replace") for i in range(256)]  # undefined: U+FFFD
    cls = bytes(ord(_char_class(c, codec)) for c in chars)
    space = bytes(32 if NON_LETTERS_RE.fullmatch(c) else i for i, c in enumerate(chars))
    rare = bytes(ord("r") if c in RARE_CHARS else k for c, k in zip(chars, cls))
    return codec, cls, space, rare


# Latin-1 first: encoding a Latin-1 text to it is a copy.
_CODECS = (_tables("latin-1"), _tables("cp1252"))


# Emoji beyond Windows-1252 (😍, 💫, skin tones, VS16) are caseless symbols that change no
# shortcut but the emoji test itself: with ``emoji=True`` they take class "e" through the
# encoder's error handler, which writes "©" (class "e" in both tables) for each of them.
_EMOJI_OK: dict[str, bool] = {}


def _caseless_emoji(c: str) -> bool:
    ok = _EMOJI_OK.get(c)
    if ok is None:
        ok = _EMOJI_OK[c] = bool(
            c.isprintable() and EMOJI_RE.fullmatch(c) and not HAS_LETTER.match(c)
            and not DIGIT_RE.match(c) and c.lower() == c == c.upper() == c.casefold()
            and not re.match("[a-z0-9]", c, re.I))  # re.IGNORECASE folds nothing onto it
    return ok


def _emoji_as_copyright(err: UnicodeEncodeError):
    run = err.object[err.start:err.end]
    if all(map(_caseless_emoji, run)):
        return b"\xa9" * len(run), err.end
    # A new exception: re-raising ``err`` would tie it to this frame (which holds it) in a
    # reference cycle, left for the garbage collector on every such text.
    raise UnicodeEncodeError(err.encoding, err.object, err.start, err.end, err.reason)


def _encode(text: str, emoji: bool):
    """``(raw bytes, the _CODECS entry, errors)`` of the first codec that takes ``text`` (with
    caseless emoji as "©" when ``emoji``), or ``None``.  Without a handler first: most
    non-ASCII texts need none.  "ignore" is handled inside the C encoder (no exception is
    made): the codec takes the text when no character went missing."""
    for entry in _CODECS:
        raw = text.encode(entry[0], "ignore")
        if len(raw) == len(text):  # one byte per character
            return raw, entry, "strict"
    if emoji:
        for entry in _CODECS:
            try:
                return text.encode(entry[0], "lait-emoji"), entry, "lait-emoji"
            except UnicodeEncodeError:
                continue
    return None


codecs.register_error("lait-emoji", _emoji_as_copyright)
assert all(t[0xA9] == ord("e") for _, t, _, _ in _CODECS)
# ASCII is the first half of Latin-1, and none of it is "x".
_, _ASCII_CLS, _ASCII_SPACE, _ASCII_RARE = _CODECS[0]
# The bytes of class "l" (a-z in both codecs), which ``sym`` leaves out.
_L_BYTES = bytes(i for i in range(256) if _ASCII_CLS[i] == ord("l"))
assert _L_BYTES == b"abcdefghijklmnopqrstuvwxyz"
assert all(bytes(i for i in range(256) if t[i] == ord("l")) == _L_BYTES for _, t, _, _ in _CODECS)
# ASCII letters lowercased, other bytes as _ASCII_SPACE has them: the letter runs of the
# lowercased text from the text's own bytes.
_ASCII_LOW_SPACE = bytes(c + 32 if 65 <= c <= 90 else c for c in _ASCII_SPACE)
assert b"x" not in _ASCII_CLS[:128]


def classes(text: str, emoji: bool = False) -> str | None:
    """The class string of ``text``, or ``None`` when it has characters beyond Windows-1252
    (beyond Windows-1252 and caseless emoji, with ``emoji``)."""
    if text.isascii():  # the common case: no codec to choose, no ASCII character is "x"
        return text.encode("ascii").translate(_ASCII_CLS).decode("ascii")
    enc = _encode(text, emoji)
    if enc is None:
        return None
    raw, (_, table, _, _), _ = enc
    # A str, not bytes: ``b"dd" in some_bytes`` first tries the argument as an integer
    # and formats (then clears) a TypeError, several times the cost of the search.
    cls = raw.translate(table).decode("ascii")
    return None if "x" in cls else cls


def _letter_runs(low: str) -> list[str] | None:
    """``NON_LETTERS_RE.sub(" ", low).split()`` for a one-byte-codec text (with caseless
    emoji, which are not letters: written as "©", they become spaces too), else ``None``."""
    if low.isascii():
        return low.encode("ascii").translate(_ASCII_SPACE).decode("ascii").split()
    enc = _encode(low, emoji=True)
    if enc is None:
        return None
    raw, (codec, _, space, _), _ = enc
    return raw.translate(space).decode(codec).split()


def letter_words(text: str, cls: str | None) -> list[str]:
    """``WORD_RE.findall(text)``, where ``cls`` is the class string of ``text`` (or of the
    text that ``text`` lowercases: lowercasing a class-string text keeps every letter a
    letter).  Without apostrophes, which WORD_RE keeps inside words, the words are the runs
    of letters: one translate instead of a Unicode pattern."""
    if cls is not None and "'" not in text and "’" not in text:
        runs = _letter_runs(text)
        if runs is not None:
            return runs
    return WORD_RE.findall(text)


def letter_norm(low: str) -> str:
    """``" ".join(NON_LETTERS_RE.sub(" ", low).split())``: the letter runs joined by spaces."""
    runs = _letter_runs(low)
    return " ".join(NON_LETTERS_RE.sub(" ", low).split() if runs is None else runs)


class TextFacts:
    """``text``, ``low`` (lowercased), ``cls`` (the class string, ``None`` for texts with
    characters beyond Windows-1252 other than caseless emoji), ``words`` (lowercased letter
    words, as ``WORD_RE.findall(low)``), and for texts with a class string ``sym``: the class
    string without its "l" letters (what a count of any other class reads, in a fraction of
    the length), with "r" for each of RARE_CHARS (a caseless emoji counts as one) in place
    of its class.  All made at once: the gate reads every one of them for every text."""

    __slots__ = ("text", "low", "cls", "words", "sym")

    def __init__(self, text: str):
        self.text = text
        self.low = low = text.lower()
        if text.isascii():  # classes() and letter_words() inline: ASCII is the common case
            raw = text.encode("ascii")
            self.cls = raw.translate(_ASCII_CLS).decode("ascii")
            self.sym = raw.translate(_ASCII_RARE, _L_BYTES).decode("ascii")
            self.words = (raw.translate(_ASCII_LOW_SPACE).decode("ascii").split()
                          if "'" not in text else WORD_RE.findall(low))
            return
        # classes(text, emoji=True) and letter_words(low, cls) with one codec choice: a text
        # with a class string lowercases to one that the same codec takes.
        enc = _encode(text, True)
        cls = sym = None
        if enc is not None:
            raw, (codec, table, space, rare), errors = enc
            cls = raw.translate(table).decode("ascii")
            if "x" in cls:
                cls = None
            else:
                sym = raw.translate(rare, _L_BYTES).decode("ascii")
        self.cls, self.sym = cls, sym
        if cls is not None and "'" not in low and "’" not in low:
            self.words = low.encode(codec, errors).translate(space).decode(codec).split()
        else:
            self.words = WORD_RE.findall(low)


def facts(text: str, ctx=None) -> TextFacts:
    """The facts of ``text``, kept on ``ctx`` (one per text being cleaned) until an edit
    makes a new text version."""
    if ctx is None:
        return TextFacts(text)
    f = ctx.facts
    if f is None or f.text is not text:
        f = ctx.facts = TextFacts(text)
    return f
