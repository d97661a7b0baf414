"""Files through fsspec: local paths as before, URLs (``https://``, ``s3://``, ``gs://``, any
installed fsspec backend) through their filesystem.  Every read and write of a run's inputs
and outputs goes through here, so a run on a cluster whose workers share no disk reads and
writes where the data lives.

Local paths keep the plain ``os`` calls (and so today's exact bytes and atomic renames).  On
an object store there is no rename: an object becomes visible only when its upload completes
(S3 and GCS guarantee this for one PUT and for a completed multipart upload), and an upload
that fails is aborted, never completed (:func:`write_whole`).  What spans several objects (a
wave of work files, a shard's tar and parquet) is committed by a marker written last; see
docs/storage.md.

Credentials and endpoints come from each backend's own settings (for S3: ``AWS_*``
environment variables, ``~/.aws``, ``AWS_ENDPOINT_URL``), so nothing secret enters a config
or stats.json.
"""
from __future__ import annotations

import glob as globmod
import io
import os
import shutil
import time

from fsspec.core import url_to_fs

from pipeline.core.errors import exception_chain

# Timeouts of every remote call (connect and each read), so a stalled server costs a bounded
# wait and then a retry, never a hung worker.  input.timeout_s sets it for a run's workers.
DEFAULT_TIMEOUT_S = 60.0
# Flat key spaces: no folders, no rename, an object visible only once its upload completes.
OBJECT_STORES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "http", "https", "hf")


def is_url(path: str) -> bool:
    """True for ``scheme://...`` except ``file://`` (read as a local path)."""
    return "://" in path and not path.startswith("file://")


