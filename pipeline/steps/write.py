"""The shard writer: webdataset tar + parquet per shard, written whole or not at all.

Shard membership comes from the sample key (a hash of the stored image), and samples are
sorted by key inside a shard, so the bytes do not depend on the engine, the number of workers
or the order in which records arrive.  Each file appears only once complete (a local file is
renamed from a temporary name, an object store's upload is completed or aborted: see
pipeline/core/storage.py), parquet first and tar last, so a shard's tar is its commit: a
killed run never leaves a half shard that looks whole.  A write that fails (disk full, a store
refusing the upload) removes the shard's files and fails the run (``WriteFailed``): a lost
shard is never a counted drop, and the job, left unfinished, is redone by the next run.
"""
from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import tarfile

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core import storage
from pipeline.core.errors import WriteFailed
from pipeline.core.records import Pair
from pipeline.core.stage import GroupStage, Keep

SCHEMA = pa.schema([
    ("key", pa.string()),
    ("caption", pa.string()),
    ("raw_text", pa.string()),
    ("text_source", pa.string()),
    ("image_url", pa.string()),
    ("page_url", pa.string()),
    ("page_title", pa.string()),
    ("page_lang", pa.string()),
    ("width", pa.int32()),
    ("height", pa.int32()),
    ("original_width", pa.int32()),
    ("original_height", pa.int32()),
    ("original_format", pa.string()),
    ("original_bytes", pa.int64()),
    ("sha256", pa.string()),
    ("nsfw", pa.float32()),
    ("natural", pa.float32()),
    ("score", pa.float32()),
    ("text_meta", pa.string()),  # JSON
    ("image_meta", pa.string()),  # JSON
])
JSON_COLUMNS = ("text_meta", "image_meta")


# Parquet files get a directory of their own (OUT/parquet/), tars and per-shard stats stay in
# OUT/shards/: directory readers (pandas.read_parquet, pyarrow.dataset, Spark, `datasets`'
# parquet builder) take a directory whole and fail on a tar inside it, and a glob is read
# differently by each of them (pandas does not expand one for local paths).
PARQUET_DIR = "parquet"


def parquet_files(out_dir: str) -> list[str]:
    """A run's committed parquet files, sorted, local or on an object store: the
    ``OUT/parquet/NNNNN.parquet`` whose shard's tar is in ``OUT/shards`` (the tar is written
    last, docs/storage.md), or ``OUT/shards/*.parquet`` for a run written before they moved
    (README "Changelog")."""
    shards = storage.join(out_dir, "shards")
    names = storage.listdir(shards)
    tars = {n[:-len(".tar")] for n in names if n.endswith(".tar")}
    # A folder with no tar at all is not a run's output (a parquet-only copy, a hand-made
    # table): its parquets are all there is to read.
    committed = (lambda stem: stem in tars) if tars else (lambda stem: True)
    for d in (storage.join(out_dir, PARQUET_DIR), shards):
        files = [storage.join(d, n) for n in storage.listdir(d)
                 if n.endswith(".parquet") and committed(n[:-len(".parquet")])]
        if files:
            return files
    return []


def missing_shards(out_dir: str, num_shards: int, written: int) -> list[str]:
    """The shard files of a finished corpus job that are gone, [] when the shards hold all
    ``written`` samples: a rerun of a finished run must not report a corpus whole that lost a
    shard (deleted by hand, or by a sync).  A shard is whole with its tar, parquet and
    ``_stats.json``; a shard gone entirely shows only in the samples count, and then the
    shard numbers with no files are named (a shard that got no sample has none either, so
    they are candidates, not certainly lost)."""
    shards = storage.join(out_dir, "shards")
    names = set(storage.listdir(shards))
    parquets = set(storage.listdir(storage.join(out_dir, PARQUET_DIR)))
    held, missing, absent = 0, [], []
    for stem in (f"{i:05d}" for i in range(num_shards)):
        have = {stem + ".tar": stem + ".tar" in names, stem + ".parquet": stem + ".parquet" in parquets,
                stem + "_stats.json": stem + "_stats.json" in names}
        if all(have.values()):
            doc = json.loads(storage.read_bytes(storage.join(shards, stem + "_stats.json")))
            held += int(doc.get("samples", 0))
        elif any(have.values()):
            missing += [name for name, there in have.items() if not there]
        else:
            absent.append(stem)
    if missing or held == written:
        return missing
    return [f"{written - held} of {written} samples (shards with no files: {', '.join(absent)})"]


def sample_json(meta: dict) -> bytes:
    """A sample's ``<key>.json``.  ``text_meta`` is free-form (its keys differ by text source,
    its lists may be empty) so it is a JSON string, as in the parquet: every sample's JSON then
    has the same Arrow type, which readers that infer it from the first samples (Hugging Face
    ``datasets``' webdataset builder reads 5) need.  The fields: README "Output"."""
    def text(v) -> str:
        return json.dumps(v, sort_keys=True, ensure_ascii=False)

    # The same holds inside image_meta: the images merged into a sample (present on few
    # samples) and the compliance facts (lists that are often empty, so typed as null) are
    # JSON text too; every other image_meta field has one type on every sample.
    image_meta = dict(meta["image_meta"])
    image_meta["near_duplicates"] = text(image_meta.get("near_duplicates", []))
    if "compliance" in image_meta:
        image_meta["compliance"] = text(image_meta["compliance"])
    meta = {**meta, "text_meta": text(meta["text_meta"]), "image_meta": image_meta}
    return text(meta).encode("utf-8")


