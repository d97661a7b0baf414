"""`lait ablate` on a tiny run, eval's checkpoint choice and seeded test draw, duplicate-aware
chance, and the synthetic benchmark's writer."""
import json
import os

import pytest
import yaml

import model_synth as synth
from model.commands import main
from model.config import ConfigError, from_dict
from model.data import read_samples, tokenizer_for
from model.retrieval import chance_at_k
from model.train import latest_checkpoint, train
from model_synth import tiny_raw


def test_chance_is_duplicate_aware():
    c = chance_at_k(["a", "a", "b", "c"], ks=(1, 2))
    assert c["chance_R@1"] == pytest.approx((2 / 4 + 2 / 4 + 1 / 4 + 1 / 4) / 4)
    # R@2: "a" misses with C(2,2)/C(4,2) = 1/6, "b" with C(3,2)/C(4,2) = 1/2
    assert c["chance_R@2"] == pytest.approx((2 * (1 - 1 / 6) + 2 * (1 - 1 / 2)) / 4)
    assert chance_at_k([str(i) for i in range(50)])["chance_R@1"] == pytest.approx(1 / 50)


def test_eval_draws_its_test_set_at_random_with_a_seed(data_dir, tmp_path):
    cfg = from_dict(tiny_raw(str(tmp_path), data_dir + "/shards"))
    tok = tokenizer_for(cfg)
    keys = lambda **kw: [s["key"] for s in read_samples(data_dir + "/shards", cfg, tok, **kw)]
    every = keys()
    a, b, c = keys(sample=20, seed=0), keys(sample=20, seed=0), keys(sample=20, seed=1)
    assert a == b and a != c and len(set(a)) == 20 and set(a) <= set(every)
    assert a != every[:20]                                    # not the first N in shard order
    assert a == [k for k in every if k in set(a)]              # kept in shard order
    assert max(every.index(k) for k in a) > 128                # drawn from every shard
    assert keys(limit=5) == every[:5]


def test_eval_and_finetune_pick_the_last_stage_that_exists(data_dir, eval_dir, tmp_path, capsys):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["stages"][1].update(steps=2, batch_size=4, log_every=1)
    raw["retrieval"].update(eval_shards=eval_dir + "/shards", eval_size=8)
    cfg = from_dict(raw)
    with pytest.raises(ConfigError, match=r"stage2/final, .*stage1/final exists"):
        latest_checkpoint(cfg)
    conf = tmp_path / "c.yaml"
    conf.write_text(yaml.safe_dump(raw))
    assert main(["eval", "--config", str(conf), "--quiet"]) == 2     # clear message, not a traceback
    assert "no pre-training checkpoint" in capsys.readouterr().err
    train(cfg, 1, progress=False)
    assert latest_checkpoint(cfg).endswith(os.path.join("stage1", "final"))   # single-stage run
    assert main(["eval", "--config", str(conf), "--quiet"]) == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert res["checkpoint"].endswith(os.path.join("stage1", "final"))
    assert res["n"] == 8 and res["sample_seed"] == cfg.seed
    assert res["chance_R@1"] == pytest.approx(1 / 8)  # 12 distinct captions, 8 drawn
    train(cfg, 2, progress=False)
    assert latest_checkpoint(cfg).endswith(os.path.join("stage2", "final"))


