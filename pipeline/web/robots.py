"""robots.txt, fetched once per host per worker and obeyed for pages and images alike.

Parsing is Protego's (Scrapy's parser: wildcards, ``$``, longest-match precedence,
``Crawl-delay``).  What a fetch outcome means follows RFC 9309: a 2xx file is obeyed; a
4xx (no file) allows everything; a 5xx, a timeout or a refused connection means the host is
treated as fully disallowed (it may be overloaded) and is reported as ``robots_unreachable``,
for :data:`UNREACHABLE_TTL_S`; then robots.txt is asked for again.

The page-level opt-outs live here too: :func:`opt_out_tokens` reads ``X-Robots-Tag`` headers
and robots meta tags, which the crawler and the image fetcher check against
:data:`OPT_OUT_TOKENS` (the config's ``respect_opt_out`` list is checked against it too).
"""
from __future__ import annotations

import threading
import time
from urllib.parse import urlsplit, urlunsplit

from protego import Protego

from pipeline.web.failures import FetchError
from pipeline.web.http import HttpClient

MAX_ROBOTS_BYTES = 512_000  # RFC 9309: crawlers must parse at least the first 500 KiB
# X-Robots-Tag / robots meta tokens that opt a page or image out (the config checks against them).
OPT_OUT_TOKENS = ("noai", "noimageai", "noindex", "noimageindex")
# Directives that take a value after a colon: "max-image-preview: large" names no crawler.
VALUED_DIRECTIVES = ("max-snippet", "max-image-preview", "max-video-preview", "unavailable_after")


def robots_url(url: str) -> str:
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, "/robots.txt", "", ""))


def agent_token(user_agent: str) -> str:
    """The product token robots.txt groups name: ``"lait-builder/0.1 (+url)"`` -> ``lait-builder``."""
    return user_agent.split("/")[0].split()[0].strip() or "*"


def opt_out_tokens(header_values, tokens=OPT_OUT_TOKENS, agent: str = "") -> list[str]:
    """The opt-out tokens found in ``X-Robots-Tag`` values (or meta robots contents).

    A value may be scoped to one crawler (``"googlebot: noindex, nofollow"``): it then counts
    only when it names ``agent`` (our product token) or ``*``."""
    found = []
    agent = agent.lower()
    for value in header_values:
        value = value.strip().lower()
        head, sep, rest = value.partition(":")
        head = head.strip()
        if sep and head and "," not in head and " " not in head and head not in VALUED_DIRECTIVES:
            if head not in ("*", agent):
                continue  # addressed to another crawler
            value = rest
        for tok in value.replace(";", ",").split(","):
            tok = tok.strip()
            if tok in tokens and tok not in found:
                found.append(tok)
    return found


# How long a host whose robots.txt could not be fetched stays off limits before robots.txt is
# asked for again: a worker lives for many waves, and an outage of a minute must not bar
# the host for the rest of the run.  Long enough that a down host costs one request per
# minute per worker, not one per image.
UNREACHABLE_TTL_S = 60.0


class _Unreachable:
    def __init__(self, until: float = 0.0):
        self.until = until

    def can_fetch(self, url, agent):
        return False

    def crawl_delay(self, agent):
        return None


class RobotsCache:
    """One parsed robots.txt per ``scheme://host:port``, shared by a worker's threads; a host
    is fetched by one thread while the others asking about it wait."""

    def __init__(self, client: HttpClient, user_agent: str, limiter=None):
        self.client = client
        self.agent = agent_token(user_agent)
        self.limiter = limiter  # told about each host's Crawl-delay
        self._lock = threading.Lock()
        self._host_locks: dict[str, threading.Lock] = {}
        self._rules: dict[str, object] = {}
        self.fetches = 0  # robots.txt requests made (tests check "once per host")
        self.unreachable_ttl_s = UNREACHABLE_TTL_S

    def rules(self, url: str):
        origin = robots_url(url)
        with self._lock:
            got = self._rules.get(origin)
            if got is not None and not self._stale(got):
                return got
            host_lock = self._host_locks.setdefault(origin, threading.Lock())
        with host_lock:
            with self._lock:
                got = self._rules.get(origin)
            if got is None or self._stale(got):
                got = self._fetch(origin)
                with self._lock:
                    self._rules[origin] = got
        return got

    def _stale(self, rules) -> bool:
        return isinstance(rules, _Unreachable) and time.monotonic() >= rules.until

    def _fetch(self, origin: str):
        self.fetches += 1
        try:
            resp = self.client.get(origin, max_bytes=MAX_ROBOTS_BYTES)
        except FetchError as exc:
            if exc.reason in ("blocked_address", "bad_url", "dns_error"):
                raise  # the page itself cannot be fetched either: say why
            if exc.reason.startswith("http_4") and exc.reason != "http_429":
                return Protego.parse("")  # no robots.txt: everything is allowed
            # 5xx, 429, timeouts, refused or oversized: stay away, for a while
            return _Unreachable(time.monotonic() + self.unreachable_ttl_s)
        rules = Protego.parse(resp.body.decode("utf-8", errors="replace"))
        if self.limiter is not None:
            self.limiter.set_delay(urlsplit(origin).netloc.lower(), rules.crawl_delay(self.agent))
        return rules

    def check(self, url: str) -> None:
        """Raises ``FetchError('robots_disallowed' | 'robots_unreachable')`` when ``url`` may
        not be fetched."""
        rules = self.rules(url)
        if isinstance(rules, _Unreachable):
            raise FetchError("robots_unreachable")
        if not rules.can_fetch(url, self.agent):
            raise FetchError("robots_disallowed")
