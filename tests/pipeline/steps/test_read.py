"""WarcReader on the real WARC files and on broken WARCs written here (warcio and raw bytes)."""
from __future__ import annotations

import gzip
import io
import json
import random
import uuid
import zlib
from collections import Counter
from pathlib import Path

import pytest

from pipeline.config import ConfigError, InputConfig
from pipeline.core.records import Page
from pipeline.steps.read import PART_SEP, WarcReader, decode_body, parse_http_head, sniff_html
from pipeline.core.stage import Drop, Keep

REPO = Path(__file__).resolve().parents[3]
WARC_DIR = REPO.parent / "shared" / "data" / "warc"
needs_data = pytest.mark.skipif(not WARC_DIR.is_dir(), reason="../shared/data absent")

HTML = b"<!doctype html><html><head><title>T</title></head><body><p>Hello</p></body></html>"


def events(path, **kw) -> list:
    src = WarcReader([str(path)], **kw)
    return [ev for part in src.parts() for ev in src.events(part)]


def reasons(evs) -> Counter:
    return Counter(ev.reason if isinstance(ev, Drop) else "keep" for ev in evs)


def pages(evs) -> list[Page]:
    return [p for ev in evs if isinstance(ev, Keep) for p in ev.outputs]


# ---- WARC writing helpers -------------------------------------------------------------------

def raw_record(block: bytes, rtype="response", uri="http://example.com/page",
               ctype="application/http; msgtype=response", length=None) -> bytes:
    """One WARC/1.0 record as bytes; ``length`` can lie about the block size."""
    head = (f"WARC/1.0\r\nWARC-Type: {rtype}\r\nWARC-Target-URI: {uri}\r\n"
            f"WARC-Date: 2024-01-02T03:04:05Z\r\nWARC-Record-ID: <urn:uuid:{uuid.UUID(int=1)}>\r\n"
            f"Content-Type: {ctype}\r\nContent-Length: {len(block) if length is None else length}"
            "\r\n\r\n")
    return head.encode() + block + b"\r\n\r\n"


def http(body: bytes, status="200 OK", headers=(("Content-Type", "text/html"),), eol=b"\r\n"):
    lines = [f"HTTP/1.1 {status}".encode()] + [f"{k}: {v}".encode() for k, v in headers]
    return eol.join(lines) + eol + eol + body


def write_gz(path: Path, *records: bytes) -> Path:
    path.write_bytes(b"".join(gzip.compress(r) for r in records))  # one member per record
    return path


