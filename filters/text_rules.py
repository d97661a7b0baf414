r"""The ordered cleaning rules of the ``text`` step (``TextCleaner`` in ``filters/text.py``).

Each rule is a small function ``fn(text, ctx) -> str | Reject``: it returns the text (edited
or not) to keep it, or a :class:`Reject` to drop it.  ``RULES`` holds them in the order they
run, so the order is data; the cleaner records every rule that changed the text in
``candidate.meta["text_edits"]``, and an edit that leaves no letter behind drops the text
with that rule's reason (a text that was only a URL is dropped as ``text_url``).

Before the rules, the text's whitespace is collapsed and non-ASCII text is NFC-normalised
(not recorded as an edit).  Cheap rules run before the expensive ones (fastText, wordfreq).

| #  | rule           | kind       | what                                                          | drop reason(s)          |
|----|----------------|------------|---------------------------------------------------------------|-------------------------|
| 1  | markup         | edit, drop | HTML entities (twice: `&amp;amp;`), leftover tags and          | text_markup,            |
|    |                |            | WordPress shortcodes, mojibake (ftfy), control/zero-width      | text_bad_chars          |
|    |                |            | chars; a text holding TeX source (`\mathbf {x}`) is dropped;  |                         |
|    |                |            | one holding U+FFFD (lost characters) is `text_bad_chars`       |                         |
| 2  | email          | edit       | e-mail addresses (also `name [at] host [dot] com`)            | text_email              |
| 3  | url            | edit       | URLs, `www.` hosts, bare domains with common TLDs             | text_url                |
| 4  | filename       | edit       | file names (`IMG_2041.JPG`), camera names (`DSC0001`,         | text_filename           |
|    |                |            | `P1010001`), hashes/UUIDs, image ids (`71attMcKIYS`); a       |                         |
|    |                |            | whole-text slug (`red-car_final`)                             |                         |
| 5  | dimension      | edit       | `800x600`, `1920 × 1080 px`, `300px` (not `100 x 80 cm`)      | text_dimension          |
| 6  | credit         | edit       | photo credits: `© ...`, `Photo: J. Doe/AP`, `Photo by ... on  | text_credit             |
|    |                |            | Unsplash`, a final `(DW/J. Hitz)`, stock agencies; a whole    |                         |
|    |                |            | text `Courtesy of X` (<= 6 words) or a bare credit line       |                         |
|    |                |            | `Spencer Platt/Getty`, `Andrew A. Nelles/AP`; `Animation by X`|                         |
|    |                |            | where a sentence starts; not a label                          |                         |
|    |                |            | with nothing after it (`... the following photo:`)            |                         |
| 7  | boilerplate    | drop       | the whole text is `logo`, `image`, `click here`, `photo of`,  | text_boilerplate        |
|    |                |            | `ACME logo`, `search icon`, `Powered by ...` (wordlist), a    |                         |
|    |                |            | rating (`2 out of 5 stars`) or a section flag (`Food & Drink: |                         |
|    |                |            | Recipes, reviews & more`), a call to action (`Get My Meal     |                         |
|    |                |            | Planner`, `Free Download`, `Launch Gallery`), a publication's  |                         |
|    |                |            | name (`Planet Money Blog`), a feed's description (`Editorials |                         |
|    |                |            | from The Star-Ledger`), or it holds site furniture (`we use   |                         |
|    |                |            | cookies`, `privacy policy`, `is a registered trademark`)      |                         |
| 8  | promo          | drop       | `buy now`, `add to cart`, `free shipping`, `20% off`,         | text_promo              |
|    |                |            | coupon / promo codes, a phone number to call                  |                         |
| 9  | price          | edit, drop | prices (`$19.99`, `19,99 €`, `EUR 20`; not `$5 million`); a   | text_price              |
|    |                |            | run of prices and shop words ending a product's name is cut   |                         |
|    |                |            | (`Sand Table Was £80.00 Now £50.00 Save £30.00`), the rest    |                         |
|    |                |            | judged as any text; not a price inside a phrase (`Recipes     |                         |
|    |                |            | Under $3`) nor one leading a deal (`$99 for a Drone`)         |                         |
| 10 | adult          | drop       | a word or phrase of `wordlists/adult_en.txt`                  | text_adult              |
| 11 | spam           | drop       | a word or phrase of `wordlists/spam_en.txt`                   | text_spam               |
| 12 | punctuation    | edit, drop | emoji removed, runs of punctuation collapsed (`!!!` -> `!`);  | text_punctuation        |
|    |                |            | dropped when letters are under half of the non-space chars    |                         |
| 13 | all_caps       | drop, edit | >= 3 words of 2+ letters and >= 80% of them upper case; a     | text_all_caps           |
|    |                |            | text naming its picture's file is title-cased instead         |                         |
| 14 | hashtags       | edit       | a run of hashtags ending a caption is cut (`Lemon tart with   | text_hashtags           |
|    |                |            | berries #baking #dessert #recipe`), when words are left       |                         |
| 15 | keyword_list   | drop       | >= 5 separator-split segments of <= 2.5 words on average, or  | text_keyword_list       |
|    |                |            | >= 3 hashtags, or a short comma list of 3-6 capitalised items |                         |
|    |                |            | ("Netflix, Netflix-Zentrale, Los Gatos": ``short_list``)      |                         |
| 16 | repeated_words | edit, drop | `the the` -> `the` (not `Pichi Pichi`, a name); dropped when  | text_repeated_words     |
|    |                |            | one content word is >= 30%                                    |                         |
|    |                |            | of the words and occurs >= 3 times                            |                         |
| 17 | lead           | edit       | a text over max_words / max_chars keeps its leading whole     | text_lead               |
|    |                |            | sentences that fit (agency captions: the first sentence says  |                         |
|    |                |            | what the picture shows, the rest tells the story); so does a  |                         |
|    |                |            | text ending in a comma (cut mid-sentence)                     |                         |
| 18 | exclamation    | drop       | a question or an exclamation of <= 8 words: teasers, comments | text_exclamation        |
|    |                |            | and buttons ("Trying for a baby?", "WOW!", "Let's Go Devils!")|                         |
| 19 | dateline       | drop       | a text opening with a date (`Apr 7, 2009 This week's ...`,    | text_dateline           |
|    |                |            | `7. März 2021`): post metadata, dated teasers; not a caption's|                         |
|    |                |            | own dateline followed by a colon or dash; a post's date line  |                         |
|    |                |            | anywhere (`... Published: 28 Apr, 2020`, `Updated 22:00`); a  |                         |
|    |                |            | teaser ending in its byline (`... By Noah Berlatsky`,         |                         |
|    |                |            | `... By Louis Keene 3 min read`)                              |                         |
| 20 | lead_in        | drop       | a text ending in a colon: a label (`Share this on:`), or in   | text_lead_in,           |
|    |                |            | "here" (`... click here.`); one ending in an ellipsis: a      | text_truncated          |
|    |                |            | teaser cut short (`Signs point...`), or in a comma: a fragment|                         |
| 21 | length         | drop       | words outside [min_words, max_words] or chars outside         | text_too_short,         |
|    |                |            | [min_chars, max_chars]; from min_words_own words for a        | text_too_long           |
|    |                |            | picture's own text outside the page's furniture (see below)   |                         |
| 22 | lang           | drop       | fastText on the lowercased text (lid.176 reads Title Case     | text_not_target         |
|    |                |            | English as German; first lang_max_chars chars): a non-target  |                         |
|    |                |            | language with probability                                     |                         |
|    |                |            | >= lang_min_conf; below it the page's language stands (or     |                         |
|    |                |            | langdetect decides, with ``second_opinion``).  A short text   |                         |
|    |                |            | (<= 6 words, "Cranberry Jalapeño Dip") on a target-language   |                         |
|    |                |            | page, 2/3 of its words in the target's vocabulary, is kept    |                         |
|    |                |            | whatever fastText says (``meta["lang_by"] = "vocabulary"``);  |                         |
|    |                |            | up to 12 words when a third of them are more frequent in the  |                         |
|    |                |            | target than in fastText's language                            |                         |
| 23 | oov            | drop       | share of words whose wordfreq Zipf frequency < zipf_threshold | text_oov                |
|    |                |            | above max_oov_ratio; a name of 2-3 capitalised words is not   |                         |
|    |                |            | judged by it ("Amrita Deonarine", "Enchilada Suizas"), nor    |                         |
|    |                |            | one with a comma or a particle ("Oligokyphus, a Cynodont")    |                         |
|    |                |            | ; Title-case words count as known outside German ("Diri Kole  |                         |
|    |                |            | ak Pwa recipe", "Foglio Wall ... Tobia Scarpa"); a text kept  |                         |
|    |                |            | over the bound records why in ``meta["oov_by"]``              |                         |
| 24 | tail           | edit       | after every rule has kept the text (a final edit: the rules   | text_tail               |
|    |                |            | above judged it whole), a teaser's metadata ending it is cut: |                         |
|    |                |            | a cooking time (`Chicken Soup 80 mins Ratings`), a reading    |                         |
|    |                |            | time, a count of comments / reviews, an age (`20 hours ago`), |                         |
|    |                |            | a date glued on or after a plain word or a label (`posted on  |                         |
|    |                |            | Sep 9, 2015`), `Read More`; not after a phrase word (`Bake    |                         |
|    |                |            | for 40 mins`), not leaving fewer than two words               |                         |

One rule more judges a text with its candidate, after the rules above (``CANDIDATE_RULES``;
the text's cached result does not know its source), and is disabled by its own name too:

| first_person | drop | a surrounding text in the first person singular ("I" its subject: | text_first_person |
|              |      | "I know I say this about every quinoa bake"): the writer's chatter |                   |
|              |      | or a comment beside the picture (thirty-third pass, rule H')       |                   |

Two-word captions ("Tom Brady", "Philly Cheesesteak") are kept when they are a picture's own
text (alt, title, figcaption) outside the page's furniture (``text.min_words_own`` = 2; the
text step decides per candidate with ``TextCleaner.own_text``): in a header, footer,
navigation or author box, and as surrounding text, two-word texts are brand, station and
author names, menu labels and credits ("Purina Beyond", "Rooster 101.9", "In Focus").

A text naming its picture's file (``filters/file_names.py``: "Bourbon Balls" beside
``Bourbon-Balls-4-150x150.jpg``) is judged as its picture's name (``ctx.named``; the text step
decides it per candidate, ``TextCleaner._named``): own text wherever it sits, all capitals
title-cased, not judged by its vocabulary nor, up to three words, by fastText's language.

Rules 21-23 use the cleaner's configuration and models through ``ctx`` and write
``meta["n_words"]``, ``meta["lang"]``, ``meta["lang_conf"]`` and ``meta["oov_ratio"]``.
"""
from __future__ import annotations

import functools
import html
import os
import re
from collections import Counter
from dataclasses import dataclass
from itertools import islice
from operator import eq as _eq
from typing import Callable

import ftfy

_HERE = os.path.join(os.path.dirname(__file__), "wordlists")


@dataclass(frozen=True)
class Reject:
    """A rule's verdict to drop the text; ``what`` becomes the reason ``text_<what>``."""

    what: str


# A frozen dataclass costs a few object.__setattr__ calls to make; rules drop many texts each, so
# every reason's Reject is made once (it is immutable: sharing it changes nothing).
_reject = functools.lru_cache(maxsize=None)(Reject)


@dataclass(frozen=True)
class Rule:
    name: str
    fn: Callable
    kind: str  # "edit", "drop" or "edit, drop" (documentation; behaviour is in fn)
    reasons: tuple = ()  # the drop reasons' suffixes when they differ from the rule's name

    @property
    def drop_reasons(self) -> tuple:
        return tuple(f"text_{w}" for w in (self.reasons or (self.name,)))


# HAS_LETTER and WORD_RE are defined beside the facts that shortcut them; re-exported here.
from filters.text_facts import (  # noqa: E402
    DIGIT_RE,
    EMOJI_RE,
    HAS_LETTER,
    NOT_LETTER_RE,
    WORD_RE,
    classes,
    facts,
    letter_norm,
    letter_words,
)


def load_wordlist(name: str) -> list[str]:
    with open(os.path.join(_HERE, name), encoding="utf-8") as f:
        lines = (ln.split("#", 1)[0].strip().lower() for ln in f)
        return sorted({ln for ln in lines if ln})


class PhraseSet:
    """Whole-word phrase matching over a text's lowercased letter words.

    A set lookup per word (and a slice compare for phrases starting with it) instead of one
    big case-insensitive regex alternation, which Python's ``re`` tries at every position.
    """

    def __init__(self, phrases: list[str]):
        self.first: dict[str, list[tuple[str, ...]]] = {}
        keys = set()
        for p in phrases:
            words = tuple(WORD_RE.findall(p.lower().replace("-", " ")))
            if words:
                self.first.setdefault(words[0], []).append(words)
                keys.add(max(words, key=len))
        # A phrase is found only where all its words are: its longest one, the rarest as a
        # rule ("in stock", "we use cookies"), stands for it in the first test.
        self.keys = frozenset(keys)

    def search(self, words: list[str]) -> bool:
        # Most texts hold no phrase's key word: one C-level set test rules them out.
        if self.keys.isdisjoint(words):
            return False
        first = self.first
        for i, w in enumerate(words):
            for phrase in first.get(w, ()):
                if len(phrase) == 1 or tuple(words[i:i + len(phrase)]) == phrase:
                    return True
        return False


def lower_words(text: str, ctx=None) -> list[str]:
    """The text's lowercased letter words, computed once per text version when ``ctx`` is
    given (six rules read them)."""
    return facts(text, ctx).words



# Separators left dangling at either end once a span is removed ("Sunset - IMG_1.JPG").
_EDGE_RE = re.compile(r"^[\s\-–—|:;,/·•_~*+=>]+|[\s\-–—|:;,/·•_~*+=<(\[]+$")
_EMPTY_BRACKETS_RE = re.compile(r"\(\s*[,;:]?\s*\)|\[\s*\]")
_SPACE_BEFORE_RE = re.compile(r"\s+([)\]},;:!?])")


# _EDGE_RE as two strips (its first alternative is anchored at the start, its second at the
# end, which re would try at every position); whitespace is every character \s matches.
_SPACES = "".join(chr(i) for i in range(0x110000) if re.match(r"\s", chr(i)))
_EDGE_HEAD = _SPACES + "-–—|:;,/·•_~*+=>"
_EDGE_TAIL = _SPACES + "-–—|:;,/·•_~*+=<(["


