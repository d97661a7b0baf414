"""The image fetcher's DNS cache (fetch.dns_cache_size): a host is resolved once per worker
and run, its failure included; the SSRF guard still judges its addresses and the socket's
peer.  A fake resolver counts the SSRF guard's lookups; no timing is asserted."""
import socket
import threading
import time
import types

import pytest

from pipeline import config
from pipeline.core import executor
from pipeline.steps.fetch import FETCH_HTTP, ImageFetcher
from pipeline.web import address
from pipeline.web.address import AddressPolicy, HostResolutions
from pipeline.web.failures import FetchError
from tests.conftest import serve_bytes
from tests.pipeline.steps.test_fetch import cand, jpeg


class FakeResolver:
    """``getaddrinfo`` for the SSRF guard's module only (urllib3's connect keeps the real
    one): ``answers`` maps a host to an address or to None (no such host)."""

    def __init__(self, answers, delay_s=0.0):
        self.answers = answers
        self.delay_s = delay_s
        self.calls = []
        self._lock = threading.Lock()

    def getaddrinfo(self, host, port, *args, **kwargs):
        with self._lock:
            self.calls.append(host)
        if self.delay_s:
            time.sleep(self.delay_s)  # widens the window threads could race in; not asserted
        ip = self.answers.get(host)
        if ip is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        family = socket.AF_INET6 if ":" in ip else socket.AF_INET
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (ip, port))]


def use(monkeypatch, fake):
    """The SSRF guard's module resolves with ``fake`` (urllib3 keeps the real resolver)."""
    monkeypatch.setattr(address, "socket", types.SimpleNamespace(
        getaddrinfo=fake.getaddrinfo, gaierror=socket.gaierror, IPPROTO_TCP=socket.IPPROTO_TCP))


@pytest.fixture()
def resolver(monkeypatch):
    fake = FakeResolver({"good.example": "93.184.216.34", "inside.example": "10.0.0.1",
                         "localhost": "127.0.0.1"})
    use(monkeypatch, fake)
    return fake


def fetcher(**changes):
    f = ImageFetcher(timeout_s=2, retries=0, allow_networks=["127.0.0.1/32"], **changes)
    f.setup()
    return f


def test_a_failing_host_is_looked_up_once_for_all_its_urls(resolver):
    f = fetcher()
    urls = [f"http://gone.example/img/{i}.jpg" for i in range(20)]
    events = [f.events(u, [cand(u)]) for u in urls]
    assert [e.reason for es in events for e in es] == ["fetch_dns_error"] * 20  # unchanged
    assert resolver.calls == ["gone.example"]


def test_size_0_looks_up_every_url_as_before(resolver):
    f = fetcher(dns_cache_size=0)
    urls = [f"http://gone.example/img/{i}.jpg" for i in range(20)]
    events = [f.events(u, [cand(u)]) for u in urls]
    assert [e.reason for es in events for e in es] == ["fetch_dns_error"] * 20
    assert resolver.calls == ["gone.example"] * 20


def test_a_new_run_starts_with_an_empty_cache(resolver):
    """--retry-failed runs the stage again: a fresh setup() (a fresh worker, or the pickled
    stage, which carries no client) asks the resolver again."""
    f = fetcher()
    with pytest.raises(FetchError, match="dns_error"):
        f.fetch("http://gone.example/a.jpg")
    f.setup()
    with pytest.raises(FetchError, match="dns_error"):
        f.fetch("http://gone.example/b.jpg")
    assert resolver.calls == ["gone.example"] * 2


def test_a_build_forgets_the_set_up_fetcher_of_the_run_before(resolver):
    """Set-up stages live as long as their process (pipeline.core.executor.ready); a second
    build in one process (in-process engines, notebooks) must not reuse the DNS answers."""
    stage = ImageFetcher(timeout_s=2, retries=0)
    first = executor.ready(stage)
    assert executor.ready(stage) is first
    with pytest.raises(FetchError, match="dns_error"):
        first.fetch("http://gone.example/a.jpg")
    executor.forget_run_state()
    again = executor.ready(stage)
    assert again is not first
    with pytest.raises(FetchError, match="dns_error"):
        again.fetch("http://gone.example/b.jpg")
    assert resolver.calls == ["gone.example"] * 2
    executor.forget_run_state()