def test_ablation_tool_tiny_run(data_dir, eval_dir, tmp_path, capsys):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["stages"][1].update(steps=3, batch_size=4, log_every=1)
    raw["stages"][2].update(steps=2, batch_size=4, log_every=1, warmup_steps=2)
    conf = tmp_path / "c.yaml"
    conf.write_text(yaml.safe_dump(raw))
    out = str(tmp_path / "abl")
    argv = ["ablate", "--config", str(conf), "--stage1", data_dir + "/shards", "--stage2",
            eval_dir + "/shards", "--test", eval_dir + "/shards", "--test", f"again={eval_dir}/shards",
            "--out", out, "--seeds", "1", "2", "--n", "8", "--quiet"]
    assert main(argv) == 0
    table = capsys.readouterr().out
    rows = [json.loads(x) for x in open(os.path.join(out, "results.jsonl"))]
    assert sorted((r["setting"], r["seed"]) for r in rows) == [
        (s, k) for s in ("mixed", "multi", "single") for k in (1, 2)]
    for r in rows:
        assert r["steps"] == 5 and r["stage1_steps"] == 3
        for t in ("test", "again"):
            assert r[t]["n"] == 8 and r[t]["chance_R@1"] == pytest.approx(1 / 8)
            assert all(0 <= r[t][f"{d}_R@{k}"] <= 1 for d in ("i2t", "t2i") for k in (1, 5, 10))
        assert r["test"] == r["again"]   # same shards, same seeded draw, same scores
    run = lambda s: os.path.join(out, s, "seed1")
    # multi: stage 1 (3 steps) then stage 2 (2 steps); single / mixed: one stage of 5 steps
    assert json.load(open(os.path.join(run("multi"), "stage2", "final", "state.json")))["step"] == 2
    assert json.load(open(os.path.join(run("single"), "stage1", "final", "state.json")))["step"] == 5
    assert not os.path.exists(os.path.join(run("single"), "stage2"))
    # The stage boundary: stage 2 warms up again and its AdamW state starts afresh.
    s2 = [json.loads(x) for x in open(os.path.join(run("multi"), "stage2", "metrics.jsonl"))]
    assert [r["lr"] for r in s2] == [pytest.approx(0.5e-4), pytest.approx(1e-4)]
    from safetensors.torch import load_file
    adam = load_file(os.path.join(run("multi"), "stage2", "last", "optim.safetensors"))
    assert float(adam["0.0.step"]) == 2.0
    mixed = json.load(open(os.path.join(run("mixed"), "stage1", "final", "state.json")))
    assert mixed["config"]["stages"]["1"]["shards"] == f"{data_dir}/shards,{eval_dir}/shards"
    for s in ("single", "multi", "mixed"):
        assert f"\n{s}" in table
    assert "chance R@1 0.1250" in table
    # a rerun finds every result and trains nothing
    assert main(argv) == 0
    assert len(open(os.path.join(out, "results.jsonl")).readlines()) == 6


def test_synthetic_benchmark_writer(tmp_path):
    from model.data import Tokenizer
    from model.synth_retrieval import write_split, write_vocab
    c = write_split(str(tmp_path / "noisy"), 200, seed=1, noise=0.5, web=True, per_shard=64)
    assert c["samples"] == 200 and c["clean"] + c["swapped"] + c["junk"] == 200
    assert 60 <= c["clean"] <= 140 and c["swapped"] > 20 and c["junk"] > 20
    import webdataset as wds
    tok = Tokenizer(write_vocab(str(tmp_path / "vocab.txt")))
    n = 0
    for s in wds.WebDataset(str(tmp_path / "noisy" / "shards" / "{00000..00003}.tar"), shardshuffle=False):
        meta = json.loads(s["json"])
        ids = tok.encode(s["txt"].decode(), 64)
        assert tok.tok.token_to_id("[UNK]") not in ids, s["txt"]   # the vocab covers every caption
        assert 1 <= len(meta["objects"]) <= 2
        n += 1
    assert n == 200
    again = write_split(str(tmp_path / "again"), 200, seed=1, noise=0.5, web=True, per_shard=64)
    assert again == c and open(tmp_path / "again" / "shards" / "00001.tar", "rb").read() == \
        open(tmp_path / "noisy" / "shards" / "00001.tar", "rb").read()


def test_benchmark_splits_share_no_seed_and_stage1_is_the_largest():
    # no image repeats across splits only because every split has its own seed; stage 1 is
    # the LAIT-like one: more images than any clean stage-2 set, and the only noisy one
    from model.synth_retrieval import BENCHMARK
    seeds = [seed for _, seed, _, _ in BENCHMARK.values()]
    assert len(set(seeds)) == len(seeds)
    n1, _, noise1, _ = BENCHMARK["stage1"]
    for name in ("stage2", "stage2small", "stage2narrow"):
        n2, _, noise2, _ = BENCHMARK[name]
        assert n1 > n2 and noise1 > 0 and noise2 == 0


