"""The demo plan end to end: the same bytes and the same funnel on Beam and on Spark."""
import json
import os
import subprocess
import sys

import pytest

from pipeline.build import build
from tests.conftest import REPO

CONFIG = str(REPO / "configs" / "demo.yaml")


def shard_bytes(out):
    """Every file of OUT/shards/ (tars, per-shard stats) and OUT/parquet/, by relative path."""
    return {f"{sub}/{n}": open(os.path.join(out, sub, n), "rb").read()
            for sub in ("shards", "parquet") for n in sorted(os.listdir(os.path.join(out, sub)))}


@pytest.fixture(scope="module")
def beam_run(tmp_path_factory, demo_overrides):
    out = str(tmp_path_factory.mktemp("beam"))
    return out, build(CONFIG, out, engine="beam", overrides=demo_overrides)


def test_beam_and_spark_give_identical_shards_and_funnels(beam_run, tmp_path, demo_overrides, spark):
    beam_out, beam_doc = beam_run
    spark_out = str(tmp_path / "spark")
    spark_doc = build(CONFIG, spark_out, engine="spark", overrides=demo_overrides, spark=spark)
    beam_shards = shard_bytes(beam_out)
    assert any(n.endswith(".tar") for n in beam_shards)
    assert beam_shards == shard_bytes(spark_out)
    assert beam_doc["steps"] == spark_doc["steps"]
    with open(os.path.join(beam_out, "rejects.parquet"), "rb") as a, \
            open(os.path.join(spark_out, "rejects.parquet"), "rb") as b:
        assert a.read() == b.read()


def test_num_shards_chosen_from_the_corpus_gives_the_same_bytes(beam_run, tmp_path, demo_overrides,
                                                                 spark, monkeypatch):
    """output.num_shards unset: the number comes from the images stored (a count, so the same
    on every engine).  With SAMPLES_PER_SHARD scaled down to give the beam run's 4 shards, Spark
    writes the beam run's bytes."""
    import math

    from pipeline import config

    beam_out, beam_doc = beam_run
    stored = {s["name"]: s for s in beam_doc["steps"]}["image_store"]["kept"]
    monkeypatch.setattr(config, "SAMPLES_PER_SHARD", math.ceil(stored / 4))
    assert config.auto_num_shards(stored) == 4 and beam_doc["num_shards"] == 4
    out = str(tmp_path / "auto")
    doc = build(CONFIG, out, engine="spark", overrides={**demo_overrides, "output.num_shards": None},
                spark=spark)
    assert doc["config"]["output"]["num_shards"] is None and doc["num_shards"] == 4
    assert shard_bytes(out) == shard_bytes(beam_out)
    monkeypatch.setattr(config, "SAMPLES_PER_SHARD", config.SAMPLES_PER_SHARD * 1000)
    one = build(CONFIG, str(tmp_path / "one"), engine="local",
                overrides={**demo_overrides, "output.num_shards": None})
    assert one["num_shards"] == 1 and os.listdir(tmp_path / "one" / "parquet") == ["00000.parquet"]


def test_every_step_balances(beam_run):
    _, doc = beam_run
    names = [s["name"] for s in doc["steps"]]
    assert names[:3] == ["read", "language", "extract"] and names[-1] == "write"
    for s in doc["steps"]:
        assert s["in"] == s["kept"] + sum(s["dropped"].values()), s["name"]
    # each step's input is the previous step's output, except across the fetch step (which
    # counts candidates in and puts out images) and the pairs step (images in, pairs out)
    by = {s["name"]: s for s in doc["steps"]}
    assert by["language"]["in"] == by["read"]["out"]
    assert by["fetch"]["in"] == by["text"]["out"]
    assert by["image_size"]["in"] == by["fetch"]["out"]
    # about one sample per good picture of the sample web (53 of them), now that the copies
    # of a picture are merged by the dedup step (49 here when this was written)
    assert by["write"]["kept"] > 40
    assert by["dedup"]["in"] == by["dedup"]["kept"] == by["text_share"]["in"]  # no pair lost


def test_rerun_skips_finished_work_and_keeps_bytes(beam_run, demo_overrides):
    out, doc = beam_run
    before = shard_bytes(out)
    again = build(CONFIG, out, engine="local", overrides=demo_overrides)
    assert all(r["waves_run"] == 0 and r["skipped"] == r["units"] for r in again["resume"].values())
    assert again["steps"] == doc["steps"] and shard_bytes(out) == before


