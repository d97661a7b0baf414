"""The read step's inputs: WARC paths, URLs and globs, or a Common Crawl path list, expanded
into the sorted list of files that ``pipeline/steps/read.py`` reads (one part per file or per
``input.part_size`` files).  Anything wrong with the list itself (a pattern matching nothing, a
URL that is missing or forbidden, a path list given as a WARC) is a configuration error raised
at once, naming it; what goes wrong while a file is read is counted by the reader."""
from __future__ import annotations

import gzip
import logging
import os
import stat

from pipeline.core import storage
from pipeline.core.errors import ConfigError

WARC_SUFFIXES = (".warc", ".warc.gz", ".warc.zst", ".warc.lz4")
# Common Crawl's lists of WARC keys (warc.paths.gz): a list, never a WARC (input.paths).
PATH_LIST_SUFFIXES = (".paths", ".paths.gz")
_GLOB_CHARS = set("*?[")
log = logging.getLogger(__name__)


def expand_patterns(patterns: list[str]) -> list[str]:
    """Paths, URLs, globs (``**`` allowed) or directories -> sorted, de-duplicated WARC paths.

    A directory stands for the WARC files directly inside it.  A pattern that matches nothing
    (a URL that is not there, or that the credentials may not read) is a configuration error,
    raised at once naming it rather than read as an empty input.
    """
    found: set[str] = set()
    for pat in patterns:
        if pat.rstrip("/").endswith(PATH_LIST_SUFFIXES):
            raise ConfigError(f"input.warc: {pat!r} is a list of WARC paths, not a WARC: give it "
                              "as input.paths (with input.prefix where its keys live)")
        if storage.is_url(pat):
            found.update(_expand_url(pat))
            continue
        if os.path.isdir(pat):
            hits = [os.path.join(pat, f) for f in os.listdir(pat) if f.endswith(WARC_SUFFIXES)]
        else:
            hits = storage.glob(pat)
        # Only regular files are inputs: opening a named pipe blocks the run forever, and a
        # directory named like a WARC is not a damaged record.  They are not records either,
        # so they are skipped with a warning rather than counted.
        files = [p for p in hits if is_regular(p)]
        for p in sorted(set(hits) - set(files)):
            log.warning("input.warc: skipped %s: not a regular file", p)
        if not files:
            why = "".join(f"; {p}: not a regular file" for p in sorted(hits))
            raise ConfigError(f"input.warc: {pat!r} matches no WARC file{why}")
        found.update(files)
    return sorted(found)


def _expand_url(pat: str) -> list[str]:
    """A URL, a URL glob (``s3://b/crawl/*.warc.gz``) or a folder URL (``s3://b/crawl/``) -> the
    WARC URLs, checked to exist."""
    try:
        if _GLOB_CHARS & set(pat.split("://", 1)[1]):
            hits = [u for u in storage.glob(pat) if u.endswith(WARC_SUFFIXES)]
        else:
            # Its first byte, not fs.info: fsspec's HTTP info reports a 403 as not found.
            fs, p = storage.filesystem(pat)
            try:
                hits = [pat] if fs.cat_file(p, start=0, end=1) else []
            except FileNotFoundError:
                # A folder (an object store's prefix) stands for the WARC files directly in
                # it, as a local folder does; HTTP has no listing to ask.
                names = [] if pat.startswith(("http://", "https://")) else storage.listdir(pat)
                if not names:
                    raise
                hits = [storage.join(pat, n) for n in names if n.endswith(WARC_SUFFIXES)]
    except ImportError as exc:
        raise ConfigError(f"input.warc: {pat!r}: no fsspec backend for this scheme "
                          f"is installed ({exc})") from None
    except Exception as exc:  # noqa: BLE001 (each backend raises its own types)
        why = storage.failure_kind(exc).replace("_", " ")
        raise ConfigError(f"input.warc: {pat!r}: {why} ({type(exc).__name__}: {exc})") from None
    if not hits:
        raise ConfigError(f"input.warc: {pat!r} matches no WARC file")
    return hits


def expand_path_list(url: str, prefix: str = "", every: int = 1, first: int = 0) -> list[str]:
    """A Common Crawl path list (``warc.paths.gz``, one key per line) -> WARC URLs or paths.

    Each key is joined to ``prefix`` (default: the list's own folder); ``every`` keeps every
    k-th key, then ``first`` the first N of those (0: all).  The order of the list is kept: it
    decides which keys a slice takes.  A list that cannot be read fails at once, naming it."""
    try:
        data = storage.read_bytes(url)
    except ImportError as exc:
        raise ConfigError(f"input.paths: {url!r}: no fsspec backend for this scheme ({exc})") from None
    except Exception as exc:  # noqa: BLE001 (as above)
        why = storage.failure_kind(exc).replace("_", " ")
        raise ConfigError(f"input.paths: {url!r}: {why} ({type(exc).__name__}: {exc})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ConfigError(f"input.paths: {url!r}: damaged gzip ({exc})") from None
    if data.startswith(b"WARC/"):
        raise ConfigError(f"input.paths: {url!r} is a WARC, not a list of WARC paths: give it as input.warc")
    try:
        keys = [k.strip() for k in data.decode("utf-8").splitlines()]
    except UnicodeDecodeError:
        raise ConfigError(f"input.paths: {url!r} is not a text list of WARC paths") from None
    keys = [k for k in keys if k][::every]
    keys = keys[:first] if first else keys
    if not keys:
        raise ConfigError(f"input.paths: {url!r} lists no WARC path")
    base = (prefix or storage.dirname(url)).rstrip("/")
    return [k if storage.is_url(k) else f"{base}/{k.lstrip('/')}" for k in keys]


def is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)  # follows symlinks, as open() would
    except OSError:
        return False