def test_ablation_a_failed_run_is_reported_and_the_others_kept(data_dir, eval_dir, tmp_path):
    from model.ablation import ablate
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["stages"][1].update(steps=2, batch_size=4, log_every=1)
    raw["stages"][2].update(steps=1, batch_size=4, log_every=1)
    conf = tmp_path / "c.yaml"
    conf.write_text(yaml.safe_dump(raw))
    out = str(tmp_path / "abl")
    from pipeline.core.errors import RunFailed
    with pytest.raises(RunFailed, match=r"1 ablation run\(s\) failed.*multi seed 1.*no \.tar shards.*redoes only those"):
        ablate(str(conf), str(tmp_path / "missing"), eval_dir + "/shards", {"test": eval_dir + "/shards"},
               out, seeds=(1,), settings=("multi", "single"), eval_n=8)
    rows = [json.loads(x) for x in open(os.path.join(out, "results.jsonl"))]
    assert [(r["setting"], r["seed"]) for r in rows] == [("single", 1)]


def test_a_failed_stage_leaves_no_stage_folder_and_the_pickers_say_what_they_skip(
        data_dir, eval_dir, tmp_path, caplog):
    """A `lait train --stage 2` that fails before its first checkpoint leaves no stage2/ (it
    had), and a stage folder with no final checkpoint (a run stopped before it) is skipped by
    eval / finetune with a warning naming it, not silently."""
    import logging
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["stages"][1].update(steps=2, batch_size=4, log_every=1)
    cfg = from_dict(raw)
    s2 = os.path.join(cfg.out_dir, "stage2")
    with pytest.raises(ConfigError, match="run the earlier stage first"):
        train(cfg, 2, progress=False)                   # no stage-1 checkpoint yet
    assert not os.path.exists(s2)
    train(cfg, 1, progress=False)
    bad = str(tmp_path / "no-such-shards")
    with pytest.raises(ConfigError, match="no .tar shards"):
        train(from_dict({**raw, "stages": {**raw["stages"], 2: {**raw["stages"][2], "shards": bad}}}),
              2, progress=False)                        # bad shards: fails before any step
    assert not os.path.exists(s2)
    os.makedirs(s2)                                     # a run stopped before its final checkpoint
    with open(os.path.join(s2, "metrics.jsonl"), "w") as f:
        f.write(json.dumps({"stage": 2, "step": 1, "loss": 1.0}) + "\n")
    with caplog.at_level(logging.WARNING, logger="model.train"):
        assert latest_checkpoint(cfg).endswith(os.path.join("stage1", "final"))
    said = [r.getMessage() for r in caplog.records if "stage2" in r.getMessage()]
    assert len(said) == 1 and "no final checkpoint" in said[0] and "stage1" in said[0]
    # eval asked for more pairs than the shards hold scored the 12 there, saying nothing: an
    # R@K on 12 pairs is not comparable with one on the 1,000 asked for
    from model.retrieval import evaluate
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="model.retrieval"):
        res = evaluate(cfg, latest_checkpoint(cfg), eval_dir + "/shards", n=20)
    assert res["n"] == 12
    said = [r.getMessage() for r in caplog.records if r.name == "model.retrieval"]
    assert len(said) == 1 and "20" in said[0] and "12" in said[0] and "not comparable" in said[0]


@pytest.mark.parametrize("bad", ["--stage1", "--stage2", "--test", "--settings"])
def test_ablate_checks_its_inputs_before_any_run(data_dir, eval_dir, tmp_path, capsys, bad):
    """A missing shard folder started all nine runs, each failing, then a RuntimeError
    traceback; a bad --settings printed "config error:" unlike every other command."""
    from tools.cli import main as lait
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    conf = tmp_path / "c.yaml"
    conf.write_text(yaml.safe_dump(raw))
    out = tmp_path / "abl"
    args = {"--stage1": data_dir + "/shards", "--stage2": eval_dir + "/shards",
            "--test": eval_dir + "/shards", "--settings": "single,multi"}
    args[bad] = "single,bogus" if bad == "--settings" else str(tmp_path / "nope")
    argv = ["ablate", "--config", str(conf), "--out", str(out), "--seeds", "1", "--quiet"]
    for k, v in args.items():
        argv += [k, v]
    assert lait(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lait: ") and bad in err[0], err
    assert ("bogus" if bad == "--settings" else "nope") in err[0]
    assert not out.exists() or not any(p.is_dir() for p in out.iterdir())   # no run started
