"""The fault web: a server on 127.0.0.1 that serves every fault the open web produces.

``FaultWeb`` serves a small site (robots.txt, an index, a gallery page, pages that fail in
every way) and images that fail in every way, and logs each request with its arrival time, so
tests can check what was (never) fetched and how fast.  ``EXPECTED_PAGES`` and
``EXPECTED_IMAGES`` say which reason each fault must become.
"""
from __future__ import annotations

import http.server
import io
import struct
import threading
import time
import zlib

import numpy as np
from PIL import Image

HANG_S = 3.0  # longer than any test's timeout_s: "a response that never comes"


# --- images -------------------------------------------------------------------------------

def photo(seed: int, w: int = 400, h: int = 320) -> Image.Image:
    """A distinct, photo-like RGB image: smooth gradients plus noise (each seed differs)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    base = rng.uniform(0, 255, 3)
    slope = rng.uniform(-0.4, 0.4, (3, 2))
    img = np.stack([base[c] + slope[c, 0] * x + slope[c, 1] * y for c in range(3)], axis=-1)
    img += rng.normal(0, 12, img.shape)
    return Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))


def encode(im: Image.Image, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def bomb_png(w: int = 100_000, h: int = 100_000) -> bytes:
    """A PNG of a few hundred bytes whose header claims ``w x h`` pixels."""
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * (w * 3 + 1) * 2, 9)[:200]
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", idat) + _png_chunk(b"IEND", b"")


def corrupt_png() -> bytes:
    data = bytearray(encode(photo(101), "PNG"))
    i = data.index(b"IDAT")
    for k in range(i + 200, i + 400):  # garbage in the compressed pixels, header intact
        data[k] ^= 0x5A
    return bytes(data)


def corrupt_jpeg() -> bytes:
    data = encode(photo(102), "JPEG", quality=90)
    return data[: len(data) // 2]  # header intact, scan cut off: served with its real length


def rotated_jpeg() -> bytes:
    """Stored 400x320 with its top half red; EXIF Orientation 6 says "turn 90 degrees
    clockwise to display": upright it is 320x400 with the red half on the right."""
    arr = np.zeros((320, 400, 3), np.uint8)
    arr[:160] = (220, 20, 20)
    arr[160:] = (20, 20, 220)
    exif = Image.Exif()
    exif[0x0112] = 6
    return encode(Image.fromarray(arr), "JPEG", quality=95, exif=exif.tobytes())


def sixteen_bit_png() -> bytes:
    ramp = np.linspace(0, 65535, 400, dtype=np.float64)[None, :].repeat(320, axis=0)
    ramp = (ramp * 0.7 + np.random.default_rng(7).uniform(0, 9000, (320, 400))).astype(np.uint16)
    return encode(Image.frombytes("I;16", (400, 320), ramp.astype("<u2").tobytes()), "PNG")


def animated_gif() -> bytes:
    frames = [photo(110 + i).quantize(64) for i in range(3)]
    return encode(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)


SVG = (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400">'
       b'<circle cx="200" cy="200" r="150" fill="red"/></svg>')
HTML_AS_IMAGE = b"<!doctype html><html><body>Not Found: this is not an image</body></html>"


# --- handlers -------------------------------------------------------------------------------

def body(data: bytes, ctype: str, status: int = 200, headers: dict | None = None):
    def handler(req):
        req.send_response(status)
        req.send_header("Content-Type", ctype)
        req.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            req.send_header(k, v)
        req.end_headers()
        req.wfile.write(data)
    return handler


def redirect(location: str):
    return body(b"", "text/html", 302, {"Location": location})


def hang(req):
    time.sleep(HANG_S)  # the client gives up long before


def drip(req):
    req.send_response(200)
    req.send_header("Content-Type", "image/jpeg")
    req.send_header("Content-Length", "100000")
    req.end_headers()
    try:
        for _ in range(int(HANG_S / 0.1)):
            req.wfile.write(b"\xff")
            req.wfile.flush()
            time.sleep(0.1)
    except OSError:
        pass


