"""Walking a WARC file's records past damaged spots (the ``read`` step's record loop).

FastWARC stops at the first damaged spot (a corrupt gzip member, a mangled WARC header, a
``Content-Length`` that lies) with an ``OSError``; everything after it in the file would be
lost uncounted.  :func:`walk` starts a new FastWARC iterator at the next place a record can
begin (a gzip member header in a ``.warc.gz``, ``WARC/1.x`` in an uncompressed WARC) and
reports each damaged stretch once.  zstd and lz4 files are not resynchronised: their frames
do not line up with records, so a damaged spot ends such a file (still counted).

A ``.warc.gz`` cut inside its last gzip member (an interrupted download) ends FastWARC's
iteration without an error; :func:`cut_member` checks the members from the last record read
to the end, so such a tail is reported too: ``CUT`` when the cut member is that record's own
(the caller judges the record), ``DAMAGED`` when it lies after it.

The record read just before a damaged spot is suspect: a ``Content-Length`` shorter than its
block cuts the page and leaves the rest where the next header should be.
:func:`extent_ok` checks such a record on the raw bytes (its block must be followed by the
``CRLF CRLF`` that ends every record), so a cut page is not passed on as good.
"""
from __future__ import annotations

import re
import zlib
from typing import Callable, Iterator

from fastwarc.warc import ArchiveIterator, WarcRecordType

from pipeline.core.storage import ReadFailed

DAMAGED = "damaged"
CUT = "cut"  # the file ends inside the gzip member of the record yielded just before
RECORD = "record"
GZIP_MAGIC = b"\x1f\x8b\x08"
_SCAN = 1 << 20  # bytes read at a time while looking for the next record
_HEAD_END = b"\r\n\r\n"


def _kind(head: bytes) -> str:
    if head.startswith(GZIP_MAGIC[:2]):
        return "gzip"
    if head.startswith(b"WARC/"):
        return "plain"
    return "other"  # zstd, lz4 or garbage: no resynchronisation


def next_start(f, kind: str, start: int) -> int | None:
    """The first offset >= ``start`` where a record may begin, or None: a gzip member header,
    or ``WARC/<digit>`` (not only at a line start: a cut record runs straight into the next
    one).  A false start (those bytes inside a page) only fails to parse and is skipped."""
    pattern = GZIP_MAGIC if kind == "gzip" else b"WARC/"
    pos = start
    while True:
        f.seek(pos)
        data = f.read(_SCAN)
        i = data.find(pattern)
        while i >= 0 and kind != "gzip" and i + 6 <= len(data) and not data[i + 5:i + 6].isdigit():
            i = data.find(pattern, i + 1)
        if i >= 0 and (kind == "gzip" or i + 6 <= len(data)):
            return pos + i
        if len(data) < _SCAN:
            return None
        pos += len(data) - 8  # overlap: a pattern cut by the chunk border is found next time


def walk(path: str, opener: Callable = open) -> Iterator[tuple[str, object, int | None]]:
    """Yields ``(RECORD, record, offset)`` for each response record (``offset``: where it
    starts in the file) and ``(DAMAGED, None, offset of the record read just before)`` once
    per damaged stretch; iteration goes on at the next record after the damage.  A ``.warc.gz``
    that ends inside the member of the record just yielded ends with ``(CUT, None, its
    offset)``."""
    with opener(path, "rb") as f:
        # A stream that cannot seek (a remote object read front to back) is not resynchronised:
        # its damaged spot is counted once and ends it, as FastWARC alone would.
        seekable = getattr(f, "seekable", lambda: False)()
        kind = _kind(f.read(8)) if seekable else "other"
        pos, last = 0, None
        reported = False  # the current damaged stretch was reported already
        while True:
            if seekable:
                f.seek(pos)
            records = iter(ArchiveIterator(f, record_types=WarcRecordType.response,
                                           parse_http=False))
            got_one = False
            while True:
                try:
                    record = next(records)
                except StopIteration:
                    # FastWARC ends a file cut inside its last gzip member (a download cut
                    # short) as if it were whole: CUT when that member is the record just
                    # read (``read`` judges that record), DAMAGED when it lies after it.
                    cut = cut_member(f, last if got_one else pos) if kind == "gzip" else None
                    if cut is not None and not reported:
                        own = got_one and cut == 0
                        yield (CUT if own else DAMAGED), None, last if got_one else None
                    return
                except ReadFailed:  # a remote read that failed after its retries: not damage
                    raise
                except (OSError, ValueError):
                    break
                got_one, reported = True, False
                last = record.stream_pos  # FastWARC counts from the file's start (its tell())
                yield RECORD, record, last
            if not reported:
                yield DAMAGED, None, last if got_one else None
                reported = True
            if kind == "other":
                return
            # Past the start of the last record read (or of the failed attempt): progress.
            resume = next_start(f, kind, (last if got_one else pos) + 1)
            if resume is None:
                return
            pos = resume


def cut_member(f, start: int) -> int | None:
    """Of the gzip members from ``start`` to the end of the file, the index of the first one
    that does not end whole (trailer included; 0: the one at ``start``), None when all do.
    Decoded bytes are dropped as they come, at most ``_SCAN`` at a time."""
    f.seek(start)
    d, pending, index = None, b"", -1
    while True:
        if not pending:
            pending = f.read(_SCAN)
            if not pending:
                return None if d is None or d.eof else index
        if d is None or d.eof:
            d, index = zlib.decompressobj(16 + zlib.MAX_WBITS), index + 1
        try:
            d.decompress(pending, _SCAN)
        except zlib.error:
            return index
        pending = d.unconsumed_tail or d.unused_data


def extent_ok(path: str, offset: int, limit: int, opener: Callable = open) -> bool:
    """True when the record at ``offset`` ends where its ``Content-Length`` says: its block is
    followed by ``CRLF CRLF`` (and, in a gzip member, by nothing else).  Reads at most
    ``limit`` decoded bytes; a longer record, or a file that cannot be read again from
    ``offset``, cannot be checked and counts as not ok (it sits next to damage anyway)."""
    try:
        return _extent_ok(path, offset, limit, opener)
    except ReadFailed:
        raise
    except OSError:
        return False


def _extent_ok(path: str, offset: int, limit: int, opener: Callable) -> bool:
    with opener(path, "rb") as f:
        f.seek(offset)
        head = f.read(2)
        f.seek(offset)
        if head == GZIP_MAGIC[:2]:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            data = b""
            try:
                while not d.eof and len(data) <= limit:
                    chunk = f.read(64 * 1024)
                    if not chunk:
                        break
                    data += d.decompress(chunk, limit + 1 - len(data))
                    while d.unconsumed_tail and len(data) <= limit and not d.eof:
                        data += d.decompress(d.unconsumed_tail, limit + 1 - len(data))
            except zlib.error:
                return False
            whole_member = d.eof
        else:
            data = f.read(limit + 1)
            whole_member = None
    end = data.find(_HEAD_END)
    if end < 0 or len(data) > limit:
        return False
    m = re.search(rb"\r?\ncontent-length:[ \t]*(\d+)", data[:end], re.I)
    if not m:
        return False
    stop = end + 4 + int(m.group(1))
    if data[stop:stop + 4] != _HEAD_END:
        return False
    return whole_member is None or (whole_member and len(data) == stop + 4)
