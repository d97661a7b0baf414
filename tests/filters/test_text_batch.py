"""The batched text step decides exactly what the per-text path decides.

* ``events_batch`` (one fastText call per batch, results cached by text) against a reference
  built from ``clean(text, page_lang)`` one text at a time, on every candidate of every real
  page (German and French ones too, for the non-ASCII paths);
* the shortcuts of ``filters/text_facts.py`` against the patterns they stand for;
* the result cache: bounded, independent copies, not pickled.
"""
import dataclasses
import os
import pickle
import random
import re
from collections import Counter

import pytest

from filters.sentences import sentences_next_to_image
from filters.text import TextCleaner, TextCleanerConfig
from filters.text_facts import (HAS_LETTER, NON_LETTERS_RE, NOT_LETTER_RE, RARE_CHARS, WORD_RE,
                                TextFacts, classes, letter_norm)
from filters import text_rules
from pipeline.core.errors import ConfigError
from pipeline.steps.extract import Extractor
from pipeline.core.records import Candidate, Page
from pipeline.core.stage import Drop, Keep

PAGES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "real_pages")


@pytest.fixture(scope="module")
def all_candidates():
    """Every candidate of every real page (no language step: German pages count too), page
    furniture included: the rules are held to their references on all the texts pages hold."""
    if not os.path.isdir(PAGES):
        pytest.skip("../shared/data/real_pages is absent")
    extract, out = Extractor(page_roles=False), []
    for name in sorted(os.listdir(PAGES)):
        if name.endswith(".html"):
            with open(os.path.join(PAGES, name), "rb") as f:
                page = Page(url=f"https://{name[:-5]}/", body=f.read(), content_type="text/html")
            ev = next(extract.events(page))
            out.extend(ev.outputs if isinstance(ev, Keep) else ())
    return out


def reference_event(cleaner: TextCleaner, cand: Candidate):
    """What the text step does to one candidate, from ``clean`` alone (the per-text path)."""
    if cand.text_source == "surrounding" and ("before" in cand.meta or "after" in cand.meta):
        pieces = sentences_next_to_image(cand.meta.get("before") or "",
                                         cand.meta.get("after") or "", cand.page_lang or "en")
        if not pieces:
            return Drop("text_empty")
    else:
        pieces = [("", cand.text or cand.raw_text or "")]
    outputs, best = [], (-2, "")
    for side, sentence in pieces:
        text, reason, meta, at = cleaner.clean(sentence, cand.page_lang or "",
                                               cleaner.own_text(cand),
                                               cand.meta.get("file_name", ""),
                                               cand.meta.get("image_text", ""),
                                               cand.meta.get("img_width"),
                                               cand.meta.get("img_height"),
                                               cand.text_source == "surrounding")
        if text is None:
            best = max(best, (at, reason))
            continue
        if side:
            meta.update(side=side, sentence=sentence)
        outputs.append(dataclasses.replace(cand, text=text, meta={**cand.meta, **meta}))
    return Keep(tuple(outputs)) if outputs else Drop(best[1])


def as_data(event):
    if isinstance(event, Drop):
        return event.reason
    # Field values and meta key order (the order reaches the written JSON).
    return [(dataclasses.asdict(o), list(o.meta)) for o in event.outputs]


@pytest.mark.parametrize("config", [TextCleanerConfig(),
                                    TextCleanerConfig(targets=["en", "de"], batch_size=7)],
                         ids=["default", "en_de"])
def test_batched_path_equals_per_text_path_on_real_pages(all_candidates, config):
    reference = TextCleaner(dataclasses.replace(config, cache_size=0))
    expected = [as_data(reference_event(reference, c)) for c in all_candidates]
    batched = TextCleaner(config)
    got = []
    for i in range(0, len(all_candidates), batched.batch_size):
        got.extend(as_data(ev) for ev in batched.events_batch(all_candidates[i:i + batched.batch_size]))
    assert len(got) == len(expected) > 1500
    assert got == expected
    # The record-at-a-time API (a batch of one) and a second, cached pass agree as well.
    assert [as_data(ev) for c in all_candidates[:300] for ev in batched.events(c)] == expected[:300]
    kept = sum(isinstance(e, list) for e in expected)
    assert 300 < kept < len(expected)  # both decisions occur


