"""The compiled fastText predictor (``filters/_fastlid.pyx``) answers as fastText does.

Labels and probabilities are compared bit for bit with fastText's own ``multilinePredict``
(the binding the text step used before) on every text of the real pages, their mutations
and the tokenizer's edge cases; then the whole text step is run with each predictor.  In CI
(``make test``, which sets ``LAIT_REQUIRE_COMPILED=1``) the module must be built (``make
setup`` builds it), so these tests never skip there; a bare ``pytest`` on a checkout where it
was never built skips them.
"""
import os
import random

import pytest

from filters import language
from filters.language import LanguageId, default_model_path
from filters.text import TextCleaner
from tests.filters.test_text_batch import all_candidates, as_data, sample_texts  # noqa: F401

_EDGES = ["", " ", "\t", "a", "ab", "a\tb\rc\vd\fe\0f g", "</s>", "one </s> two", "</s>x",
          "__label__en", "__label__xx hello", "hello __label__", "é", "élan vital", "😍😍 love",
          "a" * 300, "日本語のテキストです", "ελληνικά κείμενα", "привет мир", "x" + "é" * 80,
          "\u200b\u200bzero width", "mixed ÄÖÜ straße", "  leading and trailing  ",
          "tab\tseparated\twords", "\x80\x81 c1 controls", "😀" * 40]


@pytest.fixture(scope="module")
def lean():
    if language._fastlid is None:
        if os.environ.get("LAIT_REQUIRE_COMPILED"):
            pytest.fail("filters/_fastlid is not built: `make setup` (pip install -e .) builds it")
        pytest.skip("filters/_fastlid is not built (python setup.py build_ext --inplace)")
    model = language._fastlid.load(default_model_path())
    assert model is not None, "lid.176.ftz must be supported"
    return model


@pytest.fixture(scope="module")
def fasttext_model():
    lid = LanguageId()
    lid.load()
    return lid._ft


def fasttext_answer(ft, line: str):
    """fastText's own answer for one line: ``(label, probability)``, or ``None`` (no label)."""
    labels, probs = ft.f.multilinePredict([line], 1, 0.0, "strict")
    return (labels[0][0], float(probs[0][0])) if labels[0] else None


def answers_as_fasttext(lean, ft, line: str) -> bool:
    """Asserts the compiled predictor gives fastText's answer for ``line`` (the same float32
    probability, not a close one); False where it declines, which it may only where fastText
    gives no label: no input row at all, which needs a line without its newline (the
    newline is the row of </s>)."""
    want = fasttext_answer(ft, line)
    try:
        got = lean.predict([line])[0]
    except language._fastlid.Unsupported:
        assert want is None and "\n" not in line, repr(line)
        return False
    assert got == want, repr(line)
    return True


def test_compiled_predictor_answers_as_fasttext_bit_for_bit(lean, fasttext_model, all_candidates):
    texts = sample_texts(all_candidates) + _EDGES
    lines = set()
    for t in texts:
        for s in (t, t[:120].lower()):
            lines.add(s.replace("\n", " ") + "\n")  # as LanguageId.fasttext_many writes them
        lines.add(t)  # no newline at all, or inner ones: fastText reads up to the first
    assert sum(answers_as_fasttext(lean, fasttext_model, line) for line in sorted(lines)) > 10000


def test_random_lines_answer_as_fasttext_bit_for_bit(lean, fasttext_model):
    """Seeded random lines beyond the web's texts: words and runs of characters from many
    scripts (controls, Latin, Greek, Cyrillic, Hebrew, Devanagari, kana, CJK, Hangul, emoji)
    joined by assorted separators.  (About 197,000 lines of such character runs alone,
    two other seeds, found no difference either.)"""
    rng = random.Random(20261123)
    ranges = [(0x20, 0x7F), (0xA0, 0x250), (0x370, 0x400), (0x400, 0x500), (0x590, 0x700),
              (0x900, 0x980), (0x3040, 0x3100), (0x4E00, 0x4F00), (0xAC00, 0xAD00),
              (0x1F300, 0x1F650), (0x1, 0x20)]
    words = "the of photo image house garden river der die und le la les el los de".split()
    lines = []
    for _ in range(3000):
        parts = []
        for _ in range(rng.randrange(1, 30)):
            if rng.random() < 0.4:
                parts.append(rng.choice(words))
            else:
                a, b = rng.choice(ranges)
                parts.append("".join(chr(rng.randrange(a, b)) for _ in range(rng.randrange(1, 12))))
        text = rng.choice([" ", "  ", "\t", " \u00a0", "", "\n"]).join(parts)
        lines += [text.replace("\n", " ") + "\n", text]
    assert sum(answers_as_fasttext(lean, fasttext_model, line) for line in lines) > 5000


def test_a_batch_is_answered_as_its_lines_one_by_one(lean, fasttext_model, all_candidates):
    lines = [c.text[:120].lower().replace("\n", " ") + "\n" for c in all_candidates]
    labels, probs = fasttext_model.f.multilinePredict(lines, 1, 0.0, "strict")
    assert lean.predict(lines) == [(lab[0], float(p[0])) for lab, p in zip(labels, probs)]


def test_language_id_uses_the_compiled_predictor_and_answers_the_same_without(lean):
    lid = LanguageId()
    lid.load()
    assert lid.compiled
    texts = ["the cat sat on the mat", "der hund schläft im garten", "", "12345", "le chat"]
    got = lid.fasttext_many(texts)
    lid._lean = None  # fastText's binding
    assert not lid.compiled and lid.fasttext_many(texts) == got


def test_text_step_decides_the_same_with_either_predictor(lean, all_candidates):
    compiled, binding = TextCleaner(), TextCleaner()
    compiled.setup()
    binding.setup()
    binding._lid._lean = None
    assert compiled._lid.compiled and not binding._lid.compiled
    n = compiled.batch_size
    for i in range(0, len(all_candidates), n):
        batch = all_candidates[i:i + n]
        a, b = compiled.events_batch(batch), binding.events_batch(batch)
        assert [as_data(e) for e in a] == [as_data(e) for e in b]


def test_a_text_fasttext_cannot_read_fails_the_same_way(lean):
    lid = LanguageId()
    lid.load()
    with pytest.raises(Exception) as compiled_error:
        lid.fasttext_many(["lone \ud800 surrogate"])
    lid._lean = None
    with pytest.raises(Exception) as binding_error:
        lid.fasttext_many(["lone \ud800 surrogate"])
    assert type(compiled_error.value) is type(binding_error.value)


def test_models_it_does_not_implement_are_left_to_fasttext(lean, tmp_path):
    with open(default_model_path(), "rb") as f:
        data = f.read()
    cases = {
        "version": data[:4] + (11).to_bytes(4, "little") + data[8:],
        "softmax": data[:8] + data[8:32] + (3).to_bytes(4, "little") + data[36:],  # loss
        "truncated": data[: len(data) // 2],
        "trailing": data + b"\0",
        "empty": b"",
    }
    for name, blob in cases.items():
        path = tmp_path / f"{name}.ftz"
        path.write_bytes(blob)
        assert language._fastlid.load(str(path)) is None, name
