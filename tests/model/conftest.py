import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))
import model_synth as synth  # noqa: E402,F401

# Tiny models on a shared 2-core machine: one intra-op thread avoids oversubscription.
torch.set_num_threads(1)


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
