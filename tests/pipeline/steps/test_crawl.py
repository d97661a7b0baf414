"""CrawlSource against loopback servers: robots.txt, rate limits, limits, policies, retries."""
import pytest

from pipeline.steps.crawl import CrawlSource, page_links, site_of
from pipeline.web.politeness import HostLimiter
from pipeline.web.urls import canonical_url
from pipeline.core.stage import Drop, Keep
from tests.faultweb import FaultWeb, body, html, redirect

LOOPBACK = ["127.0.0.1/32"]


@pytest.fixture()
def web():
    w = FaultWeb().start()
    yield w
    w.stop()


def crawler(seeds, **kw):
    args = dict(rate_per_host=0, per_host_concurrency=0, concurrency=4, timeout_s=1.0,
                max_time_s=2.0, retries=0, backoff_s=0.05, allow_networks=LOOPBACK)
    args.update(kw)
    c = CrawlSource(seeds, **args)
    c.setup()
    return c


def crawl(c):
    events = [ev for part in c.parts() for ev in c.events(part)]
    pages = [p for ev in events if isinstance(ev, Keep) for p in ev.outputs]
    drops = sorted(ev.reason for ev in events if isinstance(ev, Drop))
    return pages, drops


def page(*links, head=""):
    return body(html("t", "".join(f'<a href="{u}">l</a>' for u in links), head=head), "text/html")


def test_robots_disallow_is_obeyed_and_fetched_once_per_host(web):
    web.routes.update({
        "/robots.txt": body(b"User-agent: *\nDisallow: /no/\nAllow: /no/but-yes\n", "text/plain"),
        "/": page(*[f"/p{i}" for i in range(6)], *[f"/no/{i}" for i in range(4)], "/no/but-yes"),
        **{f"/p{i}": page("/no/deeper", "/") for i in range(6)},
        "/no/but-yes": page(),
    })
    pages, drops = crawl(crawler([web.url + "/"], concurrency=8))
    assert sorted(p.url.rsplit("/", 1)[1] for p in pages) == ["", "but-yes", "p0", "p1", "p2", "p3", "p4", "p5"]
    assert drops == ["crawl_robots_disallowed"] * 5
    assert not [p for p in web.paths() if p.startswith("/no/") and p != "/no/but-yes"]
    assert len(web.requests("/robots.txt")) == 1


def test_robots_group_for_our_agent_wins(web):
    web.routes.update({"/robots.txt": body(b"User-agent: *\nAllow: /\n\nUser-agent: lait-builder\n"
                                           b"Disallow: /\n", "text/plain"), "/": page()})
    pages, drops = crawl(crawler([web.url + "/"], user_agent="lait-builder/0.1 (+http://x)"))
    assert pages == [] and drops == ["crawl_robots_disallowed"]
    assert web.paths() == {"/robots.txt"}


def test_unreachable_robots_means_stay_away(web):
    web.routes.update({"/robots.txt": body(b"down", "text/plain", 503), "/": page()})
    pages, drops = crawl(crawler([web.url + "/"]))
    assert drops == ["crawl_robots_unreachable"] and web.paths() == {"/robots.txt"}


class StartLog(dict):
    """``HostLimiter._last`` that keeps every start it is told of: the limiter stamps a start
    under its lock, so these are the starts as the limiter allowed them, free of the server
    threads' scheduling jitter (on a loaded machine a server's arrival stamps can bunch)."""

    def __init__(self):
        super().__init__()
        self.starts: list[float] = []

    def __setitem__(self, host, t):
        self.starts.append(t)
        super().__setitem__(host, t)


@pytest.fixture()
def limiter_starts(monkeypatch):
    """Every request start the crawl's HostLimiters allow, sorted (call it after the crawl)."""
    logs: list[StartLog] = []
    init = HostLimiter.__init__

    def logging_init(self, *a, **kw):
        init(self, *a, **kw)
        self._last = StartLog()
        logs.append(self._last)

    monkeypatch.setattr(HostLimiter, "__init__", logging_init)
    return lambda: sorted(t for log in logs for t in log.starts)


def test_per_host_rate_is_never_exceeded(web, limiter_starts):
    web.routes.update({"/": page(*[f"/p{i}" for i in range(10)]),
                       **{f"/p{i}": page() for i in range(10)}})
    rate = 8.0
    pages, _ = crawl(crawler([web.url + "/"], rate_per_host=rate, per_host_concurrency=3,
                             concurrency=6))
    assert len(pages) == 11
    # every request the server saw (robots.txt counts: it is a request too) went through the
    # limiter, and the limiter's starts are never closer than 1 / rate, whatever the threads
    starts = limiter_starts()
    assert len(web.log) == 12 and len(starts) == 12
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert min(gaps) >= 1.0 / rate - 1e-9, gaps
    # Server side, only what load cannot break: the run took at least 11 intervals (an
    # arrival stamp may be late, never early enough to undo a whole run's spacing).
    times = sorted(t for _, t, _ in web.log)
    assert times[-1] - times[0] >= 11 / rate - 0.5