def test_batch_with_a_failing_record_is_redone_record_by_record():
    cleaner = TextCleaner()
    good = Candidate(page_url="https://e.org/", image_url="https://e.org/i.jpg", text_source="alt",
                     text="Two dogs play in the snow near the river.", raw_text="", page_lang="en")
    # A broken record: a surrounding text whose "before" is not a string.
    bad = dataclasses.replace(good, text_source="surrounding", meta={"before": 123})
    events = cleaner.events_batch([good, bad, good])
    assert isinstance(events[0], Keep) and isinstance(events[2], Keep)
    assert events[1] == Drop("text_error_attribute_error")


# the shortcuts --------------------------------------------------------------------------------

def sample_texts(all_candidates) -> list[str]:
    rnd = random.Random(0)
    base = [c.text for c in all_candidates] + [c.meta.get("before") or "" for c in all_candidates]
    extra = list("!?.,;:-_*~=+#^|<>/\\@&%$£¥©®×·²½µßÉÿ'\"0123456789 \xa0\t") + [
        "...", "!!", "?!", "’", "–", "€", "😍", "\u200b", "İ", "ſ", "K", "USD", "1920x1080", "IMG_1234"]
    out = base[:]
    for _ in range(3000):
        t = rnd.choice(base)
        for _ in range(rnd.randint(1, 4)):
            pos = rnd.randint(0, len(t))
            t = t[:pos] + rnd.choice(extra) * rnd.randint(1, 3) + t[pos:]
        out.append(rnd.choice([t, t.upper(), t.lower()]))
    return out


def test_class_string_answers_what_the_patterns_answer(all_candidates):
    upper2, n_latin1 = re.compile(r"[^\W\d_a-z]{2}"), 0  # n_latin1: non-ASCII with a class string
    for text in sample_texts(all_candidates):
        f = TextFacts(text)
        low = text.lower()
        assert f.words == WORD_RE.findall(low)
        assert letter_norm(low) == " ".join(NON_LETTERS_RE.sub(" ", low).split())
        if f.cls is None:
            continue
        n_latin1 += not text.isascii()
        assert len(f.cls) == len(text)
        for n in (1, 2, 3, 7):
            assert ("d" * n in f.cls) == bool(re.search(r"\d{%d}" % n, text)), text
        assert f.cls.count("uu") == len(upper2.findall(text)), text
        others = sum(map(f.cls.count, ("p", ".", "d", "e")))  # punctuation's count
        assert others == len(NOT_LETTER_RE.findall(text))
        assert ("e" in f.cls) == bool(text_rules._EMOJI_RE.search(text))
        if "’" not in text:  # oov's words: the lowercased words of the text
            assert f.words == [w.lower() for w in WORD_RE.findall(text)]
    assert n_latin1 > 100  # German and French texts take the shortcuts too
    assert classes("naïve Straße") is not None and classes("Café – it’s €5") is not None
    assert classes("Café 😍") is None and classes("Привет") is None


def test_sym_is_the_class_string_without_a_to_z_and_with_rare_symbols_marked(all_candidates):
    """sym: the class string without "l", with "r" for a rare symbol or a caseless emoji beyond
    Windows-1252 (which the class string shows as "e"); the gate counts on it."""
    n_rare = 0
    for text in sample_texts(all_candidates):
        f = TextFacts(text)
        if f.cls is None:
            assert f.sym is None
            continue
        strict = classes(text) is not None  # no emoji beyond Windows-1252
        want = "".join("r" if c in RARE_CHARS or (k == "e" and classes(c) is None) else k
                       for c, k in zip(text, f.cls) if k != "l")
        assert f.sym == want, text
        assert ("r" in f.sym) == (any(c in RARE_CHARS for c in text) or not strict), text
        n_rare += "r" in f.sym
    assert n_rare > 500


