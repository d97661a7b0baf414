"""The narrow clean stage-2 split of the synthetic benchmark (issue 21, fifth pass): it holds
only half of the colour x shape pairs, and adding it left every older split's bytes alone."""
import collections
import hashlib
import json
import os
import sys
import tarfile

import torch

from model.synth_retrieval import (BENCHMARK, COLOURS, NARROW, NARROW_SEED, SHAPES, narrow_pairs,
                                   seen, write_split)

# sha256 over (member name, member bytes) of write_split(out, 24, seed, noise, web,
# per_shard=12) for every split that existed before stage2narrow, plus its synth.json, as
# main's generator wrote them before this split was added. Pillow/numpy are pinned and
# libjpeg-turbo's encoder gives the same bytes on every SIMD path, so these hold on any CPU;
# a change here means the earlier passes' rows in docs/trainer.md no longer reproduce.
OLD_SPLITS = {
    "stage1": "db2c03ce3acba8449bcb0c0189b1ac5467ef8f33a9266b469f960b3893ee511c",
    "stage2": "909dfafc69d6e1fe4b819d5816431e9fbd99b236a7081f9555d1c0806e3c4aa8",
    "stage2small": "daff309f4a4019be562a1021a198e6fe68451dab3e7e88cfc1777d144fcae9c9",
    "val": "112accda4d0c0462856bec68b409d8d050f4ff7bfa33a5c4b67ea754800ab7e6",
    "test": "f46b24be78a7f7c34dc7dccad557332c4867f9c99756f7b0117fff2f27466410",
    "test2": "5e5881fa2f54fd77dd222017b6736fff5fcb1d89d748d779514cb876b5c95a87",
}


def _samples(d):
    out = []
    for f in sorted(os.listdir(os.path.join(d, "shards"))):
        with tarfile.open(os.path.join(d, "shards", f)) as t:
            out += [(m.name, t.extractfile(m).read()) for m in t.getmembers()]
    return out


def test_old_splits_keep_their_bytes(tmp_path):
    assert set(OLD_SPLITS) == set(BENCHMARK) - NARROW
    for name, want in OLD_SPLITS.items():
        n, seed, noise, web = BENCHMARK[name]
        d = str(tmp_path / name)
        write_split(d, 24, seed, noise, web, per_shard=12)
        h = hashlib.sha256()
        for member, data in _samples(d):
            h.update(member.encode())
            h.update(data)
        h.update(open(os.path.join(d, "synth.json"), "rb").read())
        assert h.hexdigest() == want, name


def test_narrow_pairs_is_a_balanced_seeded_half():
    a = narrow_pairs(NARROW_SEED)
    assert a == narrow_pairs(NARROW_SEED)
    assert a != narrow_pairs(NARROW_SEED + 1)
    assert sorted(a) == sorted(COLOURS)
    assert all(len(v) == 3 and len(set(v)) == 3 and set(v) <= set(SHAPES) for v in a.values())
    per_shape = collections.Counter(s for v in a.values() for s in v)
    assert per_shape == {s: 4 for s in SHAPES}
    # no two colours share all three shapes: the half is not a block of colours owning a block of shapes
    assert len({tuple(v) for v in a.values()}) == len(a)


def test_narrow_split_holds_only_allowed_pairs_and_every_word(tmp_path):
    n, seed, noise, web = BENCHMARK["stage2narrow"]
    assert noise == 0 and not web and n < BENCHMARK["stage1"][0]
    allowed = narrow_pairs(NARROW_SEED)
    d = str(tmp_path / "narrow")
    counts = write_split(d, 120, seed, noise, web, allowed=allowed)
    assert counts["clean"] == 120
    objs = [json.loads(b)["objects"] for m, b in _samples(d) if m.endswith(".json")]
    assert len(objs) == 120 and all(seen(o, allowed) for o in objs)
    pairs = {(c, s) for o in objs for c, s, _ in o}
    assert {c for c, _ in pairs} == set(COLOURS) and {s for _, s in pairs} == set(SHAPES)
    assert len(pairs) <= 24
    assert sum(len(o) == 2 for o in objs) > 0       # two-object scenes are kept too
    assert json.load(open(os.path.join(d, "synth.json")))["allowed"] == allowed
    # the same split without the restriction has unseen pairs (the test sets' case)
    full = str(tmp_path / "full")
    write_split(full, 120, seed, noise, web)
    assert not all(seen(json.loads(b)["objects"], allowed) for m, b in _samples(full) if m.endswith(".json"))


def test_seen_unseen_recall_splits_queries_not_candidates():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    from bench.seen_unseen import split_recall
    caps = ["a", "b", "c", "d"]
    # image 0 and 1 rank their own caption first; 2 and 3 rank caption 0 first
    S = torch.tensor([[9., 0, 0, 0], [0, 9, 0, 0], [9, 0, 1, 0], [9, 0, 0, 1]])
    r = split_recall(S, caps, [True, False, True, False], ks=(1, 2))
    assert r["i2t_R@1"] == 0.5 and r["i2t_R@1_seen"] == 0.5 and r["i2t_R@1_unseen"] == 0.5
    assert r["i2t_R@2_seen"] == 1.0 and r["n_seen"] == 2 and r["n_unseen"] == 2
    # captions 1, 2, 3 find their images first (column max), caption 0 finds image 0 among ties at 9
    r = split_recall(S, caps, [False, True, True, True], ks=(1,))
    assert r["t2i_R@1_seen"] == 1.0