def tidy(text: str) -> str:
    """Whitespace collapsed, empty brackets and dangling edge separators removed."""
    if "(" in text or "[" in text:
        text = _EMPTY_BRACKETS_RE.sub(" ", text)
    text = " ".join(text.split())
    # Only single spaces are left: the pattern can match only where one precedes its marks.
    if (" )" in text or " ," in text or " :" in text or " ;" in text or " !" in text
            or " ?" in text or " ]" in text or " }" in text):
        text = _SPACE_BEFORE_RE.sub(r"\1", text)
    return text.lstrip(_EDGE_HEAD).rstrip(_EDGE_TAIL)


# 1. markup ------------------------------------------------------------------------------
# The shortcode's attributes are one run up to the first "]": every char of "\s+[\w-]+=" is
# one of [^\]], so the older "(?:\s+[\w-]+=[^\]]*)+" matched the same spans in exponential time
# ("[a a=a=a=..." with no "]" hung the step; docs/captions.md, "Worst-case cost").
_TAG_RE = re.compile(r"<[^<>]{0,300}>|\[/?\w++\s++[\w-]++=[^\]]*+\]|\[/\w+\]")
_MOJIBAKE_RE = re.compile("[ÃÂ][\u0080-\u00bf]|â€")
_CONTROL_RE = re.compile("[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]")
_INVISIBLE_RE = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060\ufeff]")


_LATEX_RE = re.compile(r"\\[a-zA-Z]+ ?[{\[_^]|[_^]\{|\\(?:frac|sum|int|alpha|beta|gamma|sigma|lambda|"
                       r"mathbb|mathbf|mathrm|displaystyle|dots|cdots|ldots|cdot|times|neq|leq|geq)\b")


def markup(text, ctx=None):
    if "\ufffd" in text:  # characters lost to a bad decode (or a NUL the HTML parser replaced):
        return _reject("bad_chars")  # what they were cannot be known, so no repair
    if "\\" in text or "{" in text:
        if _LATEX_RE.search(text):  # a formula's TeX source (Wikipedia math alt texts)
            return _reject("markup")
    if "&" in text:
        text = html.unescape(html.unescape(text))
    if "<" in text or "[" in text:
        text = _TAG_RE.sub(" ", text)
    # Every character the invisible and control patterns remove is non-printable (Unicode
    # Cc, Cf, Zl, Zp): isprintable() spares nearly every text those scans.
    if not text.isascii():
        if ("Ã" in text or "Â" in text or "â€" in text) and _MOJIBAKE_RE.search(text):
            text = ftfy.fix_text(text)
        if not text.isprintable():
            text = _INVISIBLE_RE.sub("", text)
    return text if text.isprintable() else _CONTROL_RE.sub(" ", text)


# 2-3. e-mail addresses and URLs -------------------------------------------------------------
# Possessive runs (what follows each is outside its set, so giving back never helps) and a
# first run's start only where a run of its set starts (a later start in the run meets the
# same "@"): the same matches as the plain pattern, without its quadratic backtracking.
_EMAIL_RE = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)+"
                       r"|\b[\w.+-]++\s*+[\[(]at[\])]\s*+[\w-]++"
                       r"\s*+[\[(]dot[\])]\s*+\w+", re.I)
_TLDS = "com|org|net|edu|gov|io|co|uk|de|fr|info|biz|me|tv|ly|us|ca|au|eu|ru|jp|cn|app|dev"
_URL_RE = re.compile(r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"'()\[\]]*[^\s<>\"'()\[\].,;:!?]"
                     r"|\b[a-z0-9][\w-]*+(?:\.[\w-]++)*\.(?:" + _TLDS + r")\b"
                     r"(?:/[^\s<>\"'()\[\]]*+)?", re.I)


# Where each pattern's search can be quadratic, and how _sub_linear makes it linear: the
# positions a match may start at (``starts``), and from a start where the pattern failed,
# the run (``run``) within which one alternative is sure to fail at every later start too
# (a later start in the same run reaches only the ends the first one did), leaving the others
# (``rest``) to try there.
_EMAIL_STARTS_RE = re.compile(r"(?<![\w.+-])[\w.+-]|\b[\w.+-]")
_EMAIL_RUN_RE = re.compile(r"\b[\w.+-]*+")  # the second alternative's run (it starts at \b)
_EMAIL_REST_RE = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)+", re.I)
_URL_STARTS_RE = re.compile(r"\b[a-z0-9]", re.I)
_URL_RUN_RE = re.compile(r"[\w-]*+(?:\.[\w-]++)*+")  # the host alternative's reach
_URL_REST_RE = re.compile(r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"'()\[\]]*[^\s<>\"'()\[\].,;:!?]",
                          re.I)
# Up to this many characters the plain search is cheaper (its quadratic worst case is small).
_LINEAR_FROM = 256


def _sub_linear(rx, starts, run, rest, text: str, repl: str = " ") -> str:
    """``rx.sub(repl, text)``, the same result, in time linear in the text where ``rx``'s
    search is quadratic (a run that every start position reads to its end and fails):
    ``rx`` is tried only where ``starts`` matches and, within the ``run`` of a start where it
    failed, only its alternatives ``rest`` (docs/captions.md, "Worst-case cost")."""
    out, last, pos, covered = [], 0, 0, 0
    while True:
        s = starts.search(text, pos)
        if s is None:
            break
        p = s.start()
        m = (rx if p >= covered else rest).match(text, p)
        if m is None:
            if p >= covered:
                r = run.match(text, p)
                if r is not None:
                    covered = r.end()
            pos = p + 1
            continue
        out.append(text[last:p])
        out.append(repl)
        last = pos = m.end()
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


# What follows the "@" of every address _EMAIL_RE finds: a search that starts at the "@".
_AT_HOST_RE = re.compile(r"@[\w-]+\.[\w-]")


def email(text, ctx=None):
    if not ("@" in text or "[at]" in text or "(at)" in text):
        return text
    # The pattern backtracks at every word: run it only when it can match, i.e. an "@" with a
    # host name after it, or "[at" / "(at" in any case.
    low = facts(text, ctx).low
    if not _AT_HOST_RE.search(text) and "[at" not in low and "(at" not in low:
        return text
    if len(text) > _LINEAR_FROM:
        return _sub_linear(_EMAIL_RE, _EMAIL_STARTS_RE, _EMAIL_RUN_RE, _EMAIL_REST_RE, text)
    return _EMAIL_RE.sub(" ", text)


_URL_HINT_RE = re.compile(r"://|www\.|\.(?:" + _TLDS + r")\b", re.I)


def _dot_letter(cls) -> bool:
    """Whether a period comes before a letter (a TLD or a file extension could follow);
    True when the text has no class string."""
    return cls is None or ".l" in cls or ".u" in cls


def url(text, ctx=None):
    if "." not in text:
        return text
    f = facts(text, ctx)
    if not (_dot_letter(f.cls) or "://" in text or "www." in f.low):
        return text
    if not _URL_HINT_RE.search(text):
        return text
    if len(text) > _LINEAR_FROM:
        return _sub_linear(_URL_RE, _URL_STARTS_RE, _URL_RUN_RE, _URL_REST_RE, text)
    return _URL_RE.sub(" ", text)


# 4. file names, camera names, hashes ---------------------------------------------------------
# Started only where a run of the name's characters starts: a later start in the same run
# can end only at the same extensions (the same matches, linear instead of quadratic).
_FILE_RE = re.compile(r"(?<![\w\-.%~+])[\w\-.%~+]*\w\.(?:jpe?g|png|gif|webp|bmp|tiff?|svg|heic|heif|avif|ico|"
                      r"cr2|nef|dng|psd|pdf|mp4|mov|webm)\b", re.I)
_CAMERA_RE = re.compile(r"\b(?:IMG|DSC[NF]?|GOPR|GH\d\d|PXL|DJI|MVC|CIMG|PICT|IMAG|VID|PANO)[ _-]?"
                        r"\d{3,}(?:[_-]\d+)*(?:_\w+)?\b|\bP\d{7}\b|\b_?MG_\d{3,}\b"
                        r"|\bScreen ?shot[ _-]\d{4}-\d\d-\d\d(?:[ _-]at[ _-][\d.]+(?: ?[AP]M)?)?", re.I)
_HASH_RE = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
                      r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b", re.I)
# A whole text that is one token of parts joined by '_' or '-' is a file stem or a slug.
# "^\w+(?:_\w+)+$" written so that it cannot backtrack (\w holds "_": that form took
# exponential time on "a_a_a_..._a."): all word characters, and an "_" after the first one
# with one more after it.
_SLUG_RE = re.compile(r"^(?=\w+$)\w[^\W_]*+_\w|^\w+(?:-\w+){2,}$")


# A short text ending in an image file's name is that name whole, its words the file's
# ("Red Plate.png", "Penny Dress Blush.png": a wiki's default alt is its file name with spaces),
# not a caption followed by a file name; on the dev pages 37 junk and 3 vague items, 10 sites
# (sixth pass).
# A separator before the name ("Sunset over the bay - IMG_2041.JPG") marks a caption ahead of it.
_WHOLE_FILE_RE = re.compile(r"^[^.!?:,|\-–—]{1,60}"
                            r"\.(?:jpe?g|png|gif|webp|bmp|tiff?|heic|heif|avif)$", re.I)
_EXT_HINT_RE = re.compile(r"\w\.(?:jpe?g|png|gif|webp|bmp|tiff?|svg|heic|heif|avif|ico|cr2|nef|dng|"
                          r"psd|pdf|mp4|mov|webm)\b", re.I)
_DIGITS3_RE = re.compile(r"\d{3}")
# What a camera name holds, lowercased (in texts with a class string re.IGNORECASE folds no
# other character onto these letters); P\d{7} shows as seven digits in a row.
_CAMERA_HINTS = ("img", "dsc", "gopr", "gh", "pxl", "dji", "mvc", "pict", "imag", "vid", "pano",
                 "mg_", "screen")


# The letter runs that a _CAMERA_RE match starts with (its prefixes end at "[ _-]" or a digit;
# "P\d{7}" shows as seven digits in a row): as _AGENCY_KEYS below.
_CAMERA_KEYS = frozenset("img dsc dscn dscf gopr gh pxl dji mvc cimg pict imag vid pano mg screen "
                         "screenshot".split())


def _camera_hint(low: str, cls: str) -> bool:
    # _CAMERA_HINTS written out: a chain of ``in`` tests, not a generator.
    return ("ddddddd" in cls or "img" in low or "dsc" in low or "gopr" in low or "gh" in low
            or "pxl" in low or "dji" in low or "mvc" in low or "pict" in low or "imag" in low
            or "vid" in low or "pano" in low or "mg_" in low or "screen" in low)
_HEX12_RE = re.compile(r"[0-9a-fA-F]{12}")
# An image id (twenty-eighth pass, rule I): 8+ letters, digits and "+" opening with 1-4 digits,
# a lower-case letter directly before an upper-case one inside, any "-X" tails: Amazon's
# "71attMcKIYS" (shown as "71attMcKIYS. SL1500"), "81ajCDAbs-L", Unsplash's "8bPqxyodoUk".  No
# word is written so; "15-Minute", "3-Cheese" and "2,500-Year-Old" have a hyphen after the
# digits, "3DPrinting" no lower-case letter before a capital.
# Atomic up to the first "aB" and possessive after it: every later "aB" of the token leads
# to the same end, so the first one decides (linear, not quadratic, in the token's length).
_ID_RE = re.compile(r"(?<![\w+-])(?=[A-Za-z\d+]{8})(?>\d{1,4}[A-Za-z\d+]*?[a-z][A-Z])[A-Za-z\d+]*+"
                    r"(?:-[A-Za-z\d]++)*+(?![\w+-])")


def filename(text, ctx=None):
    if " " not in text and ("_" in text or "-" in text) and _SLUG_RE.match(text):
        return ""
    f = facts(text, ctx)
    cls = f.cls
    if "." in text and _dot_letter(cls) and _EXT_HINT_RE.search(text):
        if _WHOLE_FILE_RE.match(text):
            return ""  # the whole text is a file's name ("Red Plate.png")
        text, cls = _FILE_RE.sub(" ", text), None
    # Camera names and hashes hold three digits in a row.
    if ("ddd" in cls) if cls is not None else _DIGITS3_RE.search(text):
        if cls is None or ((not _CAMERA_KEYS.isdisjoint(f.words) or "ddddddd" in cls)
                           and _camera_hint(f.low, cls)):
            text = _CAMERA_RE.sub(" ", text)
        if _HEX12_RE.search(text):
            text = _HASH_RE.sub(" ", text)
    # An image id holds a digit before a letter and a lower-case letter before a capital.
    if cls is None or ("lu" in cls and ("dl" in cls or "du" in cls)):
        text = _ID_RE.sub(" ", text)
    return text


# 5. dimension strings ------------------------------------------------------------------------
_DIGITS2_RE = re.compile(r"\d\d")
_UNIT = r"(?:cm|mm|m|in|inch|inches|ft|feet|km|\"|″)\b"
_DIM_RE = re.compile(r"\b\d{2,5}\s?[x×]\s?\d{2,5}(?![\d.,])(?:\s?px\b)?(?!\s?" + _UNIT + r")"
                     r"|\b\d{2,5}\s?px\b", re.I)


def dimension(text, ctx=None):
    f = facts(text, ctx)
    if f.cls is not None:  # every dimension holds two digits in a row and an "x", "×" or "px"
        if "dd" not in f.cls or ("x" not in f.low and "×" not in text):
            return text
    elif not _DIGITS2_RE.search(text):
        return text
    return _DIM_RE.sub(" ", text)


# 6. photo credits ----------------------------------------------------------------------------
_COPYRIGHT_RE = re.compile(r"(?:©|\(c\)|\bcopyright\b)\s*(?:\d{4}\s*)?", re.I)
# A parenthesised credit at the end: "(DW/J. Hitz)", "(picture-alliance/dpa)", "(public domain)".
# ... or in square brackets: "[Getty]", "[Photo: AP]".
# The slash alone does not make one when the bracket holds CJK, kana or hangul: "(Zhong
# Dumplings/钟水饺)" is a name and its writing (twenty-seventh pass, rule E).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_PAREN_CREDIT_RE = re.compile(
    r"\s*(?:\((?=(?![^()]*[" + _CJK + r"])[^()]*/|[^()]*\b(?:photos?|fotos?|credit|crédits?|"
    r"quelle|bildquelle|images?|pictures?|archives?|archiv|imago|akg|dpa|afp|reuters|getty|"
    r"public domain|cc[ -]by|wikimedia|courtesy)\b)[^()]{1,80}\)"
    r"|\[(?=(?![^\[\]]*[" + _CJK + r"])[^\[\]]*/|[^\[\]]*\b(?:photos?|credit|images?|pictures?|"
    r"getty|reuters|afp|ap|dpa|shutterstock|alamy|wikimedia|courtesy)\b)[^\[\]]{1,80}\])\s*$",
    re.I)
