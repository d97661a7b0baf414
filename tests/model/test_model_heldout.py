"""Fresh held-out sets of the synthetic benchmark (issue 21, seventh pass): written in blocks
with new seeds, each block scored exactly as `lait ablate` scores a test set, and the paired
per-query comparison of two settings."""
import json
import os
import sys
import tarfile

import numpy as np
import pytest

import model_synth as synth
from model.checkpoints import save_checkpoint
from model.config import from_dict
from model.pretrain import ImageBERT
from model.retrieval import evaluate
from model.synth_retrieval import BENCHMARK, COLOURS, SHAPES, parse_heldout, write_heldout, write_split
from model_synth import tiny_raw

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from bench.heldout_blocks import paired_bootstrap, score, summary  # noqa: E402


def _members(path):
    with tarfile.open(path) as t:
        return [(m.name, t.extractfile(m).read()) for m in t.getmembers()]


def test_parse_heldout_rejects_what_would_not_be_a_fresh_set_of_blocks():
    assert parse_heldout("test3:1200:808") == ("test3", 1200, 808)
    assert parse_heldout("t:40:9", block=20) == ("t", 40, 9)
    for bad, why in [("test3:1200", "NAME:N:SEED"), ("test3:12x:808", "NAME:N:SEED"),
                     ("test:1200:808", "benchmark split"), ("test3:1100:808", "whole number"),
                     ("test3:0:808", "whole number"), ("test3:1200:404", "'test'")]:
        with pytest.raises(ValueError, match=why):
            parse_heldout(bad)
    with pytest.raises(ValueError, match="seed is given twice"):
        write_heldout("/nonexistent", ["a:200:808", "b:200:808"], features=False)


def test_heldout_set_is_the_test_sets_kind_in_blocks(tmp_path):
    out = str(tmp_path)
    done = write_heldout(out, ["fresh:400:808"], features=False)
    shards = sorted(os.listdir(done["fresh"]))
    assert shards == ["00000.tar", "00001.tar"]
    # the test sets' generator call (clean, stage-2 wording, no pair restriction), new seed
    _, seed, noise, web = BENCHMARK["test"]
    assert (noise, web) == (0.0, False)
    write_split(str(tmp_path / "same"), 400, 808, noise, web, per_shard=200)
    objs = []
    for f in shards:
        got = _members(os.path.join(done["fresh"], f))
        assert got == _members(str(tmp_path / "same" / "shards" / f))
        assert sum(m.endswith(".jpg") for m, _ in got) == 200
        objs += [json.loads(b)["objects"] for m, b in got if m.endswith(".json")]
    # full coverage: every colour x shape pair occurs (the narrow set's unseen pairs included)
    assert {(c, s) for o in objs for c, s, _ in o} == {(c, s) for c in COLOURS for s in SHAPES}
    meta = json.load(open(os.path.join(out, "fresh", "synth.json")))
    assert meta["seed"] == 808 and meta["clean"] == 400 and "allowed" not in meta
    # a rerun keeps the finished set
    before = os.path.getmtime(os.path.join(done["fresh"], "00000.tar"))
    write_heldout(out, ["fresh:400:808"], features=False)
    assert os.path.getmtime(os.path.join(done["fresh"], "00000.tar")) == before


def test_blocks_are_scored_as_lait_ablate_scores_a_test_set(tmp_path):
    # two blocks of 12 (one sample per colour x shape combo each): every block's R@K must be
    # what `evaluate` (lait ablate's scoring, draw seed 0) gives on that block as a test set
    d = str(tmp_path / "blocks")
    synth.write_shards(d, 24, per_shard=12, distinct=True, seed=3)
    cfg = from_dict(tiny_raw(str(tmp_path), d + "/shards"))
    ck = str(tmp_path / "ck")
    import torch
    torch.manual_seed(0)
    save_checkpoint(ck, ImageBERT(cfg))
    out = str(tmp_path / "hits.jsonl")
    score(cfg, [ck], {"t": d + "/shards"}, out, block=12, log=lambda *_: None)
    recs = [json.loads(x) for x in open(out)]
    assert [(r["set"], r["block"], r["n"]) for r in recs] == [("t", 0, 12), ("t", 1, 12)]
    for r in recs:
        ev = evaluate(cfg, ck, r["shard"], 12, device="cpu", seed=0)
        for k in (1, 5, 10):
            assert np.mean(r[f"i2t_{k}"]) == pytest.approx(ev[f"i2t_R@{k}"])
            assert np.mean(r[f"t2i_{k}"]) == pytest.approx(ev[f"t2i_R@{k}"])
        assert r["chance_R@1"] == pytest.approx(ev["chance_R@1"])
        assert r["seen"] == [-1] * 12        # these shards carry no benchmark objects
    # resumed: nothing is scored twice
    score(cfg, [ck], {"t": d + "/shards"}, out, block=12, log=lambda *_: None)
    assert len(open(out).readlines()) == 2


