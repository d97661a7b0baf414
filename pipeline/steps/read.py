"""Input sources: WARC files read with FastWARC into :class:`~pipeline.core.records.Page` records.

The reader parses each response's HTTP head itself (FastWARC runs with ``parse_http=False``)
because real archives break the parsers' assumptions: ClueWeb09 (WARC/0.18) ends HTTP header
lines with a bare LF, so a CRLF-only parser runs on into the HTML; and a clipped gzip member is
only visible as a record block shorter than its WARC ``Content-Length``, which we can compare
only on the raw block.
"""
from __future__ import annotations

import logging
from typing import Iterator
from urllib.parse import urlsplit

from pipeline.core import storage
from pipeline.core.errors import ConfigError, StorageFailed
from pipeline.core.records import Page
from pipeline.core.stage import Drop, Keep, Source, keep
from pipeline.steps import warc_records
from pipeline.steps.http_message import (MAX_HEAD, BadRecord, TooLarge, Truncated, decode_body,
                                         mime_type, parse_http_head, sniff_html)
from pipeline.steps.inputs import WARC_SUFFIXES, expand_path_list, expand_patterns, is_regular

__all__ = ["WarcReader", "WARC_SUFFIXES", "expand_path_list", "expand_patterns"]

PART_SEP = "\n"  # joins the files of one part; a newline never occurs in a real WARC path
HTML_TYPES = ("text/html", "application/xhtml+xml")
# Content types that say nothing, so the body is sniffed (WHATWG "unknown type").
UNKNOWN_TYPES = ("", "unknown/unknown", "application/unknown", "*/*")
HEAD_CHUNK = 64 * 1024  # first read of a record: the HTTP head and the bytes to sniff
OK_STATUSES = (200, 203)  # 203: a 200 passed on by a transforming proxy

log = logging.getLogger(__name__)