# German and French labels too (seventh pass): "Bildquelle: X", "Fotografin: X", "Crédit
# photo : X" (French sets a space before the colon).
_CREDIT_LABEL_RE = re.compile(r"\b(?:photo|image|picture|pic|foto|bild|credit|credits|source|"
                              r"quelle|photograph|photographer|bildquelle|bildnachweis|"
                              r"bildrechte|fotograf|fotografin|crédits?)"
                              r"(?:\s+(?:credit|by|source|courtesy|photos?))?"
                              r"\s*:\s*", re.I)
_COURTESY_RE = re.compile(r"courtesy(?: of\b|\s*:)\s*\w")
_PHOTO_BY_RE = re.compile(r"\b(?:photo(?:graph)?|image|picture|illustration)\s+"
                          r"(?:by|courtesy of|via|credit:?)\s+.*$", re.I)
# Other media credited the same way (twenty-eighth pass, rule A): "Animation by Lisa
# Larson-Walker.", "Graphic by ...", "Video via ...", only where a sentence or a text starts or
# after a dash or bar, before a name (a capital or a digit); inside a sentence ("A video by the
# BBC shows ...") or before a lower-case word ("Maps by hand: ...") they are a text's words.
_MEDIA_BY_RE = re.compile(r"(?:^|(?<=[.!?]\s)|(?<=\s[-|–—]\s))(?:animations?|graphics?|videos?|"
                          r"photos|photography|illustrations|maps?|charts?|infographics?|"
                          r"artwork)\s+(?:by|courtesy of|via|credit:?)\s+(?-i:[A-Z\d]).*$", re.I)
_AGENCY_RE = re.compile(r"[\s/|(]*\b(?:getty images|shutterstock(?:\.com)?|istock(?:photo)?|"
                        r"adobe stock|unsplash|pexels|pixabay|dreamstime|alamy|ap photo|"
                        r"reuters|afp|dpa|picture[ -]alliance)\b\)?", re.I)


_AGENCY_WORDS = ("getty", "shutterstock", "istock", "adobe stock", "unsplash", "pexels", "pixabay",
                 "dreamstime", "alamy", "ap photo", "reuters", "afp", "dpa", "alliance")


# The first word of each _AGENCY_RE alternative.  In a text with a class string, re.IGNORECASE
# folds no other character onto their letters, and each is bounded by \b (or by "(", "[ _-]",
# "\s"), so a match's first word is a letter run of the lowercased text: without one of these
# runs _AGENCY_RE finds nothing, even in the text the label and copyright edits leave (they cut
# at non-letters and join with a space).
_AGENCY_KEYS = frozenset("getty shutterstock istock istockphoto adobe unsplash pexels pixabay "
                         "dreamstime alamy ap reuters afp dpa picture".split())


def _has_agency(low: str) -> bool:
    # Written out: a chain of ``in`` tests runs several times faster than any() over a
    # generator or an alternation pattern, and every text goes through it.
    return ("getty" in low or "shutterstock" in low or "istock" in low or "adobe stock" in low
            or "unsplash" in low or "pexels" in low or "pixabay" in low or "dreamstime" in low
            or "alamy" in low or "ap photo" in low or "reuters" in low or "afp" in low
            or "dpa" in low or "alliance" in low)


# What a credit label holds, lowercased ("picture" holds "pic", "photograph" holds "photo").
_LABEL_HINTS = ("photo", "image", "pic", "foto", "bild", "credit", "source", "quelle", "créd")


def _has_label_hint(low: str) -> bool:
    # _LABEL_HINTS written out, as in _has_agency.
    return ("photo" in low or "image" in low or "pic" in low or "foto" in low or "bild" in low
            or "credit" in low or "source" in low or "quelle" in low or "créd" in low)


# A bare credit line, whole (twentieth pass): "Spencer Platt/Getty", "Andrew A. Nelles/AP",
# "Paul Moseley/Fort Worth Star-Telegram/TNS via Getty Images".  Cutting the agency's words
# (below) would keep the photographer's name as if it were a caption.  Two to four parts split
# by "/", each of 1-6 words, one of them an agency (or "... via Getty Images"), every other
# word capitalised, an initial or a name particle.
_AGENCY_NAMES = (
    r"getty(?: images)?(?: news| sport| entertainment)?|ap(?: photo| images)?|reuters|afp"
    r"|epa(?:-efe)?|tns|invision|shutterstock(?:\.com)?|istock(?:photo)?|alamy|corbis"
    r"|imagn(?: images)?|usa today(?: sports| network)?|bloomberg|dpa|picture[ -]alliance"
    r"|zuma(?: press| wire)?|rex(?: features)?|nurphoto|sipa(?: usa)?|anadolu(?: agency)?"
    r"|wireimage|filmmagic|uncredited"
    # Photo-sharing and licence sources (forty-sixth pass, A): "Christopher Michel/Flickr",
    # "Courtesy of JD Thomas/Flickr Creative Commons", "Jane Doe/Wikimedia Commons".
    r"|flickr(?: creative commons| cc)?|wikimedia(?: commons)?|wikipedia|creative commons"
    r"|cc[ -]by(?:[ -](?:sa|nd|nc))*(?: \d\.\d)?|unsplash|pexels|pixabay"
    # Icon Sportswire, once Icon SMI (forty-ninth pass, C): "Cliff Welch/Icon SMI".
    r"|icon smi|icon sportswire")
_BARE_AGENCY_RE = re.compile(rf"(?:{_AGENCY_NAMES}|.+ via getty images)", re.I)
_NAME_PARTICLES = frozenset("de van von der del da di la le al bin via".split())
# One label word before a bare credit line: "Image Christopher Michel/Flickr" (forty-sixth pass).
_BARE_LABELS = ("Image ", "Photo ", "Photograph ", "Picture ", "Credit ")


def bare_credit(text: str) -> bool:
    """Whether the whole ``text`` is a credit line "Name/Agency" (see above), or "Name via
    Agency" ("James D. Smith via AP", forty-sixth pass)."""
    text = text[2:] if text.startswith("- ") else text
    if text.startswith(_BARE_LABELS):
        text = text.split(" ", 1)[1]
    parts = text.split("/")
    if len(parts) == 1 and " via " in text:
        parts = text.rsplit(" via ", 1)
        if not _BARE_AGENCY_RE.fullmatch(parts[1].strip()):
            return False
    if not 2 <= len(parts) <= 4:
        return False
    agency, n = False, 0
    for part in parts:
        words = part.split()
        n += len(words)
        if not 1 <= len(words) <= 6:
            return False
        if _BARE_AGENCY_RE.fullmatch(" ".join(words)):
            agency = True
        elif not all(w[:1].isupper() or w in _NAME_PARTICLES for w in words):
            return False
    return agency and n <= 12


# A credit glued before a caption (forty-ninth pass, C): "Kyle Ross/USA TODAY Sports Joel
# Embiid and Krisapts Porzingis jump center", "Stephen Chernin/Getty ImagesShouldn't suitcases
# of cash ...".  The agency's name says where the credit ends: 2-4 name words (or an agency),
# "/" with no space, an agency, then a space before a capital, a digit or a quote, or the
# caption glued on ("ImagesShouldn't": a lower-case letter, then a capital and a lower-case
# one).  A spaced slash is a name's second writing or a dish and its photographer ("Thai
# Pandan Chicken / Gai Haw Bai Toey"); "for <publication>" credits are not cut (where the
# publication's name ends is not known).  Each name word is a run without a space, so the
# pattern splits a text one way.
_NAME_WORD = r"(?:[A-Z][\w.'’-]*|de|van|von|der|del|da|di|la|le|al|bin)"
_LEAD_CREDIT_RE = re.compile(
    rf"(?:{_NAME_WORD}(?: {_NAME_WORD}){{1,3}}|(?i:{_AGENCY_NAMES}))/(?i:{_AGENCY_NAMES})"
    r"(?: (?=[A-Z\d\"“‘'])|(?<=[a-z])(?=[A-Z][a-z]))")
# Where the credit's slash may stand (the gate, may_fire, asks the same).
_LEAD_CREDIT_CHARS = 48
# "© Getty Images Nach ihrer Trennung ...": the agency's whole name after a copyright sign.
_COPYRIGHT_AGENCY_RE = re.compile(rf"\s*(?:{_AGENCY_NAMES}) (?=\S)", re.I)


def _lead_credit(text: str) -> str:
    """``text`` without a credit line glued before it (see above); ``text`` itself where
    there is none or fewer than two words would be left."""
    if "/" not in text[:_LEAD_CREDIT_CHARS]:
        return text
    m = _LEAD_CREDIT_RE.match(text)
    if m is None:
        return text
    rest = text[m.end():]
    return rest if len(rest.split()) >= 2 else text


def publisher_credit(text: str) -> bool:
    """Whether the whole ``text`` has the shape of a publisher's credit "<publisher> / <name>"
    (thirty-fourth pass): one " / " (a space either side), the publisher 1-4 words, the
    photographer 2-3, every word capitalised, "&", an initial or a name particle ("The Spruce
    Eats / Anita Schecter", Dotdash's figure credits).  The shape alone is no credit ("Cauliflower
    Cake / Jonathan Lovekin" names a dish): :func:`pipeline.steps.image_roles.site_credit` asks
    the publisher to be the page's site."""
    parts = text.split(" / ")
    if len(parts) != 2 or "/" in parts[0] or "/" in parts[1]:
        return False
    publisher, name = parts[0].split(), parts[1].split()
    if not (1 <= len(publisher) <= 4 and 2 <= len(name) <= 3):
        return False
    return all((w[:1].isupper() and w.replace(".", "").replace("-", "").replace("'", "").isalpha())
               or w == "&" or w in _NAME_PARTICLES for w in publisher + name)


# Whole-text credits of other shapes (forty-sixth pass, A): a studio or photographer in
# brackets, "(Al ‘Hughes’ Dukes Photography)"; credit words with no name, "Photo credit"; a
# licence line, "Photo used under Creative Commons from theparadigmshifter".
_BRACKET_CREDIT_RE = re.compile(r"[(\[][^()\[\]]*\bphotograph(?:y|ers?)\b[^()\[\]]*[)\]]\W*",
                                re.I)
_CREDIT_WORDS_ONLY_RE = re.compile(r"(?:photo|image|picture|photograph)\s+(?:credits?|courtesy)"
                                   r"\W*", re.I)
_LICENCE_LINE_RE = re.compile(r"(?:photo|image|picture|photograph)\s+(?:used|licensed|shared|"
                              r"reproduced)\s+under\b", re.I)
_LICENCE_WORDS = ("creative commons", "cc ", "cc-", "licence", "license")


def _courtesy_name(text: str, words: list[str]) -> bool:
    """"Courtesy Thomas Wallace Design" (<= 6 words, no "of") or "Courtesy of JD Thomas/Flickr
    Creative Commons" (7-10 words): every word after "Courtesy" ("of") a name's."""
    rest = text.split(None, 1)[1] if " " in text else ""
    if rest.startswith("of "):
        if not 7 <= len(words) <= 10:
            return False
        rest = rest[3:]
    elif len(words) > 6:
        return False
    names = rest.replace("/", " ").split()
    return bool(names) and all(w[:1].isupper() or w[:1].isdigit() or w == "&"
                               or w in _NAME_PARTICLES for w in names)


def _whole_credit(text: str, f) -> bool:
    """Whether the whole ``text`` is a credit of a shape the edits below would not cut whole."""
    low = f.low
    if "/" in text or " via " in text:
        if bare_credit(text):
            return True  # the whole text is a credit line
    if low.startswith("courtesy"):
        if len(f.words) <= 6 and _COURTESY_RE.match(low):
            return True  # "Courtesy of TeleGeography.", "Courtesy: NASA"
        if text[:8] == "Courtesy" and _courtesy_name(text, f.words):
            return True
    if text[:1] in "([" and len(f.words) <= 8 and "photograph" in low \
            and _BRACKET_CREDIT_RE.fullmatch(text):
        return True
    if len(f.words) <= 3 and _CREDIT_WORDS_ONLY_RE.fullmatch(text):
        return True
    return (" under " in low and _LICENCE_LINE_RE.match(text) is not None
            and any(w in low for w in _LICENCE_WORDS))


def credit(text, ctx=None):
    f = facts(text, ctx)
    low = f.low
    if _whole_credit(text, f):
        return ""
    text = _lead_credit(text)
    m = _COPYRIGHT_RE.search(text) if "©" in text or "(c)" in low or "copyright" in low else None
    if m is not None:
        rest = text[m.end():]
        # "... © John Smith 2018" credits the rest of the text; "© UNOCHA/A. Maz Ebola has
        # claimed ..." credits only the next token, "© Getty Images Nach ihrer ..." the
        # agency's name (forty-ninth pass, C).
        if len(rest.split()) > 8:
            a = _COPYRIGHT_AGENCY_RE.match(rest)
            rest = " " + (rest[a.end():] if a is not None else rest.split(" ", 1)[1])
        else:
            rest = ""
        text = text[: m.start()] + rest
    text = _PAREN_CREDIT_RE.sub("", text) if text.endswith((")", "]")) else text
    label = ":" in text and (f.cls is None or _has_label_hint(low))
    m = _CREDIT_LABEL_RE.search(text) if label else None
    # A label with nothing after it credits nobody: "... feel free to pin the following
    # photo:" is a lead-in, which lead_in drops (twenty-first pass, rule L).
    if m is not None and text[m.end():].strip():
        rest = text[m.end():]
        # "Photo: Jane Doe/AP" is a credit (short); "Image: a dog on a beach at dawn with ..."
        # is a labelled description: only the label goes.
        cut = rest if len(rest.split()) <= 5 else ""
        text = text[: m.start()] + " " + rest[len(cut):]
    if " by " in low or " courtesy " in low or " via " in low or " credit" in low:
        text = _PHOTO_BY_RE.sub("", text)
        if not _MEDIA_WORDS.isdisjoint(f.words):
            text = _MEDIA_BY_RE.sub("", text)
    if f.cls is not None and _AGENCY_KEYS.isdisjoint(f.words):
        return text
    return _AGENCY_RE.sub(" ", text) if _has_agency(low) else text


