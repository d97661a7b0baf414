"""Shards: webdataset tar + parquet, deterministic, complete or absent."""
import json
import os
import tarfile

import pyarrow.parquet as pq
import pytest
import webdataset as wds

from pipeline.steps.write import ShardWriter, parquet_files, shard_of
from tests.scoring.test_best_text import pair


def test_shards_are_sorted_deterministic_and_readable(tmp_path):
    pairs = [pair(f"{i:02x}" * 32, f"caption number {i}", score=0.5) for i in range(40)]
    for p in pairs:
        p.image.data = b"\xff\xd8fake-jpeg-" + p.key.encode()
    w = ShardWriter(str(tmp_path / "a"), num_shards=3)
    groups = {}
    for p in pairs:
        groups.setdefault(w.key(p), []).append(p)
    for shard, ps in groups.items():
        w.events(shard, ps)
        ShardWriter(str(tmp_path / "b"), num_shards=3).events(shard, ps[::-1])  # other order
    for sub in ("shards", "parquet"):
        names = sorted(os.listdir(tmp_path / "a" / sub))
        assert names == sorted(os.listdir(tmp_path / "b" / sub))
        assert not [n for n in names if ".tmp" in n]
        for n in names:
            assert (tmp_path / "a" / sub / n).read_bytes() == (tmp_path / "b" / sub / n).read_bytes()
    # OUT/parquet/ holds parquet only (directory readers take it whole), OUT/shards/ the tars
    assert all(n.endswith(".parquet") for n in os.listdir(tmp_path / "a" / "parquet"))
    names = sorted(n for n in os.listdir(tmp_path / "a" / "shards") if n.endswith(".tar"))
    assert parquet_files(str(tmp_path / "a")) == [
        str(tmp_path / "a" / "parquet" / n.replace(".tar", ".parquet")) for n in names]
    tar = str(tmp_path / "a/shards" / names[-1])
    with tarfile.open(tar) as t:
        members = t.getnames()
    assert members == sorted(members, key=lambda m: m.split(".")[0])
    samples = list(wds.WebDataset(tar, shardshuffle=False))
    assert samples and all({"jpg", "txt", "json"} <= set(s) for s in samples)
    meta = json.loads(samples[0]["json"])
    assert meta["caption"] == samples[0]["txt"].decode() and meta["score"] == 0.5
    table = pq.read_table(str(tmp_path / "a/parquet" / names[-1].replace(".tar", ".parquet")))
    assert table.column("key").to_pylist() == [json.loads(s["json"])["key"] for s in samples]
    assert all(shard_of(k, 3) == int(names[-1][:5]) for k in table.column("key").to_pylist())


def test_per_shard_stats_beside_each_shard(tmp_path):
    """OUT/shards/NNNNN_stats.json: the samples of that shard and their counts, as img2dataset
    writes beside its shards."""
    pairs = [pair(f"{i:02x}" * 32, f"caption number {i}", score=0.25 + i / 100) for i in range(30)]
    for i, p in enumerate(pairs):
        p.image.data = b"\xff\xd8fake-jpeg-" + p.key.encode()
        p.candidate.text_source = ("alt", "caption", "surrounding")[i % 3]
    w = ShardWriter(str(tmp_path), num_shards=2)
    groups = {}
    for p in pairs:
        groups.setdefault(w.key(p), []).append(p)
    for shard, ps in groups.items():
        w.events(shard, ps)
    total = 0
    for shard, ps in groups.items():
        doc = json.loads((tmp_path / "shards" / f"{shard}_stats.json").read_text())
        table = pq.read_table(str(tmp_path / "parquet" / f"{shard}.parquet"))
        assert doc["shard"] == shard and doc["samples"] == table.num_rows == len(ps)
        sources = table.column("text_source").to_pylist()
        assert doc["text_source"] == {s: sources.count(s) for s in set(sources)}
        assert doc["score"]["min"] == pytest.approx(min(table.column("score").to_pylist()), rel=1e-6)
        assert doc["image_bytes"] == sum(len(p.image.data) for p in ps)
        assert doc["keys"] == [min(p.key for p in ps), max(p.key for p in ps)]
        total += doc["samples"]
    assert total == len(pairs)