def test_addresses_are_reused_and_still_judged(resolver):
    policy = AddressPolicy(dns_cache_size=16)
    for i in range(5):
        policy.check_url(f"http://good.example/{i}.jpg")
        policy.check_url(f"https://good.example:8443/{i}.jpg")  # another port, same host
        with pytest.raises(FetchError, match="blocked_address"):
            policy.check_url(f"http://inside.example/{i}.jpg")  # its address, judged each time
    assert sorted(resolver.calls) == ["good.example", "inside.example"]
    assert policy.resolutions.lookups == 2


def test_images_of_a_reachable_host_cost_one_guard_lookup(resolver, http_server):
    """End to end against a loopback server named ``localhost``: the admit check, robots.txt
    and every request's hop share one lookup; the connection itself resolves on its own
    (urllib3, the real resolver) and its peer is checked as before."""
    http_server.routes["/robots.txt"] = lambda req: req.send_error(404)
    body = jpeg()
    for i in range(6):
        http_server.routes[f"/{i}.jpg"] = serve_bytes(body)
    base = http_server.url.replace("127.0.0.1", "localhost")
    f = fetcher()
    items = [f.fetch(f"{base}/{i}.jpg") for i in range(6)]
    assert all(it.data == body for it in items)
    assert resolver.calls == ["localhost"]
    resolver.calls.clear()
    f0 = fetcher(dns_cache_size=0)
    for i in range(6):
        f0.fetch(f"{base}/{i}.jpg")
    assert len(resolver.calls) == 13  # 6 x (admit + request) + robots.txt once


def test_the_peer_check_stays_when_the_cache_says_global(monkeypatch, http_server):
    """DNS rebinding: the cached answer is a global address, the connection reaches loopback
    (the real resolver at connect time): the socket's peer is refused."""
    fake = FakeResolver({"localhost": "93.184.216.34"})
    use(monkeypatch, fake)
    http_server.routes["/a.jpg"] = serve_bytes(jpeg())
    f = ImageFetcher(timeout_s=2, retries=0, robots=False)
    f.setup()
    url = http_server.url.replace("127.0.0.1", "localhost") + "/a.jpg"
    for _ in range(2):
        with pytest.raises(FetchError, match="blocked_address"):
            f.fetch(url)
    assert fake.calls == ["localhost"]


def test_the_least_recently_used_host_is_forgotten(resolver):
    cache = HostResolutions(2)
    for host in ("good.example", "localhost", "good.example", "inside.example",
                 "good.example", "localhost"):
        cache.addresses(host)
    # localhost was the least recently used when inside.example came: looked up again
    assert resolver.calls == ["good.example", "localhost", "inside.example", "localhost"]
    assert cache.lookups == 4


def test_threads_asking_for_one_host_share_its_lookup(monkeypatch):
    fake = FakeResolver({}, delay_s=0.2)
    use(monkeypatch, fake)
    cache = HostResolutions(8)
    reasons = []

    def ask():
        try:
            cache.addresses("gone.example")
        except FetchError as exc:
            reasons.append(exc.reason)
    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert reasons == ["dns_error"] * 8 and fake.calls == ["gone.example"]


def test_the_config_default_is_the_fetcher_s():
    cfg = config.Config()
    assert cfg.fetch.dns_cache_size == FETCH_HTTP.dns_cache_size > 0
    f = ImageFetcher.from_config(cfg.fetch)
    assert f.http.dns_cache_size == FETCH_HTTP.dns_cache_size
    cfg.fetch.dns_cache_size = 0
    assert ImageFetcher.from_config(cfg.fetch).http.dns_cache_size == 0