# 7. boilerplate ------------------------------------------------------------------------------
# English lists, and German and French ones for the same furniture on those sites.
_LANGS = ("en", "de", "fr")


def load_wordlists(stem: str) -> list[str]:
    """The union of ``<stem>_<lang>.txt`` over the languages that have one."""
    names = [f"{stem}_{lang}.txt" for lang in _LANGS]
    return sorted({w for name in names if os.path.exists(os.path.join(_HERE, name))
                   for w in load_wordlist(name)})


_BOILERPLATE = frozenset(load_wordlists("boilerplate"))
# "<one word> <furniture noun>": "search icon", "article image", "lifebuzz newsletter".
_FURNITURE_NOUNS = ("icon", "button", "image", "img", "pic", "thumbnail", "thumb", "banner",
                    "newsletter", "avatar", "badge", "widget")
_BOILER_PATTERN_RE = re.compile(r"^(?:\w+ ){0,3}(?:logos?|graphic)$|^logo(?: \w+){0,3}$"
                                r"|^\w+ (?:" + "|".join(_FURNITURE_NOUNS) + ")$"
                                r"|^click\b|^(?:read|see|view|learn) more\b|^go to\b"
                                r"|^follow (?:us|via|on|me|along)\b|^browse (?:all|our|more|the)\b"
                                # a social network's call to action, whole (seventeenth pass)
                                r"|^(?:like|follow|find|join|share)(?: \w+){0,4} on (?:facebook"
                                r"|twitter|instagram|pinterest|myspace|linkedin|youtube|tiktok"
                                r"|tumblr|flickr|digg|reddit"
                                # Google+ (thirty-second pass, rule G; "+" is no letter)
                                r"|google(?: plus)?|googleplus)$"
                                r"|^(?:powered|protected|designed|hosted) by\b|^posted (?:by|on|in)\b"
                                # a media call to action (eighteenth pass); not "View of ...",
                                # "View from ...": a caption of a view
                                r"|^listen (?:to|now|live)\b"
                                r"|^watch (?:the latest|now|live|more|our|video)\b"
                                r"|^view (?:full|larger|web|all|more|the|our|this|recipe|gallery"
                                r"|slideshow|photos?|images?|video|post|profile)\b"
                                r"|^sign up\b|^download (?:pdf|now|the app|our)\b"
                                # a call to action (twenty-first pass, rule A): "Get My Meal
                                # Planner", "Free Download", "Try this ... Frosting. ..."
                                r"|^(?:get|grab|claim|download|try|shop|subscribe to)"
                                r" (?:my|your|our|this|now|free)\b|^free download\b"
                                # calls to action rule A does not name (twenty-fourth pass,
                                # rule C): "Launch Gallery", "Find Similar Tweets", "Visit
                                # Harford County this fall"; not "Visit of the Pope ..."
                                r"|^(?:launch|open|start) (?:the )?(?:photo |image |video )?"
                                r"(?:gallery|slideshow|slide show|menu|search)\b|^find similar\b"
                                r"|^visit (?!of\b|by\b|to\b|from\b)"
                                # a call to shop (thirty-second pass, rule S): a shop home
                                # page's tiles, "Shop The Great Outdoors Collection", "Shop
                                # Men's Gloves"; not a shop's own noun, "Shop front in Camden"
                                r"|^shop (?!(?:front|window|owner|keeper|assistant|floor|sign"
                                r"|counter|interior|staff|worker|display|shelf|shelve)s?\b"
                                r"|(?:of|in|at|on|and|with)\b)")
_BOILER_FIRST_WORDS = frozenset("click read see view learn powered protected designed hosted "
                                "posted go follow browse like find join share listen watch "
                                "sign download get grab claim try shop subscribe free "
                                "launch open start visit".split())
# A publication's name, whole (twenty-fourth pass, rule P): "Planet Money Blog", "Nature News
# homepage", "Sunday Express/ Trinidad Express Newspaper", "People Magazine Subscription
# Image": its logo or its subscription tile.  Capitalised name words only, so "The cover of
# SELF Magazine" is left; the publication noun capitalised too, part of the name ("homepage"
# aside), so "The San Diego Union-Tribune newspaper." on a photograph of the paper is left.
_PUB_NOUNS = frozenset("blog newspaper magazine homepage home page podcast newsletter".split())
_PUB_NAME_RE = re.compile(r"(?:[^\W\d_a-z][\w'’&.-]*/? ){1,5}(?:B(?i:log)|N(?i:ewspaper)"
                          r"|M(?i:agazine)|P(?i:odcast)|N(?i:ewsletter)|(?i:homepage|home page))"
                          r"(?i: subscription)?(?i: image| logo| banner)?")
# A feed's or widget's description (twenty-fourth pass, rule F): "The most commented posts on
# Engadget over the past 24 hours.", "Editorials from The Star-Ledger", "Information from the
# National Library of Medicine", "Update on all major financial-market indexes".
_FEED_FIRST = frozenset("the most latest top all recent popular resource links information "
                        "info posts update updates editorials news stories articles "
                        "headlines".split())
_FEED_RE = re.compile(r"(?:the )?(?:(?:most|latest|top|all|recent|popular|\w+ed) ){0,3}"
                      r"(?:resource )?(?:links|information|info|posts|updates?|editorials|news"
                      r"|stories|articles|headlines)(?: \w+){0,3}? (?:from|provided by|on"
                      r"|about|by|for)\b")
# A teaser card's kicker (its section's name) read as one line with its headline: "News Photos
# of the Year", "Politics November 22, 2014 I Wish ...".  Only section names that rarely open a
# proper name ("World Trade Center", "Food Network", "Sports Illustrated" are why World, Food,
# Sports ... are not here), and only before a headline-case run, so "Travel Channel host ..."
# or "News of the day" stay (docs/captions.md, "Twenty-sixth pass", rule K).
_KICKERS = frozenset("News Politics Leadership Opinion Opinions Culture Lifestyle Technology Tech "
                     "Fashion Fame Celebrity Arts Books Movies Economy Education Environment "
                     "Weather Features Analysis Commentary Obituaries Crime Markets Finance".split())
_KICKER_FIRST = frozenset(k.lower() for k in _KICKERS)
_HEADLINE_SMALL = frozenset("a an the of in on at to for and or but with by from as vs via into "
                            "over after before about".split())


def _kicker_teaser(text: str) -> bool:
    w = text.split(None, 5)
    if len(w) < 5 or w[0] not in _KICKERS:
        return False
    caps = 0
    for word in w[1:5]:
        c = word.lstrip("'\"‘“")[:1]
        if c.isupper() or c.isdigit():
            caps += 1
        elif word.lower() not in _HEADLINE_SMALL:
            return False
    return caps >= 2


# A text made only of these words is a row of buttons ("Pin Print", "Bookmark and Share",
# "Jump to Recipe", "Save").
_UI_WORDS = frozenset("pin it print save share tweet email mail bookmark and jump to recipe rate "
                      "comment comments reply like follow subscribe copy link this flattr "
                      "facebook twitter pinterest whatsapp reddit on via".split())
# Site furniture anywhere in the text: cookie banners, footers, sharing widgets.
_BOILER_PHRASES = PhraseSet(load_wordlists("boilerplate_phrases"))


# A rating widget's text, whole (twentieth pass): "2 out of 5 stars", "5 stars", "Rated 4.5
# out of 5 stars", "4 Stars: Favorite", "3 von 5 Sternen", "4 étoiles".
_RATING_RE = re.compile(r"(?:rated\s+)?\d+(?:[.,]\d+)?\s*(?:(?:out of|of|von|sur|/)\s*\d+"
                        r"(?:[.,]\d+)?\s*)?(?:stars?|sternen?|étoiles?)"
                        r"(?:\s*[:\-–]\s*[^\W\d_]+)?\.?", re.I)
# A section's promo box, whole (twentieth pass): "Food & Drink: Recipes, reviews & more",
# "Entertainment: Movies, music, clubs and more": a label of 1-4 words, then 2-5 items of
# 1-3 words split by commas, then "& more" / "and more".
_W = r"[^\W\d_][\w'’-]*"
_SECTION_FLAG_RE = re.compile(rf"{_W}(?: (?:&|{_W})){{0,3}}: {_W}(?: {_W}){{0,2}}"
                              rf"(?:, {_W}(?: {_W}){{0,2}}){{1,4}},? (?:&|and) more\.?")


def boilerplate(text, ctx=None):
    # The whole-text checks only need the start of a long text (the patterns are prefixes).
    f = facts(text, ctx)
    low, words = f.low, f.words
    if text[:1].isdigit() or low.startswith("rated"):
        if len(text) <= 40 and _RATING_RE.fullmatch(text):
            return _reject("boilerplate")
    elif low.endswith(("more", "more.")) and ":" in text \
            and _SECTION_FLAG_RE.fullmatch(text):
        return _reject("boilerplate")
    if f.cls is not None and len(low) <= 60 and "'" not in low and "’" not in low:
        norm = " ".join(words)  # without apostrophes the words are the letter runs
        first = words[0] if words else ""
    else:
        norm = letter_norm(low[:60] if f.cls is not None else text[:60].lower())
        first = norm.partition(" ")[0]
    if norm in _BOILERPLATE or (words and len(words) <= 6 and _UI_WORDS.issuperset(words)):
        return _reject("boilerplate")
    # Each pattern names its first word, ends in a furniture noun or "graphic", or holds
    # "logo"; match, not search: every alternative is anchored at the start.
    if ("logo" in norm or norm.endswith(_FURNITURE_NOUNS) or norm.endswith("graphic")
            or first in _BOILER_FIRST_WORDS) and _BOILER_PATTERN_RE.match(norm):
        return _reject("boilerplate")
    n = len(words)
    if 2 <= n <= 8 and len(text) <= 80 and not _PUB_NOUNS.isdisjoint(words[-4:]) \
            and _PUB_NAME_RE.fullmatch(text.strip(" .")):
        return _reject("boilerplate")
    if n <= 12 and (first in _FEED_FIRST or first.endswith("ed")) and _FEED_RE.match(norm):
        return _reject("boilerplate")
    if first in _KICKER_FIRST and _kicker_teaser(text):
        return _reject("boilerplate")
    # PhraseSet.search's first test, inline: most texts hold no phrase's key word.
    if _BOILER_PHRASES.keys.isdisjoint(words):
        return text
    return _reject("boilerplate") if _BOILER_PHRASES.search(words) else text


# 8-9. promotional spam and prices ------------------------------------------------------------
_PROMO = PhraseSet(load_wordlists("promo"))
_PERCENT_RE = re.compile(r"\b\d{1,2}\s?% off\b|\bsave (?:up to )?\d{1,2}\s?%", re.I)
_BIG = r"(?![\d.,]|[\s-]?(?:million|billion|trillion|bn|mn|m|k)\b)"
# Possessive number runs: what may follow one is never a digit, "." or ",".  A number before
# its currency ("19,99 €") is tried once per run of digits, "." and ",", from the run's first
# digit at a word boundary (atomic): every such digit of the run reaches the same run end, so
# the first one decides; the older "\b\d[\d.,]*" tried each of them ("1,1,1,...,1 dollarz":
# quadratic).  The rule asks only whether the pattern is found, which is unchanged.
_PRICE_RE = re.compile(r"[$€£¥₹]\s?\d[\d.,]*+" + _BIG
                       + r"|(?<![\d.,])(?>[\d.,]*?\b\d)[\d.,]*+\s?(?:€|£|¥|₹"
                       r"|(?:USD|EUR|GBP|CHF|dollars?|euros?|bucks)\b)"
                       r"|\b(?:USD|EUR|GBP|CHF|US\$)\s?\d[\d.,]*+" + _BIG, re.I)


# A phone number after a word that asks to call it (twenty-eighth pass, rule P): "Order online
# now or free phone 08000 111 083", "Call 1-800-555-0199": an advertisement.
_PHONE_WORDS = frozenset("phone freephone call tel telephone hotline".split())
_PHONE_RE = re.compile(r"\b(?:free ?phone|phone|call|tel|telephone|hotline)\b\.?:?"
                       r"(?:\s+[^\W\d]+){0,2}\s+(\+?\(?\d[\d\s().-]*\d)", re.I)


def _phone(text: str, words: list[str]) -> bool:
    if _PHONE_WORDS.isdisjoint(words):
        return False
    return any(sum(map(str.isdigit, m.group(1))) >= 9 for m in _PHONE_RE.finditer(text))


# A testimonial (thirty-second pass, rule T): a customer's quotation beside a portrait on a
# business's page ("“I found a whole new publication with my entire family history here.”"),
# a surrounding text that opens with a quotation mark and speaks in the first person.  Asked
# by the text step of surrounding texts only (filters/text.TextCleaner._spoken): a picture's
# own quoted title ("I'll Have Another" - Belmont Stakes) is a name.
OPEN_QUOTES = "“\"„«"
_FIRST_PERSON = frozenset("i i'm i’m i've i’ve i'd i’d me my we our us".split())
_QUOTED_WORD_RE = re.compile(r"[\w'’]+")


def testimonial(text: str) -> bool:
    """Whether ``text`` opens with a quotation mark and holds a word of the first person."""
    if not text or text[0] not in OPEN_QUOTES:
        return False
    return not _FIRST_PERSON.isdisjoint(w.lower() for w in _QUOTED_WORD_RE.findall(text))


# The writer speaking beside a picture (thirty-third pass, rule H): a surrounding text in the
# first person singular is blog chatter or a comment ("Many years ago, I was reading a blog
# post ...", "I know I say this about every quinoa bake ..."), not what the picture shows.
# "I" counts before a lower-case word or as a contraction, not after a capitalised word
# ("Charles I was") unless a clause ends there ("Yesterday, I went"); not "my" nor "me" (rule
# H'): a fashion caption says "... with pearls and my favorite Christian Louboutin pumps".
# Asked by the text step of surrounding texts only (TextCleaner._spoken): an alt may say "I
# love this dip".
# "I" at the text's start or after white space; the word before it is read by hand
# (_word_before), not by a group in the pattern: "(\S*)\s+I" retried at every position of a
# long token is quadratic (8,000 characters without a space: 0.4 s).
_SPEAKER_RE = re.compile(r"(?<!\S)I(?=['’](?:m|ve|d|ll)\b| [a-z])")


