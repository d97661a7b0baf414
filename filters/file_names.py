"""Whether a text names its picture's file: "Bourbon Balls" beside ``Bourbon-Balls-4-150x150.jpg``,
"ANDREW LLOYD WEBBER" on ``andrew-lloyd-webber-hot1.jpg``.

A site that names a picture's file after what it shows has told what the picture is, and a
text that says the same is the picture's own name: a related-recipes card's dish name, a
person's name in capitals.  The text step judges such a text as its picture's own wherever
it sits (two words are enough), title-cases it when in capitals and does not judge it by its
vocabulary or, up to three words, its language (``filters/text.py``, ``TextCleaner._named``);
the extract step keeps a teaser card's title naming its picture's file beside a menu's
picture (``pipeline/steps/extract.py``).  It does not make a header's or menu's image a
picture: logos are named after their brand too ("Purina Beyond" on
``BrandBox_PurinaBeyond.jpg``; docs/captions.md, "Fourth pass").

Agreement: the text has two content words or more (letters, 3 or more, not a stop word: one
word is too often a brand's, a station's or a button's name, "Delicious" on
``bookmarks/delicious.gif``), and every one is a word of the file name, or one of the two
starts the other with at most two letters more, both of 5 letters or more ("enchilada" /
"enchiladas"); a text of more than four content words may miss one in five.

One word names its file only on a picture declared at 150 px or more both ways
(:func:`names_in_one_word`, nineteenth pass): the text step asks that size and that wordfreq
know the word ("pierogi" on ``pierogi-2-500x500.jpg``), which a brand's or a button's name
on a small image does not pass.
"""
from __future__ import annotations

import re
from urllib.parse import unquote

_SPLIT_RE = re.compile(r"[^a-z]+")
_CAMEL_RE = re.compile(r"([a-z])([A-Z])")
_WORD_RE = re.compile(r"[^\W\d_]{3,}")
_ID_RE = re.compile(r"\b(?=\w*\d)(?=\w*[^\W\d_])\w{6,}\b")
# Words that say nothing of the picture, in a text or a file name.
_STOP = frozenset("the and with for from into onto this that its his her their our your "
                  "are was were has have had not but der die das und mit von les des une "
                  "pour avec".split())
_CACHE: dict[str, frozenset] = {}


def file_words(name: str) -> frozenset:
    """The lowercase letter words (3 letters or more) of a file name, camelCase split
    ("Alexandria-Douziech_-RetracingNarratives.jpg" -> alexandria, douziech, retracing,
    narratives), cached by name."""
    hit = _CACHE.get(name)
    if hit is None:
        stem = name.rsplit(".", 1)[0] if "." in name else name
        hit = frozenset(w for w in _SPLIT_RE.split(_CAMEL_RE.sub(r"\1 \2", stem).lower())
                        if len(w) >= 3 and w not in _STOP)
        if len(_CACHE) > 50000:
            _CACHE.clear()
        _CACHE[name] = hit
    return hit


def names_in_one_word(text: str, name: str) -> bool:
    """Whether ``text`` is one word of letters only (no hyphen, digit or underscore: slugs
    such as "Zuppa-Toscana" are as often a card's junk as a name) that is a word of the file
    ``name`` ("Guacamole" on ``Guacamole-feature-500x500.jpg``).  The caller asks the
    picture's size and the word's frequency (filters/text.py, nineteenth pass)."""
    return text.isalpha() and text.lower() in file_words(name)


def _matches(word: str, words: frozenset) -> bool:
    if word in words:
        return True
    if len(word) < 5:
        return False
    for w in words:
        if len(w) >= 5 and abs(len(w) - len(word)) <= 2 and (
                w.startswith(word) or word.startswith(w)):
            return True
    return False