def write_warcio(path: Path, responses) -> Path:
    """A gzipped WARC written by warcio: (url, status, content type, body) per response."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        w.write_record(w.create_warcinfo_record(path.name, {"software": "test"}))
        for url, status, ctype, body in responses:
            req = w.create_warc_record(url, "request", payload=io.BytesIO(b"GET / HTTP/1.1\r\n\r\n"))
            w.write_record(req)
            hdrs = StatusAndHeaders(status, [("Content-Type", ctype)], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body),
                                                http_headers=hdrs))
    return path


# ---- the real WARC files ---------------------------------------------------------------------

EXPECTED = {
    "ccwhirlwind_whirlwind.warc.gz": {"keep": 1},
    "resiliparse_clipped.warc.gz": {"read_truncated": 1},
    "resiliparse_clueweb-quirk.warc.gz": {"keep": 29},
    "resiliparse_warcfile.warc.gz": {"keep": 16},
}


@needs_data
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_warc_files(name):
    evs = events(WARC_DIR / name)
    assert dict(reasons(evs)) == EXPECTED[name]
    for page in pages(evs):
        assert page.url.startswith("http") and page.body
        assert page.meta["warc"] == str(WARC_DIR / name) and page.meta["warc_date"]
        assert all(k == k.lower() for k in page.headers)
        assert page.content_type == "text/html"


@needs_data
def test_every_real_warc_is_covered():
    assert sorted(p.name for p in WARC_DIR.glob("*.warc*")) == sorted(EXPECTED)


@needs_data
def test_clueweb_lf_headers_and_stored_decoded_body():
    # WARC/0.18, HTTP heads ending in bare LF, "Content-Encoding: gzip" over a decoded body.
    first = pages(events(WARC_DIR / "resiliparse_clueweb-quirk.warc.gz"))[0]
    assert first.headers["content-type"] == "text/html; charset=EUC-JP"
    assert first.headers["content-encoding"] == "gzip"
    assert first.body.startswith(b"<html>")
    assert first.meta["http_status"] == 200


@needs_data
def test_parts_one_file_each_and_grouped():
    src = WarcReader([str(WARC_DIR / "*.warc.gz")])
    parts = src.parts()
    assert parts == sorted(parts) and len(parts) == 4
    grouped = WarcReader([str(WARC_DIR)], part_size=3).parts()
    assert [p.split(PART_SEP) for p in grouped] == [parts[:3], parts[3:]]
    evs = [ev for part in grouped for ev in WarcReader([str(WARC_DIR)]).events(part)]
    assert reasons(evs) == Counter({"keep": 46, "read_truncated": 1})


# ---- bad input written by the tests ----------------------------------------------------------

def test_warcio_responses_each_get_their_reason(tmp_path):
    big = b"<html><body>" + b"<p>filler text</p>" * 1_200_000 + b"</body></html>"  # ~20 MB
    assert len(big) > 20_000_000
    path = write_warcio(tmp_path / "mixed.warc.gz", [
        ("http://a.example/ok", "200 OK", "text/html; charset=utf-8", HTML),
        ("http://a.example/img.png", "200 OK", "image/png", b"\x89PNG\r\n\x1a\n" + bytes(100)),
        ("http://a.example/missing", "404 Not Found", "text/html", b"<html>gone</html>"),
        ("http://a.example/moved", "301 Moved Permanently", "text/html", b""),
        ("http://a.example/huge", "200 OK", "text/html", big),
        ("http://a.example/bad-bytes", "200 OK", "text/html; charset=utf-8",
         b"<html><body><p>caf\xe9 \xff\xfe</p><img src=a.jpg alt='x\x80y'></body></html>"),
        ("http://a.example/x", "200 OK", "application/xhtml+xml", HTML),
    ])
    evs = events(path)
    # warcinfo and request records are not inputs: 7 responses, 7 events.
    assert reasons(evs) == Counter({"keep": 3, "read_not_html": 1, "read_http_status": 2,
                                    "read_page_too_large": 1})
    got = {p.url: p for p in pages(evs)}
    assert got["http://a.example/ok"].body == HTML
    assert got["http://a.example/bad-bytes"].body.startswith(b"<html><body><p>caf\xe9")
    assert got["http://a.example/x"].content_type == "application/xhtml+xml"
    assert got["http://a.example/ok"].headers["content-type"] == "text/html; charset=utf-8"


def test_a_dropped_response_names_its_url_and_warc_location(tmp_path):
    """read's drops reached rejects.parquet with nothing: a user saw read_http_status (2) and
    could not learn which records.  Each response's drop now carries its URL and where it
    sits in the WARC, and two records of one URL are two samples."""
    from pipeline.core.rejects import RejectSample

    path = write_warcio(tmp_path / "drops.warc.gz", [
        ("http://a.example/ok", "200 OK", "text/html", HTML),
        ("http://a.example/missing", "404 Not Found", "text/html", b"<html>gone</html>"),
        ("http://a.example/missing", "410 Gone", "text/html", b"<html>gone</html>"),
        ("http://a.example/img.png", "200 OK", "image/png", b"\x89PNG\r\n\x1a\n" + bytes(100)),
    ])
    drops = [ev for ev in events(path) if isinstance(ev, Drop)]
    assert [(d.reason, d.record.url) for d in drops] == [
        ("read_http_status", "http://a.example/missing"), ("read_http_status", "http://a.example/missing"),
        ("read_not_html", "http://a.example/img.png")]
    offsets = [d.record.meta["warc_offset"] for d in drops]
    assert len(set(offsets)) == 3 and all(d.record.meta["warc"] == str(path) for d in drops)
    assert [d.record.meta["http_status"] for d in drops] == [404, 410, 200]
    sample = RejectSample("read")
    for d in reversed(drops):  # the order they arrive in does not decide what is kept
        sample.offer(d.reason, d.record)
    got = sample.by_reason["read_http_status"]
    assert len(got) == 2 and {f["page_url"] for _, f in got} == {"http://a.example/missing"}
    assert sorted(json.loads(f["detail"])["http_status"] for _, f in got) == [404, 410]


def write_fastwarc(path: Path, responses) -> Path:
    """A gzipped WARC written by FastWARC's own writer: (url, HTTP message, extra WARC
    headers) per response record."""
    from fastwarc.stream_io import GzipWriter
    from fastwarc.warc import WarcRecord, WarcRecordType

    with open(path, "wb") as f:
        out = GzipWriter(f)
        for i, (url, message, extra) in enumerate(responses):
            rec = WarcRecord()
            rec.init_headers(record_type=WarcRecordType.response,
                             record_urn=f"uuid:{uuid.UUID(int=i + 1)}".encode())
            rec.headers["WARC-Target-URI"] = url
            rec.headers["Content-Type"] = "application/http; msgtype=response"
            for k, v in extra.items():
                rec.headers[k] = v
            rec.set_bytes_content(message)
            rec.write(out)
        out.close()
    return path


def test_a_payload_the_crawler_cut_is_a_counted_drop(tmp_path):
    """A record with a ``WARC-Truncated`` header (the crawler stopped the download: ``length``,
    ``time``, ``disconnect``) is whole as a record, so its Content-Length check passes; its
    page is not, and was kept as if it were.  It is ``read_warc_truncated``, with the header's
    value in the reject's detail (README, "read")."""
    from pipeline.core.rejects import RejectSample

    cut = HTML[:60]                        # a page that stops mid-document
    path = write_fastwarc(tmp_path / "cut.warc.gz", [
        ("http://a.example/whole", http(HTML), {}),
        ("http://a.example/long", http(cut), {"WARC-Truncated": "length"}),
        ("http://a.example/slow", http(cut), {"WARC-Truncated": "time"}),
        ("http://a.example/gone", http(cut, "404 Not Found"), {"WARC-Truncated": "length"}),
        ("http://a.example/pic.jpg", http(b"\xff\xd8\xff", headers=(("Content-Type", "image/jpeg"),)),
         {"WARC-Truncated": "length"}),
    ])
    evs = events(path)
    assert reasons(evs) == Counter({"keep": 1, "read_warc_truncated": 2, "read_http_status": 1,
                                    "read_not_html": 1})
    assert [p.url for p in pages(evs)] == ["http://a.example/whole"]
    drops = [ev for ev in evs if isinstance(ev, Drop) and ev.reason == "read_warc_truncated"]
    assert [d.record.url for d in drops] == ["http://a.example/long", "http://a.example/slow"]
    sample = RejectSample("read")
    for d in drops:
        sample.offer(d.reason, d.record)
    assert sorted(json.loads(f["detail"])["warc_truncated"]
                  for _, f in sample.by_reason["read_warc_truncated"]) == ["length", "time"]


