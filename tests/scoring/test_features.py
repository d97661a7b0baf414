"""Features: named, at least 100, NaN where a fact is missing, and independent of the batch."""
import math

import numpy as np
import pytest

from pipeline.core.records import Candidate, ImageFacts, Pair, decode_embedding
from scoring.features import CROSS_FEATURES, FEATURE_NAMES, TEXT_ONLY, FeatureExtractor, lemmas, url_words


def pair(text, labels=None, url="http://site/images/tabby_cat.jpg", source="alt", meta=None,
         title="Cats of the week", embedding=None):
    c = Candidate(page_url="http://site/p.html", image_url=url, text_source=source, text=text,
                  raw_text=text, page_title=title, page_lang="en", meta=meta or {})
    im = {}
    if labels is not None:
        im["labels"] = labels
        im["label_entropy"] = 1.2
    if embedding is not None:
        im["embedding"] = embedding
    image = ImageFacts(image_url=url, data=b"", width=480, height=320, orig_width=960,
                       orig_height=640, orig_format="jpeg", orig_bytes=120_000, sha256="a" * 64,
                       nsfw=0.01, natural=0.9, meta=im)
    return Pair(key="k" * 24, candidate=c, image=image)


@pytest.fixture(scope="module")
def fx():
    return FeatureExtractor()


def test_at_least_100_unique_named_features():
    assert len(FEATURE_NAMES) >= 100 and len(set(FEATURE_NAMES)) == len(FEATURE_NAMES)
    assert set(TEXT_ONLY).isdisjoint(CROSS_FEATURES)


def test_text_and_image_features(fx):
    cat = pair("A tabby cat with green eyes, 2019.", labels=[["tabby cat", 0.7], ["Egyptian Mau", 0.2]])
    row = dict(zip(FEATURE_NAMES, fx.transform([cat])[0]))
    assert row["n_words"] == 7 and row["has_year"] == 1 and row["source_alt"] == 1
    assert row["source_caption"] == 0 and row["label_p1"] == pytest.approx(0.7)
    assert row["label_margin"] == pytest.approx(0.5) and row["was_resized"] == 1
    assert row["format_jpeg"] == 1 and row["label_word_overlap"] >= 2  # tabby, cat
    assert row["filename_overlap"] == 2 and row["title_overlap"] == 1  # tabby cat / cat
    # facts the pair does not carry are missing, not zero
    assert math.isnan(row["lang_conf"]) and math.isnan(row["proj_cos"]) and math.isnan(row["embedding_norm"])


def test_label_structs_and_older_label_pairs_give_the_same_features(fx):
    """Labels are written as structs ({"name", "p"}: Arrow and `datasets` infer them); shards
    written before hold [name, p] pairs, which the features read the same."""
    old = [["tabby cat", 0.7], ["Egyptian Mau", 0.2]]
    new = [{"name": "tabby cat", "p": 0.7}, {"name": "Egyptian Mau", "p": 0.2}]
    text = "A tabby cat asleep on a sofa"
    a, b = fx.transform([pair(text, old)])[0], fx.transform([pair(text, new)])[0]
    assert np.array_equal(a, b, equal_nan=True)
    assert a[FEATURE_NAMES.index("label_p1")] == pytest.approx(0.7)


def test_label_cosine_prefers_the_matching_text(fx):
    labels = [["tabby cat", 0.7], ["Egyptian Mau", 0.2]]
    X = fx.transform([pair("A tabby cat asleep on a sofa", labels), pair("Rocket launch at night", labels)])
    i = FEATURE_NAMES.index("cos_label_weighted")
    assert X[0, i] > X[1, i] + 0.2


def test_surrounding_distance_and_lexicons(fx):
    meta = {"side": "after", "sentence": "A cat sleeps.", "after": "Hello. A cat sleeps.", "lang_conf": 0.9}
    row = dict(zip(FEATURE_NAMES, fx.transform([pair("A cat sleeps.", source="surrounding", meta=meta),
                                                pair("Hot sexy singles tonight, win now")])[0]))
    assert row["surround_distance"] == 7 and row["surround_side_after"] == 1 and row["lang_conf"] == pytest.approx(0.9)
    other = dict(zip(FEATURE_NAMES, fx.transform([pair("Hot sexy singles tonight, win now")])[0]))
    assert other["adult_soft_words"] == 3 and other["clickbait_words"] >= 2


def test_rows_do_not_depend_on_the_batch(fx):
    a, b = pair("A tabby cat", [["tabby cat", 0.9]]), pair("Two dogs on a beach", [["beagle", 0.5]])
    np.testing.assert_array_equal(fx.transform([a, b])[0], FeatureExtractor().transform([a])[0])


def test_helpers():
    assert url_words("http://x/photos/red_tulip-2.jpg") == ("red tulip", "photos")
    assert lemmas("Daisies and cats") == {"daisy", "cat"}
    assert decode_embedding("not base64!") is None
    v = np.arange(4, dtype="<f2")
    import base64
    np.testing.assert_array_equal(decode_embedding(base64.b64encode(v.tobytes()).decode()), v.astype(np.float32))