def drip_headers(req, seconds: float = 30.0):
    """The status line, then the headers one byte every 0.05 s for ``seconds`` (each recv
    gets a byte long before a socket timeout): only a deadline on the whole attempt ends it."""
    try:
        req.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        for _ in range(int(seconds / 0.05)):
            req.wfile.write(b"z")
            req.wfile.flush()
            time.sleep(0.05)
    except OSError:
        pass  # the client hung up: the point
    req.close_connection = True


def truncated(req):
    data = encode(photo(103), "JPEG")
    req.send_response(200)
    req.send_header("Content-Type", "image/jpeg")
    req.send_header("Content-Length", str(len(data)))
    req.end_headers()
    req.wfile.write(data[:1000])
    req.close_connection = True  # and hang up, short of the promised length


def huge(req):
    req.send_response(200)
    req.send_header("Content-Type", "image/jpeg")
    req.send_header("Content-Length", str(10 ** 12))
    req.end_headers()
    req.wfile.write(b"\xff\xd8")
    req.close_connection = True


def busy(req):
    body(b"slow down", "text/plain", 429, {"Retry-After": "1"})(req)


class BusyOnce:
    """429 with ``Retry-After: 1`` the first time, then the image."""

    def __init__(self, data: bytes):
        self.data = data
        self.calls = 0

    def __call__(self, req):
        self.calls += 1
        if self.calls == 1:
            return busy(req)
        return body(self.data, "image/jpeg")(req)


# --- the site -------------------------------------------------------------------------------

# image path -> (the reason it must become, or "kept"), served by FaultWeb.image_routes().
EXPECTED_IMAGES = {
    "/img/ok.jpg": "kept",
    "/img/shared.jpg": "kept",  # used by two pages: fetched once
    "/img/busy_then_ok.jpg": "kept",
    "/img/cmyk.jpg": "kept",
    "/img/rgb16.png": "kept",
    "/img/rotated.jpg": "kept",
    "/img/anim.gif": "kept",
    "/img/photo.webp": "kept",
    "/img/octet.jpg": "kept",  # a JPEG served as application/octet-stream
    "/img/missing.jpg": "fetch_http_404",
    "/img/error.jpg": "fetch_http_500",
    "/img/busy.jpg": "fetch_http_429",
    "/img/hang.jpg": "fetch_timeout",
    "/img/drip.jpg": "fetch_timeout",
    "/img/slow_head.jpg": "fetch_timeout",  # headers a byte at a time (issue 17.3)
    "/img/cut.jpg": "fetch_truncated",
    "/img/huge.jpg": "fetch_too_large",
    "/img/loop.jpg": "fetch_too_many_redirects",
    "/img/to_private.jpg": "fetch_blocked_address",
    "/img/to_metadata.jpg": "fetch_blocked_address",
    "/img/wrong_type.jpg": "fetch_not_image_type",
    "/img/html.jpg": "fetch_not_an_image",
    # No .svg in the name: an SVG URL is dropped at extract (extract_image_svg) before any fetch;
    # this one is known to be SVG only from the bytes and type the server sends.
    "/img/vector-art": "fetch_svg",
    "/img/private/secret.jpg": "fetch_robots_disallowed",
    "/img/noai.jpg": "fetch_opt_out",
    "/img/noimageai.jpg": "fetch_opt_out",
    "/img/small.jpg": "image_size_too_small",
    "/img/bomb.png": "image_size_too_many_pixels",
    "/img/corrupt.jpg": "image_decode_failed",
    "/img/corrupt.png": "image_decode_failed",
}

