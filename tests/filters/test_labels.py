"""ImageNet labeler: labels, entropy, embedding and phash in meta; the backbone pass is shared."""
from __future__ import annotations

import json

import numpy as np
import pytest

from filters.labels import ImageLabeler, LabelsConfig
from pipeline.core.records import decode_embedding, encode_embedding
from filters.naturalness import NaturalnessFilter
from pipeline.core.errors import ConfigError
from pipeline.core.records import ImageItem
from pipeline.core.stage import Drop
from tests.filters.image_helpers import asset, decoded_item, image_models  # noqa: F401


def test_labels_and_facts_of_real_photos(image_models):
    stage = ImageLabeler()
    stage.setup()
    cat, coffee = decoded_item(asset("photos", "cat.jpg")), decoded_item(asset("photos", "coffee.jpg"))
    assert stage.process_batch([cat, coffee]) == [[cat], [coffee]]
    assert cat.meta["labels"][0]["name"] in {"Egyptian Mau", "tabby cat", "tiger cat"}
    assert coffee.meta["labels"][0]["name"] in {"espresso", "cup", "coffee mug"}
    for item in (cat, coffee):
        labels = item.meta["labels"]
        assert len(labels) == 5
        assert all(set(lab) == {"name", "p"} for lab in labels)  # one struct type for Arrow
        probs = [lab["p"] for lab in labels]
        assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1.0001
        assert 0 < item.meta["label_entropy"] < np.log(1000)
        assert len(item.meta["phash"]) == 16
        assert len(item.meta["colors"]) == 11 and abs(sum(item.meta["colors"]) - 1) < 0.01
        emb = decode_embedding(item.meta["embedding"])
        assert emb.shape == (1280,) and emb.min() >= 0  # ReLU6 features, mean-pooled
        assert item.meta["embedding"].dtype == np.float16  # an array until the writer encodes it
        json.dumps({**item.meta, "embedding": encode_embedding(item.meta["embedding"])})
        assert item.backbone_out is None and item.view is None
    assert cat.meta["phash"] != coffee.meta["phash"]


def test_labeler_reuses_the_naturalness_backbone_pass(image_models):
    item = decoded_item(asset("photos", "pagoda.jpg"))
    nat = NaturalnessFilter()
    nat.setup()
    assert nat.process(item) == [item]
    labeler = ImageLabeler()

    def no_second_pass(views):
        raise AssertionError("the backbone ran twice")

    labeler._backbone.run = no_second_pass
    assert labeler.process(item) == [item]
    alone = decoded_item(asset("photos", "pagoda.jpg"))
    assert ImageLabeler().process(alone) == [alone]
    # same facts whether the pass was shared or not
    np.testing.assert_array_equal(alone.meta.pop("embedding"), item.meta.pop("embedding"))
    assert alone.meta == item.meta


def test_same_input_same_facts(image_models):
    a, b = (decoded_item(asset("photos", "rocket.jpg")) for _ in range(2))
    ImageLabeler().process(a)
    ImageLabeler(LabelsConfig(batch_size=1)).process(b)
    written = lambda m: json.dumps({**m, "embedding": encode_embedding(m["embedding"])}, sort_keys=True)  # noqa: E731
    assert written(a.meta) == written(b.meta)  # the bytes a shard stores


def test_unreadable_image_is_a_counted_drop(image_models):
    bad = ImageItem(image_url="http://x/a.png", data=b"\x89PNG\r\n\x1a\n garbage", candidates=[])
    assert list(ImageLabeler().events(bad)) == [Drop("labels_undecodable")]


def test_options_and_bad_config(image_models):
    item = decoded_item(asset("photos", "coins.jpg"))
    ImageLabeler(LabelsConfig(topk=3, store_embedding=False, phash=False)).process(item)
    assert len(item.meta["labels"]) == 3
    assert "phash" not in item.meta
    # the embedding stays in flight for the scorer; the writer leaves it out of the shards
    assert item.meta["embedding"].shape == (1280,)
    with pytest.raises(ConfigError, match="labels.topk"):
        LabelsConfig(topk=0).check()