class WarcReader(Source):
    """Reads WARC files (plain or gzip/zstd/lz4-compressed) into HTML :class:`Page` records.

    Inputs are the ``response`` records that carry an HTTP message (WARC ``Content-Type:
    application/http`` or an http(s) target URI).  ``warcinfo``, ``request``, ``metadata``,
    ``revisit``, ``resource`` and non-HTTP responses (``dns:``) are not inputs and are not
    counted.  Every input gives one event:

    * ``Keep(Page)``: status 200 (or 203), HTML by its Content-Type (``text/html``,
      ``application/xhtml+xml``) or, when the type says nothing, by sniffing the body;
    * ``read_bad_record``: no parsable HTTP head, or a body that cannot be decoded;
    * ``read_http_status``: any other status (redirects, 404, 5xx, 206 partial content...);
    * ``read_not_html``: another content type;
    * ``read_page_too_large``: body (declared, or once decoded) over ``max_page_bytes``;
    * ``read_truncated``: the record block is shorter than its WARC Content-Length (a clipped
      gzip member, an interrupted download) or a compressed/chunked body ends early.
    * ``read_no_url``: a response with no absolute http(s) ``WARC-Target-URI`` (missing,
      empty, relative, ``urn:``): a page must name where it came from (every sample's
      ``page_url``), and its relative image URLs resolve against it.  Checked after the status
      and the type.
    * ``read_warc_truncated``: the record says its payload was cut by the crawler (a
      ``WARC-Truncated`` header: ``length``, ``time``, ``disconnect``, ``unspecified``); its
      value goes into the reject's detail.  Checked after the status and the type, so a cut
      404 or image still counts as what it is.

    A file that cannot be opened counts once as ``read_unreadable``.  A damaged spot (a
    corrupt gzip member, a mangled WARC header, a WARC ``Content-Length`` that lies) counts
    once as ``read_bad_record`` and reading goes on at the next record after it
    (:mod:`pipeline.steps.warc_records`); a record whose block does not end where its
    Content-Length says is that damaged record, never a kept page.  A ``.warc.gz`` cut
    inside its last gzip member (a download cut short) counts that spot once too, as
    ``read_bad_record``, or as the cut record's own ``read_truncated``.  (An uncompressed file
    clipped inside a record's WARC header leaves nothing to count: the reader cannot tell such
    a tail from the end of the file.)
    A file at a URL is streamed through :class:`pipeline.core.storage.RetryingReader` (range
    reads, so a damaged spot is skipped there too): one that is gone counts once as
    ``read_not_found``, one the credentials may not read as ``read_forbidden``, a read still
    failing after ``retries`` retries ends the file with one ``read_io_error`` (the records
    before it stay counted).

    Parts: one WARC file, or ``part_size`` files joined by a newline (:data:`PART_SEP`), in
    sorted path order.
    """

    name = "read"

    def __init__(self, patterns: list[str], max_page_bytes: int = 5_000_000, part_size: int = 1,
                 path_list: dict | None = None, timeout_s: float = storage.DEFAULT_TIMEOUT_S,
                 retries: int = 4, backoff_s: float = 1.0):
        if isinstance(patterns, str):
            patterns = [patterns]
        if not path_list and (not patterns or not all(isinstance(p, str) and p for p in patterns)):
            raise ConfigError("input.warc: give at least one WARC path or glob")
        if not isinstance(max_page_bytes, int) or max_page_bytes <= 0:
            raise ConfigError(f"input.max_page_bytes must be > 0 (got {max_page_bytes!r})")
        if not isinstance(part_size, int) or part_size <= 0:
            raise ConfigError(f"input.part_size must be > 0 (got {part_size!r})")
        self.patterns = list(patterns)
        self.max_page_bytes = max_page_bytes
        self.part_size = part_size
        # {"url", "prefix", "every", "first"}: a warc.paths.gz list read when parts are listed
        self.path_list = path_list
        self.timeout_s, self.retries, self.backoff_s = timeout_s, retries, backoff_s

    @classmethod
    def from_config(cls, cfg) -> "WarcReader":
        """From a :class:`pipeline.config.InputConfig`."""
        listed = ({"url": cfg.paths, "prefix": cfg.prefix, "every": cfg.paths_every,
                   "first": cfg.paths_first} if cfg.paths else None)
        return cls(cfg.warc, cfg.max_page_bytes, cfg.part_size, listed, cfg.timeout_s,
                   cfg.retries, cfg.backoff_s)

    def parts(self) -> list[str]:
        if self.path_list:
            pl = self.path_list
            paths = expand_path_list(pl["url"], pl.get("prefix", ""), pl.get("every", 1),
                                     pl.get("first", 0))
        else:
            paths = expand_patterns(self.patterns)
        n = self.part_size
        return [PART_SEP.join(paths[i:i + n]) for i in range(0, len(paths), n)]

    def read(self, part: str) -> Iterator[Keep | Drop]:
        for path in part.split(PART_SEP):
            yield from self.read_file(path)

    def read_file(self, path: str) -> Iterator[Keep | Drop]:
        remote = storage.is_url(path)
        if not remote and not is_regular(path):  # replaced since listing: never open a FIFO
            yield self.drop("unreadable")
            return
        try:
            yield from self._read_records(path, self._opener(path) if remote else open)
        except storage.ReadFailed as exc:  # opening the URL failed after its retries
            yield self._read_failed(exc)
        except OSError:  # the file itself cannot be opened or read
            yield self.drop("unreadable")

    def _opener(self, path: str):
        """Opens a URL as a seekable stream that retries a failing read where it broke."""
        return lambda _path, _mode: storage.RetryingReader(path, self.retries, self.backoff_s,
                                                          self.timeout_s)

    def _read_records(self, path: str, opener) -> Iterator[Keep | Drop]:
        """Every response record's event; a damaged stretch counts once as ``bad_record`` and
        reading goes on after it (:mod:`pipeline.steps.warc_records`).  Each event is held
        until the next record parses: the record just before a damaged spot is checked on
        the raw bytes, since a too-short ``Content-Length`` would pass its cut page."""
        held, broken = None, False  # broken: the held record's block could not be read
        records = damaged = 0
        try:
            for kind, record, offset in warc_records.walk(path, opener):
                if kind in (warc_records.CUT, warc_records.DAMAGED):
                    damaged += 1
                else:
                    records += 1
                if kind == warc_records.CUT:  # the file ends inside the last record's member
                    if held is None:  # a record cut before it showed it was an input
                        held = self.drop("bad_record")
                    elif isinstance(held, Keep) and not warc_records.extent_ok(
                            path, offset, self.max_page_bytes + 2 * MAX_HEAD, opener):
                        held = self.drop("bad_record")  # its block whole, its member not
                    continue  # a Drop (truncated) already counts it
                if kind == warc_records.DAMAGED:
                    limit = self.max_page_bytes + 2 * MAX_HEAD
                    if (held is not None and isinstance(held, Keep) and offset is not None
                            and not warc_records.extent_ok(path, offset, limit, opener)):
                        # its Content-Length lied: the damage is this record's own rest
                        held, broken = self.drop("bad_record"), True
                    if held is not None:
                        yield held
                    if not broken:  # a record that failed to read is that damage, counted
                        yield self.drop("bad_record")
                    held, broken = None, False
                    continue
                if held is not None:
                    yield held
                held, broken = None, False
                if not _is_http(record):
                    continue
                try:
                    held = self.convert(record, path, offset)
                except storage.ReadFailed:
                    raise
                except (OSError, ValueError):  # a record whose block cannot even be read
                    held, broken = self.drop("bad_record"), True
        except storage.ReadFailed as exc:  # retries spent: the rest of the file is unreadable
            if held is not None:
                yield held
            yield self._read_failed(exc)
            return
        if held is not None:
            yield held
        if damaged and not records:  # a README a glob matched: its one drop has no record to sample
            log.warning("read: %s: no WARC record in it (not a WARC file?): counted once as "
                        "read_bad_record", path)

    def _read_failed(self, exc: "storage.ReadFailed") -> Drop:
        """``read_not_found`` / ``read_forbidden`` / ``read_io_error``, logged with the URL:
        a run over a list of 100,000 keys must say which ones it could not read.  A worker
        with no credentials at all fails the job instead (StorageFailed: its wave gets no
        marker): counted, every file would be, and the rerun with the settings would skip
        them as read."""
        if exc.kind == "no_credentials":
            raise StorageFailed(f"{exc}; give every worker the store's settings (Spark: "
                                "--conf spark.executorEnv.AWS_..., or the nodes' role; "
                                "docs/storage.md)") from exc
        log.warning("read: %s", exc)
        return self.drop(exc.kind)

    def convert(self, record, path: str, offset: int | None = None) -> Keep | Drop:
        """One HTTP response record -> ``Keep(Page)`` or a :class:`Drop` that carries the
        record's URL and WARC location, so rejects.parquet can say which record it was."""
        wh = record.headers
        url = (wh.get("WARC-Target-URI") or "").strip().strip("<>")
        meta = {
            "warc": path,
            "warc_date": wh.get("WARC-Date") or "",
            "warc_record_id": wh.get("WARC-Record-ID") or "",
            "warc_offset": record.stream_pos if offset is None else offset,
        }

        def drop(what: str) -> Drop:
            return self.drop(what, Page(url=url, body=b"", source=path, meta=meta))

        declared = _declared_length(record)
        head = _read_at_least(record.reader, HEAD_CHUNK)
        try:
            status, headers, body_at = parse_http_head(head)
        except BadRecord:
            return drop("bad_record")
        meta["http_status"] = status
        if status not in OK_STATUSES:
            return drop("http_status")
        mime = mime_type(headers.get("content-type", ""))
        if mime not in HTML_TYPES and mime not in UNKNOWN_TYPES:
            return drop("not_html")
        if not _page_url(url):  # WARC requires it: without it a page has no provenance
            return drop("no_url")
        cut = (wh.get("WARC-Truncated") or "").strip()
        if cut:  # the record is whole, its page is not: never kept cut, like read_truncated's
            meta["warc_truncated"] = cut
            return drop("warc_truncated")
        if declared is not None and declared - body_at > self.max_page_bytes:
            return drop("page_too_large")  # the rest of the record is never read
        rest = record.reader.read()
        if declared is not None and len(head) + len(rest) < declared:
            return drop("truncated")
        body = head[body_at:] + rest  # one copy of the page, not two (head + rest, then cut)
        if len(body) > self.max_page_bytes:
            return drop("page_too_large")
        try:
            body = decode_body(body, headers, self.max_page_bytes)
        except Truncated:
            return drop("truncated")
        except TooLarge:
            return drop("page_too_large")
        except BadRecord:
            return drop("bad_record")
        if mime in UNKNOWN_TYPES and not sniff_html(body):
            return drop("not_html")
        return keep(Page(url=url, body=body, content_type=mime or "text/html", headers=headers,
                         source=path, meta=meta))


def _is_http(record) -> bool:
    wh = record.headers
    ctype = (wh.get("Content-Type") or "").lower()
    uri = (wh.get("WARC-Target-URI") or "").strip().strip("<>").lower()
    return "application/http" in ctype or uri.startswith(("http://", "https://"))


def _page_url(url: str) -> bool:
    """An absolute http(s) URL with a host: what a page's provenance and its relative image
    URLs need (a missing, relative or ``urn:`` WARC-Target-URI is none)."""
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # an unparsable netloc ("http://[::1")
        return False


def _read_at_least(reader, n: int) -> bytes:
    """``n`` bytes, or all that is left: a read may return less than asked mid-stream."""
    got = reader.read(n)
    while len(got) < n:
        more = reader.read(n - len(got))
        if not more:
            break
        got += more
    return got


def _declared_length(record) -> int | None:
    try:
        return int(record.headers.get("Content-Length"))
    except (TypeError, ValueError):
        return None