def first_person(text: str) -> bool:
    """Whether ``text`` speaks in the first person singular, "I" its subject (see
    ``_SPEAKER_RE``)."""
    for m in _SPEAKER_RE.finditer(text):
        before = _word_before(text, m.start())
        # "Charles I was": a capitalised word before "I" makes it a regnal number, unless a
        # sentence or clause ended there ("Yesterday, I was")
        if not before[:1].isupper() or before[-1:] in ".,;:!?)":
            return True
    return False


def _word_before(text: str, at: int) -> str:
    """The run of non-space characters before the white space that ends at ``at`` ("" at
    the start).  Each character is read at most once over a text's matches: the runs read
    lie between consecutive matches."""
    end = at
    while end and text[end - 1].isspace():
        end -= 1
    start = end
    while start and not text[start - 1].isspace():
        start -= 1
    return text[start:end]


def promo(text, ctx=None):
    f = facts(text, ctx)
    if ("%" in text and _PERCENT_RE.search(text)) or _PROMO.search(f.words):
        # "Teddy Bear £5 Add to cart": the phrase is the shop furniture of a trailing price,
        # which the price rule cuts (forty-first pass); asked only of a promo hit.
        if _price_defers(text, ctx):
            return text
        return _reject("promo")
    if f.cls is not None and f.sym.count("d") < 9:
        return text
    return _reject("promo") if _phone(text, f.words) else text


# Every price holds a currency sign or one of these (lowercased; "euros" holds "eur").
_CURRENCY_HINTS = ("$", "€", "£", "¥", "₹", "usd", "eur", "gbp", "chf", "dollar", "buck")


def price(text, ctx=None):
    f = facts(text, ctx)
    if f.cls is not None:
        if "d" not in f.cls or not any(h in f.low for h in _CURRENCY_HINTS):
            return text
    elif not DIGIT_RE.search(text):
        return text
    if not _PRICE_RE.search(text):
        return text
    # A product's name before its price (forty-first pass, rule P): the trailing price run is
    # cut and the rest judged as any text; a price alone, a list of prices, a price inside a
    # sentence or headline, or one leading a deal ("$99 for a ...") drop the text as before.
    rest = price_rest(text)
    if rest is None:
        return _reject("price")
    # The rules before this one judge whole texts too: the rest is asked again ("Gift
    # card" is boilerplate whether or not a price followed it).
    off = ctx.config.disabled_rules if ctx is not None else ()
    for name, rule in (("boilerplate", boilerplate), ("promo", promo)):
        out = rule(rest) if name not in off else rest
        if out is not rest:
            return out
    return rest


# The trailing price run (forty-first pass, rule P; docs/captions.md registers each piece).
_P_CUR = r"(?:[$€£¥₹]|US\$|(?:USD|EUR|GBP|CHF)\b)"
_P_NUM = r"(?>\d(?:[\d.,]*\d)?)"  # atomic: a number is read whole, one way
_P_AMOUNT = (rf"(?:{_P_CUR}\s?{_P_NUM}(?:\.-|,-)?|{_P_NUM}(?:,-)?\s?(?:[€£¥₹]"
             r"|(?:USD|EUR|GBP|CHF|euros?|dollars?)\b))")
_P_UNIT = (r"(?:\s?/\s?[a-z]{1,6}\b|\s(?:each|ea\b\.?|per\s+(?:kg|lb|g|100\s?g|oz|item|"
           r"person|month|night|piece|pack|unit|pound|litre|liter|l|m)\b))")
_P_PRICE = rf"{_P_AMOUNT}{_P_UNIT}?(?:\s?(?:-|–|to|bis)\s?{_P_AMOUNT}{_P_UNIT}?)?"
# "Was" / "Now" only capitalised: "the ticket was $5" is a sentence.
_P_LABEL = (r"(?:(?-i:Was|WAS|Now|NOW)(?:\s+only)?|from(?:\s+only)?|only|just|"
            r"(?:list\s+|our\s+|sale\s+)?price|sale|rrp|save(?:\s+up\s+to)?|savings|"
            r"you\s+save|ab)(?:\s?:)?")
_P_SHOP = (r"(?:add\s+to\s+(?:cart|bag|basket|trolley)|buy\s+now|in\s+stock|"
           r"(?:save\s+(?:up\s+to\s+)?)?\d{1,2}\s?%(?:\s+off)?|\(?incl?\.?\s+vat\)?)")
_P_PIECE = rf"(?:(?:{_P_LABEL}\s?)?{_P_PRICE}|{_P_SHOP})"
_P_SEP = r"[-–|·•,/(]"
# Between two pieces one space, or a separator (no dash) with a space either side or none:
# each run of characters splits one way only, so a failed match backtracks in linear time
# (an optional space on each side of an optional separator split "$1 $1 $1 ... x" 2^n ways).
# A dash between two amounts is a range, never a gap: read both ways, "$1 - $1 - ..." split
# 2^n ways too.
_P_GAP = r"(?:\s?[|·•,/():]\s?|\s)"
_PRICE_TAIL_RE = re.compile(
    rf"(?:(?<=\s)|(?<={_P_SEP})|^)(?:{_P_SEP}\s?)?{_P_PIECE}"
    rf"(?:{_P_GAP}{_P_PIECE})*[\s.!)]*$", re.I)
# A rest ending in one of these held the price inside a phrase: "Healthy Dinner Recipes
# Under $3", "Get 2 for $5", "Prime Is Now $139", "Jetzt ... für 10 Euro".
_PRICE_PHRASE_END = frozenset(
    "for under over than at of to by with and or is are was were be costs cost costing priced "
    "pay paid just only about around nearly almost up less more spend spent earn make get "
    "plus a an the per on in into für ab unter über bis von um nur zu kostet kosten je pour à "
    "de dès knapp rund ca etwa circa roughly approx approximately".split())
# The run is looked for in the text's last characters only: the pattern is tried at each
# position of that window, so its cost is bounded whatever the text's length.
_PRICE_TAIL_CHARS = 160


def price_rest(text: str) -> str | None:
    """``text`` without the run of price pieces ending it (rule P), or None where that leaves
    no product's name: no run, nothing with a letter left, a price left in the rest, or a rest
    ending in a word that makes the price part of a phrase (``_PRICE_PHRASE_END``)."""
    at = max(0, len(text) - _PRICE_TAIL_CHARS)
    m = _PRICE_TAIL_RE.search(text, at)
    if m is None or (m.start() == at and at and not text[at - 1].isspace()):
        return None
    rest = tidy(text[: m.start()])
    if not HAS_LETTER.search(rest) or _PRICE_RE.search(rest):
        return None
    last = rest.rsplit(" ", 1)[-1].strip(".,:;!?\"'“”‘’()").lower()
    if last in _PRICE_PHRASE_END:
        return None
    return rest


def _price_defers(text: str, ctx) -> bool:
    """Whether a promo hit lies only in a trailing price run the price rule will cut."""
    if ctx is not None and "price" in ctx.config.disabled_rules:
        return False
    if not _PRICE_RE.search(text):  # the price rule would not fire
        return False
    rest = price_rest(text)
    if rest is None:
        return False
    return not (("%" in rest and _PERCENT_RE.search(rest)) or _PROMO.search(facts(rest).words))


# 10-11. word lists ---------------------------------------------------------------------------
_ADULT = PhraseSet(load_wordlist("adult_en.txt"))
_SPAM = PhraseSet(load_wordlist("spam_en.txt"))


def adult(text, ctx=None):
    return _reject("adult") if _ADULT.search(facts(text, ctx).words) else text


def spam(text, ctx=None):
    return _reject("spam") if _SPAM.search(facts(text, ctx).words) else text


# 12. punctuation and emoji -------------------------------------------------------------------
_EMOJI_RE = EMOJI_RE
_RUN_RE = re.compile(r"([^\w\s])\1{2,}|[!?]{2,}|[*~=_+#^|<>•·\-]{3,}")


def _collapse(m: re.Match) -> str:
    s = m.group(0)
    if s[0] == ".":
        return "..."
    return s[0] if s[0] in "!?" else " "


_E_RUNS_RE = re.compile("e+")


def punctuation(text, ctx=None):
    cls = facts(text, ctx).cls
    if cls is not None and "e" in cls:
        # Each run of class "e" is one match of _EMOJI_RE (the class is that pattern's, per
        # character): replaced by a space from the class string, without the Unicode pattern.
        parts, at = [], 0
        for m in _E_RUNS_RE.finditer(cls):
            parts += (text[at:m.start()], " ")
            at = m.end()
        text = "".join(parts) + text[at:]
        cls = classes(text)  # no emoji left: the same codec as before takes it
    if cls is not None:
        # Classes "p" and "." (symbols, "_"), "d" (digits): exactly what NOT_LETTER_RE counts.
        # A run is three same symbols, three of _RUN_RE's set (all "p"), or "!!"-like.
        # ("!" and "?" are symbols: a pair of them is a "pp".)
        if ("pp" in cls and ("ppp" in cls or "!!" in text or "??" in text or "!?" in text
                             or "?!" in text)) or "..." in cls:
            text = _RUN_RE.sub(_collapse, text)
            cls = classes(text)
        others = cls.count("p") + cls.count(".") + cls.count("d")
    else:
        text = _RUN_RE.sub(_collapse, _EMOJI_RE.sub(" ", text))
        others = len(NOT_LETTER_RE.findall(text))  # digits and symbols (texts are mostly letters)
    letters = len(text) - text.count(" ") - others
    return _reject("punctuation") if letters < others else text


# 13-15. shouting, keyword stuffing, repetition -----------------------------------------------
_UPPER2_RE = re.compile(r"[^\W\d_a-z]{2}")


def all_caps(text, ctx=None):
    cls = facts(text, ctx).cls
    # [^\W\d_a-z] is class "u": counting "uu" is the findall's count.
    pairs = cls.count("uu") if cls is not None else len(_UPPER2_RE.findall(text))
    if pairs < 3:  # fewer than 3 words could be upper case
        return text
    words = [w for w in letter_words(text, cls) if len(w) >= 2]
    if len(words) >= 3 and sum(map(str.isupper, words)) * 5 >= len(words) * 4:
        if ctx is not None and ctx.named:
            # The picture's file says the same ("ANDREW LLOYD WEBBER" on
            # andrew-lloyd-webber-hot1.jpg): a name set in capitals, title-cased.
            return " ".join(w[:1] + w[1:].lower() if w.isupper() else w
                            for w in text.split())
        return _reject("all_caps")
    return text


_SEP_RE = re.compile(r"\s*[,;|/•·]\s*|\s+[-–—]\s+")
_HASHTAG_RE = re.compile(r"(?:^|\s)#\w")


# Seventh pass: a short comma list of names and topics ("Netflix, Netflix-Zentrale, Los
# Gatos", "Facebook Libra, Facebook, Payment, Blockchain"): an SEO alt in any language.  Three
# to six items of one to three words, each capitalised (or a number), twelve words at most, no
# word that joins a phrase (a caption's "Anna, Tom and their dog" or "Ruins of Palmyra, Syria").
_LIST_JOINERS = frozenset("and or with of the a an in on at und oder mit von der die das den "
                          "dem des im am zum zur et ou avec de du des le la les au aux".split())


def short_list(text: str) -> bool:
    """Whether ``text`` is a short comma list of capitalised items (see _LIST_JOINERS)."""
    items = text.split(",")
    if not 3 <= len(items) <= 6 or len(text.split()) > 12:
        return False
    for item in items:
        words = item.split()
        if not 1 <= len(words) <= 3 or not (words[0][:1].isupper() or words[0][:1].isdigit()):
            return False
        if any(w.lower() in _LIST_JOINERS for w in words):
            return False
    return not text.rstrip().endswith((".", "!", "?", ":"))


def _name_word(word: str) -> bool:
    """A word written as a name: a capital, then lower-case letters (a hyphen or apostrophe
    inside: "Larson-Walker", "O'Neil")."""
    rest = word[1:]
    return len(word) >= 2 and word[0].isupper() and rest.islower() \
        and rest.replace("-", "").replace("'", "").replace("’", "").isalpha()


def name_list(text: str) -> bool:
    """Whether a short comma list reads as people's names, not as a topic's tags (twenty-ninth
    pass, rule N): 3 or 4 items, at least two written as a person's name (two or three name
    words: "Damien Chazelle"), and no item holding another item's first word ("Netflix,
    Netflix-Zentrale", "Facebook Libra, Facebook", "Hashtag, Hashtags": tags of one topic)."""
    items = [item.split() for item in text.split(",")]
    if not 3 <= len(items) <= 4:
        return False
    if sum(1 for words in items if 2 <= len(words) <= 3 and all(map(_name_word, words))) < 2:
        return False
    lows = [" ".join(words).lower() for words in items]
    for i, words in enumerate(items):
        if not words:
            return False
        first = words[0].lower()
        if any(first in low for j, low in enumerate(lows) if j != i):
            return False
    return True


# A list led by a label saying it is what the picture shows ("Ingredients shown: mushrooms,
# breadcrumbs, ...", "From left: ..."): its lead, before the first colon, of one to four words
# holding one of these (thirty-first pass, rule A).  Tag leads ("Tags:", "Keywords:") and a
# model's guess ("Image may contain:") hold none of them.
_LIST_LEAD_RE = re.compile(r"((?:[^\W\d_][\w'’-]* ){0,3}[^\W\d_][\w'’-]*): *\S")
_LIST_LEADS = frozenset(("shown", "pictured", "ingredients", "left", "clockwise"))


def labelled_list(text: str) -> bool:
    """Whether ``text`` is a comma list led by a label naming what the picture shows."""
    m = _LIST_LEAD_RE.match(text)
    return m is not None and "," in text[m.end():] \
        and not _LIST_LEADS.isdisjoint(m.group(1).lower().split())


