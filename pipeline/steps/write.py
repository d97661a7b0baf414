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
    """Writes ``OUT/shards/NNNNN.tar`` and ``NNNNN.parquet`` for every shard that has samples."""

    name = "write"

    def __init__(self, out_dir: str, num_shards: int = 4):
        self.out_dir = out_dir
        self.num_shards = num_shards

    @property
    def shard_dir(self) -> str:
        return storage.join(self.out_dir, "shards")

    def key(self, pair: Pair) -> str:
        return f"{shard_of(pair.key, self.num_shards):05d}"

    def reduce(self, shard: str, pairs: list[Pair]):
        pairs = sorted(pairs, key=lambda p: p.key)
        base = storage.join(self.shard_dir, shard)
        rows = [p.metadata() for p in pairs]

        def write_tar(f):
            with tarfile.open(fileobj=f, mode="w", format=tarfile.USTAR_FORMAT) as tar:
                for p, meta in zip(pairs, rows):
                    _tar_add(tar, f"{p.key}.jpg", p.image.data)
                    _tar_add(tar, f"{p.key}.txt", p.candidate.text.encode("utf-8"))
                    _tar_add(tar, f"{p.key}.json", json.dumps(meta, sort_keys=True, ensure_ascii=False).encode("utf-8"))

        def write_parquet(f):
            cols = {name: [r.get(name) for r in rows] for name in SCHEMA.names}
            for name in JSON_COLUMNS:
                cols[name] = [json.dumps(v, sort_keys=True, ensure_ascii=False) for v in cols[name]]
            pq.write_table(pa.table(cols, schema=SCHEMA), f, compression="zstd")

        # Parquet first, tar last: a tar's presence means its shard is complete.
        # A run killed while writing leaves "<shard>.<ext>.tmp-<pid>" behind (local files);
        # this shard's writer is the only one that writes those names, so it clears them.
        try:
            storage.makedirs(self.shard_dir)
            if not storage.is_url(base):
                for ext in (".parquet", ".tar"):
                    for stale in glob.glob(glob.escape(base + ext) + ".tmp-*"):
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(stale)
            storage.write_whole(base + ".parquet", write_parquet)
            storage.write_whole(base + ".tar", write_tar)
        except Exception as exc:  # noqa: BLE001 (OSError locally, each store's own types remotely)
            for ext in (".tar", ".parquet"):  # nothing of the shard stays visible
                with contextlib.suppress(Exception):
                    storage.remove(base + ext)
            raise WriteFailed(f"could not write shard {base}.tar/.parquet: "
                              f"{type(exc).__name__}: {exc}") from exc
        return [Keep(())] * len(pairs)
