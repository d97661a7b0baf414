"""``CrawlSource``: seed URLs -> pages, politely.

A part is a small group of seed hosts (``seeds_per_part``), so under the default link
policies one host is crawled by one part on one worker and the per-host limits hold for the
whole run.  Inside a part the crawl goes breadth-first, one depth level at a time: the level's
URLs are fetched concurrently (a thread pool, with the per-host rate and concurrency caps of
:class:`pipeline.web.politeness.HostLimiter`), then their results are taken in the level's order.
So the pages put out, and the links followed, do not depend on thread timing.

What is never fetched: a URL robots.txt disallows (robots.txt is fetched once per host per
worker and obeyed for the robots.txt group naming our user agent's product token), a URL
beyond ``max_depth`` or ``max_pages``, an off-site link under ``same_site`` / ``same_host``, a
URL seen before (after :func:`pipeline.web.urls.canonical_url`), anything but http(s), any
address the SSRF guard refuses, and a URL the safety lists name (``safety.url_blocklist``, URL
hashes in ``safety.hash_blocklist``): a page URL is checked before its robots.txt or the page
is requested (``crawl_url_blocklist_<kind>``), and each redirect target before it is followed
(``crawl_redirect_blocklist_<kind>``).  What is fetched but not put out: non-HTML responses, pages
over the byte cap, and pages that opt out through ``X-Robots-Tag`` or ``<meta name=robots>``
(noai, noimageai, noindex, noimageindex by default); ``nofollow`` pages are put out but their
links are not followed.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser

from pipeline.core.records import Page
from pipeline.core.stage import Drop, Keep, Source
from pipeline.web.failures import FetchError, is_blocklisted
from pipeline.web.html import TooDeep, parsed
from pipeline.web.http import stage_client
from pipeline.web.robots import OPT_OUT_TOKENS, RobotsCache, agent_token, opt_out_tokens
from pipeline.web.settings import HttpSettings
from pipeline.web.urls import canonical_url

LINK_POLICIES = ("same_site", "same_host", "open")
# A crawl's HTTP defaults: politer than the image fetcher's (one host's pages, in depth).
CRAWL_HTTP = HttpSettings(max_bytes=5_000_000, retries=2, backoff_s=1.0, max_retry_after_s=60.0,
                          rate_per_host=1.0, per_host_concurrency=2, concurrency=8)


def site_of(url: str) -> str:
    """The host a same-site crawl stays on: the seed's host without a leading ``www.``."""
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def meta_robots(tree: LexborHTMLParser, agent: str) -> list[str]:
    """The directives of ``<meta name="robots">`` and of a meta naming our own agent."""
    names = ("robots", agent.lower())
    values = []
    for node in tree.css("meta[name]"):
        attrs = node.attributes
        if (attrs.get("name") or "").strip().lower() in names and attrs.get("content"):
            values.append(attrs["content"])
    return values