def test_word_count_of_the_normalisation_is_that_of_the_text(all_candidates):
    """The length rule reads the number of words of an unedited ASCII text from the
    normalisation (``_Ctx.norm_words``): it is ``len(text.split())``."""
    from filters.text import _Ctx

    cleaner = TextCleaner()
    n = 0
    for raw in sample_texts(all_candidates):
        ctx = cleaner._begin(raw, "en", 0)  # normalised, no rule run
        if isinstance(ctx, _Ctx) and ctx.norm:
            assert ctx.norm_words == len(ctx.norm.split()) and ctx.text is ctx.norm, raw
            n += 1
    assert n > 2000


def test_tidy_strips_edges_as_the_edge_pattern_did(all_candidates):
    edge = re.compile(r"^[\s\-–—|:;,/·•_~*+=>]+|[\s\-–—|:;,/·•_~*+=<(\[]+$")
    brackets = re.compile(r"\(\s*[,;:]?\s*\)|\[\s*\]")
    space_before = re.compile(r"\s+([)\]},;:!?])")
    rnd = random.Random(1)
    for text in sample_texts(all_candidates)[-3000:]:
        text = rnd.choice("-–|:(<[> ") * rnd.randint(0, 3) + text + rnd.choice("-–|:(<[>) ") * 2
        old = edge.sub("", space_before.sub(r"\1", " ".join(brackets.sub(" ", text).split())))
        assert text_rules.tidy(text) == old, text


def test_removed_invisible_and_control_characters_are_all_non_printable():
    # markup skips its two scans on printable texts: that is exact only if so.
    for pattern in (text_rules._CONTROL_RE, text_rules._INVISIBLE_RE):
        chars = [chr(i) for i in range(0x10000) if pattern.match(chr(i))]
        assert chars and not any(c.isprintable() for c in chars)


def test_a_text_starting_with_isalpha_has_a_letter():
    assert all(HAS_LETTER.match(chr(i)) for i in range(0x110000) if chr(i).isalpha())


# the cache ------------------------------------------------------------------------------------

def test_cached_results_are_independent_and_bounded():
    cleaner = TextCleaner(TextCleanerConfig(cache_size=2))
    text = "A small red boat on the lake at sunset - IMG_2041.JPG"
    first = cleaner.clean(text, "en")
    first[2]["text_edits"].append("mine")  # a caller changing what it got
    first[2]["side"] = "before"
    again = cleaner.clean(text, "en")
    assert again[2]["text_edits"] == ["filename"] and "side" not in again[2]
    for t in ("one two three four", "five six seven eight", "nine ten eleven twelve"):
        cleaner.clean(t, "en")
    assert len(cleaner._cache) == 2
    assert pickle.loads(pickle.dumps(cleaner))._cache == {}
    off = TextCleaner(TextCleanerConfig(cache_size=0))
    assert off.clean(text, "en") == cleaner.clean(text, "en") and len(off._cache) == 0


@pytest.mark.parametrize("bad", [dict(batch_size=0), dict(cache_size=-1)])
def test_bad_batch_or_cache_size_fails_at_once(bad):
    with pytest.raises(ConfigError):
        TextCleaner(TextCleanerConfig(**bad))


# the gate -------------------------------------------------------------------------------------

def test_gate_skips_only_rules_that_would_leave_the_text_alone(all_candidates):
    """Every gated rule whose bit ``may_fire`` leaves clear returns the text unchanged, on the
    real pages' texts and their mutations (symbols, digits, emoji, upper case), as written and
    as the cleaner sees them (whitespace collapsed)."""
    cleaner = TextCleaner()
    cleaner.setup()
    gated = [r for r in text_rules.RULES if r.name in text_rules.GATED]
    skipped = Counter()
    for raw in sample_texts(all_candidates):
        for text in {raw, " ".join(raw.split())}:
            bits = text_rules.may_fire(TextFacts(text))
            for rule in gated:
                if bits & text_rules.BIT[rule.name]:
                    continue
                skipped[rule.name] += 1
                out = rule.fn(text, None)
                assert not isinstance(out, text_rules.Reject) and out == text, (rule.name, text)
    assert all(skipped[r.name] > 1000 for r in gated), skipped  # the gate does skip them all