def keyword_list(text, ctx=None):
    if "#" in text and len(_HASHTAG_RE.findall(text)) >= 3:
        return _reject("keyword_list")
    if ctx is not None and ctx.waive == "list":
        # a picture's own labelled list (TextCleaner._name_list, thirty-first pass, rule A):
        # the list tests below are not asked
        return text
    cls = facts(text, ctx).cls  # every separator is a symbol of class "p"
    # ``ctx.names``: a list of names on a picture declared at the image step's size
    # (TextCleaner._name_list, twenty-ninth pass, rule N): the short-list test is not asked.
    if text.count(",") >= 2 and short_list(text) and (ctx is None or not ctx.names):
        return _reject("keyword_list")
    if cls is not None and cls.count("p") < 4:
        return text
    n_sep = sum(map(text.count, ",;|/•·-–—"))
    if n_sep < 4:
        return text
    # Each separator match holds one of those characters: at most n_sep + 1 segments, so a
    # text with more words than 2.5 times that is no list (most sentences with commas).
    n_words = len(text.split())
    if n_words > 2.5 * (n_sep + 1):
        return text
    segments = [s for s in _SEP_RE.split(text) if s]
    if len(segments) >= 5 and n_words <= 2.5 * len(segments):
        return _reject("keyword_list")
    return text


_DUP_RE = re.compile(r"\b(\w+)(?:\s+\1\b)+", re.I)
_DUP_OK = frozenset({"had", "that", "bye", "ha", "no", "is"})  # grammatical or idiomatic doubles
STOPWORDS = frozenset("a an and are as at be by for from has he her his in is it its of on or "
                      "she that the their they this to was were with".split())


def _collapse_double(m: re.Match) -> str:
    """A doubled word once ("the the" -> "the"), but not a grammatical double ("had had") nor a
    reduplicated name, the same capitalised word twice ("Pichi Pichi", "Mahi Mahi", "Bora
    Bora", "Duran Duran": twenty-fifth pass, rule D)."""
    word, whole = m.group(1), m.group(0)
    if word.lower() in _DUP_OK:
        return whole
    if word[:1].isupper():
        parts = whole.split()
        if len(parts) == 2 and parts[1] == word:
            return whole
    return word


def repeated_words(text, ctx=None):
    words = facts(text, ctx).words
    n_distinct = len(set(words))
    if n_distinct == len(words):  # no word occurs twice: nothing to collapse or count
        return text
    # Comparisons and counting in C (map, Counter): long texts repeat "the" and "and".
    if any(map(_eq, words, islice(words, 1, None))):
        text = _DUP_RE.sub(_collapse_double, text)
        words = lower_words(text)
        n_distinct = len(set(words))
    n = len(words)
    # Some word occurs 3 times, and could be 30% of the words: no word occurs more often than
    # once plus the number of repeats (n - n_distinct).
    if n >= 6 and n - n_distinct >= 2 and (n - n_distinct + 1) * 10 >= n * 3:
        counts = Counter(words)
        c = max((c for w, c in counts.items() if len(w) >= 3 and w not in STOPWORDS), default=0)
        if c >= 3 and c * 10 >= n * 3:
            return _reject("repeated_words")
    return text


# 14. trailing hashtags ---------------------------------------------------------------------------
# Started where a whitespace run starts, possessive: the same match as "(?:\s+#\w+)+\s*$".
_TRAILING_TAGS_RE = re.compile(r"(?<!\s)(?:\s++#\w++)++\s*+$")
# _trailing_tags's parts: where a run of tags may start, the run, and what may end the text.
_TAGS_START_RE = re.compile(r"(?<!\s)\s+#")
_TAGS_RUN_RE = re.compile(r"(?:\s++#\w++)++")
_SPACES_END_RE = re.compile(r"\s*+$")


def _trailing_tags(text: str) -> int:
    """Where ``_TRAILING_TAGS_RE.search(text)`` starts, or -1, in linear time: its search
    reads every tag run to its end from each of the run's tags ("a #a #a ... #a ." costs
    the square of the tags); a tag inside a run already read ends where the run does, so it
    is not tried again (docs/captions.md, "Worst-case cost")."""
    covered = 0
    for c in _TAGS_START_RE.finditer(text):
        p = c.start()
        if p < covered:
            continue
        run = _TAGS_RUN_RE.match(text, p)
        if run is None:
            continue
        if _SPACES_END_RE.match(text, run.end()):
            return p
        covered = run.end()
    return -1


def hashtags(text, ctx=None):
    # Recipe and social alts end in tags ("... on a white plate #glutenfree #vegan"): the
    # caption before them is kept when it holds words of its own (else keyword_list decides).
    if "#" not in text:
        return text
    start = _trailing_tags(text)
    if start <= 0 or not HAS_LETTER.search(text[:start]):
        return text
    return text[:start]


# 17. the leading sentences of a long text -------------------------------------------------------
# A sentence ends at . ! ? (and closing quotes or brackets) before a space and a capital,
# a digit or an opening quote; "Dr. Smith" and "U.S. Army" end no sentence.
_SENTENCE_END_RE = re.compile(r"(?<!\b[A-Z])(?<!\b(?:Dr|Mr|Ms|St|Jr|Sr|vs|No|Mt|Ft))"
                              r"(?<!\b(?:Mrs|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec|Gov|Sen"
                              r"|Rep|Gen|Col|Lt\.|Inc|Ltd|Ave|Rev))(?<!\b(?:Sept|Capt|Sgt\.))"
                              r"[.!?][\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")


def lead(text, ctx):
    cfg = ctx.config
    n = ctx.norm_words if text is ctx.norm else len(text.split())
    # A text ending in a comma was cut mid-sentence (twenty-eighth pass, rule F): its whole
    # sentences are kept as a long text's are; with none, lead_in drops it.
    if n <= cfg.max_words and len(text) <= cfg.max_chars and text[-1:] != ",":
        return text
    out, words, chars = [], 0, 0
    at = 0
    for m in _SENTENCE_END_RE.finditer(text):
        sentence = text[at:m.end()].strip()
        w = len(sentence.split())
        if words + w > cfg.max_words or chars + len(sentence) + bool(out) > cfg.max_chars:
            break
        out.append(sentence)
        words, chars, at = words + w, chars + len(sentence) + bool(out), m.end()
    # Nothing fits, or only a fragment shorter than a caption: the length rule decides.
    if not out or words < cfg.min_words:
        return text
    return " ".join(out)


# 18. questions and exclamations -----------------------------------------------------------------
_EXCLAIM_TAIL = "\"'”’»)] "


def exclamation(text, ctx=None):
    # A caption says what a picture shows; a short question or exclamation beside one is a
    # teaser ("Trying for a baby?"), a comment ("This is so delicious!") or a button.
    if ctx is not None and ctx.waive == "exclaim":
        return text  # a large picture's own exclamation (TextCleaner._own_exclaim, rule E)
    end = text[-1:]
    if end in _EXCLAIM_TAIL:  # "'What happened?'"
        end = text.rstrip(_EXCLAIM_TAIL)[-1:]
    if end != "?" and end != "!":
        return text
    n = ctx.norm_words if ctx is not None and text is ctx.norm else len(text.split())
    if n > _EXCLAIM_WORDS or _title_aside(text):
        return text
    return _reject("exclamation")


_EXCLAIM_WORDS = 8
# A title whose bracketed aside at its end exclaims: "KFC Coleslaw Recipe (Copycat Recipe!)",
# "Asian Chicken Lettuce Wraps (Better than P.F. Chang's)!" (thirty-third pass, rule X).
_TITLE_ASIDE_RE = re.compile(r"([^!?()\[\]]+)[(\[]([^()\[\]]*)[)\]][!?]*[\"'”’»]*\s*$")


def _title_aside(text: str) -> bool:
    """Whether ``text`` ends in a bracketed aside of at least two words after a head of at
    least two words holding no "!" nor "?", and speaks of no person: the exclamation is the
    aside's, the head a title (not a tag: "... (VIDEO)!")."""
    if ")" not in text and "]" not in text:
        return False
    m = _TITLE_ASIDE_RE.match(text)
    if m is None or len(m.group(1).split()) < 2 or len(m.group(2).split()) < 2:
        return False
    return not any(w.strip(".,;:!?\"'“”‘’()[]«»").lower() in _PERSON_WORDS
                   for w in text.split())
# Words of the first or second person: an exclamation holding one speaks to the reader or
# for the writer ("meine Eindrücke!"), not of the picture (thirty-first pass, rule E).
_PERSON_WORDS = frozenset("i me my we our you your ich wir du je mon ma mes nous vous votre "
                          "tu".split())
_PERSON_PREFIXES = ("mein", "unser", "dein")


def own_exclamation(text: str) -> bool:
    """Whether ``text``, a picture's own text, is an exclamation in sentence case that speaks
    of no person ("Vegetable-packed spinach, broccoli and cheddar frittata!"): on a large
    picture a recipe blog's alt, not a teaser ("Don't Mess With The Johan!") nor a comment."""
    if text.rstrip(_EXCLAIM_TAIL)[-1:] != "!":
        return False
    words = [w.strip(".,;:!?\"'“”‘’()«»").lower() for w in text.split()]
    if any(w in _PERSON_WORDS or w.startswith(_PERSON_PREFIXES) for w in words):
        return False
    return any(w[:1].islower() and w.isalpha() for w in
               (w.strip(".,;:!?\"'“”‘’()«»") for w in text.split()[1:]))


# 18b. datelines and lead-ins ---------------------------------------------------------------------
_MONTH = (r"(?:jan|feb|febr|mar|apr|jun|jul|aug|sep|sept|oct|okt|nov|dec|dez|déc)\.?"
          r"|january|february|march|april|may|june|july|august|september|october|november"
          r"|december|januar|februar|märz|maerz|mai|juni|juli|oktober|dezember|janvier"
          r"|février|fevrier|mars|avril|juin|juillet|août|aout|septembre|octobre|novembre"
          r"|décembre")
# A date at the start of a text: "Apr 7, 2009", "7. April 2009", "7 avril 2009", "2009-04-07",
# "07.04.2009", "4/7/09" -- unless a colon or dash follows it, as in a caption's own dateline
# ("Nov. 26, 2013: Police officers adjust a barricade ..."), or a semicolon, as in the caption
# form of USA TODAY Sports / Imagn pictures ("Jul 27, 2022; Tampa, FL, USA; Tampa Bay
# Buccaneers quarterback Tom Brady (12) works out ...", seventeenth pass).
_DATELINE_RE = re.compile(r"(?:(?:" + _MONTH + r") \d{1,2}(?:st|nd|rd|th)?,? \d{4}"
                          r"|\d{1,2}(?:st|nd|rd|th|\.)? (?:" + _MONTH + r"),? \d{4}"
                          r"|\d{4}-\d\d-\d\d|\d{1,2}[./]\d{1,2}[./]\d{2,4})(?!\s*[:;–—-])",
                          re.I)


# A post's date line anywhere in a text ("... Stewart Perrie Published 22:00, 11 July 2021
# BST", "AFP/The Local Published: 28 Apr, 2020", "5 from 2 votes Published: Apr 13, 2026"):
# dev, 3 junk on 3 sites, nothing else (sixth pass).  Capitalised only: "a notice posted on
# 5th Avenue" is a caption's.
_PUBLISHED_RE = re.compile(r"\b(?:Published|Updated|Posted)(?: on)?:? (?=[^.]{0,12}\d)")


def published_line(text: str) -> bool:
    """Whether ``text`` holds a post's date line (``_PUBLISHED_RE``, gated by a substring)."""
    return ("ublished" in text or "pdated" in text or "osted" in text) \
        and _PUBLISHED_RE.search(text) is not None


# A teaser's byline at its end (twenty-first pass, rule B): " By " (capital B, not the first
# word) and 2-3 name words, then nothing, a reading time or " | " and anything ("Readability
# Is a Myth By Noah Berlatsky", "... By Louis Keene 3 min read", "... By Giovanni Gaggero |
# 12/10/2020 ...").  Only at the end: "... run By SoBRO in the South Bronx." is a caption's,
# "Shocked By What He Discovered Inside." a headline's (four words, a period).
_NAME_WORD = r"(?:[A-Z][\w'’-]*|[A-Z]\.)"
_BYLINE_END_RE = re.compile(rf"\S\s+By {_NAME_WORD}(?: {_NAME_WORD}){{1,2}}"
                            r"(?:\s+\d+\s+min(?:ute)?s?(?: read)?|\s+\|.*)?\s*$")
_BYLINE_MIN_WORDS = 5


def dateline(text, ctx=None):
    # A text that opens with a date is a post's or comment's metadata, or a dated teaser in a
    # list ("April 10, 2011 Double the Genes, Double the Flora", "May 5, 2025 Corrie 1 Comment
    # on ..."): on the labelled dev pages 26 junk, 4 vague, no caption.
    if published_line(text):
        return _reject("dateline")
    if " By " in text and _BYLINE_END_RE.search(text) \
            and len(text.split()) >= _BYLINE_MIN_WORDS:
        return _reject("dateline")
    first = text[:1]
    if not first.isalnum() or not any(c.isdigit() for c in text[:14]):
        return text
    return _reject("dateline") if _DATELINE_RE.match(text) else text


def lead_in(text, ctx=None):
    # A text ending in a colon introduces something else ("Share this on:", "CAPS Rating:",
    # "Boomer & Carton Photos:..."): a label, not a caption (dev: 24 junk, nothing else).
    # One ending in an ellipsis is a teaser cut short ("Apple Sneaks A Big Change Into iOS 5:
    # Phasing…", "Signs point to ..."): dev, 6 junk, 13 vague, no caption.
    end = text[-1:]
    if end == ":":
        return _reject("lead_in")
    if end == "…" or (end == "." and text.endswith("...")):
        return _reject("lead_in" if text.rstrip(" .…").endswith(":") else "truncated")
    # One ending in a comma is a fragment (lead kept its whole sentences if it had any):
    # "Plus, Stephen Amell," (twenty-eighth pass, rule F).
    if end == ",":
        return _reject("truncated")
    # One ending in "here" points at a link ("please click here.", "See who's on the hot seat
    # HERE."): dev, 4 junk, nothing else (fifth pass).
    if end in "eE.!" and text[-6:].lower().endswith((" here", " here.", " here!")):
        return _reject("lead_in")
    return text


# 19-21. length window, language, out-of-vocabulary ratio (need the cleaner: ctx) --------------
# ``ctx.named`` of a one-word text naming its declared picture's file (filters/text.py,
# TextCleaner._word_name, nineteenth pass): the length rule lets it by.
ONE_WORD = 2


def length(text, ctx):
    cfg = ctx.config
    # The words of an unedited ASCII text are the parts the cleaner joined them from.
    n = ctx.norm_words if text is ctx.norm else len(text.split())
    ctx.meta["n_words"] = n
    # From min_words_own words on, a shorter text goes on: the text step keeps it only as a
    # picture's own text (TextCleaner.own_text), and drops it as text_too_short elsewhere.
    if (n < cfg.min_words_own and n < cfg.min_words and ctx.named != ONE_WORD) \
            or len(text) < cfg.min_chars:
        return _reject("too_short")
    if n > cfg.max_words or len(text) > cfg.max_chars:
        return _reject("too_long")
    return text