def page_links(tree: LexborHTMLParser, page_url: str) -> list[str]:
    """Absolute http(s) links of ``<a href>`` / ``<area href>``, fragments removed, in page
    order; ``rel=nofollow`` links are skipped."""
    base = page_url
    node = tree.css_first("base[href]")
    if node is not None and node.attributes.get("href"):
        base = urljoin(page_url, node.attributes["href"].strip())
    links = []
    for a in tree.css("a[href], area[href]"):
        if "nofollow" in (a.attributes.get("rel") or "").lower().split():
            continue
        href = (a.attributes.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        try:
            url = urljoin(base, href).split("#")[0]
        except ValueError:
            continue
        if url.lower().startswith(("http://", "https://")):
            links.append(url)
    return links


def _url_only(url: str) -> Page:
    """A dropped URL as the record rejects.parquet samples (page_url; nothing was kept)."""
    return Page(url=url, body=b"", source="crawl")


class CrawlSource(Source):
    """Crawls from seed URLs and yields one :class:`Page` per HTML page fetched.

    Events: ``Keep((page,))`` per page put out, ``Drop("crawl_<reason>")`` per URL taken into
    the crawl but not put out (``robots_disallowed``, ``http_404``, ``timeout``,
    ``opt_out_header``, ``page_limit``, ...).  Links refused by the link policy or depth are
    not records and are not counted.

    ``blocklist``: an object whose ``blocked(url)`` names the rule kind a URL matches, or None
    (``filters.page_blocklist.PageBlocklist``, given by the plan: this layer knows no lists)."""

    name = "crawl"

    def __init__(self, seeds, seeds_per_part: int = 1, link_policy: str = "same_site",
                 max_depth: int = 2, max_pages: int = 1000, robots: bool = True,
                 content_types=("text/html", "application/xhtml+xml"),
                 opt_out=OPT_OUT_TOKENS, blocklist=None, http: HttpSettings = CRAWL_HTTP,
                 **http_changes):
        """``http``: the HTTP settings (user agent, timeouts, caps, retries, politeness,
        threads, SSRF exceptions); ``http_changes`` change some of them by name."""
        if link_policy not in LINK_POLICIES:
            raise ValueError(f"link_policy must be one of {LINK_POLICIES}")
        self.seeds = list(seeds)
        self.seeds_per_part = seeds_per_part
        self.link_policy = link_policy
        self.max_depth = max_depth
        self.max_pages = max_pages
        self.robots = robots
        self.content_types = [t.lower() for t in content_types]
        self.opt_out = list(opt_out)
        self.blocklist = blocklist
        self.http = http.with_(**http_changes)
        self._client = self._robots = None

    @classmethod
    def from_config(cls, cc, blocklist=None) -> "CrawlSource":
        """From ``pipeline.config.CrawlConfig`` (and the safety lists' URL check)."""
        return cls(blocklist=blocklist, http=HttpSettings.of(cc, CRAWL_HTTP), **{
            k: getattr(cc, k) for k in ("seeds", "seeds_per_part", "link_policy", "max_depth",
                                        "max_pages", "robots", "content_types", "opt_out")})

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_client"] = state["_robots"] = None
        return state

    def withholds(self, reason: str) -> bool:
        return is_blocklisted(reason)  # a source samples nothing; said for the record

    def setup(self) -> None:
        self._client, limiter = stage_client(
            self.http, "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
            self.blocklist.blocked if self.blocklist else None)
        self._robots = (RobotsCache(self._client, self.http.user_agent, limiter)
                        if self.robots else None)

    def parts(self) -> list[str]:
        """Seeds grouped by host (sorted), ``seeds_per_part`` hosts per part, one URL a line."""
        by_host: dict[str, set[str]] = {}
        for seed in self.seeds:
            by_host.setdefault(site_of(seed), set()).add(seed.strip())
        hosts = sorted(by_host)
        n = self.seeds_per_part
        return ["\n".join(sorted(u for h in hosts[i:i + n] for u in by_host[h]))
                for i in range(0, len(hosts), n)]

    def _follows(self, link: str, site: str) -> bool:
        if self.link_policy == "open":
            return True
        host = (urlsplit(link).hostname or "").lower()
        if self.link_policy == "same_host":
            return site_of(link) == site
        return host == site or host.endswith("." + site)

    def read(self, part: str):
        if self._client is None:
            self.setup()
        seeds = [s for s in part.split("\n") if s]
        seen = set()
        frontier = []  # (url, seed site) of the current depth, in discovery order
        for seed in seeds:
            key = canonical_url(seed)
            if key not in seen:
                seen.add(key)
                frontier.append((seed, site_of(seed)))
        put_out = set()  # canonical final URLs of the pages put out (redirects can converge)
        budget = self.max_pages
        with ThreadPoolExecutor(max(1, self.http.concurrency), thread_name_prefix="crawl") as pool:
            for depth in range(self.max_depth + 1):
                if not frontier:
                    break
                batch, over = frontier[:budget], frontier[budget:]
                budget -= len(batch)
                results = pool.map(lambda u: self._fetch_page(u[0]), batch)
                nxt = []
                for (url, site), result in zip(batch, results):
                    if isinstance(result, Drop):
                        yield result
                        continue
                    page, links = result
                    final = canonical_url(page.url)
                    if final in put_out:
                        yield self.drop("duplicate", _url_only(url))
                        continue
                    put_out.add(final)
                    seen.add(final)
                    page.meta.update({"depth": depth, "seed_site": site})
                    yield Keep((page,))
                    if depth == self.max_depth:
                        continue
                    for link in links:
                        key = canonical_url(link)
                        if key not in seen and self._follows(link, site):
                            seen.add(key)
                            nxt.append((link, site))
                for url, _ in over:
                    yield self.drop("page_limit", _url_only(url))
                frontier = nxt if budget > 0 else []
                if budget <= 0:
                    for url, _ in nxt:
                        yield self.drop("page_limit", _url_only(url))

    def _fetch_page(self, url: str):
        """One page: ``(Page, links)`` or a :class:`Drop`.  Runs in a pool thread."""
        try:
            # the safety lists first: neither the page nor its host's robots.txt is requested
            self._client.admit(url)
            if self._robots is not None:
                self._robots.check(url)
            resp = self._client.get(url, accept=self._accept, type_name="html",
                                  max_bytes=self.http.max_bytes)
        except FetchError as exc:
            return self.drop(exc.reason, _url_only(url))
        except Exception as exc:  # a bug or an odd URL must cost one page, not the part
            return self.error_drop(exc, _url_only(url))
        if self.opt_out and opt_out_tokens(resp.robots_tags, self.opt_out, agent_token(self.http.user_agent)):
            return self.drop("opt_out_header", _url_only(url))
        page = Page(url=resp.url, body=resp.body, content_type=resp.mime,
                    headers=resp.headers, source="crawl", meta={"requested_url": url})
        try:
            # Decoded and parsed as the language and extract steps will (and kept on the page
            # for them); a page nested too deep for a bounded parse is not parsed at all.
            tree = parsed(page).tree()
        except TooDeep:
            return self.drop("html_too_deep", _url_only(url))
        try:
            directives = meta_robots(tree, agent_token(self.http.user_agent))
            links = page_links(tree, resp.url)
        except Exception:
            return self.drop("unparsable", _url_only(url))
        tokens = set(opt_out_tokens(directives, self.opt_out + ["none", "nofollow"]))
        if tokens & (set(self.opt_out) | ({"none"} if "noindex" in self.opt_out else set())):
            return self.drop("opt_out_meta", _url_only(url))
        if tokens & {"nofollow", "none"}:
            links = []
        return page, links

    def _accept(self, mime: str) -> bool:
        return mime in self.content_types
