"""The memory pre-flight check of `lait train` (model/memory.py): a stage whose estimated peak
memory cannot fit is refused at once, one line naming the batch size and the override, before
anything is written; the tests' own configs pass it.  Nothing here depends on this machine's
memory: the refused batch is absurd on any machine, the rest patches what the check reads."""
import io
import os

import numpy as np
import pytest
import torch
import webdataset as wds

import model_synth as synth
from model import memory
from model.config import from_dict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
TINY = os.path.join(ROOT, "configs", "imagebert_tiny.yaml")
BASE = os.path.join(ROOT, "configs", "imagebert.yaml")


def test_an_absurd_batch_is_refused_in_one_line_before_anything_is_written(tmp_path, data_dir):
    out = tmp_path / "run"
    line = synth.refused_in_one_line(
        ["train", "--config", TINY, "--stage", "1", "--set", f"out_dir={out}",
         "--set", f"stages.1.shards={data_dir}/shards", "--set", "stages.1.batch_size=100000000"], ROOT)
    assert "stages.1.batch_size=100000000" in line and "memory_check=false" in line
    assert "killed for memory" in line
    assert not os.path.exists(out / "stage1")  # refused before the stage folder is made


def test_the_test_configs_pass_the_check(tmp_path, data_dir):
    """The shipped tiny config and the tests' tiny config fit anywhere these tests run; the
    estimate has every part, and its activations grow with the batch."""
    from model.config import load_config
    tiny = load_config(TINY, [f"stages.1.shards={data_dir}/shards"])
    tests = from_dict(synth.tiny_raw(str(tmp_path), f"{data_dir}/shards"))
    for cfg in (tiny, tests):
        est = memory.check_memory(cfg, 1, torch.device("cpu"))
        assert est is not None and est.total > 0 and est.params > 0
        assert {"process", "model and AdamW", "activations", "data loader"} <= set(est.parts)
    small = memory.estimate(tests, 1).parts["activations"]
    tests.stages[1].batch_size *= 4
    assert memory.estimate(tests, 1).parts["activations"] > 3 * small


def test_memory_check_false_skips_it_and_a_fitting_batch_is_named(monkeypatch):
    """With little memory free (patched), the check refuses batch 64 of the BERT-base config
    and names a smaller batch that fits; ``memory_check: false`` starts anyway."""
    cfg = from_dict({"model": {"init_from": None}, "stages": {1: {"shards": "/nowhere", "batch_size": 8}}})
    monkeypatch.setattr(memory, "process_rss", lambda: 0.0)
    need8 = memory.estimate(cfg, 1, process_bytes=0.0).total
    monkeypatch.setattr(memory, "mem_available", lambda: need8 * 1.05 * memory.LOW)
    assert memory.check_memory(cfg, 1, torch.device("cpu")) is not None  # batch 8 fits
    cfg.stages[1].batch_size = 64
    with pytest.raises(memory.ConfigError) as e:
        memory.check_memory(cfg, 1, torch.device("cpu"))
    msg = str(e.value)
    assert "stages.1.batch_size=64" in msg and "--set memory_check=false" in msg
    fits = int(msg.split("try --set stages.1.batch_size=")[1].split()[0])
    assert 8 <= fits < 64
    cfg.memory_check = False
    assert memory.check_memory(cfg, 1, torch.device("cpu")) is None


def test_ranks_on_one_host_share_its_memory(monkeypatch):
    """Under torchrun on a CPU host each rank gets its share of MemAvailable."""
    cfg = from_dict({"model": {"init_from": None}, "stages": {1: {"shards": "/nowhere", "batch_size": 8}}})
    monkeypatch.setattr(memory, "process_rss", lambda: 0.0)
    need = memory.estimate(cfg, 1, process_bytes=0.0).total
    monkeypatch.setattr(memory, "mem_available", lambda: need * 1.5 * memory.LOW)
    assert memory.check_memory(cfg, 1, torch.device("cpu"), world=1, local_ranks=1) is not None
    with pytest.raises(memory.ConfigError, match="each of the 2 ranks"):
        memory.check_memory(cfg, 1, torch.device("cpu"), world=2, local_ranks=2)


def test_the_shuffle_buffer_is_bounded_by_the_shards(data_dir):
    """A shuffle buffer never holds more than the decoded shards (features kept in their
    stored dtype: at most their bytes), however large data.shuffle_buffer is."""
    raw = synth.tiny_raw("/tmp", f"{data_dir}/shards")
    raw["data"] = {**raw["data"], "shuffle_buffer": 10 ** 7}
    raw["data"].pop("vocab")
    cfg = from_dict(raw)
    size = memory.shards_bytes(f"{data_dir}/shards")
    assert size and memory.estimate(cfg, 1, data_bytes=size).parts["data loader"] <= size + 1e6


def test_buffered_features_are_counted_in_their_stored_dtype(data_dir, tmp_path):
    """float16 features (lait features) stay float16 in the buffer: 2 bytes a value; float32
    ones (another exporter) 4 bytes."""
    assert memory.feature_bytes(f"{data_dir}/shards") == 2
    path = str(tmp_path / "00000.tar")
    z = io.BytesIO()
    np.savez(z, features=np.zeros((4, 16), np.float32), boxes=np.zeros((4, 5), np.float32),
             labels=np.zeros(4, np.int64))
    with wds.TarWriter(path) as w:
        w.write({"__key__": "k", "txt": b"a red circle", "regions.npz": z.getvalue()})
    assert memory.feature_bytes(str(tmp_path)) == 4
    assert memory.feature_bytes(str(tmp_path / "none")) == 2  # unreadable: the loader says why
    raw = synth.tiny_raw("/tmp", f"{data_dir}/shards")
    raw["data"] = {**raw["data"], "max_regions": 100, "max_len": 140, "shuffle_buffer": 5000}
    raw["model"] = {**raw["model"], "region_dim": 1280, "max_position": 256}
    raw["data"].pop("vocab")
    cfg = from_dict(raw)
    half, full = (memory.sample_bytes(cfg, n) for n in (2, 4))
    assert half < 0.51 * full  # 100 x 1280 float16: 256 kB a sample, not 512 kB
