"""The shared HTTP client: SSRF guard, opt-out parsing, Retry-After, the host limiter."""
import threading
import time

import pytest

from pipeline.web.address import AddressPolicy
from pipeline.web.failures import FetchError, is_transient, retry_after_seconds
from pipeline.web.http import HttpClient
from pipeline.web.politeness import HostLimiter
from pipeline.web.robots import opt_out_tokens
from pipeline.web.settings import HttpSettings
from tests.faultweb import FaultWeb, body


@pytest.fixture()
def web():
    w = FaultWeb().start()
    yield w
    w.stop()


def test_policy_refuses_private_and_metadata_addresses():
    policy = AddressPolicy(["127.0.0.1/32"])
    for ip in ("10.0.0.1", "192.168.1.1", "172.16.0.1", "169.254.169.254", "::1", "fe80::1",
               "100.64.0.1", "0.0.0.0", "224.0.0.1", "::ffff:10.0.0.1", "127.0.0.2"):
        assert not policy.allowed(ip), ip
    for ip in ("127.0.0.1", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"):
        assert policy.allowed(ip), ip
    assert AddressPolicy(allow_all=True).allowed("10.0.0.1")
    for url in ("http://10.0.0.1/a", "http://[::1]:8080/a", "http://169.254.169.254/latest"):
        with pytest.raises(FetchError, match="blocked_address"):
            policy.check_url(url)
    for url in ("ftp://example.com/a", "file:///etc/passwd", "http:///x", "http://h:99999/",
                "javascript:alert(1)"):
        with pytest.raises(FetchError, match="bad_url"):
            policy.check_url(url)


def test_policy_unwraps_ipv4_embedded_in_ipv6():
    """Issue 17.7: every IPv6 form that carries an IPv4 address is judged by that address."""
    policy = AddressPolicy(["127.0.0.1/32"])
    refused = (
        "64:ff9b::a9fe:a9fe",         # NAT64 (RFC 6052) of 169.254.169.254
        "64:ff9b::7f00:2",            # NAT64 of 127.0.0.2
        "64:ff9b::a00:1",             # NAT64 of 10.0.0.1
        "64:ff9b:1::a00:1",           # local-use NAT64 prefix (RFC 8215)
        "2002:a9fe:a9fe::1",          # 6to4 of 169.254.169.254
        "2002:c0a8:101::",            # 6to4 of 192.168.1.1
        "::169.254.169.254",          # IPv4-compatible
        "::10.0.0.1",
        "::ffff:169.254.169.254",     # IPv4-mapped
        "::ffff:0:10.0.0.1",          # IPv4-translated (SIIT)
        "::ffff:0:169.254.169.254",
        # Teredo: server 65.54.227.120, client 192.168.1.1 stored XOR 0xffffffff
        "2001:0:4136:e378:8000:63bf:3f57:fefe",
        "168.63.129.16",              # Azure platform (wire server / metadata)
        "192.0.0.192", "192.0.0.1",   # IETF protocol assignments
        "::ffff:168.63.129.16", "64:ff9b::a83f:8110", "2002:a83f:8110::",
    )
    for ip in refused:
        assert not policy.allowed(ip), ip
    for ip in ("64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8",
               "::ffff:127.0.0.1", "168.63.129.17"):
        assert policy.allowed(ip), ip
    for url in ("http://[64:ff9b::a9fe:a9fe]/latest", "http://[::ffff:0:a9fe:a9fe]/",
                "http://[2002:a9fe:a9fe::]/", "http://168.63.129.16/machine"):
        with pytest.raises(FetchError, match="blocked_address"):
            policy.check_url(url)


def test_socket_guard_refuses_what_dns_checks_let_through(web):
    """The peer address is checked after connecting: a name that resolved to an allowed
    address at check time but connects to a refused one (DNS rebinding) is still refused."""
    web.routes["/x"] = body(b"secret", "text/plain")
    client = HttpClient(HttpSettings(user_agent="t", timeout_s=1),
                        policy=AddressPolicy())  # loopback not allowed
    with pytest.raises(FetchError, match="blocked_address"):
        client._request(web.url + "/x")  # skips check_url, as a rebinding race would
    assert web.paths() == set()
    ok = HttpClient(HttpSettings(user_agent="t", timeout_s=1),
                    policy=AddressPolicy(["127.0.0.1/32"]))
    assert ok.get(web.url + "/x").body == b"secret"


def test_redirect_hops_are_checked(web):
    web.routes["/r"] = body(b"", "text/html", 301, {"Location": "http://127.0.0.1:1/../x"})
    web.routes["/r2"] = body(b"", "text/html", 307, {"Location": "http://[::1]:80/"})
    client = HttpClient(HttpSettings(user_agent="t", timeout_s=1),
                        policy=AddressPolicy(["127.0.0.1/32"]))
    with pytest.raises(FetchError, match="connection_error"):
        client.get(web.url + "/r")  # allowed address, nothing listening
    with pytest.raises(FetchError, match="blocked_address"):
        client.get(web.url + "/r2")


def test_opt_out_tokens():
    assert opt_out_tokens(["noai, noimageai"]) == ["noai", "noimageai"]
    assert opt_out_tokens(["max-image-preview:large, NoImageIndex"]) == ["noimageindex"]
    assert opt_out_tokens(["googlebot: noindex"]) == []
    assert opt_out_tokens(["lait-builder: noai"], agent="lait-builder") == ["noai"]
    assert opt_out_tokens(["*: noindex"]) == ["noindex"]
    assert opt_out_tokens(["index, follow", "unavailable_after: 2030-01-01"]) == []
    assert opt_out_tokens(["noindex"], tokens=("noai",)) == []


def test_retry_after_forms():
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_host_limiter_caps_concurrency_per_host():
    limiter = HostLimiter(per_host_concurrency=2)
    active, peak, lock = {"a": 0, "b": 0}, {"a": 0, "b": 0}, threading.Lock()

    def work(host):
        with limiter.slot(host):
            with lock:
                active[host] += 1
                peak[host] = max(peak[host], active[host])
            time.sleep(0.05)
            with lock:
                active[host] -= 1

    threads = [threading.Thread(target=work, args=(h,)) for h in "ab" * 5]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak == {"a": 2, "b": 2}


def test_slow_headers_are_cut_at_max_time(web):
    """Issue 17.3: headers dripping a byte at a time never trip the socket timeout; the
    attempt's wall-clock budget (connect to last byte) still ends it.  The ceiling is 3x
    max_time_s (the failure mode is a thread held for the drip's 30 s)."""
    from tests.faultweb import drip_headers

    web.routes["/slow-head"] = drip_headers
    web.routes["/r"] = body(b"", "text/html", 302, {"Location": "/slow-head"})
    client = HttpClient(HttpSettings(user_agent="t", timeout_s=5, max_time_s=1, retries=0),
                        policy=AddressPolicy(["127.0.0.1/32"]))
    for path in ("/slow-head", "/r"):  # directly, and behind a redirect hop
        t0 = time.monotonic()
        with pytest.raises(FetchError, match="^timeout$"):
            client.get(web.url + path)
        assert time.monotonic() - t0 < 3 * client.settings.max_time_s


def test_a_finished_attempt_never_cuts_a_pooled_connection(web):
    """The deadline belongs to one attempt: a kept-alive connection reused after that
    deadline has passed serves the next request whole."""
    web.routes["/ok"] = body(b"x" * 5000, "text/plain")
    client = HttpClient(HttpSettings(user_agent="t", timeout_s=5, max_time_s=0.3, retries=0),
                        policy=AddressPolicy(["127.0.0.1/32"]))
    assert client.get(web.url + "/ok").body == b"x" * 5000
    time.sleep(0.6)  # past the first attempt's deadline: the watchdog has dealt with it
    assert client.get(web.url + "/ok").body == b"x" * 5000
    assert len(web.requests("/ok")) == 2


def test_network_failures_are_transient_the_resource_s_own_are_not():
    for reason in ("timeout", "connection_error", "dns_error", "http_429", "http_500",
                   "http_503", "robots_unreachable", "truncated"):
        assert is_transient(reason), reason
    for reason in ("http_404", "http_410", "http_other", "not_an_image", "too_large",
                   "blocked_address", "robots_disallowed", "opt_out", "svg", "bad_url"):
        assert not is_transient(reason), reason


def test_an_unreachable_robots_txt_is_asked_for_again_later(web):
    """A worker lives for many waves: a host whose robots.txt failed once (an outage) is
    retried once the unreachable answer has aged, not barred for the rest of the run."""
    from pipeline.web.robots import UNREACHABLE_TTL_S, RobotsCache

    assert 0 < UNREACHABLE_TTL_S <= 600
    client = HttpClient(HttpSettings(user_agent="t", timeout_s=2, retries=0),
                        policy=AddressPolicy(["127.0.0.1/32"]))
    for ttl, fetches in ((UNREACHABLE_TTL_S, 1), (0.0, 2)):  # 0: as if the TTL had passed
        web.routes["/robots.txt"] = body(b"down", "text/plain", 503)
        robots = RobotsCache(client, "lait-builder")
        robots.unreachable_ttl_s = ttl
        with pytest.raises(FetchError, match="robots_unreachable"):
            robots.check(web.url + "/a.jpg")
        web.routes["/robots.txt"] = body(b"User-agent: *\nDisallow: /private/", "text/plain")
        if ttl:  # within the TTL: the cached answer, no new request
            with pytest.raises(FetchError, match="robots_unreachable"):
                robots.check(web.url + "/a.jpg")
        else:  # aged: asked again, and obeyed
            robots.check(web.url + "/a.jpg")
            with pytest.raises(FetchError, match="robots_disallowed"):
                robots.check(web.url + "/private/x.jpg")
        assert robots.fetches == fetches


@pytest.mark.parametrize("coding", ["br", "gzip"])
def test_a_compressed_bomb_served_anyway_stops_at_the_byte_cap(web, coding):
    """We ask for identity; a server that sends a 256 MiB bomb compressed to a few KB anyway
    is decoded a read at a time against ``max_bytes`` (issue 17.4), never whole."""
    import tracemalloc

    from tests.pipeline.steps.test_read import _bomb

    web.routes["/bomb.jpg"] = body(_bomb(coding), "image/jpeg", headers={"Content-Encoding": coding})
    client = HttpClient(HttpSettings(user_agent="t", timeout_s=5, retries=0, max_bytes=1_000_000),
                        policy=AddressPolicy(["127.0.0.1/32"]))
    tracemalloc.start()
    try:
        with pytest.raises(FetchError, match="too_large"):
            client.get(web.url + "/bomb.jpg")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32_000_000
