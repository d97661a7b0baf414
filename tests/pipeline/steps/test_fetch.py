"""Image fetching against a loopback server: each fault becomes its own reason."""
import io
import time

import pytest
from PIL import Image

from pipeline.steps.fetch import ImageFetcher
from pipeline.web.address import check_address
from pipeline.web.failures import FetchError
from pipeline.core.records import Candidate
from tests.conftest import serve_bytes


def jpeg(w=400, h=320, color=(200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), color).save(buf, "JPEG")
    return buf.getvalue()


def cand(url, page="http://p/1", text="a red square"):
    return Candidate(page_url=page, image_url=url, text_source="alt", text=text, raw_text=text)


@pytest.fixture()
def fetcher():
    f = ImageFetcher(timeout_s=0.5, max_bytes=200_000, concurrency=4, retries=0, allow_private=True)
    f.setup()
    return f


def test_one_fetch_for_all_pages_using_an_image(http_server, fetcher):
    hits = []
    body = jpeg()

    def handler(req):
        hits.append(req.path)
        serve_bytes(body)(req)
    http_server.routes["/a.jpg"] = handler
    url = http_server.url + "/a.jpg"
    events = fetcher.events(url, [cand(url, page=f"http://p/{i}") for i in range(3)])
    assert hits == ["/a.jpg"]
    assert [len(e.outputs) for e in events] == [1, 0, 0]
    item = events[0].outputs[0]
    assert (item.orig_width, item.orig_height, item.orig_format) == (400, 320, "jpeg")
    assert len(item.candidates) == 3 and item.data == body


def slow(req):
    time.sleep(1.5)
    serve_bytes(jpeg())(req)


def truncated(req):
    req.send_response(200)
    req.send_header("Content-Type", "image/jpeg")
    req.send_header("Content-Length", "5000")
    req.end_headers()
    req.wfile.write(jpeg()[:100])


def redirect_to(path):
    def handler(req):
        req.send_response(302)
        req.send_header("Location", path)
        req.send_header("Content-Length", "0")
        req.end_headers()
    return handler


@pytest.mark.parametrize("path, route, reason", [
    ("/missing.jpg", None, "fetch_http_404"),
    ("/err.jpg", serve_bytes(b"oops", "text/plain", 500), "fetch_http_500"),
    ("/page.jpg", serve_bytes(b"<html></html>", "text/html"), "fetch_not_image_type"),
    ("/fake.jpg", serve_bytes(b"<html>not an image</html>", "image/jpeg"), "fetch_not_an_image"),
    ("/big.jpg", serve_bytes(b"x" * 300_000), "fetch_too_large"),
    ("/slow.jpg", slow, "fetch_timeout"),
    ("/cut.jpg", truncated, "fetch_truncated"),
    ("/loop.jpg", redirect_to("/loop.jpg"), "fetch_too_many_redirects"),
])
def test_faults_become_reasons(http_server, fetcher, path, route, reason):
    if route:
        http_server.routes[path] = route
    url = http_server.url + path
    events = fetcher.events(url, [cand(url), cand(url, page="http://p/2")])
    assert [e.reason for e in events] == [reason, reason]


def test_redirect_followed(http_server, fetcher):
    http_server.routes["/old.jpg"] = redirect_to("/new.jpg")
    http_server.routes["/new.jpg"] = serve_bytes(jpeg(310, 300))
    url = http_server.url + "/old.jpg"
    (ev,) = fetcher.events(url, [cand(url)])
    assert ev.outputs[0].orig_width == 310


def test_a_redirect_loop_is_found_at_its_first_repeat(http_server, fetcher):
    """A two-URL loop cost max_redirects + 1 = 6 requests before it was counted."""
    hits = []
    for a, b in (("/a.jpg", "/b.jpg"), ("/b.jpg", "/a.jpg")):
        http_server.routes[a] = (lambda to: lambda req: hits.append(req.path) or redirect_to(to)(req))(b)
    url = http_server.url + "/a.jpg"
    assert [e.reason for e in fetcher.events(url, [cand(url)])] == ["fetch_too_many_redirects"]
    assert hits == ["/a.jpg", "/b.jpg"]


def test_redirect_to_a_listed_url_is_not_followed(http_server):
    from tests.pipeline.steps.test_crawl import Listed

    hits = []
    http_server.routes["/old.jpg"] = redirect_to("/listed/new.jpg")
    http_server.routes["/listed/new.jpg"] = lambda req: hits.append(req.path) or serve_bytes(jpeg())(req)
    f = ImageFetcher(timeout_s=0.5, retries=0, allow_private=True, blocklist=Listed())
    url = http_server.url + "/old.jpg"
    assert [e.reason for e in f.events(url, [cand(url)])] == ["fetch_redirect_blocklist_prefix"]
    assert hits == []
    assert f.withholds("fetch_redirect_blocklist_prefix") and not f.withholds("fetch_http_404")


def test_ssrf_guard_refuses_private_addresses():
    for url in ("http://127.0.0.1/x.jpg", "http://169.254.169.254/latest", "http://10.0.0.1/a",
                "http://[::1]/a"):
        with pytest.raises(FetchError, match="blocked_address"):
            check_address(url, allow_private=False)
    for url in ("ftp://example.com/a.jpg", "file:///etc/passwd", "http:///nohost"):
        with pytest.raises(FetchError, match="bad_url"):
            check_address(url, allow_private=False)
    check_address("http://127.0.0.1/x.jpg", allow_private=True)
