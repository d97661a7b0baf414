"""The hardened HTTP client shared by the crawler and the image fetcher.

What every request goes through, whoever makes it:

* **SSRF guard** (:mod:`pipeline.web.address`): only http and https, and only global
  addresses (plus ``allow_networks``), checked at every redirect hop and again on the socket's
  peer address after connecting (DNS rebinding).
* **Politeness**: a :class:`pipeline.web.politeness.HostLimiter` spaces request starts per host
  and caps concurrent requests per host; retries go through it too.
* **Retries** with exponential backoff on 429, 5xx, timeouts and connection errors,
  honouring ``Retry-After`` (seconds or an HTTP date) up to ``max_retry_after_s``; a server
  that asks for a longer wait is given up on instead of holding a worker.
* **URL blocklist** (``safety.url_blocklist`` / URL hashes, when the stage passes one): every
  URL, the first and each redirect target, is checked before it is requested; a match fails
  with ``url_blocklist_<kind>`` (the first URL) or ``redirect_blocklist_<kind>`` (a redirect
  target, never followed), reasons a stage counts but never samples
  (:func:`pipeline.web.failures.is_blocklisted`).
* **Caps**: a redirect cap, a byte cap (the declared ``Content-Length`` and the bytes really
  read), a connect/read timeout and a wall-clock cap per attempt, connect to last byte over
  every redirect hop (:mod:`pipeline.web.deadline` shuts the attempt's socket down when it is spent, so
  neither headers nor a body dripping a byte at a time hold a thread for long), and a
  content-type check before the body is read (:mod:`pipeline.web.response`).

This module is the loop that ties them together: attempts with backoff, each attempt's
redirect hops under one deadline.  Every failure is a :class:`pipeline.web.failures.FetchError`
whose ``reason`` is the snake_case suffix a stage puts after its own name (``timeout``,
``http_404``, ``blocked_address``, ...).
"""
from __future__ import annotations

import random
import time
from urllib.parse import urljoin, urlsplit

import urllib3

from pipeline.web.address import AddressPolicy, BlockedPeer, guarded_pool_classes
from pipeline.web.deadline import WATCHDOG, Attempt, set_attempt
from pipeline.web.failures import FetchError, check_blocklist, is_retried
from pipeline.web.politeness import HostLimiter
from pipeline.web.response import Response, read_response
from pipeline.web.settings import HttpSettings

REDIRECTS = (301, 302, 303, 307, 308)
MAX_BACKOFF_S = 60.0  # one retry's own backoff never waits longer (it doubles each attempt)