def test_crawl_delay_from_robots_widens_the_interval(web, limiter_starts):
    web.routes.update({"/robots.txt": body(b"User-agent: *\nCrawl-delay: 0.3\n", "text/plain"),
                       "/": page("/a", "/b"), "/a": page(), "/b": page()})
    crawl(crawler([web.url + "/"], rate_per_host=100, concurrency=4))
    starts = limiter_starts()
    assert len(web.log) == 4 and len(starts) == 4
    # the delay read from robots.txt spaces every start after it, robots.txt's own included
    assert min(b - a for a, b in zip(starts, starts[1:])) >= 0.3 - 1e-9
    times = sorted(t for _, t, _ in web.log)
    assert times[-1] - times[0] >= 0.9 - 0.3  # the server saw the spacing too (stamps may be late)


def test_depth_and_page_limits(web):
    web.routes.update({"/": page("/d1"), "/d1": page("/d2"), "/d2": page("/d3"), "/d3": page()})
    pages, drops = crawl(crawler([web.url + "/"], max_depth=2))
    assert [p.url.rsplit("/", 1)[1] for p in pages] == ["", "d1", "d2"]
    assert [p.meta["depth"] for p in pages] == [0, 1, 2] and drops == []
    assert "/d3" not in web.paths()

    web.routes.update({"/wide": page(*[f"/w{i}" for i in range(9)]),
                       **{f"/w{i}": page() for i in range(9)}})
    pages, drops = crawl(crawler([web.url + "/wide"], max_pages=4))
    assert [p.url.rsplit("/", 1)[1] for p in pages] == ["wide", "w0", "w1", "w2"]
    assert drops == ["crawl_page_limit"] * 6


def test_link_policies(web):
    other = web.url.replace("127.0.0.1", "localhost")
    web.routes.update({"/": page("/in", other + "/out"), "/in": page(), "/out": page()})
    pages, _ = crawl(crawler([web.url + "/"], link_policy="same_site"))
    assert sorted(p.url.rsplit("/", 1)[1] for p in pages) == ["", "in"]
    pages, _ = crawl(crawler([web.url + "/"], link_policy="open",
                             allow_networks=["127.0.0.1/32", "::1/128"]))
    assert sorted(p.url.rsplit("/", 1)[1] for p in pages) == ["", "in", "out"]
    assert site_of("https://www.example.com/a") == "example.com"
    c = CrawlSource(["http://example.com/"])
    assert c._follows("http://img.example.com/x", "example.com")
    assert not c._follows("http://example.org/x", "example.com")
    assert not c._follows("http://badexample.com/x", "example.com")


def test_urls_are_normalised_and_fetched_once(web):
    web.routes.update({"/": page("/a?x=1&y=2", "/a?y=2&x=1", "/a?x=1&y=2#frag", "HTTP://127.0.0.1:"
                                 + web.url.rsplit(":", 1)[1] + "/a?x=1&y=2", "/"),
                       "/a?x=1&y=2": page()})
    pages, drops = crawl(crawler([web.url + "/", web.url + "/#top"]))
    assert len(pages) == 2 and drops == []
    assert len([p for p in web.paths() if p.startswith("/a")]) == 1
    assert canonical_url("HTTP://Example.COM:80/a b?b=2&a=1#f") == "http://example.com/a%20b?a=1&b=2"


def test_retries_back_off_and_honour_retry_after(web):
    calls = {"n": 0}

    def flaky(req):
        calls["n"] += 1
        if calls["n"] < 3:
            return body(b"busy", "text/plain", 503)(req)
        return page()(req)

    def busy_long(req):
        body(b"later", "text/plain", 429, {"Retry-After": "3600"})(req)

    web.routes.update({"/": page("/flaky", "/gone"), "/flaky": flaky, "/gone": busy_long})
    pages, drops = crawl(crawler([web.url + "/"], retries=2, backoff_s=0.2))
    assert sorted(p.url.rsplit("/", 1)[1] for p in pages) == ["", "flaky"]
    t = web.requests("/flaky")
    assert len(t) == 3 and t[1] - t[0] >= 0.2 and t[2] - t[1] >= 0.4  # 0.2 s, then doubled
    assert drops == ["crawl_http_429"] and len(web.requests("/gone")) == 1  # an hour: give up


