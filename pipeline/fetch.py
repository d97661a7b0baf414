"""Image fetching: each image URL is downloaded once, however many pages use it.

``ImageFetcher`` is a group stage keyed by image URL.  The executor runs ``concurrency`` groups
at once in threads: fetching is I/O-bound, so threads give the concurrency without extra
processes.  Every failure mode the web produces becomes a counted reason for each candidate
that pointed at the image.
"""
from __future__ import annotations

import io
import ipaddress
import socket
import time
from urllib.parse import urljoin, urlsplit

import urllib3
from PIL import Image

from pipeline.records import ImageItem
from pipeline.stage import Drop, GroupStage, Keep

Image.MAX_IMAGE_PIXELS = None  # we check the header size ourselves (image_size stage)

IMAGE_TYPES = ("image/",)
MAX_REDIRECTS = 5


class FetchError(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def check_address(url: str, allow_private: bool) -> None:
    """SSRF guard: only http(s), and no private/loopback/link-local hosts unless allowed."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError("bad_url")
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 80, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        raise FetchError("dns_error") from None
    for info in infos:
        ip = ipaddress.ip_address(info[4][0])
        if not ip.is_global or ip.is_multicast:
            raise FetchError("blocked_address")


class ImageFetcher(GroupStage):
    """Downloads each image URL once (with timeout, byte cap and redirect cap) and reads its
    header (format, size) without decoding the pixels."""

    name = "fetch"

    def __init__(self, timeout_s: float = 10.0, max_bytes: int = 20_000_000,
                 user_agent: str = "lait-builder", concurrency: int = 16, retries: int = 1,
                 allow_private: bool = False):
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.user_agent = user_agent
        self.concurrency = concurrency
        self.retries = retries
        self.allow_private = allow_private
        self._http = None

    def setup(self) -> None:
        self._http = urllib3.PoolManager(
            num_pools=64, maxsize=self.concurrency, retries=False,
            headers={"User-Agent": self.user_agent, "Accept": "image/*"},
        )

    def key(self, candidate) -> str:
        return candidate.image_url

    def reduce(self, url: str, candidates: list):
        try:
            data, mime = self.download(url)
            item = self.probe(url, data, mime)
        except FetchError as exc:
            return [self.drop(exc.reason)] * len(candidates)
        item.candidates = sorted(candidates, key=lambda c: (c.page_url, c.img_index, c.text_source, c.text))
        # One image for the whole group: every candidate is kept, the first carries the output.
        return [Keep((item,))] + [Keep(())] * (len(candidates) - 1)

    def download(self, url: str) -> tuple[bytes, str]:
        attempt = 0
        while True:
            try:
                return self._get(url)
            except FetchError as exc:
                retriable = exc.reason in ("timeout", "connection_error") or exc.reason.startswith("http_5")
                if not retriable or attempt >= self.retries:
                    raise
                attempt += 1
                time.sleep(min(2.0, 0.2 * 2 ** attempt))

    def _get(self, url: str) -> tuple[bytes, str]:
        deadline = time.monotonic() + self.timeout_s * 3
        for _hop in range(MAX_REDIRECTS + 1):
            check_address(url, self.allow_private)
            try:
                resp = self._http.request(
                    "GET", url, preload_content=False, redirect=False,
                    timeout=urllib3.Timeout(connect=self.timeout_s, read=self.timeout_s),
                )
            except urllib3.exceptions.TimeoutError:
                raise FetchError("timeout") from None
            except (urllib3.exceptions.HTTPError, OSError):
                raise FetchError("connection_error") from None
            try:
                if resp.status in (301, 302, 303, 307, 308):
                    location = resp.headers.get("Location")
                    if not location:
                        raise FetchError("bad_redirect")
                    url = urljoin(url, location)
                    continue
                if resp.status != 200:
                    raise FetchError(f"http_{resp.status}" if 100 <= resp.status < 600 else "http_other")
                mime = (resp.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                if mime and not mime.startswith(IMAGE_TYPES) and mime != "application/octet-stream":
                    raise FetchError("not_image_type")
                declared = resp.headers.get("Content-Length")
                if declared and declared.isdigit() and int(declared) > self.max_bytes:
                    raise FetchError("too_large")
                return self._read_body(resp, declared, deadline), mime
            finally:
                resp.release_conn()
        raise FetchError("too_many_redirects")

    def _read_body(self, resp, declared, deadline) -> bytes:
        buf = bytearray()
        try:
            for chunk in resp.stream(64 * 1024):
                buf += chunk
                if len(buf) > self.max_bytes:
                    raise FetchError("too_large")
                if time.monotonic() > deadline:  # a slow drip must not hold a worker forever
                    raise FetchError("timeout")
        except urllib3.exceptions.TimeoutError:
            raise FetchError("timeout") from None
        except (urllib3.exceptions.ProtocolError, urllib3.exceptions.HTTPError, OSError):
            raise FetchError("truncated") from None
        if declared and declared.isdigit() and len(buf) < int(declared):
            raise FetchError("truncated")
        return bytes(buf)

    @staticmethod
    def probe(url: str, data: bytes, mime: str) -> ImageItem:
        """Reads format and size from the header only; pixels are decoded later, and only
        for images that pass the size check."""
        if not data:
            raise FetchError("empty")
        try:
            with Image.open(io.BytesIO(data)) as im:
                fmt, (w, h) = im.format or "", im.size
        except Exception:
            raise FetchError("not_an_image") from None
        return ImageItem(image_url=url, data=data, candidates=[], width=w, height=h,
                         orig_width=w, orig_height=h, orig_format=fmt.lower(),
                         orig_bytes=len(data), mime=mime)
