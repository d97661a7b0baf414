"""ImageBERT's masking rates, ITM negatives and the conditional mask."""
import tempfile

import pytest
import torch

import model_synth as synth
from model_synth import tiny_raw
from model.config import from_dict
from model.data import IGNORE, PretrainCollator, read_samples, tokenizer_for
from model.pretrain import ImageBERT


@pytest.fixture(scope="module")
def setup(data_dir, tmp_path_factory):
    cfg = from_dict(tiny_raw(str(tmp_path_factory.mktemp("mask")), data_dir + "/shards"))
    tok = tokenizer_for(cfg)
    samples = read_samples(data_dir + "/shards", cfg, tok)
    return cfg, tok, samples


def test_bad_samples_are_skipped(setup):
    cfg, tok, samples = setup
    assert len(samples) == 256  # the 2 broken samples were logged and skipped
    assert all(s["feats"].shape == (synth.REGIONS, 16) for s in samples)


def test_text_masking_rates(setup):
    cfg, tok, samples = setup
    col = PretrainCollator(cfg, tok, seed=1)
    chosen = mask = rnd = kept = real_total = 0
    for _ in range(20):
        b = col(samples[:64])
        pos = b["itm_labels"] == 1
        ids = b["input_ids"][pos]
        lab = b["mlm_labels"][pos]
        real = b["text_mask"][pos] & (lab != IGNORE) | (b["text_mask"][pos] & (ids > 4))
        sel = lab != IGNORE
        chosen += int(sel.sum())
        real_total += int(real.sum())
        mask += int((ids[sel] == tok.mask).sum())
        kept += int((ids[sel] == lab[sel]).sum())
        rnd += int(((ids[sel] != tok.mask) & (ids[sel] != lab[sel])).sum())
    assert abs(chosen / real_total - 0.15) < 0.015
    assert abs(mask / chosen - 0.8) < 0.04
    # Random replacements that hit the original token count as "kept" (1/vocab of 10%).
    assert abs(rnd / chosen - 0.1) < 0.04 and abs(kept / chosen - 0.1) < 0.04


def test_region_masking_rates_and_conditional_mask(setup):
    cfg, tok, samples = setup
    col = PretrainCollator(cfg, tok, seed=2)
    n_valid = n_chosen = n_zero = 0
    for _ in range(20):
        b = col(samples[:64])
        pos = b["itm_labels"] == 1
        # Conditional mask: no masked-token target at all on mismatched pairs.
        assert (b["mlm_labels"][~pos] == IGNORE).all()
        assert (b["moc_labels"][~pos] == IGNORE).all() and not b["mrfr_mask"][~pos].any()
        sel = b["mrfr_mask"][pos]
        n_valid += int(b["vis_mask"][pos].sum())
        n_chosen += int(sel.sum())
        n_zero += int((b["feats"][pos][sel].abs().sum(-1) == 0).sum())
        # MOC targets are the detector labels; MRFR targets the unmasked features.
        idx = torch.nonzero(pos).squeeze(1)
        i = int(idx[0])
        s = samples[i]
        torch.testing.assert_close(b["mrfr_targets"][i, :synth.REGIONS], torch.from_numpy(s["feats"]).float())  # float16 samples
    assert abs(n_chosen / n_valid - 0.15) < 0.02
    assert abs(n_zero / n_chosen - 0.9) < 0.04


def test_itm_negatives(setup):
    cfg, tok, samples = setup
    b = PretrainCollator(cfg, tok, seed=3)(samples[:16])
    assert b["input_ids"].shape[0] == 48 and int(b["itm_labels"].sum()) == 16
    # rows 16..31: image i with another caption; rows 32..47: caption i with another image
    for i in range(16):
        assert torch.equal(b["mrfr_targets"][16 + i], b["mrfr_targets"][i])
        assert not torch.equal(b["mrfr_targets"][32 + i], b["mrfr_targets"][i])
    no_itm = from_dict({**tiny_raw(tempfile.mkdtemp(), "x"), "pretrain": {"itm": False}})
    b2 = PretrainCollator(no_itm, tok, seed=3)(samples[:16])
    assert b2["input_ids"].shape[0] == 16 and "itm_labels" not in b2


def test_masked_losses_only_on_matched_pairs(setup):
    """The MLM/MOC/MRFR losses of a full batch equal those of its positive rows alone."""
    cfg, tok, samples = setup
    torch.manual_seed(0)
    model = ImageBERT(cfg).eval()
    b = PretrainCollator(cfg, tok, seed=4)(samples[:8])
    pos = b["itm_labels"] == 1
    sub = {k: v[pos] for k, v in b.items() if k != "itm_labels"}
    with torch.no_grad():
        full, only = model(b), model(sub)
    for k in ("mlm", "moc", "mrfr"):
        torch.testing.assert_close(full[k], only[k], rtol=1e-5, atol=1e-6)
    assert "itm" in full and "itm" not in only


def test_static_shapes_when_compiling(setup):
    cfg, tok, samples = setup
    static = from_dict({**tiny_raw(tempfile.mkdtemp(), "x"), "compile": True})
    b = PretrainCollator(static, tok, seed=5)(samples[:4])
    assert b["input_ids"].shape[1] == static.text_len() and b["feats"].shape[1] == static.data.max_regions
    assert not b["vis_mask"][:, synth.REGIONS:].any()
