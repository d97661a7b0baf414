"""Writes the sample web's pages as a gzipped WARC file, the way a crawler would: a warcinfo
record, HTTP response records (some preceded by their request record), with fixed dates and
record IDs derived from the seed and URL, so the file is byte-identical on every run.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from io import BytesIO
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

CRAWL_START = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
REASONS = {200: "OK", 301: "Moved Permanently", 404: "Not Found"}
REQUEST_EVERY = 10  # like a crawl that kept some request records


@dataclass
class Response:
    """One HTTP response as it goes into the WARC file."""

    url: str
    body: bytes
    content_type: str
    status: int = 200
    extra_headers: list = field(default_factory=list)


def _record_id(seed: int, kind: str, url: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'lait-sampleweb|{seed}|{kind}|{url}')}>"


def write_warc(path, responses: list[Response], seed: int) -> None:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="1.0")
        info = (b"software: lait-builder tools.sampleweb\r\nformat: WARC File Format 1.0\r\n"
                b"description: synthetic sample web with ground truth\r\n"
                + f"isPartOf: sampleweb-seed-{seed}\r\n".encode())
        warc_date = CRAWL_START.strftime("%Y-%m-%dT%H:%M:%SZ")
        writer.write_record(writer.create_warc_record(
            "", "warcinfo", payload=BytesIO(info), length=len(info),
            warc_content_type="application/warc-fields",
            warc_headers_dict={"WARC-Record-ID": _record_id(seed, "warcinfo", ""), "WARC-Date": warc_date,
                               "WARC-Filename": "pages.warc.gz"}))
        for i, r in enumerate(responses):
            when = CRAWL_START + timedelta(seconds=2 * i + 1)
            warc_date = when.strftime("%Y-%m-%dT%H:%M:%SZ")
            resp_id = _record_id(seed, "response", r.url)
            parts = urlsplit(r.url)
            if i % REQUEST_EVERY == 0:
                req_http = StatusAndHeaders(
                    f"GET {parts.path or '/'} HTTP/1.1",
                    [("Host", parts.netloc), ("User-Agent", "lait-sampleweb-crawler/1.0"),
                     ("Accept", "text/html,*/*;q=0.8")], is_http_request=True)
                writer.write_record(writer.create_warc_record(
                    r.url, "request", payload=BytesIO(b""), length=0, http_headers=req_http,
                    warc_headers_dict={"WARC-Record-ID": _record_id(seed, "request", r.url),
                                       "WARC-Date": warc_date, "WARC-Concurrent-To": resp_id}))
            http = StatusAndHeaders(
                f"{r.status} {REASONS[r.status]}",
                [("Date", format_datetime(when, usegmt=True)), ("Server", "nginx/1.24.0"),
                 ("Content-Type", r.content_type), ("Content-Length", str(len(r.body)))] + r.extra_headers,
                protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                r.url, "response", payload=BytesIO(r.body), length=len(r.body), http_headers=http,
                warc_headers_dict={"WARC-Record-ID": resp_id, "WARC-Date": warc_date,
                                   "WARC-IP-Address": "127.0.0.1"}))