def named_by_file(text: str, name: str) -> bool:
    """Whether ``text`` says what the file ``name`` is named after (see the docstring)."""
    if not text or not name:
        return False
    words = file_words(name)
    # A word of the text matches a file word only if the text holds that word's first five
    # letters (or all of a shorter one): a test in C that rules out most texts at once.
    low = text.lower()
    if not words or not any(w[:5] in low for w in words):
        return False
    if _ID_RE.search(text):  # an id or hash ("8bPqxyodoUk"): the text is a file's name
        return False
    # camelCase split as the file's ("RetracingNarratives" in a text and a file alike)
    own = [w for w in (m.lower() for m in _WORD_RE.findall(
        _CAMEL_RE.sub(r"\1 \2", text) if not text.islower() else text)) if w not in _STOP]
    if not 2 <= len(own) <= 12:  # one word is too often a brand's or a button's name
        return False
    hits = sum(_matches(w, words) for w in own)
    return hits == len(own) if len(own) <= 4 else hits * 5 >= len(own) * 4


# A CMS's title made of the file's name ("Reichsbürger 1" for Reichsbürger-1-706x386.jpg,
# "Half Life Alyx 1" for Half-Life-Alyx-1-300x200.jpg): the upload's name with its running
# number, the size suffix and WordPress's edit stamp ("-e1558349457528") taken off.
_SUFFIX_RE = re.compile(r"(?:-e\d{10,})?(?:[-_]\d{2,4}x\d{2,4})?$")
_NON_WORD_RE = re.compile(r"[\W_]+")
# A final number that is a year ("Whitewashed Botany, 2022" on ...-Whitewashed-Botany-2022.jpg)
# belongs to the title: a CMS's running number counts duplicates (-1, -2, ...), never to 1800
# (twelfth pass).
_YEAR_RE = re.compile(r"(?:18|19|20)\d\d")


def titled_by_file(text: str, name: str) -> bool:
    """Whether ``text`` is its picture's file name with a running number, as a CMS writes a
    title for an upload (seventh pass; the caller tests ``text[-1:].isdigit()`` first): two
    words or more, the last a number that is no year (1800-2099), the same words as the
    file's stem."""
    if not name or "." not in name:
        return False
    stem = _SUFFIX_RE.sub("", unquote(name).rsplit(".", 1)[0])
    words = _NON_WORD_RE.sub(" ", text.lower()).split()
    return len(words) >= 2 and words[-1].isdigit() and not _YEAR_RE.fullmatch(words[-1]) \
        and words == _NON_WORD_RE.sub(" ", stem.lower()).split()


# Sixteenth pass (docs/captions.md): the words of a surrounding text and of its picture's own
# texts, read as the text step reads a name (letters, apostrophes inside a word).
# The regions (pipeline/steps/regions.py; "content" outside them) where a picture's own text may
# be as short as ``min_words_own`` (filters/text.TextCleaner.own_text): two-word alts in the
# header, footer, navigation or an author box are brand, station and author names ("Purina
# Beyond", "Rooster 101.9", "Daniel Bader"), unless the picture's other own texts name them
# too (named_by_image; the extract step hands them over there, twenty-ninth pass, rule M).
OWN_REGIONS = frozenset(("content", "aside", "related"))

_TEXT_WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


def named_by_image(text: str, image_text: str) -> bool:
    """Whether a short surrounding ``text`` is its picture's name that the picture's own texts
    (``image_text``: alt, figcaption, title) say too: every word of it (two at least) is a
    word of them.  A teaser card's title "Lentil Patties" under a picture whose alt is
    "Lentil patties served on a big platter ..."; the bold lead "Odor detectors." of a caption
    the picture's lightbox title holds whole.  The text step keeps such a text from
    ``min_words_own`` words, as it keeps a picture's own text; a side that merely repeats a
    word or two of the alt is no more than the alt, and a side the alt does not name (a
    byline, "Breaking News", "retweets 114") stays as short as it was."""
    if not image_text or not text:
        return False
    words = [w.casefold() for w in _TEXT_WORD_RE.findall(text)]
    if len(words) < 2:
        return False
    own = image_text.casefold()
    if not all(w in own for w in words):  # substring tests in C rule out most texts at once
        return False
    own_words = {w.casefold() for w in _TEXT_WORD_RE.findall(image_text)}
    return all(w in own_words for w in words)
