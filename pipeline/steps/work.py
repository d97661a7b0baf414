"""Intermediate work files between the jobs of a run (see ``pipeline/waves.py``).

A job ends in a :class:`WorkSink`: a group stage keyed by bucket that writes each bucket's
records to ``<dir>/<bucket>.pkl`` (whole or not at all, on a local disk or an object store).  The next job starts from a :class:`WorkSource`
whose parts are bucket numbers: it reads that bucket's files from every finished wave.  Buckets
come from a stable hash of a record field (the image URL after extraction), so all the records
that a later group step needs together land in the same bucket.
"""
from __future__ import annotations

import hashlib
import pickle

from pipeline.core import storage
from pipeline.core.errors import StorageFailed, WriteFailed
from pipeline.core.stage import GroupStage, Keep, Source


def bucket_of(text: str, buckets: int) -> int:
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest()[:8], 16) % buckets


def _write_pickle(path: str, obj) -> None:
    try:
        storage.write_whole(path, lambda f: pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception as exc:  # noqa: BLE001 (each store's own types): the wave must not finish
        raise WriteFailed(f"could not write work file {path}: {type(exc).__name__}: {exc}") from exc


class WorkSink(GroupStage):
    """Writes a job's output records, bucketed by ``bucket_field`` (an attribute path).

    ``normalise`` (a picklable function of the field's string) maps spellings of one key to
    one bucket: the pages job buckets by the canonical image URL, the same key the fetcher
    groups by, so ``HTTP://Example.com:80/a.jpg`` and ``http://example.com/a.jpg`` meet in
    one bucket and are fetched once."""

    name = "work_out"
    internal = True  # not a step of the funnel

    def __init__(self, out_dir: str, buckets: int, bucket_field: str, normalise=None):
        self.out_dir = out_dir
        self.buckets = buckets
        self.bucket_field = bucket_field
        self.normalise = normalise

    def key(self, record) -> str:
        value = record
        for attr in self.bucket_field.split("."):
            value = getattr(value, attr)
        value = str(value) if self.normalise is None else self.normalise(str(value))
        return f"{bucket_of(value, self.buckets):05d}"

    def reduce(self, bucket, records):
        try:
            storage.makedirs(self.out_dir)
        except Exception as exc:  # noqa: BLE001 (as above)
            raise WriteFailed(f"could not create {self.out_dir}: {exc}") from exc
        _write_pickle(storage.join(self.out_dir, f"{bucket}.pkl"), records)
        return [Keep(())] * len(records)


class WorkSource(Source):
    """Reads the records of one bucket from every finished wave directory of a job."""

    name = "work_in"
    internal = True

    def __init__(self, wave_dirs: list[str], buckets: int):
        self.wave_dirs = sorted(wave_dirs)
        self.buckets = buckets

    def parts(self) -> list[str]:
        present = set()
        for d in self.wave_dirs:
            present.update(n[:-4] for n in storage.listdir(d) if n.endswith(".pkl"))
        return sorted(present)

    def read(self, bucket: str):
        for d in self.wave_dirs:
            path = storage.join(d, f"{bucket}.pkl")
            if not storage.exists(path):
                continue
            try:
                records = pickle.loads(storage.read_bytes(path))
            except Exception as exc:  # noqa: BLE001
                # A committed work file that cannot be read back must not become "no records"
                # (this step is internal, so such a drop would be invisible): fail the job.
                raise StorageFailed(f"could not read work file {path}: "
                                    f"{type(exc).__name__}: {exc}") from exc
            for rec in records:
                yield Keep((rec,))
