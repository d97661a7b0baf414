import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))
import model_synth as synth  # noqa: E402

# Tiny models on a shared 2-core machine: one intra-op thread avoids oversubscription.
torch.set_num_threads(1)


def tiny_raw(tmp: str, shards: str, **over) -> dict:
    """The tiny test config: 2 x 128, a vocab covering the synthetic captions."""
    raw = {
        "model": dict(hidden=128, layers=2, heads=4, intermediate=256, dropout=0.0, max_position=64,
                      region_dim=synth.REGION_DIM, num_object_classes=synth.NUM_CLASSES, init_from=None,
                      vocab_size=len(synth.WORDS) + 5),
        "data": dict(max_len=32, max_regions=8, shuffle_buffer=64, num_workers=0,
                     vocab=synth.write_vocab(os.path.join(tmp, "vocab.txt"))),
        "pretrain": dict(itm_weight=5.0),
        "stages": {1: dict(shards=shards, steps=30, batch_size=32, lr=3e-3, warmup_steps=10,
                           log_every=5, ckpt_every=1000),
                   2: dict(shards=shards, steps=4, batch_size=8, lr=1e-4, warmup_steps=1, log_every=2)},
        "retrieval": dict(shards=shards, eval_shards=shards, steps=10, batch_size=8, negatives=3,
                          warmup_steps=2, eval_size=12),
        "out_dir": os.path.join(tmp, "run"),
        "precision": "fp32",
        "seed": 7,
    }
    for k, v in over.items():
        raw[k] = {**raw.get(k, {}), **v} if isinstance(v, dict) else v
    return raw


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("synth"))
    synth.write_shards(d, 256, per_shard=64, seed=0, bad=2)
    return d


@pytest.fixture(scope="session")
def eval_dir(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("synth_eval"))
    synth.write_shards(d, 12, distinct=True, seed=5)
    return d