def _rec(ck, block, i2t, t2i, seen):
    n = len(i2t)
    return {"checkpoint": ck, "set": "s", "block": block, "n": n, "chance_R@1": 0.01, "chance_R@5": 0.05,
            "chance_R@10": 0.1, "seen": seen, "i2t_1": i2t, "t2i_1": t2i, "i2t_5": [1] * n, "t2i_5": [1] * n,
            "i2t_10": [1] * n, "t2i_10": [1] * n}


def test_summary_pools_blocks_and_pairs_settings_query_by_query():
    seen = [1, 0, 1, 0]
    recs = [_rec("a1", 0, [1, 1, 0, 0], [1, 0, 0, 0], seen), _rec("a1", 1, [1, 0, 0, 0], [1, 0, 0, 0], seen),
            _rec("a2", 0, [1, 1, 1, 0], [0, 0, 0, 0], seen), _rec("a2", 1, [0, 0, 0, 0], [1, 1, 0, 0], seen),
            _rec("b1", 0, [1, 0, 0, 0], [1, 0, 0, 0], seen), _rec("b1", 1, [0, 0, 0, 0], [1, 0, 0, 0], seen),
            _rec("b2", 0, [1, 0, 0, 0], [1, 0, 0, 0], seen), _rec("b2", 1, [0, 0, 0, 0], [1, 0, 0, 0], seen)]
    s = summary(recs, {"A": ["a1", "a2"], "B": ["b1", "b2"]}, compare=("A", "B"))
    assert s["queries"] == 8 and s["blocks"] == 2
    a = s["settings"]["A"]["i2t"]
    assert a["R@1_seeds"] == [3 / 8, 3 / 8] and a["R@1"] == 3 / 8 and a["spread"] == 1.0
    assert a["worst_over_chance"] == pytest.approx(37.5)
    assert a["n_seen"] == 4 and a["R@1_seen"] == 0.5 and a["R@1_unseen"] == 0.25
    c = s["compare"]["i2t"]
    assert c["diff"] == pytest.approx(3 / 8 - 1 / 8) and c["per_seed"] == pytest.approx([0.25, 0.25])
    assert c["lo"] <= c["diff"] <= c["hi"] and c["n_queries"] == 8
    assert s["compare"]["t2i"]["diff"] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="not scored"):
        summary(recs[:-1], {"A": ["a1", "a2"], "B": ["b1", "b2"]}, compare=("A", "B"))


def test_paired_bootstrap_is_seeded_and_resolves_only_a_real_gap():
    rng = np.random.default_rng(1)
    b = (rng.random((3, 2000)) < 0.12).astype(np.int8)
    same = paired_bootstrap(b, b, reps=2000)
    assert same["diff"] == 0 and same["lo"] == 0 and same["hi"] == 0
    a = b.copy()
    a[:, :200] = 1                                    # A gets up to 200 more hits per seed
    r1, r2 = paired_bootstrap(a, b, reps=2000, seed=5), paired_bootstrap(a, b, reps=2000, seed=5)
    assert r1 == r2
    assert 0 < r1["lo"] <= r1["diff"] <= r1["hi"] and r1["share_boot_ge0"] == 1.0
    noise = (rng.random((3, 2000)) < 0.12).astype(np.int8)   # another draw of the same rate
    r = paired_bootstrap(noise, b, reps=2000)
    assert r["lo"] < 0 < r["hi"] or abs(r["diff"]) < 0.02