def test_resume_refuses_another_config(beam_run, demo_overrides):
    from pipeline.config import ConfigError

    out, _ = beam_run
    with pytest.raises(ConfigError, match="another configuration"):
        build(CONFIG, out, engine="local", overrides={**demo_overrides, "output.num_shards": 7})


def test_cli_stats_and_bad_config(beam_run, tmp_path):
    out, doc = beam_run
    lait = [sys.executable, "-m", "tools.cli"]
    res = subprocess.run(lait + ["stats", out], capture_output=True, text=True, cwd=REPO, check=True)
    assert "write" in res.stdout and str(doc["steps"][0]["in"]) in res.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("input: {warc: [x.warc.gz]}\nimage: {min_widht: 3}\n")
    res = subprocess.run(lait + ["build", "--config", str(bad), "--out", str(tmp_path / "o")],
                         capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 2 and "unknown key(s) ['min_widht']" in res.stderr


def samples(out):
    import tarfile

    rows = []
    d = os.path.join(out, "shards")
    for name in sorted(os.listdir(d)):
        if name.endswith(".tar"):
            with tarfile.open(os.path.join(d, name)) as tf:
                rows += [json.load(tf.extractfile(m)) for m in tf.getmembers() if m.name.endswith(".json")]
    for r in rows:  # JSON text in <key>.json (one Arrow type on every sample: README "Output")
        meta = r["image_meta"]
        for k in ("near_duplicates", "compliance"):
            if k in meta:
                meta[k] = json.loads(meta[k])
    return rows


def test_no_two_kept_samples_are_near_duplicates(beam_run, sample_web):
    out, doc = beam_run
    rows = samples(out)
    d = doc["config"]["dedup"]["max_distance"]
    hashes = {r["image_url"]: int(r["image_meta"]["phash"], 16) for r in rows}
    urls = sorted(hashes)
    closest = min(bin(hashes[a] ^ hashes[b]).count("1") for i, a in enumerate(urls) for b in urls[i + 1:])
    assert closest > d
    merged = {r["image_url"].rsplit("/", 1)[1]: sorted(m["image_url"].rsplit("/", 1)[1]
                                                       for m in r["image_meta"]["near_duplicates"])
              for r in rows if r["image_meta"].get("near_duplicates")}
    print("\nmerged near-duplicates (kept <- merged):")
    for kept, others in sorted(merged.items()):
        print(f"  {kept} <- {', '.join(others)}")
    # the example: the same espresso photo at two JPEG qualities, once in the corpus
    assert any(set(others) | {kept} == {"coffee.jpg", "coffee_q65.jpg"} for kept, others in merged.items())
    # every merge joins files of one picture (the sample web's ground truth groups them)
    from tools.sampleweb.evaluate import _url_info, read_truth

    truth = sample_web / "truth.jsonl"
    group = {u.rsplit("/", 1)[1]: g for u, (g, _) in _url_info(read_truth(truth), truth).items()}
    for kept, others in merged.items():
        assert {group[o] for o in others} == {group[kept]}, (kept, others)
    dedup = next(s for s in doc["steps"] if s["name"] == "dedup")
    assert dedup["units"]["image"]["dropped"]["dedup_near_duplicate"] == sum(map(len, merged.values()))
    assert not any(s["name"].startswith("dedup_band") for s in doc["steps"])


def test_samples_record_compliance_facts(beam_run):
    out, _ = beam_run
    for r in samples(out):
        facts = r["image_meta"]["compliance"]
        assert facts["robots_txt"] == "allowed" and isinstance(facts["opt_out"], list)
        assert "blocklists" not in facts  # no safety list was given


def test_not_storing_the_embedding_leaves_scores_and_corpus_unchanged(demo_run, demo_overrides,
                                                                     tmp_path):
    """labels.store_embedding: false only keeps the embedding out of the shards: the scorer
    still reads it in flight (its projection and label-space features).  It used to take it
    from the scorer too, and the demo's corpus fell from 49 samples to 4 (score_irrelevant)."""
    out, doc = demo_run
    lean_out = str(tmp_path / "lean")
    lean = build(CONFIG, lean_out, engine="local",
                 overrides={**demo_overrides, "labels.store_embedding": False})
    assert lean["steps"] == doc["steps"]
    full, slim = samples(out), samples(lean_out)
    assert full and all("embedding" in r["image_meta"] for r in full)
    assert not any("embedding" in r["image_meta"] for r in slim)
    strip = lambda r: {**r, "image_meta": {k: v for k, v in r["image_meta"].items()  # noqa: E731
                                           if k != "embedding"}}
    assert [strip(r) for r in full] == slim
