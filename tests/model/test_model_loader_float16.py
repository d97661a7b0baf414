"""The training stream keeps float16 region features float16 in its shuffle buffer (half the
host memory of the float32 copies it held) and the batches are the same bits as before: the
collator widens them to float32, which is exact."""
import io
import random

import numpy as np
import pytest
import torch

import model.stream as stream
from model.config import from_dict
from model.data import decode_sample, tokenizer_for
from model_synth import REGIONS, tiny_raw


def float32_decode(s, cfg, tok, text_only=False):
    """The decoding before this change: features made float32 in every decoded sample."""
    d = decode_sample(s, cfg, tok, text_only)
    if "feats" in d:
        d["feats"] = d["feats"].astype(np.float32)
    return d


def batches(cfg, shards, tok, n, monkeypatch, decode):
    with monkeypatch.context() as m:
        m.setattr(stream, "decode_sample", decode)
        it = iter(stream.PretrainStream(cfg, shards, 16, tok, seed=3))
        return [next(it) for _ in range(n)]


@pytest.mark.parametrize("regions,compile_", [(8, False), (3, False), (8, True)])
def test_batches_are_the_same_bits_as_with_float32_samples(data_dir, tmp_path, monkeypatch,
                                                           regions, compile_):
    # 3 regions: the most confident 3 of the 4 stored are kept (the truncation path);
    # compile: batches padded to max_regions.  20 batches of 16 pass the end of the 256-sample
    # epoch, where the buffer is shuffled and emptied.
    shards = data_dir + "/shards"
    cfg = from_dict(tiny_raw(str(tmp_path), shards, data=dict(max_regions=regions), compile=compile_))
    tok = tokenizer_for(cfg)
    ref = batches(cfg, shards, tok, 20, monkeypatch, float32_decode)
    new = batches(cfg, shards, tok, 20, monkeypatch, decode_sample)
    assert ref[0]["feats"].shape[1] == (8 if compile_ else min(regions, REGIONS))
    for a, b in zip(ref, new):
        assert a.keys() == b.keys()
        for k in a:
            assert a[k].dtype == b[k].dtype and torch.equal(a[k], b[k]), k
    assert all(b["feats"].dtype == b["mrfr_targets"].dtype == torch.float32 for b in new)


def test_the_shuffle_buffer_holds_float16(data_dir, tmp_path):
    shards = data_dir + "/shards"
    cfg = from_dict(tiny_raw(str(tmp_path), shards))
    tok = tokenizer_for(cfg)
    s = stream.PretrainStream(cfg, shards, 16, tok, seed=3)
    held = []
    # The samples the buffer yields are the objects it held (popped from it).
    gen = s._samples(s.shards, 0, 1, random.Random(0), False, stream.BadSamples())
    for _ in range(300):  # past the first epoch's end
        held.append(next(gen))
    assert {d["feats"].dtype for d in held} == {np.dtype(np.float16)}
    # and no sample keeps a larger array alive behind a view
    assert all((d["feats"].base if d["feats"].base is not None else d["feats"]).nbytes
               == d["feats"].nbytes for d in held)


def test_float32_features_stay_float32(tmp_path):
    """Shards with float32 features (another exporter) are not narrowed: that would change
    the batches; float64 ones become float32 as before."""
    cfg = from_dict(tiny_raw(str(tmp_path), str(tmp_path)))
    tok = tokenizer_for(cfg)
    for dtype, want in [(np.float32, np.float32), (np.float64, np.float32), (np.float16, np.float16)]:
        z = io.BytesIO()
        feats = np.random.default_rng(0).random((REGIONS, 16)).astype(dtype)
        np.savez(z, features=feats, boxes=np.zeros((REGIONS, 5), np.float32),
                 labels=np.zeros(REGIONS, np.int64))
        d = decode_sample({"__key__": "k", "txt": b"a red circle", "regions.npz": z.getvalue()}, cfg, tok)
        assert d["feats"].dtype == want
        np.testing.assert_array_equal(d["feats"], feats.astype(want))
