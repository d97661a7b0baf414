"""``HttpSettings``: how a fetching stage talks HTTP, in one object.

The crawler (``crawl:``) and the image fetcher (``fetch:``) configure the same things: user
agent, timeouts, caps, retries, politeness, threads, the SSRF guard's exceptions.  Each stage
holds one of these (its defaults differ: a crawl is politer, ``CRAWL_HTTP`` and ``FETCH_HTTP``
in the stages' modules), and :class:`pipeline.web.http.HttpClient` is built from it, so a
setting is named, checked and passed on in one place.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# The config's default user agent (crawl: and fetch:): the product token robots.txt groups
# name, with where to read about the crawler.
USER_AGENT = "lait-builder/0.1 (+https://github.com/lait-builder)"
# Hosts whose resolution, failure included, a fetching stage's client reuses for its run
# (docs/fetching.md, "DNS cache"): a few thousand hosts cost well under a megabyte.
DNS_CACHE_SIZE = 4096


@dataclass(frozen=True)
class HttpSettings:
    user_agent: str = USER_AGENT  # sent with every request; robots.txt groups match its token
    timeout_s: float = 10.0  # connect and read timeout of each request
    max_time_s: float = 30.0  # wall clock of one attempt, every redirect hop and the body
    max_bytes: int = 20_000_000  # larger responses are refused
    max_redirects: int = 5  # redirects followed per request (each hop checked)
    retries: int = 1  # extra attempts after 429 / 5xx / timeouts / connection errors
    backoff_s: float = 0.5  # first retry's wait; doubles each attempt
    max_retry_after_s: float = 30.0  # a longer Retry-After (or Crawl-delay) gives up
    rate_per_host: float = 0.0  # requests/s per host (0: no limit)
    per_host_concurrency: int = 0  # requests in flight per host (0: no cap)
    concurrency: int = 16  # threads (and pooled connections per host)
    allow_private: bool = False  # reach ANY address, private included (never for real crawls)
    allow_networks: tuple = ()  # networks reachable despite the SSRF guard (tests: loopback)
    dns_cache_size: int = DNS_CACHE_SIZE  # hosts whose DNS answer (or failure) is reused; 0: off

    def __post_init__(self):
        object.__setattr__(self, "allow_networks", tuple(self.allow_networks))  # a YAML list

    @classmethod
    def of(cls, section, base: "HttpSettings | None" = None) -> "HttpSettings":
        """The settings a config section (``crawl:``, ``fetch:``) gives: every field of this
        class that the section has, the rest from ``base``."""
        names = [f.name for f in dataclasses.fields(cls)]
        return dataclasses.replace(base or cls(), **{n: getattr(section, n) for n in names
                                                      if hasattr(section, n)})

    def with_(self, **changes) -> "HttpSettings":
        """A copy with some settings changed; an unknown name fails (TypeError) at once."""
        return dataclasses.replace(self, **changes)
