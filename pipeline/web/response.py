"""What a final (non-redirect) response must be before its body is taken, and the body read
under the byte cap and the attempt's deadline.

The checks run cheapest first, so a refused response costs as little as possible: the status
(``http_<status>``, with the server's ``Retry-After`` for the retry loop), the media type
(``not_<type_name>``, before a byte of the body), the declared ``Content-Length`` against the
cap (``too_large``), then the body itself, whose real length is capped too and which must be
complete (``truncated``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import urllib3

from pipeline.web.failures import FetchError, retry_after_seconds


@dataclass
class Response:
    url: str  # after redirects
    status: int
    headers: dict[str, str]
    body: bytes
    mime: str
    robots_tags: list[str] = field(default_factory=list)  # every X-Robots-Tag value


def read_response(resp, url: str, accept, type_name: str, max_bytes: int,
                  deadline: float) -> Response:
    """The :class:`Response` of urllib3's ``resp`` (not a redirect, body not yet read) for
    ``url``; raises :class:`FetchError`.  ``accept``: a predicate on the media type (lower
    case, no parameters) or None; ``deadline``: the attempt's, on ``time.monotonic()``."""
    if resp.status != 200:
        status = resp.status if 100 <= resp.status < 600 else "other"
        raise FetchError(f"http_{status}", retry_after_seconds(resp.headers.get("Retry-After")))
    mime = (resp.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if accept is not None and not accept(mime):
        raise FetchError(f"not_{type_name}")
    declared = resp.headers.get("Content-Length", "").strip()
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchError("too_large")  # refused before reading a byte
    body = read_body(resp, declared, deadline, max_bytes)
    return Response(url, resp.status, dict(resp.headers.items()), body, mime,
                    resp.headers.getlist("X-Robots-Tag"))


def read_body(resp, declared: str, deadline: float, max_bytes: int) -> bytes:
    """The body, at most ``max_bytes``, and at least the ``declared`` Content-Length."""
    buf = bytearray()
    try:
        # read1 returns what has arrived, so the deadline is checked even while a server
        # drips a byte at a time (read(n) would wait for n bytes).
        while chunk := resp.read1(64 * 1024):
            buf += chunk
            if len(buf) > max_bytes:
                raise FetchError("too_large")
            if time.monotonic() > deadline:  # a slow drip must not hold a thread forever
                raise FetchError("timeout")
    except urllib3.exceptions.TimeoutError:
        raise FetchError("timeout") from None
    except (urllib3.exceptions.HTTPError, OSError):
        raise FetchError("truncated") from None
    if declared.isdigit() and len(buf) < int(declared):
        raise FetchError("truncated")
    return bytes(buf)
