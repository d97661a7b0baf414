"""Training on shards with a learnable image-text correspondence (coloured shapes)."""
import json
import math
import os

import pytest
import torch
from safetensors.torch import load_file

from model_synth import tiny_raw
from model.config import from_dict
from model.data import read_samples, tokenizer_for
from model.stream import make_loader
from model.pretrain import ImageBERT
from model.retrieval import recall_at_k, score_matrix
from model.train import build_optimizers, load_checkpoint, lr_at, save_checkpoint, train

LEARN_STEPS = 400  # ITM leaves its 1:2 prior after ~200 steps (seeded)


@pytest.fixture(scope="module")
def trained(data_dir, tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("train"))
    raw = tiny_raw(tmp, data_dir + "/shards")
    raw["stages"][1].update(steps=LEARN_STEPS, lr=1e-3, warmup_steps=10, log_every=5)
    raw["stages"][2].update(lr=0.0, min_lr=0.0, steps=2, log_every=1)
    cfg = from_dict(raw)
    train(cfg, 1, progress=False)
    return cfg


def _records(cfg, stage):
    with open(os.path.join(cfg.out_dir, f"stage{stage}", "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


def test_all_losses_finite_and_falling_over_30_steps(trained):
    recs = _records(trained, 1)
    assert [r["step"] for r in recs] == list(range(5, LEARN_STEPS + 1, 5))
    for r in recs:
        assert all(math.isfinite(r[k]) for k in ("loss", "mlm", "moc", "mrfr", "itm"))
    for k in ("loss", "mlm", "moc", "mrfr", "itm"):
        first = (recs[0][k] + recs[1][k]) / 2   # mean over steps 1-10
        last = (recs[4][k] + recs[5][k]) / 2    # mean over steps 21-30
        assert last < first, (k, first, last)
    assert recs[-1]["mlm_acc"] > 0.8  # colour and shape words can only come from the image


def test_itm_and_recall_well_above_chance(trained, eval_dir):
    cfg = trained
    model = ImageBERT(cfg)
    load_checkpoint(os.path.join(cfg.out_dir, "stage1", "final"), model)
    tok = tokenizer_for(cfg)
    samples = read_samples(eval_dir + "/shards", cfg, tok)
    assert len(samples) == 12  # 12 distinct colour-shape pairs: chance R@1 = 1/12
    S = score_matrix(model, samples, cfg, tok, torch.device("cpu"))
    pos, neg = S.diag(), S[~torch.eye(12, dtype=torch.bool)]
    balanced_acc = 0.5 * ((pos > 0).float().mean() + (neg < 0).float().mean())
    r = recall_at_k(S, [tok.decode(s["ids"]) for s in samples])
    print("ITM balanced accuracy", float(balanced_acc), r)
    assert balanced_acc > 0.7
    assert r["i2t_R@1"] >= 0.33 and r["t2i_R@1"] >= 0.33  # >= 4x chance, zero-shot


@pytest.mark.parametrize("loss", ["ce", "triplet"])
def test_retrieval_finetuning(trained, eval_dir, loss):
    from model.retrieval import evaluate, finetune
    from model.config import from_dict, to_dict
    raw = to_dict(trained)
    raw["retrieval"].update(steps=20, batch_size=16, negatives=3, lr=2e-4, warmup_steps=5, loss=loss)
    raw["out_dir"] = os.path.join(raw["out_dir"], loss)
    cfg = from_dict(raw)
    path = finetune(cfg, os.path.join(trained.out_dir, "stage1", "final"), progress=False)
    recs = [json.loads(x) for x in open(os.path.join(cfg.out_dir, "retrieval", "metrics.jsonl"))]
    assert all(math.isfinite(r["loss"]) for r in recs)
    r = evaluate(cfg, path, eval_dir + "/shards")
    print("fine-tuned", r)
    assert r["i2t_R@1"] >= 0.5 and r["t2i_R@1"] >= 0.5 and r["i2t_R@5"] == 1.0


def test_stage2_starts_from_exactly_stage1(trained):
    cfg = trained
    train(cfg, 2, progress=False)  # lr 0: weights cannot move, so they must equal stage 1's
    a = load_file(os.path.join(cfg.out_dir, "stage1", "final", "model.safetensors"))
    b = load_file(os.path.join(cfg.out_dir, "stage2", "final", "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_checkpoint_round_trip_exact(data_dir, tmp_path):
    cfg = from_dict(tiny_raw(str(tmp_path), data_dir + "/shards"))
    tok = tokenizer_for(cfg)
    it = iter(make_loader(cfg, data_dir + "/shards", 8, tok, seed=1))
    b1, b2 = next(it), next(it)
    torch.manual_seed(0)
    m1 = ImageBERT(cfg)
    o1 = build_optimizers(m1, cfg.stage(1))
    m1(b1)["loss"].backward()
    o1[0][0].step()
    o1[0][0].zero_grad()
    save_checkpoint(str(tmp_path / "ck"), m1, o1, {"step": 1})
    m2 = ImageBERT(cfg)
    o2 = build_optimizers(m2, cfg.stage(1))
    assert load_checkpoint(str(tmp_path / "ck"), m2, o2)["step"] == 1
    for (k, v), (k2, v2) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert k == k2 and torch.equal(v, v2), k
    # One more step from the original and from the reloaded copy: bit-identical.
    for m, o in ((m1, o1), (m2, o2)):
        m(b2)["loss"].backward()
        o[0][0].step()
    for (k, v), (_, v2) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert torch.equal(v, v2), k
    assert not os.path.exists(str(tmp_path / "ck.tmp"))


def test_resume_from_last_checkpoint(data_dir, tmp_path):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["stages"][1].update(steps=4, batch_size=4, log_every=1, ckpt_every=2)
    train(from_dict(raw), 1, progress=False)
    raw["stages"][1].update(steps=6)
    train(from_dict(raw), 1, progress=False)
    steps = [r["step"] for r in _records(from_dict(raw), 1)]
    assert steps == [1, 2, 3, 4, 5, 6]
    state = json.load(open(tmp_path / "run" / "stage1" / "last" / "state.json"))
    assert state["step"] == 6


def test_lr_schedule():
    s = from_dict({"stages": {1: {"steps": 100, "lr": 1e-3, "min_lr": 1e-5, "warmup_steps": 10}}}).stage(1)
    assert lr_at(0, s) == pytest.approx(1e-4) and lr_at(9, s) == pytest.approx(1e-3)
    assert lr_at(10, s) == pytest.approx(1e-3) and lr_at(100, s) == pytest.approx(1e-5)
    assert lr_at(55, s) == pytest.approx(1e-5 + (1e-3 - 1e-5) * 0.5)


def test_stage2_without_stage1_fails_clearly(data_dir, tmp_path):
    from model.config import ConfigError
    with pytest.raises(ConfigError, match="run the earlier stage first"):
        train(from_dict(tiny_raw(str(tmp_path), data_dir + "/shards")), 2, progress=False)


def test_seeded_runs_are_identical(data_dir, tmp_path):
    outs = []
    for name in ("a", "b"):
        os.makedirs(tmp_path / name)
        raw = tiny_raw(str(tmp_path / name), data_dir + "/shards")
        raw["stages"][1].update(steps=3, batch_size=4, log_every=3)
        train(from_dict(raw), 1, progress=False)
        outs.append(load_file(str(tmp_path / name / "run" / "stage1" / "final" / "model.safetensors")))
    assert all(torch.equal(outs[0][k], outs[1][k]) for k in outs[0])


def test_stage2_can_carry_the_optimiser_state(data_dir, tmp_path):
    """stages.2.carry_optimizer: stage 2 goes on with stage 1's AdamW moments and step count
    (its own hyper-parameters kept); off (the default), stage 2 starts a fresh AdamW."""
    from model.config import ConfigError
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["stages"][1].update(steps=3, batch_size=4, log_every=1)
    raw["stages"][2].update(steps=2, batch_size=4, log_every=1, warmup_steps=0,
                            weight_decay=0.05, carry_optimizer=True)
    cfg = from_dict(raw)
    train(cfg, 1, progress=False)
    s1 = load_file(str(tmp_path / "run" / "stage1" / "last" / "optim.safetensors"))
    # What stage 2 starts from: stage 1's state, this stage's weight decay.
    model = ImageBERT(cfg)
    opts = build_optimizers(model, cfg.stage(2))
    from model.train import load_optimizers
    state = json.load(open(tmp_path / "run" / "stage1" / "last" / "state.json"))
    load_optimizers(str(tmp_path / "run" / "stage1" / "last"), opts, state, keep_hyper=True)
    adam = opts[0][0]
    assert [g["weight_decay"] for g in adam.param_groups] == [0.05, 0.0]
    first = adam.param_groups[0]["params"][0]
    assert torch.equal(adam.state[first]["exp_avg"], s1["0.0.exp_avg"])
    train(cfg, 2, progress=False)
    s2 = load_file(str(tmp_path / "run" / "stage2" / "last" / "optim.safetensors"))
    assert float(s2["0.0.step"]) == 5.0                     # 3 steps of stage 1 + 2 of stage 2
    assert _records(cfg, 2)[0]["lr"] == pytest.approx(1e-4)  # warmup_steps 0: the peak at once
    saved = json.load(open(tmp_path / "run" / "stage2" / "last" / "state.json"))["optimizers"][0]
    assert saved["param_groups"][0]["weight_decay"] == 0.05
    # It needs a previous stage, and no other starting checkpoint.
    bad = tiny_raw(str(tmp_path), data_dir + "/shards")
    bad["stages"][1]["carry_optimizer"] = True
    with pytest.raises(ConfigError, match="carry_optimizer"):
        from_dict(bad)
    bad = tiny_raw(str(tmp_path), data_dir + "/shards")
    bad["stages"][2].update(carry_optimizer=True, init_from=str(tmp_path / "elsewhere"))
    with pytest.raises(ConfigError, match="carry_optimizer"):
        from_dict(bad)
