"""The demo's shards in the readers users reach for: Hugging Face ``datasets`` (webdataset
builder, normal and streaming, offline), ``webdataset``, ``pyarrow.dataset`` and pandas on the
parquet-only directory; and the sample JSON's schema, the same Arrow type for every sample."""
import base64
import glob
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import webdataset as wds

from pipeline.core.records import decode_embedding, label_pairs
from pipeline.steps.write import SCHEMA


def tars(out):
    files = sorted(glob.glob(os.path.join(out, "shards", "*.tar")))
    assert files
    return files


def kept(doc):
    return {s["name"]: s for s in doc["steps"]}["write"]["kept"]


def test_every_sample_json_has_one_arrow_type(demo_run):
    """Readers infer the JSON's type from the first samples (datasets reads 5): any sample must
    give the same one, so no field may vary in type or presence between samples."""
    out, doc = demo_run
    types = set()
    for s in wds.WebDataset(tars(out), shardshuffle=False):
        meta = json.loads(s["json"])
        types.add(pa.Table.from_pylist([meta]).schema)
    assert len(types) == 1
    (schema,) = types
    assert schema.field("image_meta").type.field("labels").type == pa.list_(
        pa.struct([("name", pa.string()), ("p", pa.float64())]))
    assert schema.field("text_meta").type == pa.string()  # free-form: a JSON string
    assert set(schema.names) == set(SCHEMA.names)  # the tar's JSON and the parquet: one field list


def test_hugging_face_datasets_reads_the_shards_offline(demo_run, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    out, doc = demo_run
    files = {"train": tars(out)}
    ds = datasets.load_dataset("webdataset", data_files=files, split="train",
                               cache_dir=str(tmp_path / "hf"))
    assert ds.num_rows == kept(doc)
    row = ds[0]
    assert row["jpg"].size[0] > 0 and row["txt"] == row["json"]["caption"]
    assert {"name", "p"} == set(row["json"]["image_meta"]["labels"][0])
    stream = datasets.load_dataset("webdataset", data_files=files, split="train", streaming=True)
    keys = [r["__key__"] for r in stream]
    assert sorted(keys) == sorted(ds["__key__"]) and len(keys) == kept(doc)


def test_webdataset_reads_the_shards(demo_run):
    out, doc = demo_run
    pipe = wds.WebDataset(tars(out), shardshuffle=False).decode("pil").to_tuple("jpg", "txt", "json")
    samples = list(pipe)
    assert len(samples) == kept(doc)
    for image, text, meta in samples:
        assert min(image.size) > 0 and text == meta["caption"]
        assert label_pairs(meta["image_meta"]) and json.loads(meta["text_meta"]) is not None


def test_parquet_directory_reads_whole(demo_run):
    """OUT/parquet/ holds parquet only: directory readers take it as it is."""
    import pandas as pd

    out, doc = demo_run
    d = os.path.join(out, "parquet")
    assert all(n.endswith(".parquet") for n in os.listdir(d))
    table = pads.dataset(d, format="parquet").to_table()
    assert table.num_rows == kept(doc) and table.schema == SCHEMA
    df = pd.read_parquet(d)
    assert len(df) == kept(doc) and set(df.columns) == set(SCHEMA.names)


def test_embedding_as_documented(demo_run):
    """README "Output": image_meta.embedding is base64 of 1280 little-endian float16."""
    out, _ = demo_run
    row = pads.dataset(os.path.join(out, "parquet"), format="parquet").head(1).to_pylist()[0]
    text = json.loads(row["image_meta"])["embedding"]
    vec = np.frombuffer(base64.b64decode(text), "<f2")  # the README's decoder
    assert vec.shape == (1280,) and np.isfinite(vec).all()
    assert np.array_equal(vec.astype(np.float32), decode_embedding(text))


def test_shard_stats_add_up_to_the_funnel(demo_run):
    """Every tar has its NNNNN_stats.json; their samples add up to what the write step kept."""
    out, doc = demo_run
    stats = [json.load(open(t.replace(".tar", "_stats.json"))) for t in tars(out)]
    assert sum(s["samples"] for s in stats) == kept(doc)
    for t, s in zip(tars(out), stats):
        n = sum(1 for _ in wds.WebDataset(t, shardshuffle=False))
        assert s["samples"] == n and sum(s["text_source"].values()) == n