def test_same_crawl_same_pages(web):
    web.routes.update({"/": page(*[f"/p{i}" for i in range(8)]),
                       **{f"/p{i}": page(f"/q{i}", f"/q{7 - i}") for i in range(8)},
                       **{f"/q{i}": page() for i in range(8)}})
    runs = [[p.url for p in crawl(crawler([web.url + "/"], concurrency=6))[0]] for _ in range(2)]
    assert runs[0] == runs[1] and len(runs[0]) == 17


def test_parts_group_seeds_by_host():
    c = CrawlSource(["http://b.org/1", "http://www.a.com/x", "http://a.com/y", "http://c.net/"],
                    seeds_per_part=2)
    assert c.parts() == ["http://a.com/y\nhttp://b.org/1\nhttp://www.a.com/x", "http://c.net/"]


def test_page_links_resolve_base_and_skip_nofollow():
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser('<base href="http://h/dir/"><a href="a.html#x">a</a>'
                            '<a href="mailto:x@y">m</a><a rel="nofollow" href="/n">n</a>'
                            '<area href="/map"><a href="#top">t</a>')
    assert page_links(tree, "http://h/") == ["http://h/dir/a.html", "http://h/map"]


def test_crawl_config_section():
    from pipeline import config

    cfg = config.from_dict({"crawl": {"seeds": ["https://example.com/"]}})
    assert cfg.crawl.rate_per_host == 1.0 and cfg.crawl.robots is True  # polite defaults
    src = CrawlSource.from_config(cfg.crawl)
    assert src.parts() == ["https://example.com/"] and src.link_policy == "same_site"
    # the HTTP settings come from the section, every one of them (pipeline.web.settings)
    import dataclasses

    from pipeline.steps.fetch import ImageFetcher

    for section, stage in ((cfg.crawl, src), (cfg.fetch, ImageFetcher.from_config(cfg.fetch))):
        for f in dataclasses.fields(stage.http):
            want = getattr(section, f.name)
            assert getattr(stage.http, f.name) == (tuple(want) if isinstance(want, list) else want)
    assert src.http.rate_per_host == 1.0 and ImageFetcher.from_config(cfg.fetch).concurrency == 16
    with pytest.raises(TypeError):
        CrawlSource(["http://x/"], timeout=3)  # a misspelt setting fails at once
    for bad, msg in [({"crawl": {"seeds": ["ftp://x/"]}}, "crawl.seeds"),
                     ({"crawl": {"seeds": ["http://x/"], "link_policy": "any"}}, "crawl.link_policy"),
                     ({"crawl": {"seeds": ["http://x/"], "rate_per_host": -1}}, "crawl.rate_per_host"),
                     ({"crawl": {"seeds": ["http://x/"], "opt_out": ["nofun"]}}, "crawl.opt_out"),
                     ({"crawl": {"seeds": ["http://x/"]}, "fetch": {"allow_networks": ["x"]}},
                      "fetch.allow_networks"),
                     ({"crawl": {"seeds": ["http://x/"]}, "input": {"warc": ["a.warc"]}}, "not both"),
                     ({}, "input.warc")]:
        with pytest.raises(config.ConfigError, match=msg):
            config.from_dict(bad)


class Listed:
    """A stand-in for the safety lists' URL check (filters.page_blocklist.PageBlocklist)."""

    def blocked(self, url):
        return "prefix" if "/listed/" in url else None


def test_listed_urls_are_never_requested_nor_redirected_to(web):
    web.routes.update({
        "/": page("/listed/a.html", "/to_listed.html", "/ok.html"),
        "/to_listed.html": redirect("/listed/b.html"),
        "/ok.html": page(),
        "/listed/a.html": page(), "/listed/b.html": page(), "/listed/seed.html": page(),
    })
    pages, drops = crawl(crawler([web.url + "/", web.url + "/listed/seed.html"], blocklist=Listed()))
    assert sorted(p.url.rsplit("/", 1)[1] for p in pages) == ["", "ok.html"]
    assert drops == ["crawl_redirect_blocklist_prefix"] + ["crawl_url_blocklist_prefix"] * 2
    assert not [p for p in web.paths() if p.startswith("/listed/")]
    assert "/to_listed.html" in web.paths()
    c = crawler([web.url + "/"])
    assert c.withholds("crawl_redirect_blocklist_regex") and not c.withholds("crawl_http_404")
