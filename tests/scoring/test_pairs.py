"""pairs: one pair per candidate text, sharing the image's facts; the embedding is encoded
only when a sample's metadata is written, with the one codec."""
import base64
import json

import numpy as np

from pipeline.core.records import (Candidate, ImageFacts, ImageItem, decode_embedding,
                                   encode_embedding, from_dict, to_dict)
from scoring.pairs import ImagePairs


def item(n_texts=3):
    cands = [Candidate(page_url=f"http://p/{i}", image_url="http://i/a.jpg", text_source="alt",
                       text=f"text {i}", raw_text=f"text {i}") for i in range(n_texts)]
    emb = np.linspace(0, 6, 1280).astype("<f2")
    it = ImageItem(image_url="http://i/a.jpg", data=b"jpeg", candidates=cands, width=5, height=4,
                   sha256="ab" * 32, nsfw=0.1, natural=0.9, meta={"phash": "00ff", "embedding": emb})
    it.pixels, it.view, it.backbone_out = object(), object(), object()
    return it


def test_pairs_share_one_facts_object_without_candidates_or_transient_fields():
    it = item()
    pairs = ImagePairs().process(it)
    assert [p.candidate.text for p in pairs] == ["text 0", "text 1", "text 2"]
    assert all(p.image is pairs[0].image for p in pairs)
    facts = pairs[0].image
    assert type(facts) is ImageFacts and not hasattr(facts, "candidates")
    assert not hasattr(facts, "pixels") and facts.sha256 == it.sha256 and facts.natural == 0.9
    assert {p.key for p in pairs} == {it.sha256[:24]}
    it.meta["phash"] = "changed"  # the pairs hold a copy of the metadata
    assert facts.meta["phash"] == "00ff"


def test_metadata_writes_the_embedding_as_base64_float16():
    it = item(1)
    (pair,) = ImagePairs().process(it)
    meta = pair.metadata()
    text = meta["image_meta"]["embedding"]
    assert text == base64.b64encode(it.meta["embedding"].tobytes()).decode("ascii")
    json.dumps(meta)  # the written metadata is JSON
    assert isinstance(pair.image.meta["embedding"], np.ndarray)  # the record keeps the array
    np.testing.assert_array_equal(decode_embedding(text), decode_embedding(it.meta["embedding"]))
    assert decode_embedding(text).dtype == np.float32 and encode_embedding(text) == text
    assert decode_embedding(None) is None and decode_embedding("") is None


def test_transient_fields_stay_out_of_dicts_and_comparisons():
    a, b = item(1), item(1)
    for it in (a, b):
        del it.meta["embedding"]  # arrays do not compare with ==
    b.pixels = None
    assert a == b
    d = to_dict(a)
    assert not {"pixels", "view", "backbone_out"} & set(d)
    back = from_dict(d)
    assert back.pixels is None and back.candidates == a.candidates