def shard_stats(shard: str, rows: list[dict]) -> dict:
    """``OUT/shards/NNNNN_stats.json``: what the shard holds, as img2dataset users expect one
    beside each shard.  Counts only (no timings or paths), so the bytes are the same on every
    engine.  Drops are not per shard: most dropped records never had a key (pages, texts,
    images that were never stored); stats.json counts them for the whole run."""
    def count(values) -> dict:
        c: dict = {}
        for v in values:
            c[v] = c.get(v, 0) + 1
        return dict(sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0]))))

    scores = [r["score"] for r in rows if r.get("score") is not None]
    return {
        "shard": shard,
        "samples": len(rows),
        "keys": [rows[0]["key"], rows[-1]["key"]] if rows else [],
        # why each caption won: its text source; and the text step's edits behind them
        "text_source": count(r["text_source"] for r in rows),
        "text_edits": count(e for r in rows for e in (r["text_meta"] or {}).get("text_edits", [])),
        "page_lang": count(r["page_lang"] for r in rows),
        "original_format": count(r["original_format"] for r in rows),
        "score": ({"min": min(scores), "mean": round(sum(scores) / len(scores), 6),
                   "max": max(scores)} if scores else None),
    }


def shard_of(key: str, num_shards: int) -> int:
    return int(key[:12], 16) % num_shards


def _tar_add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0  # fixed metadata: same bytes on every run
    info.mode = 0o644
    info.uname = info.gname = ""
    tar.addfile(info, io.BytesIO(data))


class ShardWriter(GroupStage):
    """Writes ``OUT/shards/NNNNN.tar``, ``OUT/shards/NNNNN_stats.json`` and
    ``OUT/parquet/NNNNN.parquet`` for every shard that has samples."""

    name = "write"

    def __init__(self, out_dir: str, num_shards: int = 4, store_embedding: bool = True):
        self.out_dir = out_dir
        self.num_shards = num_shards
        # labels.store_embedding: the embedding travels to the scorer either way and is
        # left out here, the only place it would be stored
        self.store_embedding = store_embedding

    @property
    def shard_dir(self) -> str:
        return storage.join(self.out_dir, "shards")

    def key(self, pair: Pair) -> str:
        return f"{shard_of(pair.key, self.num_shards):05d}"

    def reduce(self, shard: str, pairs: list[Pair]):
        pairs = sorted(pairs, key=lambda p: p.key)
        parquet_dir = storage.join(self.out_dir, PARQUET_DIR)
        base = storage.join(self.shard_dir, shard)
        parquet = storage.join(parquet_dir, shard + ".parquet")
        rows = [p.metadata() for p in pairs]
        if not self.store_embedding:
            for row in rows:
                row["image_meta"].pop("embedding", None)  # metadata() made this dict

        def write_tar(f):
            with tarfile.open(fileobj=f, mode="w", format=tarfile.USTAR_FORMAT) as tar:
                for p, meta in zip(pairs, rows):
                    _tar_add(tar, f"{p.key}.jpg", p.image.data)
                    _tar_add(tar, f"{p.key}.txt", p.candidate.text.encode("utf-8"))
                    _tar_add(tar, f"{p.key}.json", sample_json(meta))

        def write_parquet(f):
            cols = {name: [r.get(name) for r in rows] for name in SCHEMA.names}
            for name in JSON_COLUMNS:
                cols[name] = [json.dumps(v, sort_keys=True, ensure_ascii=False) for v in cols[name]]
            pq.write_table(pa.table(cols, schema=SCHEMA), f, compression="zstd")

        def write_stats(f):
            doc = {**shard_stats(shard, rows),
                   "image_bytes": sum(len(p.image.data) for p in pairs)}
            f.write(json.dumps(doc, indent=1, ensure_ascii=False).encode("utf-8") + b"\n")

        # Parquet and stats first, tar last: a tar's presence means its shard is complete.
        # A run killed while writing leaves "<shard>.<ext>.tmp-<pid>" behind (local files);
        # this shard's writer is the only one that writes those names, so it clears them.
        files = ((parquet, write_parquet), (base + "_stats.json", write_stats),
                 (base + ".tar", write_tar))
        try:
            for d in (self.shard_dir, parquet_dir):
                storage.makedirs(d)
            if not storage.is_url(base):
                for path, _ in files:
                    for stale in glob.glob(glob.escape(path) + ".tmp-*"):
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(stale)
            for path, write in files:
                storage.write_whole(path, write)
        except Exception as exc:  # noqa: BLE001 (OSError locally, each store's own types remotely)
            for path, _ in reversed(files):  # nothing of the shard stays visible
                with contextlib.suppress(Exception):
                    storage.remove(path)
            raise WriteFailed(f"could not write shard {base}.tar/.parquet: "
                              f"{type(exc).__name__}: {exc}") from exc
        return [Keep(())] * len(pairs)
