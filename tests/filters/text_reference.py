"""The cleaning rules as they were written before their fast paths (round 3 of issue #5):
straightforward code that the tests hold the fast versions to (same output on the real
pages' texts and their mutations).  Patterns and word lists are the rules' own.  Issue 14
changed credit on purpose (a final [bracketed] credit, "Photo credit X" without a colon; a bare
credit line "Spencer Platt/Getty", twentieth pass) and repeated_words (a reduplicated name
"Pichi Pichi" is not collapsed, twenty-fifth pass); filename and credit learnt image ids and
"Animation by X" (twenty-eighth pass, rules I and A), and keyword_list skips its short-list
test for a list of names on a large picture (twenty-ninth pass, rule N), here as in the
rules."""
import re

from filters.text_facts import facts, letter_words
from filters.text_rules import (_AGENCY_RE, _AGENCY_WORDS, _CAMERA_HINTS, _CAMERA_RE,
                                _COPYRIGHT_AGENCY_RE, _COPYRIGHT_RE, _CREDIT_LABEL_RE, _DIGITS3_RE,
                                _DUP_OK, _DUP_RE, _EXT_HINT_RE, _FILE_RE, _HASH_RE, _HASHTAG_RE,
                                _HEX12_RE, _ID_RE, _LEAD_CREDIT_RE, _LIST_JOINERS, _MEDIA_BY_RE,
                                _WHOLE_FILE_RE, _LABEL_HINTS, _PAREN_CREDIT_RE, _PHOTO_BY_RE, _SEP_RE, _SLUG_RE,
                                _UPPER2_RE, STOPWORDS, Reject, _dot_letter, bare_credit,
                                lower_words, HAS_LETTER, _PUBLISHED_RE, _TAIL_BARS, _TAIL_LAST,
                                _TAIL_PHRASE_END, _TAIL_SEPS, _T_AGE, _T_COUNT,
                                _T_DATE, _T_DUR, _T_MORE, _T_READ)


def keyword_list(text, ctx=None):
    if "#" in text and len(_HASHTAG_RE.findall(text)) >= 3:
        return Reject("keyword_list")
    items = text.split(",")
    if 3 <= len(items) <= 6 and len(text.split()) <= 12 and not text.rstrip().endswith(
            (".", "!", "?", ":")) and all(
            1 <= len(i.split()) <= 3 and (i.split()[0][0].isupper() or i.split()[0][0].isdigit())
            and not any(w.lower() in _LIST_JOINERS for w in i.split()) for i in items) \
            and not getattr(ctx, "names", False):
        # seventh pass: a short comma list; not asked of a list of names on a large picture
        # (twenty-ninth pass, rule N: ctx.names)
        return Reject("keyword_list")
    cls = facts(text, ctx).cls
    if (cls is not None and cls.count("p") < 4) or sum(map(text.count, ",;|/•·-–—")) < 4:
        return text
    segments = [s for s in _SEP_RE.split(text) if s]
    if len(segments) >= 5 and len(text.split()) <= 2.5 * len(segments):
        return Reject("keyword_list")
    return text


def _keep_or_collapse(m):
    # a grammatical double stays; so does a reduplicated name, the same capitalised word
    # twice (twenty-fifth pass, rule D); any other doubled word is written once
    parts = m.group(0).split()
    if m.group(1).lower() in _DUP_OK or (len(parts) == 2 and parts[0] == parts[1]
                                          and parts[0][0].isupper()):
        return m.group(0)
    return m.group(1)


def repeated_words(text, ctx=None):
    words = facts(text, ctx).words
    if len(set(words)) == len(words):
        return text
    if any(a == b for a, b in zip(words, words[1:])):
        text = _DUP_RE.sub(_keep_or_collapse, text)
        words = lower_words(text)
    if len(words) >= 6 and len(words) - len(set(words)) >= 2:
        counts: dict[str, int] = {}
        for w in words:
            if len(w) >= 3 and w not in STOPWORDS:
                counts[w] = counts.get(w, 0) + 1
        n = max(counts.values(), default=0)
        if n >= 3 and n * 10 >= len(words) * 3:
            return Reject("repeated_words")
    return text


def all_caps(text, ctx=None):
    cls = facts(text, ctx).cls
    pairs = cls.count("uu") if cls is not None else len(_UPPER2_RE.findall(text))
    if pairs < 3:
        return text
    words = [w for w in letter_words(text, cls) if len(w) >= 2]
    if len(words) >= 3 and sum(w.isupper() for w in words) * 5 >= len(words) * 4:
        return Reject("all_caps")
    return text