# page path -> the crawl reason it must become, or "kept".
EXPECTED_PAGES = {
    "/": "kept",
    "/pages/gallery.html": "kept",
    "/pages/second.html": "kept",
    "/pages/nofollow.html": "kept",
    "/pages/missing.html": "crawl_http_404",
    "/pages/error.html": "crawl_http_500",
    "/pages/busy.html": "crawl_http_429",
    "/pages/hang.html": "crawl_timeout",
    "/pages/loop.html": "crawl_too_many_redirects",
    "/pages/to_private.html": "crawl_blocked_address",
    "/pages/data.bin": "crawl_not_html",
    "/pages/huge.html": "crawl_too_large",
    "/pages/noai.html": "crawl_opt_out_header",
    "/pages/meta_noimageai.html": "crawl_opt_out_meta",
    "/private/secret.html": "crawl_robots_disallowed",
}
# Linked only from nofollow.html (whose meta says nofollow) or rel=nofollow: never requested.
NEVER_FOLLOWED = ("/pages/behind_nofollow.html", "/pages/rel_nofollow.html")

ROBOTS_TXT = b"""User-agent: *
Disallow: /private/
Disallow: /img/private/

User-agent: otherbot
Disallow: /
"""


PROSE = ("<p>Our village lies between the river and the old forest. Every summer the families "
         "walk along the water, watch the boats and share photographs of the long evenings "
         "with their friends and neighbours.</p>")

# Natural captions, one per image path (the text step keeps these: English, in vocabulary).
SUBJECTS = ["fishing boat", "mountain lake", "wooden bridge", "country road", "city square",
            "garden gate", "stone church", "small harbour", "wheat field", "pine forest",
            "sandy beach", "market stall", "river bank", "train station", "old lighthouse",
            "quiet street", "flower meadow", "village bakery", "castle tower", "snowy hill",
            "farm house", "park bench", "red barn", "canal boat", "windmill", "orchard",
            "sheep pasture", "harbour wall", "bus stop", "tea room"]


def caption(path: str) -> str:
    subject = SUBJECTS[sorted(EXPECTED_IMAGES).index(path) % len(SUBJECTS)]
    return f"A photograph of the {subject} near our village on a bright summer morning"


def html(title: str, inner: str, head: str = "") -> bytes:
    return (f'<!doctype html><html lang="en"><head><title>{title}</title>{head}</head>'
            f"<body><h1>{title}</h1>{PROSE}{inner}</body></html>").encode()