class HttpClient:
    """A urllib3 pool behind the SSRF guard, the host limiter, retries and caps.

    ``accept`` is a predicate on the response's media type (lower case, no parameters); a
    refused type fails with ``not_<type_name>`` before the body is read.  Create it in a
    stage's ``setup()``: it holds sockets and locks, which do not pickle.
    """

    def __init__(self, settings: HttpSettings, policy: AddressPolicy | None = None,
                 limiter: HostLimiter | None = None, accept_header: str = "*/*",
                 url_check=None):
        self.settings = settings
        # url -> a blocklist rule kind or None (filters' UrlBlocklist.blocked), checked at every
        # hop: a redirect to a listed URL is never followed
        self.url_check = url_check
        self.policy = policy or AddressPolicy(settings.allow_networks,
                                              allow_all=settings.allow_private,
                                              dns_cache_size=settings.dns_cache_size)
        self.limiter = limiter or HostLimiter()
        self.pool = urllib3.PoolManager(
            num_pools=256, maxsize=max(1, settings.concurrency), block=False, retries=False,
            headers={"User-Agent": settings.user_agent, "Accept": accept_header,
                     "Accept-Encoding": "identity"},
        )
        self.pool.pool_classes_by_scheme = guarded_pool_classes(self.policy)

    def admit(self, url: str) -> None:
        """The checks before a stage asks anything of a URL's host (robots.txt included): the
        safety lists, then the SSRF guard; raises :class:`FetchError`."""
        check_blocklist(self.url_check, url)
        self.policy.check_url(url)

    def get(self, url: str, accept=None, type_name: str = "accepted_type",
            max_bytes: int | None = None) -> Response:
        """GET with retries: 429, 5xx, timeouts and connection errors are tried again after
        an exponential backoff (or the server's ``Retry-After``, when it is not too long)."""
        attempt = 0
        while True:
            try:
                return self._get_once(url, accept, type_name, max_bytes or self.settings.max_bytes)
            except FetchError as exc:
                if not is_retried(exc.reason) or attempt >= self.settings.retries:
                    raise
                attempt += 1
                # Jitter comes from a per-URL seed: runs stay reproducible, hosts desynchronise.
                wait = min(self.settings.backoff_s * 2 ** (attempt - 1), MAX_BACKOFF_S)
                wait *= 1 + 0.25 * random.Random(f"{url}#{attempt}").random()
                wait = min(wait, MAX_BACKOFF_S)
                if exc.retry_after is not None:
                    if exc.retry_after > self.settings.max_retry_after_s:
                        raise  # the server wants us gone for longer than a worker may wait
                    wait = max(wait, exc.retry_after)
                time.sleep(wait)

    def _get_once(self, url, accept, type_name, max_bytes) -> Response:
        attempt = Attempt(time.monotonic() + self.settings.max_time_s)
        set_attempt(attempt)
        WATCHDOG.arm(attempt)
        try:
            resp = self._hops(url, accept, type_name, max_bytes, attempt.deadline)
        except FetchError:
            if attempt.finish():  # the watchdog cut the socket: whatever broke, a timeout
                raise FetchError("timeout") from None
            raise
        finally:
            attempt.finish()
            set_attempt(None)
        if attempt.finish():
            # A cut socket can also look like a complete message (headers ended by EOF, a
            # body without Content-Length read to EOF): never pass it on.
            raise FetchError("timeout")
        return resp

    def _hops(self, url, accept, type_name, max_bytes, deadline) -> Response:
        seen: set[str] = set()  # the URLs of this request's hops: the client keeps no cookies,
        # so a redirect back to one of them is a loop, found at once (it cost max_redirects+1
        # requests to the site before)
        for hop in range(self.settings.max_redirects + 1):
            if time.monotonic() > deadline:
                raise FetchError("timeout")
            if url in seen:
                raise FetchError("too_many_redirects")
            seen.add(url)
            check_blocklist(self.url_check, url, redirect=hop > 0)
            self.policy.check_url(url)
            with self.limiter.slot(urlsplit(url).netloc.lower()):
                resp = self._request(url)
                done = False  # a body left half read must not go back to the pool
                try:
                    if resp.status in REDIRECTS:
                        location = resp.headers.get("Location")
                        if not location:
                            raise FetchError("bad_redirect")
                        url = urljoin(url, location.strip())
                        continue
                    out = read_response(resp, url, accept, type_name, max_bytes, deadline)
                    done = True
                    return out
                finally:
                    if not done:
                        resp.close()
                    resp.release_conn()
        raise FetchError("too_many_redirects")

    def _request(self, url):
        try:
            return self.pool.request(
                "GET", url, preload_content=False, redirect=False,
                timeout=urllib3.Timeout(connect=self.settings.timeout_s,
                                        read=self.settings.timeout_s))
        except BlockedPeer:
            raise FetchError("blocked_address") from None
        except urllib3.exceptions.NameResolutionError:
            raise FetchError("dns_error") from None
        except urllib3.exceptions.NewConnectionError:  # a subclass of ConnectTimeoutError!
            raise FetchError("connection_error") from None
        except urllib3.exceptions.TimeoutError:
            raise FetchError("timeout") from None
        except urllib3.exceptions.LocationParseError:
            raise FetchError("bad_url") from None
        except (urllib3.exceptions.HTTPError, OSError, ValueError):
            raise FetchError("connection_error") from None


def stage_client(settings: HttpSettings, accept_header: str, url_check=None):
    """The HTTP client and per-host limiter that a fetching stage (crawler, image fetcher)
    builds in ``setup()`` from its settings: one place for the shared construction."""
    limiter = HostLimiter(settings.rate_per_host, settings.per_host_concurrency,
                          max_delay_s=settings.max_retry_after_s)
    client = HttpClient(settings, limiter=limiter, accept_header=accept_header,
                        url_check=url_check)
    return client, limiter