def filename(text, ctx=None):
    if " " not in text and ("_" in text or "-" in text) and _SLUG_RE.match(text):
        return ""
    f = facts(text, ctx)
    cls = f.cls
    if "." in text and _dot_letter(cls) and _EXT_HINT_RE.search(text):
        if _WHOLE_FILE_RE.match(text):
            return ""  # the whole text is a file's name ("Red Plate.png")
        text, cls = _FILE_RE.sub(" ", text), None
    if ("ddd" in cls) if cls is not None else _DIGITS3_RE.search(text):
        if cls is None or "ddddddd" in cls or any(h in f.low for h in _CAMERA_HINTS):
            text = _CAMERA_RE.sub(" ", text)
        if _HEX12_RE.search(text):
            text = _HASH_RE.sub(" ", text)
    return _ID_RE.sub(" ", text)


def credit(text, ctx=None):
    f = facts(text, ctx)
    low = f.low
    if bare_credit(text):
        return ""
    # a credit glued before a caption (forty-ninth pass, C), its slash in the first 48 chars
    m = _LEAD_CREDIT_RE.match(text)
    if m is not None and text.index("/") < 48 and len(text[m.end():].split()) >= 2:
        text = text[m.end():]
    m = _COPYRIGHT_RE.search(text) if "©" in text or "(c)" in low or "copyright" in low else None
    if m is not None:
        rest = text[m.end():]
        a = _COPYRIGHT_AGENCY_RE.match(rest)
        first = rest[a.end():] if a is not None else rest.split(" ", 1)[1] if " " in rest else ""
        text = text[: m.start()] + (" " + first if len(rest.split()) > 8 else "")
    text = _PAREN_CREDIT_RE.sub("", text) if text.endswith((")", "]")) else text
    label = ":" in text and (f.cls is None or any(h in low for h in _LABEL_HINTS))
    m = _CREDIT_LABEL_RE.search(text) if label else None
    if m is not None and text[m.end():].strip():
        rest = text[m.end():]
        cut = rest if len(rest.split()) <= 5 else ""
        text = text[: m.start()] + " " + rest[len(cut):]
    if " by " in low or " courtesy " in low or " via " in low or " credit" in low:
        text = _MEDIA_BY_RE.sub("", _PHOTO_BY_RE.sub("", text))
    return _AGENCY_RE.sub(" ", text) if any(w in low for w in _AGENCY_WORDS) else text


# Every piece in one pattern, as the forty-sixth pass wrote it (the rule searches with the
# pieces split by the word a text ends in, text_rules._TAIL_BY_WORD).
_TAIL_PIECE_RE = re.compile(
    rf"(?:(?<=\s)(?:{_T_DUR}|{_T_READ}|{_T_COUNT}|{_T_AGE}|{_T_MORE}"
    rf"|(?:added:?|(?-i:posted on)) {_T_DATE})|(?P<d>{_T_DATE}))[\s.]*$", re.I)


def tail(text, ctx=None):
    """The teaser-tail cut as the forty-sixth pass wrote it: each search over the last 120
    characters, no bound on where a piece may start, no test of a final digit."""
    f = facts(text, ctx)
    if not text[-1:].isdigit() and (not f.words or f.words[-1] not in _TAIL_LAST):
        return text
    if ("ublished" in text or "pdated" in text or "osted" in text) and _PUBLISHED_RE.search(text):
        return text
    rest = text
    for _ in range(6):
        m = _TAIL_PIECE_RE.search(rest, max(0, len(rest) - 120))
        if m is None:
            break
        before = rest[: m.start()]
        head = before.rstrip(" ")
        bar = head.endswith(_TAIL_BARS)
        if m.group("d") is not None:
            if before[-1:] not in (" ", ""):
                if not (before[-1].isalpha() or before[-1] in "”\"’')"):
                    break
            elif not bar and (not head or head[-1] in ",.:;-–—/"):
                break
        elif not before[-1:].isspace():
            break
        cut = head.rstrip(_TAIL_SEPS)
        if not bar and cut == head:
            last = cut.rsplit(" ", 1)[-1].strip("\"'“”‘’().").lower()
            if last in _TAIL_PHRASE_END:
                break
        if len(cut.split()) < 2 or not HAS_LETTER.search(cut):
            break
        rest = cut
    return rest


RULES = {f.__name__: f for f in (keyword_list, repeated_words, all_caps, filename, credit, tail)}