class FaultWeb:
    """The server; ``log`` holds ``(path, monotonic time, user agent)`` per request."""

    def __init__(self):
        self.log: list[tuple[str, float, str]] = []
        self._lock = threading.Lock()
        self.routes = {}
        web = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers do

            def do_GET(self):  # noqa: N802
                with web._lock:
                    web.log.append((self.path, time.monotonic(), self.headers.get("User-Agent", "")))
                route = web.routes.get(self.path)
                if route is None:
                    return body(b"not found", "text/plain", 404)(self)
                route(self)

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # clients hanging up on a hang or a drip is the point

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> "FaultWeb":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def requests(self, path: str) -> list[float]:
        with self._lock:
            return [t for p, t, _ in self.log if p == path]

    def paths(self) -> set[str]:
        with self._lock:
            return {p for p, _, _ in self.log}

    # -- content --

    def image_routes(self) -> dict:
        jpg = lambda seed, **kw: encode(photo(seed, **kw), "JPEG", quality=90)  # noqa: E731
        cmyk = photo(5).convert("CMYK")
        return {
            "/img/ok.jpg": body(jpg(1), "image/jpeg"),
            "/img/shared.jpg": body(jpg(2), "image/jpeg"),
            "/img/busy_then_ok.jpg": BusyOnce(jpg(3)),
            "/img/cmyk.jpg": body(encode(cmyk, "JPEG", quality=90), "image/jpeg"),
            "/img/rgb16.png": body(sixteen_bit_png(), "image/png"),
            "/img/rotated.jpg": body(rotated_jpeg(), "image/jpeg"),
            "/img/anim.gif": body(animated_gif(), "image/gif"),
            "/img/photo.webp": body(encode(photo(6), "WEBP", quality=85), "image/webp"),
            "/img/octet.jpg": body(jpg(7), "application/octet-stream"),
            "/img/error.jpg": body(b"server error", "text/plain", 500),
            "/img/busy.jpg": busy,
            "/img/hang.jpg": hang,
            "/img/drip.jpg": drip,
            "/img/slow_head.jpg": drip_headers,
            "/img/cut.jpg": truncated,
            "/img/huge.jpg": huge,
            "/img/loop.jpg": redirect("/img/loop2.jpg"),
            "/img/loop2.jpg": redirect("/img/loop.jpg"),
            "/img/to_private.jpg": redirect("http://10.1.2.3/x.jpg"),
            "/img/to_metadata.jpg": redirect("http://169.254.169.254/latest/meta-data/"),
            "/img/wrong_type.jpg": body(jpg(8), "text/html"),
            "/img/html.jpg": body(HTML_AS_IMAGE, "image/jpeg"),
            "/img/vector-art": body(SVG, "image/svg+xml"),
            "/img/private/secret.jpg": body(jpg(9), "image/jpeg"),
            "/img/noai.jpg": body(jpg(10), "image/jpeg", headers={"X-Robots-Tag": "noai"}),
            "/img/noimageai.jpg": body(jpg(11), "image/jpeg",
                                       headers={"X-Robots-Tag": "max-image-preview:large, noimageai"}),
            "/img/small.jpg": body(jpg(12, w=120, h=90), "image/jpeg"),
            "/img/bomb.png": body(bomb_png(), "image/png"),
            "/img/corrupt.jpg": body(corrupt_jpeg(), "image/jpeg"),
            "/img/corrupt.png": body(corrupt_png(), "image/png"),
        }

    def site(self) -> "FaultWeb":
        """Registers the whole fault web: robots.txt, pages and images."""
        self.routes.update(self.image_routes())
        imgs = "".join(f'<p><img src="{p}" alt="{caption(p)}"></p>'
                       for p in EXPECTED_IMAGES if p != "/img/shared.jpg")
        shared = f'<p><img src="/img/shared.jpg" alt="{caption("/img/shared.jpg")}"></p>'
        links = "".join(f'<p><a href="{p}">{p}</a></p>' for p in EXPECTED_PAGES if p != "/")
        self.routes.update({
            "/robots.txt": body(ROBOTS_TXT, "text/plain"),
            "/": body(html("Fault web", links + '<a href="/#top">self</a> '
                           '<a href="/pages/gallery.html#x">gallery again</a>'), "text/html"),
            "/pages/gallery.html": body(html("Gallery", imgs + shared), "text/html"),
            "/pages/second.html": body(html("Second", shared + '<a href="/pages/rel_nofollow.html" '
                                            'rel="nofollow">x</a>'), "text/html"),
            "/pages/nofollow.html": body(html("No follow", '<a href="/pages/behind_nofollow.html">x</a>',
                                              head='<meta name="robots" content="nofollow">'),
                                         "text/html"),
            "/pages/behind_nofollow.html": body(html("Hidden", ""), "text/html"),
            "/pages/rel_nofollow.html": body(html("Hidden", ""), "text/html"),
            "/pages/error.html": body(b"error", "text/plain", 500),
            "/pages/busy.html": busy,
            "/pages/hang.html": hang,
            "/pages/loop.html": redirect("/pages/loop.html"),
            "/pages/to_private.html": redirect("http://192.168.0.1/admin"),
            "/pages/data.bin": body(b"\x00" * 64, "application/octet-stream"),
            "/pages/huge.html": body(b"<html>" + b"x" * 300_000 + b"</html>", "text/html"),
            "/pages/noai.html": body(html("No AI", shared), "text/html",
                                     headers={"X-Robots-Tag": "noai"}),
            "/pages/meta_noimageai.html": body(html("Meta", shared,
                                                    head='<meta name="robots" content="noimageai">'),
                                               "text/html"),
            "/private/secret.html": body(html("Secret", ""), "text/html"),
        })
        return self