def test_max_page_bytes_is_configurable(tmp_path):
    path = write_gz(tmp_path / "a.warc.gz", raw_record(http(b"<html>" + b"x" * 5000)))
    assert reasons(events(path, max_page_bytes=1000)) == Counter({"read_page_too_large": 1})
    assert reasons(events(path)) == Counter({"keep": 1})


def test_truncated_gzip_member(tmp_path):
    # a body that compresses like real text, so half the member ends inside the body
    words = " ".join(str(i * 7919 % 100_003) for i in range(20_000)).encode()
    data = gzip.compress(raw_record(http(b"<html><body><p>" + words)))
    path = tmp_path / "clipped.warc.gz"
    path.write_bytes(gzip.compress(raw_record(http(HTML))) + data[: len(data) // 2])
    assert reasons(events(path)) == Counter({"keep": 1, "read_truncated": 1})


@pytest.mark.parametrize("where, kept, bad", [("warc header", 1, 1), ("gzip trailer", 1, 1),
                                                ("metadata after it", 2, 1)])
def test_gzip_file_cut_inside_its_last_member_counts_the_damage(tmp_path, where, kept, bad):
    # Common Crawl's layout (request, response, metadata, each its own gzip member), the
    # download cut short: inside the last response's WARC header, inside its gzip trailer (its
    # block whole, its member not: not kept unchecked), or inside the metadata after it.  A cut member is never lost without a count: FastWARC ends such a file as if it
    # were whole.
    def capture(body):
        return [raw_record(b"GET / HTTP/1.1\r\n\r\n", rtype="request",
                           ctype="application/http; msgtype=request"),
                raw_record(http(body)),
                raw_record(b"fetchTimeMs: 1\r\n", rtype="metadata", ctype="application/warc-fields")]
    members = [gzip.compress(r) for r in capture(HTML) + capture(HTML.replace(b"Hello", b"Bye"))]
    if where == "metadata after it":
        members[-1] = members[-1][: len(members[-1]) // 3]
    else:
        cut = 40 if where == "warc header" else len(members[-2]) - 4  # 40: its first line
        members = members[:-2] + [members[-2][:cut]]
    path = tmp_path / "cut.warc.gz"
    path.write_bytes(b"".join(members))
    assert reasons(events(path)) == +Counter({"keep": kept, "read_bad_record": bad})  # +: no 0s


def test_truncated_uncompressed_record(tmp_path):
    path = tmp_path / "cut.warc"
    path.write_bytes(raw_record(http(HTML)) + raw_record(http(HTML * 50))[:-3000])
    assert reasons(events(path)) == Counter({"keep": 1, "read_truncated": 1})


def test_unparseable_http_heads_are_bad_records(tmp_path):
    path = write_gz(tmp_path / "junk.warc.gz",
                    raw_record(b"this is not an HTTP response at all"),
                    raw_record(b"HTTP/1.1 200 OK\r\nContent-Type: text/html" + b"x" * 70000),
                    raw_record(http(HTML, status="OK")),
                    raw_record(http(HTML)))
    assert reasons(events(path)) == Counter({"read_bad_record": 3, "keep": 1})


def test_records_that_are_not_http_responses_are_not_counted(tmp_path):
    path = write_gz(tmp_path / "other.warc.gz",
                    raw_record(b"software: x\r\n", rtype="warcinfo", ctype="application/warc-fields"),
                    raw_record(b"GET / HTTP/1.1\r\n\r\n", rtype="request",
                               ctype="application/http; msgtype=request"),
                    raw_record(b"fetchTimeMs: 1\r\n", rtype="metadata",
                               ctype="application/warc-fields"),
                    raw_record(b"20240101 example.com. 60 IN A 1.2.3.4", uri="dns:example.com",
                               ctype="text/dns"),
                    raw_record(http(HTML)))
    assert reasons(events(path)) == Counter({"keep": 1})


def test_a_response_without_a_page_url_is_a_counted_drop(tmp_path):
    # WARC requires a response's WARC-Target-URI; a page without an absolute http(s) one has no
    # provenance and no base for its relative images (it was kept with page_url "")
    body = http(b'<html><body><img src="https://img.example/cat.jpg" alt="A grey cat on a '
                b'wooden chair"><img src="/dog.jpg" alt="A dog"></body></html>')
    no_header = raw_record(body).replace(b"WARC-Target-URI: http://example.com/page\r\n", b"")
    path = write_gz(tmp_path / "nourl.warc.gz", no_header,
                    raw_record(body, uri=""), raw_record(body, uri="/relative/page"),
                    raw_record(body, uri="urn:uuid:1234"), raw_record(body, uri="http:///no-host"),
                    raw_record(http(b"gone", status="404 Not Found"), uri=""),
                    raw_record(body, uri="HTTPS://Example.com/Page"))
    evs = events(path)
    assert reasons(evs) == Counter({"read_no_url": 5, "read_http_status": 1, "keep": 1})
    assert [p.url for p in pages(evs)] == ["HTTPS://Example.com/Page"]
    dropped = [ev for ev in evs if isinstance(ev, Drop) and ev.reason == "read_no_url"]
    assert all(ev.record.meta["warc_offset"] is not None for ev in dropped)  # where to look


def test_raw_chunked_and_gzip_bodies_are_decoded(tmp_path):
    gz = gzip.compress(HTML)
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(gz[i:i + 50]), gz[i:i + 50])
                       for i in range(0, len(gz), 50)) + b"0\r\n\r\n"
    hdrs = (("Content-Type", "text/html"), ("Transfer-Encoding", "chunked"),
            ("Content-Encoding", "gzip"))
    deflated = zlib.compress(HTML)
    path = write_gz(tmp_path / "enc.warc.gz",
                    raw_record(http(chunked, headers=hdrs)),
                    raw_record(http(deflated, headers=(("Content-Type", "text/html"),
                                                       ("Content-Encoding", "deflate")))),
                    # headers say gzip, body already decoded (ClueWeb, Common Crawl): as is
                    raw_record(http(HTML, headers=hdrs)))
    got = pages(events(path))
    assert [p.body for p in got] == [HTML, HTML, HTML]


def test_broken_encodings_are_counted(tmp_path):
    gz_hdrs = (("Content-Type", "text/html"), ("Content-Encoding", "gzip"))
    gz = gzip.compress(HTML * 100)
    bomb = gzip.compress(b"<html>" + b" " * 30_000_000)
    path = write_gz(tmp_path / "enc.warc.gz",
                    raw_record(http(gz[: len(gz) // 2], headers=gz_hdrs)),  # server cut it
                    raw_record(http(gz[:10] + b"\x00garbage" * 20, headers=gz_hdrs)),
                    raw_record(http(bomb, headers=gz_hdrs)),
                    raw_record(http(b"5\r\nabc", headers=(("Content-Type", "text/html"),
                                                         ("Transfer-Encoding", "chunked")))))
    assert reasons(events(path)) == Counter({"read_truncated": 2, "read_bad_record": 1,
                                             "read_page_too_large": 1})


def test_untyped_bodies_are_sniffed(tmp_path):
    path = write_gz(tmp_path / "sniff.warc.gz",
                    raw_record(http(b"\n  <!DOCTYPE html><html></html>", headers=())),
                    raw_record(http(b"<!-- x --><p>hi", headers=())),
                    raw_record(http(b"%PDF-1.4 binary", headers=())),
                    raw_record(http(b"{\"json\": 1}", headers=(("Content-Type", "text/plain"),))))
    assert reasons(events(path)) == Counter({"keep": 2, "read_not_html": 2})


def test_lf_only_http_head_and_folded_header():
    status, headers, at = parse_http_head(
        b"HTTP/1.0 200 OK\nContent-Type: text/html;\n charset=utf-8\nX-A: 1\nX-A: 2\n\n<html>")
    assert status == 200 and at == len(b"HTTP/1.0 200 OK\nContent-Type: text/html;\n "
                                       b"charset=utf-8\nX-A: 1\nX-A: 2\n\n")
    assert headers == {"content-type": "text/html; charset=utf-8", "x-a": "1, 2"}


def test_sniff_and_decode_helpers():
    assert sniff_html(b"\xef\xbb\xbf <HTML lang=en>") and not sniff_html(b"<htmlx>")
    brotli = pytest.importorskip("brotli")
    assert decode_body(brotli.compress(HTML), {"content-encoding": "br"}, 10_000) == HTML
    # a body that is already HTML is left alone whatever the header claims
    assert decode_body(HTML, {"content-encoding": "br"}, 10_000) == HTML


def test_unreadable_file_and_garbage_file(tmp_path):
    src = WarcReader([str(tmp_path / "*.warc.gz")])
    garbage = tmp_path / "garbage.warc.gz"
    garbage.write_bytes(b"\x1f\x8b\x08\x00" + random.Random(0).randbytes(5000))
    text = tmp_path / "text.warc"
    text.write_bytes(b"not a warc file\n" * 100)
    # a stream that cannot be parsed any further counts once and ends the file
    assert list(src.events(str(garbage))) == [Drop("read_bad_record")]
    assert list(src.events(str(text))) == [Drop("read_bad_record")]
    assert list(src.events(str(tmp_path / "gone.warc.gz"))) == [Drop("read_unreadable")]


def test_a_file_with_no_warc_record_is_named(tmp_path, caplog):
    """`--input 'crawl/*'` also matched the folder's README: one read_bad_record, with no
    record to sample and no word of which file it was.  The log names it."""
    import logging

    notes = tmp_path / "SOURCE.md"
    notes.write_text("# where these WARCs come from\n" * 20)
    whole = write_warcio(tmp_path / "a.warc.gz", [("http://a.example/", "200 OK", "text/html", HTML)])
    with caplog.at_level(logging.WARNING, logger="pipeline.steps.read"):
        assert reasons(events(tmp_path / "*")) == Counter({"keep": 1, "read_bad_record": 1})
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and str(notes) in said[0] and "no WARC record" in said[0], said
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pipeline.steps.read"):
        events(whole)
    assert not caplog.records          # a WARC says nothing


def test_bad_configuration_fails_at_once(tmp_path):
    with pytest.raises(ConfigError, match="matches no WARC"):
        WarcReader([str(tmp_path / "nothing-*.warc.gz")]).parts()
    for kwargs in ({"patterns": []}, {"patterns": ["a"], "max_page_bytes": 0},
                   {"patterns": ["a"], "part_size": -1}, {"patterns": ["a"], "part_size": 1.5}):
        with pytest.raises(ConfigError):
            WarcReader(**kwargs)
    src = WarcReader.from_config(InputConfig(warc=["x.warc.gz"], max_page_bytes=10, part_size=2))
    assert (src.patterns, src.max_page_bytes, src.part_size) == (["x.warc.gz"], 10, 2)


# ---- input oddities (issue 17.10) -----------------------------------------------------------

_CHILD = """
import collections, json, logging, sys
from pipeline.core.stage import Drop
from pipeline.steps.read import WarcReader
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
patterns, parts = json.loads(sys.argv[1])
src = WarcReader(patterns)
parts = parts or src.parts()
evs = [ev for part in parts for ev in src.events(part)]
print(json.dumps([parts, collections.Counter(
    ev.reason if isinstance(ev, Drop) else "keep" for ev in evs)]))
"""


def read_in_child(patterns, parts=None):
    """Reads in a child process under a timeout: opening a FIFO blocks inside FastWARC's C
    code with the GIL held, so a thread could not even time out.  -> (parts, reasons, log)."""
    import json
    import subprocess
    import sys
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([patterns, parts])],
                              cwd=REPO, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("reading the input blocked (a named pipe was opened)")
    if done.returncode:
        raise AssertionError(done.stderr)
    got_parts, got = json.loads(done.stdout)
    return got_parts, Counter(got), done.stderr


def test_only_regular_files_are_inputs(tmp_path):
    """A named pipe and a directory named like WARCs are skipped with a warning naming them,
    not opened (a FIFO would block the run forever) nor counted as bad records."""
    import os
    write_gz(tmp_path / "a.warc.gz", raw_record(http(HTML)))
    fifo = tmp_path / "pipe.warc.gz"
    os.mkfifo(fifo)
    (tmp_path / "dir.warc.gz").mkdir()
    (tmp_path / "dir.warc.gz" / "inner.warc.gz").write_bytes(b"")
    for pattern in (str(tmp_path), str(tmp_path / "*.warc.gz")):
        parts, got, log = read_in_child([pattern])
        assert got == Counter({"keep": 1}), pattern
        assert parts == [str(tmp_path / "a.warc.gz")]
        assert f"{fifo}: not a regular file" in log
        assert f"{tmp_path / 'dir.warc.gz'}: not a regular file" in log
    with pytest.raises(ConfigError, match="pipe.warc.gz.*not a regular file"):
        WarcReader([str(fifo)]).parts()


def test_a_part_that_stopped_being_a_file_is_unreadable(tmp_path):
    """Between listing and reading, a path replaced by a FIFO or a directory is counted as
    ``read_unreadable``, never opened."""
    import os
    fifo = tmp_path / "late.warc.gz"
    os.mkfifo(fifo)
    (tmp_path / "d.warc").mkdir()
    _, got, _ = read_in_child(["unused"], [str(fifo), str(tmp_path / "d.warc")])
    assert got == Counter({"read_unreadable": 2})


# ---- damaged spots: reading goes on after them (issue 17.6) -----------------------------------

def _ten(i: int) -> bytes:
    return raw_record(http(HTML + b"<p>page %d</p>" % i * 40), uri=f"http://example.com/{i}")


def _flip(member: bytes) -> bytes:
    m = bytearray(member)
    for k in range(30, 60):
        m[k] ^= 0xFF
    return bytes(m)


def _short(i: int) -> bytes:  # a WARC Content-Length 100 bytes short of the block
    block = http(HTML + b"<p>page %d</p>" % i * 40)
    return raw_record(block, uri=f"http://example.com/{i}", length=len(block) - 100)


def _long(i: int) -> bytes:
    block = http(HTML + b"<p>page %d</p>" % i * 40)
    return raw_record(block, uri=f"http://example.com/{i}", length=len(block) + 100)


DAMAGE = {  # name -> (compressed?, what replaces record 3 of 10)
    "gzip_member_corrupt": (True, lambda: _flip(gzip.compress(_ten(3)))),
    "gzip_member_cut": (True, lambda: gzip.compress(_ten(3))[:150]),
    "gzip_short_length": (True, lambda: gzip.compress(_short(3))),
    "gzip_long_length": (True, lambda: gzip.compress(_long(3))),
    "plain_header_mangled": (False, lambda: _ten(3).replace(b"WARC/1.0", b"WXRC/1.0")),
    "plain_short_length": (False, lambda: _short(3)),
    "plain_long_length": (False, lambda: _long(3)),
    "plain_cut_record": (False, lambda: _ten(3)[:400]),
}


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_a_damaged_record_costs_only_itself(tmp_path, name):
    compressed, damaged = DAMAGE[name]
    wrap = gzip.compress if compressed else (lambda r: r)
    data = b"".join(damaged() if i == 3 else wrap(_ten(i)) for i in range(10))
    path = tmp_path / ("x.warc.gz" if compressed else "x.warc")
    path.write_bytes(data)
    evs = events(path)
    # every record is counted: the nine intact ones kept, the damaged one dropped
    assert reasons(evs) == Counter({"keep": 9, "read_bad_record": 1})
    kept = pages(evs)
    assert sorted(p.url for p in kept) == [f"http://example.com/{i}" for i in range(10) if i != 3]
    for p in kept:  # no cut page passes, offsets point at the records
        i = int(p.url.rsplit("/", 1)[1])
        assert p.body == HTML + b"<p>page %d</p>" % i * 40
        assert data[p.meta["warc_offset"]:].startswith(b"\x1f\x8b" if compressed else b"WARC/1.0")


def test_garbage_between_records_is_counted_once_and_skipped(tmp_path):
    path = tmp_path / "g.warc.gz"
    path.write_bytes(b"".join(gzip.compress(_ten(i)) for i in range(3)) + b"junk\x1f\x8b\x08x" * 50
                     + b"".join(gzip.compress(_ten(i)) for i in range(3, 6)))
    assert reasons(events(path)) == Counter({"keep": 6, "read_bad_record": 1})


# ---- decompression bombs are decoded against the cap (issue 17.4) -----------------------------

def _bomb(coding: str, mib: int = 256) -> bytes:
    """``mib`` MiB of zeros, compressed in a streaming way (a few KB)."""
    zeros = b"\0" * (1 << 20)
    if coding == "br":
        import brotli

        c = brotli.Compressor(quality=5)
        return b"".join(c.process(zeros) for _ in range(mib)) + c.finish()
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS if coding == "gzip" else zlib.MAX_WBITS)
    return b"".join(c.compress(zeros) for _ in range(mib)) + c.flush()


@pytest.mark.parametrize("coding", ["br", "gzip", "deflate"])
def test_a_compression_bomb_never_decodes_past_the_cap(tmp_path, coding):
    import tracemalloc

    from pipeline.steps.read import TooLarge

    bomb = _bomb(coding)
    assert len(bomb) < 300_000
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge):
            decode_body(bomb, {"content-encoding": coding}, 1_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16_000_000  # the cap and a little, not the 256 MiB the body decodes to
    head = http(bomb, headers=(("Content-Type", "text/html"), ("Content-Encoding", coding)))
    path = write_gz(tmp_path / "bomb.warc.gz", raw_record(head), raw_record(http(HTML)))
    assert reasons(events(path, max_page_bytes=1_000_000)) == Counter(
        {"read_page_too_large": 1, "keep": 1})