def local(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def _options(protocol: str, timeout_s: float) -> dict:
    if protocol in ("http", "https"):
        import aiohttp  # fsspec's HTTP backend is built on it; only URLs need it

        t = aiohttp.ClientTimeout(total=None, sock_connect=timeout_s, sock_read=timeout_s)
        return {"client_kwargs": {"timeout": t}}
    if protocol in ("s3", "s3a"):
        return {"config_kwargs": {"connect_timeout": timeout_s, "read_timeout": timeout_s,
                                  "retries": {"max_attempts": 3}}}
    return {}


def filesystem(path: str, timeout_s: float = DEFAULT_TIMEOUT_S):
    """``(fs, path_in_fs)`` for a URL (fsspec caches the filesystem objects)."""
    protocol = path.split("://", 1)[0]
    return url_to_fs(path, **_options(protocol, timeout_s))


def absolute(path: str) -> str:
    """A URL unchanged (``os.path.abspath`` would make ``s3://b/x`` a local ``./s3:/b/x``)."""
    return path.rstrip("/") if is_url(path) else os.path.abspath(local(path))


def join(base: str, *names: str) -> str:
    if is_url(base):
        return "/".join([base.rstrip("/"), *names])
    return os.path.join(base, *names)


def dirname(path: str) -> str:
    return path.rsplit("/", 1)[0] if is_url(path) else os.path.dirname(path)


def exists(path: str) -> bool:
    if not is_url(path):
        return os.path.exists(local(path))
    fs, p = filesystem(path)
    fs.invalidate_cache(p)
    return fs.exists(p)


def makedirs(path: str) -> None:
    """A folder.  Object stores have none, so nothing is done there (s3fs and gcsfs would
    create a missing *bucket*: a mistyped bucket name must fail, not appear)."""
    if not is_url(path):
        os.makedirs(local(path), exist_ok=True)
        return
    if path.split("://", 1)[0] in OBJECT_STORES:
        return
    fs, p = filesystem(path)
    fs.makedirs(p, exist_ok=True)


def listdir(path: str) -> list[str]:
    """Names directly under ``path`` (sorted; [] when there is none).  Listings are never
    taken from fsspec's cache: resume must see the markers another process wrote."""
    if not is_url(path):
        path = local(path)
        return sorted(os.listdir(path)) if os.path.isdir(path) else []
    fs, p = filesystem(path)
    fs.invalidate_cache(p)
    try:
        entries = fs.ls(p, detail=False)
    except FileNotFoundError:
        return []
    return sorted({e.rstrip("/").rsplit("/", 1)[-1] for e in entries} - {""})


def glob(pattern: str) -> list[str]:
    """Matches of a glob, as full URLs for a URL pattern."""
    if not is_url(pattern):
        return globmod.glob(local(pattern), recursive=True)
    fs, p = filesystem(pattern)
    fs.invalidate_cache()
    protocol = pattern.split("://", 1)[0]
    return [f"{protocol}://{m}" if "://" not in m else m for m in fs.glob(p)]


def open_read(path: str, timeout_s: float = DEFAULT_TIMEOUT_S):
    if not is_url(path):
        return open(local(path), "rb")
    fs, p = filesystem(path, timeout_s)
    return fs.open(p, "rb")


def read_bytes(path: str) -> bytes:
    with open_read(path) as f:
        return f.read()


def write_whole(path: str, write) -> None:
    """Calls ``write(f)`` on a binary file that appears at ``path`` only once complete.

    Local: a temporary name, fsync, then an atomic rename (a half file is never seen under
    its name).  Object store: one upload, aborted (``discard``) if ``write`` fails, so no
    partial object is ever completed.  Errors propagate: a failed write is the run's failure,
    not a record's (see pipeline/core/errors.py WriteFailed)."""
    if not is_url(path):
        path = local(path)
        tmp = f"{path}.tmp-{os.getpid()}"
        try:
            with open(tmp, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return
    fs, p = filesystem(path)
    f = fs.open(p, "wb")
    try:
        write(f)
    except BaseException:
        discard = getattr(f, "discard", None)
        if discard is not None:
            discard()  # abort the upload: nothing becomes visible
        else:  # a backend without abort: finish, then remove what was written
            try:
                f.close()
            finally:
                remove(path)
        raise
    f.close()


def write_bytes(path: str, data: bytes) -> None:
    write_whole(path, lambda f: f.write(data))


def remove(path: str) -> None:
    """Deletes a file if it is there."""
    try:
        if is_url(path):
            fs, p = filesystem(path)
            fs.rm_file(p)
        else:
            os.unlink(local(path))
    except FileNotFoundError:
        pass


def rmtree(path: str) -> None:
    """Deletes a folder and everything under it, best effort (garbage of a killed run)."""
    if not is_url(path):
        shutil.rmtree(local(path), ignore_errors=True)
        return
    fs, p = filesystem(path)
    try:
        fs.rm(p, recursive=True)
    except (FileNotFoundError, OSError):
        pass


class ReadFailed(OSError):
    """A remote read that failed for good: ``kind`` is ``not_found``, ``forbidden``,
    ``no_credentials`` or ``io_error`` (the backend kept failing after every retry)."""

    def __init__(self, kind: str, path: str, cause: BaseException):
        super().__init__(f"{path}: {kind.replace('_', ' ')} ({type(cause).__name__}: {cause})")
        self.kind, self.path, self.cause = kind, path, cause


# What botocore and google-auth raise when a process has no credentials at all (a cluster's
# workers started without the store's settings): a fact about the worker, not the file.
NO_CREDENTIALS = ("NoCredentialsError", "PartialCredentialsError", "DefaultCredentialsError")


def failure_kind(exc: BaseException) -> str:
    """What a backend's exception means: ``not_found``, ``forbidden`` and ``no_credentials``
    will not change on a retry; anything else (reset, timeout, 5xx, a body cut short) may."""
    for cause in exception_chain(exc, limit=100):  # s3fs, gcsfs may wrap the provider's error
        if any(c.__name__ in NO_CREDENTIALS for c in type(cause).__mro__):
            return "no_credentials"
    if isinstance(exc, FileNotFoundError):
        return "not_found"
    if isinstance(exc, PermissionError):
        return "forbidden"
    status = getattr(exc, "status", None) or getattr(exc, "code", None)
    if status in (404, 410):
        return "not_found"
    if status in (401, 403, 407):
        return "forbidden"
    return "io_error"


class RetryingReader(io.RawIOBase):
    """A sequential binary stream over a remote file that survives a failing read.

    A read that fails (connection reset, timeout, a body cut short, a 5xx) reopens the file
    at the offset reached and reads again, after an exponential backoff, up to ``retries``
    times in a row; then :class:`ReadFailed` is raised (the reader counts it).  The file is
    streamed: nothing is copied to local disk."""

    def __init__(self, path: str, retries: int = 4, backoff_s: float = 1.0,
                 timeout_s: float = DEFAULT_TIMEOUT_S):
        super().__init__()
        self.path, self.retries, self.backoff_s, self.timeout_s = path, retries, backoff_s, timeout_s
        self.pos = 0
        self._f = None
        self._call(lambda: None)  # open now: a missing file fails here, before any record

    def _call(self, op):
        for attempt in range(self.retries + 1):
            try:
                if self._f is None:
                    self._f = open_read(self.path, self.timeout_s)
                    if self.pos:
                        self._f.seek(self.pos)
                return op()
            except Exception as exc:  # noqa: BLE001 (each backend has its own error types)
                kind = failure_kind(exc)
                self._drop_file()
                if kind != "io_error" or attempt == self.retries:
                    raise ReadFailed(kind, self.path, exc) from exc
                sleep_backoff(attempt, self.backoff_s)

    def _drop_file(self):
        f, self._f = self._f, None
        if f is not None:
            try:
                f.close()
            except Exception:  # noqa: BLE001 (a broken connection may fail to close too)
                pass

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        data = self._call(lambda: self._f.read(n))
        self.pos += len(data)
        return data

    # FastWARC asks a Python stream for its position (tell/seek): the offsets are kept here,
    # so that a reopened file continues where the failed one stopped.
    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_END:
            self.pos = self._call(lambda: self._f.seek(offset, io.SEEK_END))
            return self.pos
        new = offset if whence == io.SEEK_SET else self.pos + offset
        if new != self.pos:
            self.pos = new
            if self._f is not None:
                self._call(lambda: self._f.seek(new))
        return self.pos

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._drop_file()
        super().close()


def sleep_backoff(attempt: int, base_s: float, cap_s: float = 30.0) -> None:
    time.sleep(min(cap_s, base_s * (2 ** attempt)))