def lang(text, ctx):
    got = _lang(text, ctx)
    if got is text or not _BILINGUAL_SEP_RE.search(text):
        return got
    # A bilingual title ("ग्रीक सलाद रेसिपी - Classic Greek Salad Recipe"): one half in a script
    # of no Latin letter, the other in a target language, is judged by that half (thirty-third
    # pass, rule B).
    half = bilingual_half(text)
    if not half:
        return got
    code, conf = ctx.lid.fasttext(lang_input(half, ctx.config))
    if code in ctx.config.targets and conf >= ctx.config.lang_min_conf:
        ctx.meta["lang_by"] = "bilingual"
        ctx.meta["lang"], ctx.meta["lang_conf"] = code, round(conf, 4)  # the half's
        return text
    return got


_BILINGUAL_SEP_RE = re.compile(r" [-–—|] ")
_LATIN_RE = re.compile(r"[A-Za-z\u00c0-\u024f]")


def bilingual_half(text: str) -> str:
    """The Latin half of a text of two halves split at " - " (or "–", "—", "|"), the other
    holding letters but no Latin one; else ""."""
    parts = _BILINGUAL_SEP_RE.split(text)
    if len(parts) != 2:
        return ""
    latin = [p for p in parts if _LATIN_RE.search(p)]
    if len(latin) != 1:
        return ""
    other = parts[1] if parts[0] is latin[0] else parts[0]
    return latin[0].strip() if any(ch.isalpha() for ch in other) else ""


def _lang(text, ctx):
    cfg = ctx.config
    # Lowercased: lid.176 reads Title Case English ("East Bay Times Letters to the Editor",
    # p 0.79) as German, capitalised nouns being German's mark.
    # Bounded: fastText's cost grows with the text, and its first words tell the language.
    # The batched cleaner has already asked fastText about this text (ctx.ft), with the others
    # of its batch in one call.
    code, conf = ctx.ft or ctx.lid.fasttext(lang_input(text, cfg))
    ctx.meta["lang"], ctx.meta["lang_conf"] = code, round(conf, 4)
    if code in cfg.targets:
        return text
    if conf >= cfg.lang_min_conf:
        # fastText guesses on a few words ("pork and prawn jambalaya": Polish, p 0.90): on a
        # target-language page, a short text all of whose words the target's vocabulary
        # knows is kept.  Up to _LONG words, a foreign name at the head misleads it too
        # ("Poulet rôti au vin rouge (Roast Red Wine Chicken)": French, p 0.82): such a text
        # is kept when a third of its words are the target's rather than fastText's language
        # (sixteenth pass; a whole Spanish or French sentence, whose common words the English
        # list also knows, is not).
        n = ctx.meta.get("n_words", 99)
        if n <= _LONG and ctx.page_lang in cfg.targets \
                and _known_words(text, ctx, ctx.page_lang) \
                and (n <= _SHORT or _target_words(text, ctx, ctx.page_lang, code)):
            ctx.meta["lang_by"] = "vocabulary"
            return text
        if ctx.named and ctx.meta.get("n_words", 99) <= 3 and ctx.page_lang in cfg.targets:
            # A name of a few words ("Barcelona") has no language; its file names it.
            ctx.meta["lang_by"] = "file_name"
            return text
        return _reject("not_target")
    if cfg.second_opinion:  # unsure: langdetect decides
        ld, _ = ctx.lid.langdetect(text)
        ctx.meta["lang_langdetect"] = ld
        return text if ld in cfg.targets else _reject("not_target")
    # Unsure on a short text: the page's language (already checked by the language step) stands.
    return text if not ctx.page_lang or ctx.page_lang in cfg.targets else _reject("not_target")


_SHORT = 6  # words: up to this many, fastText's language is a guess
_LONG = 12  # words: up to this many, a foreign name at a text's head can mislead it


def _target_words(text: str, ctx, target: str, code: str) -> bool:
    """Whether at least a third of the words of ``text`` are the target's rather than the
    language fastText names (``code``): in the target's vocabulary, and more frequent there
    than in ``code``'s (where wordfreq has a list for it)."""
    words = [w.lower().replace("’", "'") for w in WORD_RE.findall(text)]
    zt = ctx.cleaner.zipf_for(target)
    zc = ctx.cleaner.zipf_of(code)
    threshold = float(ctx.config.zipf_threshold)
    hits = sum(zt[w] >= threshold and (zc is None or zt[w] > zc[w]) for w in words)
    return hits * 3 >= len(words)


def _known_words(text: str, ctx, lang: str) -> bool:
    """Whether at least two thirds of the words of ``text`` (and two or more) have a Zipf
    frequency >= zipf_threshold in ``lang`` (a dish name may hold one borrowed word:
    "Corn Tortilla Quesadillas")."""
    words = [w.lower().replace("’", "'") for w in WORD_RE.findall(text)]
    zipf = ctx.cleaner.zipf_for(lang)
    threshold = float(ctx.config.zipf_threshold)
    known = sum(zipf[w] >= threshold for w in words)
    return known >= 2 and known * 3 >= len(words) * 2


def lang_input(text: str, cfg) -> str:
    """What fastText reads of a text: its lowercased head."""
    return text[: cfg.lang_max_chars].lower()


# A name of two or three capitalised words ("Amrita Deonarine", "Enchilada Suizas"): names are
# rare words, so the vocabulary says nothing about them (the lang rule has judged the text).
# Within the same three words a name may hold a comma after a word or one lower-case particle
# between two capitalised words ("Oligokyphus, a Cynodont", "Bank of America", "Vincent van
# Gogh"): the same kind of text, which failed the vocabulary only for its small word
# (fourteenth pass).
_NAME_WORD = r"[A-Z][a-z]*(?:['’-][A-Z]?[a-z]+)?"  # "Deonarine", "O'Neill", "Archer-Bradshaw"
_PARTICLES = "of|a|an|the|de|da|di|du|del|der|den|van|von|la|le|y"
_NAME_RE = re.compile(rf"^{_NAME_WORD}(?:,? {_NAME_WORD}){{1,2}}$"
                      rf"|^{_NAME_WORD},? (?:{_PARTICLES}) {_NAME_WORD}$")


def oov(text, ctx):
    if ctx.meta.get("lang_by") == "bilingual":  # rule B: the target half is judged
        half = bilingual_half(text)
        return text if half and _oov(half, ctx) is half else _reject("oov")
    return _oov(text, ctx)


def _oov(text, ctx):
    f = facts(text, ctx)
    if f.cls is not None and "’" not in text:  # the words of the lowercased text, lowercased
        words = f.words
    else:
        words = [w.lower().replace("’", "'") for w in WORD_RE.findall(text)]
    if not words:
        ctx.meta["oov_ratio"] = 1.0
        return _reject("oov")
    # Counted in C: map the words to their Zipf frequencies, then to "below the threshold".
    zipf = ctx.cleaner.zipf_for(ctx.meta.get("lang", ""))
    n_oov = sum(map(float(ctx.config.zipf_threshold).__gt__, map(zipf.__getitem__, words)))
    ratio = n_oov / len(words)
    ctx.meta["oov_ratio"] = round(ratio, 4)
    if ratio > ctx.config.max_oov_ratio:
        # Which exemption let it past, recorded as ``lang_by`` is: the ratio stays the plain
        # share of rare words, so a kept text over the bound says why it was kept.
        if ctx.named:
            ctx.meta["oov_by"] = "image_name"
        elif len(words) <= 3 and _NAME_RE.match(text.rstrip(" -–—|:;,.")):
            ctx.meta["oov_by"] = "name"
        elif _names_known(text, zipf, ctx):
            ctx.meta["oov_by"] = "title_case"
        else:
            return _reject("oov")
    return text


def _names_known(text: str, zipf, ctx) -> bool:
    """Whether, counting every word written Title-case ("Diri", "Scarpa", "Icône") as known,
    the share of unknown words is within max_oov_ratio, and one word of 4 letters or more is
    the vocabulary's ("recipe", "Wall"): names are rare words, and the vocabulary says nothing
    about them (eighteenth pass); a text of unknown names and particles only ("Zxqv Blorf
    Wizzle Frumble", "Zxqv Blorf of Wizzle") says nothing the vocabulary can check (a name
    with a particle is the name test's, within three words).  Not in German, which
    capitalises every noun ("incurvy Autorin")."""
    if ctx.page_lang == "de" or ctx.meta.get("lang") == "de":
        return False
    words = WORD_RE.findall(text)
    if not words:
        return False
    threshold = float(ctx.config.zipf_threshold)
    n_oov = n_known = 0
    for w in words:
        if zipf[w.lower().replace("’", "'")] >= threshold:
            n_known += len(w) > 3
        elif not (len(w) > 1 and w[0].isupper() and w[1:].islower() and w.isalpha()):
            n_oov += 1
    return n_known > 0 and n_oov / len(words) <= ctx.config.max_oov_ratio


# 24. a teaser's metadata tail, cut after the rules have kept the text -----------------------
# Forty-sixth pass, rule B (docs/captions.md registers each piece): a teaser card's text often
# ends in the card's metadata, joined on when the card's link or block is read whole: a cooking
# time and a ratings label ("Instant Pot Chicken Soup 80 mins Ratings"), a reading time, a
# count of comments or reviews ("... 5 Comments", "... 4.9 out of 5 stars 311 Reviews"), an
# age ("... 20 hours ago", "... added 2 years ago"), a date ("... Money Smart”April 4, 2022",
# "... posted on September 9, 2015"), a "Read More".  For every text, not card titles only:
# plain teaser sides end so too, and a caption's own words end in none of these pieces (a date
# only where no phrase word, comma or period stands before it: "Sky Map for Nov. 1, 2014",
# "... in New York, Nov. 27" keep it).
# The last rule (forty-ninth pass, B'): the cut is made after every rule has kept the text,
# so each rule and each per-candidate judgement (the length window, a two-word surrounding
# text's drop in TextCleaner._short, dateline's byline ending) reads the text as it came.
# Run where the forty-sixth pass put it (after price), the cut turned two-word teaser names
# ("Curried Goat 1 day 3 hrs 30 mins") into text_too_short and dated teasers ending in a byline
# into text_dateline: the metadata was part of how the text was judged, so it is cut only from
# a text the rules have judged whole.  It never drops (two words and a letter are left), so it
# changes no decision; meta["n_words"] stays the count the length rule judged.
_T_UNIT = r"(?:mins?|hrs?|days?)\b"
_T_DUR = rf"\d{{1,3}} ?{_T_UNIT}(?: \d{{1,3}} ?{_T_UNIT}){{0,3}}(?: ratings)?"
_T_READ = r"\d{1,3} ?min(?:ute)?s? read"
_T_COUNT = (r"(?:\d(?:\.\d)? out of 5 stars )?(?:\d{1,6}(?:[.,]\d{1,3})?k?|no) "
            r"(?:comments?|reactions?|reviews?|ratings?|votes?|shares?)")
_T_AGE = (r"(?:\d{1,3} (?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?) ago"
          r"|(?:added|(?-i:posted)) \d{1,3} (?:seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?"
          r"|months?|years?) ago)")
_T_DATE = (r"(?:(?:" + _MONTH + r") \d{1,2}(?:st|nd|rd|th)?, \d{4}"
           r"|\d{1,2}(?:st|nd|rd|th|\.)? (?:" + _MONTH + r") \d{4}|\d{1,2}/\d{1,2}/\d{4})")
_T_MORE = (r"(?:read more|continue reading|read (?:the )?full story|view recipe|get the recipe)"
           r"(?: ?(?:»|›|→|\.\.\.|…))?")
# The last word of a text that may end in such a piece (lowercased letter words); a text
# ending otherwise, and in no digit, is left at once.
_TAIL_LAST = frozenset("mins min hrs hr days day ratings rating read comments comment reactions "
                       "reaction reviews review votes vote shares share ago more reading story "
                       "recipe".split())
# Separators between pieces, and between the rest and the first piece.
_TAIL_SEPS = " •|·-–—,"
_TAIL_BARS = ("•", "|", "·")
# The words that make a trailing piece part of a phrase: "Bake for 40 mins", "Letters to the
# Editor for Jan. 20, 2023".
_TAIL_PHRASE_END = frozenset(
    "for in about under over than at of to by with and or on since until from before after "
    "takes take only just approx approximately around nearly almost least every per a an the "
    "is are was were".split())
_TAIL_CHARS = 120
# The longest piece before its final spaces and periods: a duration of four units and
# "ratings" ("123 mins 123 mins 123 mins 123 mins ratings", 43 characters); a count is at most
# 40, a labelled date 30.  No match starts further from the end of those final characters, so
# the search starts there (a search tried at each of 120 positions cost ~50 µs a text ending
# in a digit, the bench's texts ~5% of the step; forty-ninth pass).  Neither bound changes
# what is cut (tests/filters/text_reference.tail is the search as first written).
_TAIL_PIECE_MAX = 44
# The pieces' patterns split by the word (or year) a piece ends in: a text ending in "ago"
# can only end in an age, so no month name is tried at each position (a text ending in a
# tail cost ~20 µs with one pattern of every piece, tests/filters/text_reference's, the
# bench's step ~4%).  Same leftmost match: the pieces left out cannot end there.  A labelled
# date, or a date alone (group "d": judged by what stands before it, tail_rest).
_TAIL_DATE_RE = re.compile(rf"(?:(?<=\s)(?:added:?|(?-i:posted on)) {_T_DATE}|(?P<d>{_T_DATE}))"
                           r"[\s.]*$", re.I)
_MONTH_RE = re.compile(_MONTH, re.I)


def _tail_re(alternatives: str) -> re.Pattern:
    return re.compile(rf"(?<=\s)(?:{alternatives})[\s.]*$", re.I)


_TAIL_DUR_RE = _tail_re(f"{_T_DUR}|{_T_COUNT}")  # "80 mins Ratings", "12 Ratings"
_TAIL_BY_WORD = {
    **dict.fromkeys("mins min hrs hr days day ratings rating".split(), _TAIL_DUR_RE),
    "read": _tail_re(_T_READ),
    **dict.fromkeys("comments comment reactions reaction reviews review votes vote shares "
                    "share".split(), _tail_re(_T_COUNT)),
    "ago": _tail_re(_T_AGE),
    **dict.fromkeys("more reading story recipe".split(), _tail_re(_T_MORE)),
}
assert _TAIL_BY_WORD.keys() == _TAIL_LAST


