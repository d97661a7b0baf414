"""One process at a time in a folder: an ``flock`` on ``FOLDER/NAME`` held while the work runs.

The kernel releases the lock when the holder ends, however it ends (kill -9 included), so a
stale lock file never blocks a rerun; the file holds the holder's pid for the message.  Local
folders only: an object store has no such lock (docs/storage.md)."""
from __future__ import annotations

import contextlib
import fcntl
import os

from pipeline.core.errors import UsageError


@contextlib.contextmanager
def folder_lock(folder: str, busy: str, name: str = ".lock"):
    """Holds ``folder/name`` exclusively; if another process holds it, raises
    :class:`UsageError` with ``busy`` formatted with ``{pid}`` (the holder's)."""
    os.makedirs(folder, exist_ok=True)
    f = open(os.path.join(folder, name), "a+")
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise UsageError(busy.format(pid=f.read().strip() or "?")) from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        yield
    finally:
        f.close()