def test_gated_cleaner_decides_as_one_that_runs_every_rule(all_candidates):
    gated = TextCleaner(TextCleanerConfig(cache_size=0))
    ungated = TextCleaner(TextCleanerConfig(cache_size=0))
    ungated._bits = [0] * len(ungated._bits)  # every rule runs on every text
    for text in sample_texts(all_candidates)[::3]:
        assert gated.clean(text, "en") == ungated.clean(text, "en"), text


def test_phrase_sets_find_each_of_their_phrases_through_the_key_word_test():
    for phrases in (text_rules._BOILER_PHRASES, text_rules._PROMO, text_rules._ADULT,
                    text_rules._SPAM):
        for first in phrases.first.values():
            for words in first:
                assert phrases.search(["a", *words, "b"]), words
                assert not phrases.keys.isdisjoint(words)


# the rules' fast paths --------------------------------------------------------------------------

def test_rules_with_fast_paths_answer_as_their_reference_code(all_candidates):
    """Each rule rewritten for speed (C-level counting, bounds that skip a pattern, written-out
    hint chains) gives what its straightforward version (tests/filters/text_reference.py)
    gives, on the real pages' texts and their mutations, with and without shared facts."""
    from filters.text import _Ctx
    from tests.filters import text_reference

    cleaner = TextCleaner()
    seen = Counter()
    for raw in sample_texts(all_candidates):
        for text in {raw, " ".join(raw.split())}:
            for name, reference in text_reference.RULES.items():
                fast = getattr(text_rules, name)
                ctx = _Ctx(cleaner, "en")
                got, want = fast(text, ctx), reference(text, None)
                assert got == want, (name, text)
                seen[name, isinstance(want, text_rules.Reject) or want != text] += 1
    # they do fire: each on 10 texts or more (repeated_words, the rarest, fires on 18 since the
    # draw's pool holds card titles, which moved the seeded mutations; it was 20 or more before)
    assert all(seen[name, True] >= 10 for name in text_reference.RULES), seen


@pytest.mark.parametrize("predictor", ["binding", "compiled"])
def test_fasttext_many_asks_each_distinct_text_once(predictor):
    """Whichever predictor answers: fastText's binding (multilinePredict) or the compiled one
    (filters/_fastlid.pyx, where built)."""
    from filters.language import LanguageId

    lid = LanguageId()
    lid.load()
    if predictor == "compiled" and not lid.compiled:
        pytest.skip("filters/_fastlid is not built (tests/filters/test_fastlid.py fails in CI)")
    if predictor == "binding":
        lid._lean = None
    texts = ["the cat sat on the mat", "der hund schläft im garten", "le chat dort", "", "12345"]
    asked = []
    owner, name = (lid, "_lean") if lid.compiled else (lid._ft, "f")
    real = getattr(owner, name)

    class Spy:
        def multilinePredict(self, lines, *args):
            asked.append(list(lines))
            return real.multilinePredict(lines, *args)

        def predict(self, lines):
            asked.append(list(lines))
            return real.predict(lines)

    want = [lid.fasttext(t) for t in texts]
    setattr(owner, name, Spy())
    try:
        got = lid.fasttext_many(texts + texts[::-2])
    finally:
        setattr(owner, name, real)
    assert got == want + want[::-2]
    assert asked == [[t + "\n" for t in texts]]


def test_written_out_hint_chains_hold_every_hint():
    for low in text_rules._CAMERA_HINTS:
        assert text_rules._camera_hint(low, "")
    for low in text_rules._LABEL_HINTS:
        assert text_rules._has_label_hint(low)
    for low in text_rules._AGENCY_WORDS:
        assert text_rules._has_agency(low)
    assert not (text_rules._camera_hint("a b c", "lll") or text_rules._has_label_hint("a b c")
                or text_rules._has_agency("a b c"))


def test_edge_sentences_of_the_real_pages_are_those_of_split_sentences(all_candidates):
    from filters.sentences import edge_sentence, split_sentences

    n = 0
    for cand in all_candidates:
        for key in ("before", "after"):
            text = cand.meta.get(key) or ""
            if text.strip():
                whole = split_sentences(text, cand.page_lang or "en")
                assert edge_sentence(text, cand.page_lang or "en", True) == whole[-1:]
                assert edge_sentence(text, cand.page_lang or "en", False) == whole[:1]
                n += 1
    assert n > 500