def _piece_re(text: str) -> re.Pattern | None:
    """The pattern of the pieces ``text`` could end in, from its last characters: a piece ends
    (before final spaces, periods and "»" / "›" / "→" / "…") in a year after a space or a
    slash, or in one of the words of _TAIL_LAST with no letter glued before it; None where
    it can end in none.  Asked before each search: after one piece is cut, most texts end in
    a plain word."""
    end = text.rstrip(" .»›→…")
    if end[-1:].isdigit():
        # a date's year: after "D/D/", after "Month D, " or after " Month " ("Blogs 2017" is
        # none of them)
        if not end[-4:].isdigit():
            return None
        before = end[-6:-4]
        if before[-1:] == "/" or before == ", ":
            return _TAIL_DATE_RE
        if before[-1:] == " " and _MONTH_RE.fullmatch(end[:-5].rsplit(" ", 1)[-1]):
            return _TAIL_DATE_RE
        return None
    i = len(end)
    while i and end[i - 1].isalpha():
        i -= 1
    return _TAIL_BY_WORD.get(end[i:].casefold())  # casefold: IGNORECASE folds "ſ" to "s"


def tail_rest(text: str) -> str:
    """``text`` without the run of teaser metadata ending it (rules B, B'); ``text`` itself where
    there is none, or where cutting would leave fewer than two words."""
    rest = text
    for _ in range(6):  # a run holds a few pieces ("June 30, 2014 • No Comment")
        pattern = _piece_re(rest)
        if pattern is None:
            break
        m = pattern.search(rest, max(0, len(rest) - _TAIL_CHARS,
                                     len(rest.rstrip(" .")) - _TAIL_PIECE_MAX))
        if m is None:
            break
        before = rest[: m.start()]
        head = before.rstrip(" ")
        bar = head.endswith(_TAIL_BARS)
        if pattern is _TAIL_DATE_RE and m.group("d") is not None:
            if before[-1:] not in (" ", ""):
                # glued to the word before: "Money Smart”April 4, 2022"
                if not (before[-1].isalpha() or before[-1] in "”\"’')"):
                    break
            elif not bar and (not head or head[-1] in ",.:;-–—/"):
                break  # "... in New York, Nov. 27, 2013" is a caption's own date
        elif not before[-1:].isspace():
            break
        cut = head.rstrip(_TAIL_SEPS)
        if not bar and cut == head:  # no separator: the word before must be no phrase word
            # without a final period: "for approx. 1 hr" (forty-ninth pass)
            last = cut.rsplit(" ", 1)[-1].strip("\"'“”‘’().").lower()
            if last in _TAIL_PHRASE_END:
                break
        if len(cut.split()) < 2 or not HAS_LETTER.search(cut):
            break
        rest = cut
    return rest


def tail(text, ctx=None):
    if not text[-1:].isdigit():
        f = facts(text, ctx)
        if not f.words or f.words[-1] not in _TAIL_LAST:
            return text
    # A post's capitalised date line ("... Updated 2 hours ago") is dateline's drop (it is cut
    # from nothing dateline has kept; this holds where dateline is disabled too).
    if published_line(text):
        return text
    return tail_rest(text)


RULES: list[Rule] = [
    Rule("markup", markup, "edit, drop", ("markup", "bad_chars")),
    Rule("email", email, "edit"),
    Rule("url", url, "edit"),
    Rule("filename", filename, "edit"),
    Rule("dimension", dimension, "edit"),
    Rule("credit", credit, "edit"),
    Rule("boilerplate", boilerplate, "drop"),
    Rule("promo", promo, "drop"),
    Rule("price", price, "edit, drop"),
    Rule("adult", adult, "drop"),
    Rule("spam", spam, "drop"),
    Rule("punctuation", punctuation, "edit, drop"),
    Rule("all_caps", all_caps, "edit, drop"),
    Rule("hashtags", hashtags, "edit"),
    Rule("keyword_list", keyword_list, "drop"),
    Rule("repeated_words", repeated_words, "edit, drop"),
    Rule("lead", lead, "edit"),
    Rule("exclamation", exclamation, "drop"),
    Rule("dateline", dateline, "drop"),
    Rule("lead_in", lead_in, "drop", ("lead_in", "truncated")),
    Rule("length", length, "drop", ("too_short", "too_long")),
    Rule("lang", lang, "drop", ("not_target",)),
    Rule("oov", oov, "drop"),
    Rule("tail", tail, "edit"),
]
RULE_NAMES = [r.name for r in RULES]
# Rules that judge a text with its candidate (the text's source), after RULES: the cached
# result of a text alone cannot hold them (filters.text.TextCleaner._spoken).  Each has its own
# name in ``text.disabled_rules``, as RULES do: first_person once rode on the exclamation rule,
# so disabling "exclamation" silently disabled it too (qa22).
CANDIDATE_RULES: list[Rule] = [Rule("first_person", first_person, "drop")]
# Every name ``text.disabled_rules`` accepts.
KNOWN_RULE_NAMES = RULE_NAMES + [r.name for r in CANDIDATE_RULES]


# The gate -------------------------------------------------------------------------------------
# Most texts give most rules nothing to do, and calling a rule only to hear "unchanged" was
# the bulk of the rules' cost.  ``may_fire(f)`` answers for the gated rules at once, from the
# facts of one text version: a rule whose bit is clear cannot change or drop that text, so the
# cleaner skips it.  Each test is the rule's own first check or a looser one, so the gate
# decides nothing: tests/filters/test_text_batch.py runs every rule whose bit is clear on the
# real pages' texts (and mutations of them) and checks that it leaves the text alone.
#
# | rule           | may fire when the text holds (else skipped)                               |
# |----------------|---------------------------------------------------------------------------|
# | markup         | a rare symbol (RARE_CHARS: \ { & < [ mojibake, non-printable, ...)       |
# | email          | "@", "[at]" or "(at)"                                                     |
# | url            | a period before a letter, "www." or "://"                                 |
# | filename       | a period before a letter, three digits in a row, or one token with "_"/"-"|
# |                | ; a digit before a letter and a lower-case letter before a capital (an id)|
# | dimension      | two digits in a row and an "x" or "×"                                     |
# | credit         | "©", "(c)", a final ")", a colon with a label word (photo, credit, ...),  |
# |                | one of its words ("by", "via", "courtesy" only beside "photo", "image"    |
# |                | or "picture", or a medium: "animation", "graphic", "video", ...)          |
# | promo          | "%" or the key word of a promo, adult or spam phrase; nine digits and a    |
# |                | phone word ("phone", "call", "tel", ...)                                  |
# | price          | a digit and a currency word or sign ($ € £ ¥)                             |
# | adult, spam    | the key word (PhraseSet.keys) of a promo, adult or spam phrase            |
# | punctuation    | an emoji, three symbols in a row or "!!"-like, "...", or letters under     |
# |                | half the rest                                                             |
# | all_caps       | three pairs of upper-case letters, as many as 80% of the 2+ letter words  |
# | keyword_list   | four symbols and at most 2.5 words per symbol plus one, or "#", or two    |
# |                | symbols, a comma and at most 11 spaces (short_list)                       |
# | repeated_words | a word twice in a row, or a word repeated often enough to be 30% of them  |
#
# The other rules always run.  Texts without a class string get every bit.
BIT = {name: 1 << i for i, name in enumerate(RULE_NAMES)}
GATED = frozenset(BIT) - {"boilerplate", "tail", "hashtags", "lead", "exclamation", "dateline",
                          "lead_in", "length", "lang", "oov"}
_ALL = sum(BIT.values())
_ALWAYS = _ALL - sum(BIT[n] for n in GATED)
_URL_FILE = BIT["url"] | BIT["filename"]
_PHRASE_BITS = BIT["promo"] | BIT["adult"] | BIT["spam"]
# Words (letter runs) without which the letter-led patterns cannot match: each of them is
# bounded by \b there, so it is a whole letter run of the lowercased text.
_CREDIT_WORDS = frozenset("copyright getty shutterstock istock istockphoto adobe "
                          "unsplash pexels pixabay dreamstime alamy ap reuters afp dpa "
                          "picture".split())
_PRICE_WORDS = frozenset("usd eur gbp chf dollar dollars euro euros bucks us".split())
# The key words of the promo, adult and spam phrases: a text with none holds no phrase.
_PHRASE_KEYS = _PROMO.keys | _ADULT.keys | _SPAM.keys
# "by", "courtesy" and "via" are common words: credit acts on them only after "photo",
# "photograph", "image" or "picture" (_PHOTO_BY_RE), so the gate asks for both.
# "under": a licence line, "Photo used under Creative Commons ..." (forty-sixth pass, A).
_BY_WORDS = frozenset("by courtesy via credit credits under".split())
_PHOTO_WORDS = frozenset("photo photograph image picture illustration".split())
# ... or after these at a sentence's start (_MEDIA_BY_RE).
_MEDIA_WORDS = frozenset("animation animations graphic graphics video videos photos photography "
                         "illustrations map maps chart charts infographic infographics "
                         "artwork".split())
_TRIGGER_WORDS = _CREDIT_WORDS | _PRICE_WORDS | _PHRASE_KEYS | _BY_WORDS


def may_fire(f) -> int:
    """The bits (``BIT``) of the rules that may change or drop the text of ``f``
    (a :class:`filters.text_facts.TextFacts`); rules outside ``GATED`` always run."""
    cls = f.cls
    if cls is None:
        return _ALL
    text, words, sym, low = f.text, f.words, f.sym, f.low
    # Counts come from ``sym`` (the class string without lowercase letters, a fraction of its
    # length, "r" for rare symbols); a test on ``cls`` runs only when ``sym`` holds enough of
    # what it looks for.
    bits = _ALWAYS
    rare = "r" in sym  # RARE_CHARS (or an emoji): count on the class string itself
    if rare:
        bits |= BIT["markup"]
        if "@" in text or "[at]" in text:
            bits |= BIT["email"]
        if "©" in text:
            bits |= BIT["credit"]
        if "%" in text:
            bits |= BIT["promo"]
        if "#" in text:
            bits |= BIT["keyword_list"]
        sym = cls
    symbols = sym.count("p")
    if symbols:
        # credit's own tests: "(c)", a final parenthesis, a credit label.
        # ... and a bare credit line, "Name/Agency" (twelve words at most, a space either
        # side of each of three slashes)
        if text.endswith((")", "]")) or "(c)" in low or (":" in text and _has_label_hint(low)) \
                or ("/" in text and sym.count(" ") <= 17) \
                or "/" in text[:_LEAD_CREDIT_CHARS]:  # a credit glued before a caption
            bits |= BIT["credit"]
        if "://" in text:
            bits |= BIT["url"]
        if "(at)" in text:
            bits |= BIT["email"]
    dots = sym.count(".")
    if dots and (".l" in cls or ".u" in cls):  # a TLD or a file extension could follow
        bits |= _URL_FILE
    elif dots and "www." in low:
        bits |= BIT["url"]
    digits = sym.count("d")
    # a slug (one token with "_" or "-"), a camera name or a hash (three digits in a row)
    if ((" " not in text and ("_" in text or "-" in text))
            or (digits >= 3 and "ddd" in cls)):
        bits |= BIT["filename"]
    if digits >= 2 and "dd" in cls and ("x" in low or (rare and "×" in text)):
        bits |= BIT["dimension"]
    if digits and rare and ("$" in text or "€" in text or "£" in text or "¥" in text):
        bits |= BIT["price"]
    if digits >= 9 and not _PHONE_WORDS.isdisjoint(words):
        bits |= BIT["promo"]  # a phone number (_phone)
    if digits and "lu" in cls and ("dl" in cls or "du" in cls):
        bits |= BIT["filename"]  # an image id (_ID_RE)
    if not _TRIGGER_WORDS.isdisjoint(words):
        # "via" alone: a bare credit "James D. Smith via AP" (forty-sixth pass, A)
        if not _CREDIT_WORDS.isdisjoint(words) or words[0] == "courtesy" or "via" in words or (
                not _BY_WORDS.isdisjoint(words) and not (_PHOTO_WORDS.isdisjoint(words)
                                                         and _MEDIA_WORDS.isdisjoint(words))):
            bits |= BIT["credit"]
        if digits and not _PRICE_WORDS.isdisjoint(words):
            bits |= BIT["price"]
        if not _PHRASE_KEYS.isdisjoint(words):
            bits |= _PHRASE_BITS
    if sym.count("u") >= 6:  # three pairs of upper-case letters: six of them
        pairs = cls.count("uu")
        # Each upper-case word of two letters or more holds a pair: all_caps needs 80% of
        # those words upper case.
        if pairs >= 3:
            n2 = len(words) - list(map(len, words)).count(1)
            if n2 >= 3 and pairs * 5 >= n2 * 4:
                bits |= BIT["all_caps"]
    spaces = sym.count(" ")
    if symbols >= 4:
        # keyword_list's bound: a list has at most one segment per separator (a symbol) plus
        # one, and 2.5 words a segment.  The words of a whitespace-normalised text are its
        # spaces plus one.
        if "s" in sym or "  " in text or text[:1] == " " or text[-1:] == " ":
            n_words = len(text.split())
        else:
            n_words = spaces + 1
        if n_words <= 2.5 * (symbols + 1):
            bits |= BIT["keyword_list"]
    if symbols >= 2 and spaces <= 11 and not bits & BIT["keyword_list"] and "," in text:
        bits |= BIT["keyword_list"]  # short_list: two commas, twelve words at most
    # punctuation's own tests: emoji, a run of symbols, or letters under half the rest.
    others = symbols + dots + digits
    if ("e" in sym or (symbols >= 2 and "pp" in cls and (
            "ppp" in cls or "!!" in text or "??" in text or "!?" in text or "?!" in text))
            or (dots >= 3 and "..." in cls) or len(cls) - spaces - others < others):
        bits |= BIT["punctuation"]
    # repeated_words' own tests: a word twice in a row, or one that could be 30% of them.
    n = len(words)
    repeats = n - len(set(words))
    if repeats and (any(map(_eq, words, islice(words, 1, None)))
                    or (n >= 6 and repeats >= 2 and (repeats + 1) * 10 >= n * 3)):
        bits |= BIT["repeated_words"]
    return bits
