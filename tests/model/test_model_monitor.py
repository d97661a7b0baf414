"""Watching ITM: validation metrics in metrics.jsonl, the stuck-at-prior warning, the
contrastive term's duplicate-aware targets."""
import json
import logging
import math
import os

import pytest
import torch

from model_synth import tiny_raw
from model.config import from_dict
from model.data import PretrainCollator, read_samples, tokenizer_for
from model.stream import make_loader
from model import monitor
from model.monitor import MIN_STEP, PriorWatch, ValidationITM, itm_stats, prior_loss
from model.pretrain import ImageBERT
from model.train import train


def test_prior_loss():
    assert prior_loss(1 / 3) == pytest.approx(0.6365, abs=1e-4)   # the 1:2 stall of issue 21
    assert prior_loss(0.5) == pytest.approx(math.log(2))


def test_itm_stats():
    y = torch.tensor([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    s = itm_stats(torch.tensor([2.0, 0.5, -1.0, 1.0, -3.0, -2.0]), y)
    assert s["itm_auc"] == pytest.approx(7 / 8)       # 0.5 ranks below one negative (1.0)
    assert s["itm_acc"] == pytest.approx(5 / 6)
    assert s["itm_bal_acc"] == pytest.approx(0.5 * (1 + 3 / 4))
    const = itm_stats(torch.full((6,), -0.69), y)     # the constant answer
    assert const["itm_auc"] == 0.5 and const["itm_acc"] == pytest.approx(4 / 6)


def _rec(step, itm, **kw):
    return {"step": step, "itm": itm, **kw}


def test_prior_watch_flags_a_head_at_its_prior(caplog):
    w = PriorWatch(1 / 3, patience=3)
    with caplog.at_level(logging.INFO, logger="model.monitor"):
        flags = [w.update(_rec(s, 0.637)) for s in (210, 220, 230, 240)]
        assert flags == [False, False, True, True]
        assert sum("stuck at its prior since step 210" in r.message for r in caplog.records) == 1
        assert any("itc_weight > 0 gets it off" in r.message for r in caplog.records)
        assert not w.update(_rec(250, 0.40))
        assert any("left its prior at step 250" in r.message for r in caplog.records)


def test_prior_watch_says_nothing_before_a_head_could_have_left(caplog):
    # Every run sits at the prior once ITM has learnt its bias, until step ~150 even on clean
    # data (docs/trainer.md): a 20-step tiny stage, or the warm-up, proves nothing.
    w = PriorWatch(1 / 3, patience=3)
    with caplog.at_level(logging.WARNING, logger="model.monitor"):
        assert not any(w.update(_rec(s, 0.637)) for s in range(5, MIN_STEP, 5))
        assert [w.update(_rec(s, 0.637)) for s in (MIN_STEP, MIN_STEP + 5, MIN_STEP + 10)] == \
            [False, False, True]          # counted from MIN_STEP: three intervals there
    assert sum("stuck at its prior since step %d" % MIN_STEP in r.message for r in caplog.records) == 1
    w = PriorWatch(1 / 3, patience=2, warmup_steps=1000)   # a long warm-up: counted after it
    assert not any(w.update(_rec(s, 0.637)) for s in range(50, 1000, 50))
    assert [w.update(_rec(s, 0.637)) for s in (1000, 1050)] == [False, True]


def test_prior_watch_hint_names_itc_only_where_it_is_off(caplog):
    # With the contrastive term on, "itc_weight > 0 gets it off" would send the user in a circle.
    w = PriorWatch(1 / 3, patience=2, itc_weight=1.0)
    with caplog.at_level(logging.WARNING, logger="model.monitor"):
        for s in (210, 220):
            w.update(_rec(s, 0.637))
    stuck = [r.message for r in caplog.records if "stuck at its prior" in r.message]
    assert len(stuck) == 1 and "itc_weight is 1 already" in stuck[0] and "> 0" not in stuck[0]


def test_prior_watch_trusts_validation_auc():
    # Web noise keeps the training loss near the prior; a clean validation AUC says it learns.
    w = PriorWatch(1 / 3, patience=2)
    assert not any(w.update(_rec(s, 0.63, val_itm_auc=0.8)) for s in range(300, 305))
    w = PriorWatch(1 / 3, patience=2)
    assert [w.update(_rec(s, 0.63, **({"val_itm_auc": 0.5} if s == 300 else {})))
            for s in range(300, 303)] == [False, True, True]   # the last AUC holds between validations


@pytest.mark.parametrize("min_step", [None, 8])
def test_validation_in_metrics_and_stuck_warning(data_dir, eval_dir, tmp_path, caplog, monkeypatch,
                                                 min_step):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    # Sixteen steps of a 1-layer model: ITM learns its bias (the 1:2 prior) and nothing else yet.
    raw["stages"][1].update(steps=16, batch_size=8, lr=3e-3, warmup_steps=1, log_every=2, decay="constant",
                            val_shards=eval_dir + "/shards", val_every=4, val_size=12)
    raw["model"]["layers"] = 1
    if min_step is not None:   # the same run, judged as if step 8 were late enough to tell
        monkeypatch.setattr(monitor, "MIN_STEP", min_step)
    with caplog.at_level(logging.WARNING, logger="model.monitor"):
        train(from_dict(raw), 1, progress=False)
    recs = [json.loads(x) for x in open(tmp_path / "run" / "stage1" / "metrics.jsonl")]
    assert [("val_itm_auc" in r) for r in recs] == [False, True] * 4
    assert all(0.0 <= r["val_itm_auc"] <= 0.7 for r in recs if "val_itm_auc" in r)
    assert abs(recs[-1]["itm"] - prior_loss(1 / 3)) < 0.01
    warned = sum("ITM head stuck at its prior" in r.message for r in caplog.records)
    if min_step is None:      # 16 steps at the prior: too early to say, so no warning (the demo's case)
        assert not any(r["itm_stuck"] for r in recs) and warned == 0
    else:
        assert [r["itm_stuck"] for r in recs][-3:] == [True, True, True] and warned == 1


def test_validation_batches_are_fixed(data_dir, tmp_path):
    cfg = from_dict(tiny_raw(str(tmp_path), data_dir + "/shards"))
    tok = tokenizer_for(cfg)
    a = ValidationITM(cfg, tok, data_dir + "/shards", size=20, batch_size=8, seed=0)
    b = ValidationITM(cfg, tok, data_dir + "/shards", size=20, batch_size=8, seed=0)
    assert a.n == 20 and [len(x["itm_labels"]) for x in a.batches] == [24, 24, 12]
    assert all(torch.equal(x["input_ids"], y["input_ids"]) for x, y in zip(a.batches, b.batches))
    assert all((x["mlm_labels"] == -100).all() for x in a.batches)   # no masking
    m = ImageBERT(cfg)
    assert a(m, torch.device("cpu")) == b(m, torch.device("cpu"))


def test_itc_counts_repeated_captions_as_targets(data_dir, tmp_path):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["pretrain"] = {"itc_weight": 1.0}
    cfg = from_dict(raw)
    tok = tokenizer_for(cfg)
    samples = read_samples(data_dir + "/shards", cfg, tok, limit=16)
    samples = samples[:6] + [dict(samples[0], key="dup")]   # the same caption twice
    batch = PretrainCollator(cfg, tok, seed=0)(samples)
    g = batch["itc_group"].tolist()
    assert g[6] == g[0] and len(g) == 7
    ids = [tuple(s["ids"]) for s in samples]
    assert all((g[i] == g[j]) == (ids[i] == ids[j]) for i in range(7) for j in range(7))
    model = ImageBERT(cfg)
    out = model(batch)
    assert torch.isfinite(out["itc"]) and out["itc"] > 0
    out["loss"].backward()
    assert model.heads["itc"].text.weight.grad.abs().sum() > 0
    assert model.encoder.blocks[0].attn.qkv.weight.grad is not None
    raw["pretrain"] = {"itc_weight": 1.0, "itc_pool": "mean"}
    out = ImageBERT(from_dict(raw))(batch)
    assert torch.isfinite(out["itc"]) and out["itc"] > 0
    from model.config import ConfigError
    with pytest.raises(ConfigError, match="itc_pool"):
        raw["pretrain"] = {"itc_weight": 1.0, "itc_pool": "max"}
        from_dict(raw)
    # off by default (the paper's four tasks only): no head, no key
    cfg0 = from_dict(tiny_raw(str(tmp_path), data_dir + "/shards"))
    b0 = next(iter(make_loader(cfg0, data_dir + "/shards", 4, tok)))
    assert "itc_group" not in b0 and "itc" not in ImageBERT(cfg0).heads


def test_match_keep_learns_from_the_plausible_pairs_only(data_dir, tmp_path):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["pretrain"] = {"itc_weight": 1.0}
    cfg = from_dict(raw)
    tok = tokenizer_for(cfg)
    samples = read_samples(data_dir + "/shards", cfg, tok, limit=8)
    batch = PretrainCollator(cfg, tok, seed=0)(samples)
    torch.manual_seed(0)
    model = ImageBERT(cfg).eval()            # no dropout: the same losses in every call
    full = model(batch)
    loss_all, w_all = model._itc(batch)
    assert w_all is None and torch.allclose(loss_all, full["itc"])
    model.match_keep = 0.5
    loss_half, w = model._itc(batch)
    assert w.tolist().count(1.0) == 4 and w.tolist().count(0.0) == 4
    # the kept half is the most plausible one: its mean loss is below the whole batch's
    assert loss_half < loss_all
    B = len(samples)
    out = model(batch)
    assert torch.isfinite(out["itm"]) and torch.isfinite(out["itc"])
    # a pair left out teaches nothing as a match: its positive row's ITM gradient is zero
    feats = batch["feats"].clone().requires_grad_(True)
    out = model({**batch, "feats": feats})
    out["itm"].backward()
    dropped = [i for i in range(B) if w[i] == 0]
    kept = [i for i in range(B) if w[i] == 1]
    assert all(feats.grad[i].abs().sum() == 0 for i in dropped)
    assert all(feats.grad[i].abs().sum() > 0 for i in kept)
    from model.config import ConfigError
    for bad in (0.0, 1.5):
        with pytest.raises(ConfigError, match="match_keep"):
            from_dict({**raw, "stages": {1: {**raw["stages"][1], "match_keep": bad}}})
    with pytest.raises(ConfigError, match="match_keep"):
        from_dict({**raw, "pretrain": {}, "stages": {1: {**raw["stages"][1], "match_keep": 0.5}}})
