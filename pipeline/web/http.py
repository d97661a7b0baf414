"""The hardened HTTP client shared by the crawler and the image fetcher.

What every request goes through, whoever makes it:

* **SSRF guard**: only http and https; the host is resolved and refused when any address is
  private, loopback, link-local, multicast, reserved or a cloud metadata endpoint, at every
  redirect hop; an IPv6 address embedding an IPv4 one (mapped, compatible, SIIT, NAT64, 6to4,
  Teredo) is judged by the IPv4 address too.  The same check runs again on the socket's peer address after connecting, so
  a DNS answer that changes between the check and the connect (DNS rebinding) is refused too.
  ``allow_networks`` lists the networks a config trusts anyway (tests: ``127.0.0.1/32``).
* **Politeness**: a :class:`pipeline.web.politeness.HostLimiter` spaces request starts per host
  and caps concurrent requests per host; retries go through it too.
* **Retries** with exponential backoff on 429, 5xx, timeouts and connection errors,
  honouring ``Retry-After`` (seconds or an HTTP date) up to ``max_retry_after_s``; a server
  that asks for a longer wait is given up on instead of holding a worker.
* **URL blocklist** (``safety.url_blocklist`` / URL hashes, when the stage passes one): every
  URL, the first and each redirect target, is checked before it is requested; a match fails
  with ``url_blocklist_<kind>`` (the first URL) or ``redirect_blocklist_<kind>`` (a redirect
  target, never followed), reasons a stage counts but never samples (:func:`is_blocklisted`).
* **Caps**: a redirect cap, a byte cap (the declared ``Content-Length`` and the bytes really
  read), a connect/read timeout and a wall-clock cap per attempt, connect to last byte over
  every redirect hop (:mod:`pipeline.web.deadline` shuts the attempt's socket down when it is spent, so
  neither headers nor a body dripping a byte at a time hold a thread for long), and a
  content-type check before the body is read.

Every failure is a :class:`FetchError` whose ``reason`` is the snake_case suffix a stage puts
after its own name (``timeout``, ``http_404``, ``blocked_address``, ...).
"""
from __future__ import annotations

import email.utils
import ipaddress
import random
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit, urlunsplit

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from w3lib.url import canonicalize_url

from pipeline.web.deadline import WATCHDOG, Attempt, current_attempt, set_attempt
from pipeline.web.politeness import HostLimiter
from pipeline.web.settings import HttpSettings

# X-Robots-Tag / robots meta tokens that opt a page or image out (the config checks against them).
OPT_OUT_TOKENS = ("noai", "noimageai", "noindex", "noimageindex")
USER_AGENT = "lait-builder/0.1 (+https://github.com/lait-builder)"

REDIRECTS = (301, 302, 303, 307, 308)
MAX_BACKOFF_S = 60.0  # one retry's own backoff never waits longer (it doubles each attempt)
# Addresses no crawler should reach even when they look global (cloud metadata services).
METADATA_HOSTS = frozenset({"169.254.169.254", "fd00:ec2::254", "100.100.100.200",
                            "168.63.129.16"})  # the last: Azure's platform (wire server)
# Networks refused although some Python versions call them global: IETF protocol assignments
# (192.0.0.0/24, e.g. 192.0.0.192) and the local-use NAT64 prefix (RFC 8215), whose IPv4
# position depends on a site-chosen prefix length, so it cannot be unwrapped reliably.
BLOCKED_NETWORKS = tuple(ipaddress.ip_network(n) for n in ("192.0.0.0/24", "64:ff9b:1::/48"))
# IPv6 prefixes whose last 32 bits are an IPv4 address the packet really goes to: the NAT64
# well-known prefix (RFC 6052), IPv4-compatible (deprecated, still routed by some stacks) and
# IPv4-translated (SIIT, ::ffff:0:a.b.c.d).  IPv4-mapped, 6to4 and Teredo have stdlib helpers.
_LAST32_PREFIXES = tuple(ipaddress.ip_network(n)
                         for n in ("64:ff9b::/96", "::/96", "::ffff:0:0:0/96"))


# Failures whose cause is the network or the server's state at that moment, not the resource:
# a later run may well succeed (``lait build --retry-failed`` fetches them again).  Robots
# unreachable is one: it is a refused connection, a timeout or a 5xx on robots.txt; and
# truncated: the connection broke (or the server hung up) before the body was complete.
TRANSIENT_REASONS = frozenset({"timeout", "connection_error", "dns_error", "http_429",
                               "robots_unreachable", "truncated"})


def is_transient(reason: str) -> bool:
    """True for a :class:`FetchError` reason (``timeout``, ``http_503``...) worth retrying later."""
    return reason in TRANSIENT_REASONS or (reason.startswith("http_5") and reason[5:].isdigit())


class FetchError(Exception):
    """A failed request; ``reason`` names the failure (``timeout``, ``http_404``, ...)."""

    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


BLOCKLIST_REASONS = ("url_blocklist_", "redirect_blocklist_")


def is_blocklisted(reason: str) -> bool:
    """Whether a drop reason (``<step>_<FetchError reason>``) is a blocklist match: those are
    counted, never sampled into rejects.parquet nor shown in the report."""
    return any(r in reason for r in BLOCKLIST_REASONS)


def check_blocklist(url_check, url: str, redirect: bool = False) -> None:
    """Raises the blocklist's :class:`FetchError` when ``url_check(url)`` names a rule kind
    (``domain``, ``prefix``, ``regex``, ``hash``); ``url_check`` None: no list."""
    kind = url_check(url) if url_check is not None else None
    if kind:
        raise FetchError(f"{'redirect' if redirect else 'url'}_blocklist_{kind}")


class _Blocked(Exception):
    """Raised from inside a connection whose peer address the policy refuses.  Deliberately
    not an OSError, so urllib3 lets it through instead of turning it into a connection error."""


class AddressPolicy:
    """Which IP addresses requests may reach: global unicast only, plus the networks listed in
    ``allow_networks``; ``allow_all`` lifts the guard (never for real crawls)."""

    def __init__(self, allow_networks=(), allow_all: bool = False):
        self.allow_all = allow_all
        self.networks = tuple(ipaddress.ip_network(n, strict=False) for n in allow_networks)

    def allowed(self, ip: str) -> bool:
        if self.allow_all:
            return True
        return all(self._allowed_one(a)
                   for a in reached_addresses(ipaddress.ip_address(ip.split("%")[0])))

    def _allowed_one(self, addr) -> bool:
        if any(addr in n for n in self.networks):
            return True
        return (addr.is_global and not addr.is_multicast and str(addr) not in METADATA_HOSTS
                and not any(addr in n for n in BLOCKED_NETWORKS))

    def check_url(self, url: str) -> None:
        """Refuses non-http(s) URLs and hosts that resolve to any refused address."""
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            raise FetchError("bad_url") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchError("bad_url")
        if self.allow_all:
            return
        try:
            infos = socket.getaddrinfo(parts.hostname, port or 80, proto=socket.IPPROTO_TCP)
        except (socket.gaierror, UnicodeError, OSError):
            raise FetchError("dns_error") from None
        for info in infos:
            if not self.allowed(info[4][0]):
                raise FetchError("blocked_address")


def reached_addresses(addr) -> list:
    """The addresses a packet to ``addr`` can end up at: an IPv6 address that embeds an IPv4
    one is judged by that IPv4 address (for translation prefixes, only by it; 6to4 and Teredo
    also by the IPv6 address itself), so ``64:ff9b::a9fe:a9fe`` is the metadata service."""
    if addr.version == 4:
        return [addr]
    if addr.ipv4_mapped is not None:
        return [addr.ipv4_mapped]
    if any(addr in n for n in _LAST32_PREFIXES):
        return [ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)]
    out = [addr]
    if addr.sixtofour is not None:
        out.append(addr.sixtofour)
    if addr.teredo is not None:
        out.extend(addr.teredo)  # (server, client); the stdlib already undoes the client's XOR
    return out


def check_address(url: str, allow_private: bool = False, allow_networks=()) -> None:
    """SSRF guard for one URL (see :class:`AddressPolicy`); raises :class:`FetchError`."""
    AddressPolicy(allow_networks, allow_all=allow_private).check_url(url)


def _guarded(conn_cls, policy: AddressPolicy):
    class Guarded(conn_cls):
        def getresponse(self, *args, **kwargs):
            # Pooled connections are reused without _new_conn: register the socket here.
            attempt = current_attempt()
            if attempt is not None and self.sock is not None:
                attempt.add(self.sock)
            return super().getresponse(*args, **kwargs)

        def _new_conn(self):
            sock = super()._new_conn()
            try:
                peer = sock.getpeername()[0]
            except OSError:
                peer = None
            if peer is None or not policy.allowed(peer):
                sock.close()
                raise _Blocked(peer)
            return sock
    return Guarded


def _guarded_pool_classes(policy: AddressPolicy) -> dict:
    http_pool = type("GuardedHTTPPool", (HTTPConnectionPool,),
                     {"ConnectionCls": _guarded(HTTPConnection, policy)})
    https_pool = type("GuardedHTTPSPool", (HTTPSConnectionPool,),
                      {"ConnectionCls": _guarded(HTTPSConnection, policy)})
    return {"http": http_pool, "https": https_pool}


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds from now (it is either a number or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


# Directives that take a value after a colon: "max-image-preview: large" names no crawler.
VALUED_DIRECTIVES = ("max-snippet", "max-image-preview", "max-video-preview", "unavailable_after")


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


def strip_userinfo(url: str) -> str:
    """``url`` without ``user:pass@``: credentials found in a page are neither stored nor sent
    (browsers refuse subresource URLs carrying them)."""
    if "@" not in url:
        return url
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def canonical_url(url: str) -> str:
    """The form two URLs share when they name the same resource (lower-case scheme and host,
    no default port, no fragment, sorted query, normalised percent-encoding): the dedup key of
    the crawler and of image fetching.  An unparsable URL is returned unchanged."""
    try:
        canon = canonicalize_url(url.strip(), keep_fragments=False)
        parts = urlsplit(canon)
        if (parts.scheme, parts.port) in (("http", 80), ("https", 443)):
            host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
            canon = urlunsplit((parts.scheme, host, parts.path, parts.query, ""))
        return canon
    except (ValueError, UnicodeError, TypeError):
        return url


@dataclass
class Response:
    url: str  # after redirects
    status: int
    headers: dict[str, str]
    body: bytes
    mime: str
    robots_tags: list[str] = field(default_factory=list)  # every X-Robots-Tag value


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
                                              allow_all=settings.allow_private)
        self.limiter = limiter or HostLimiter()
        self.pool = urllib3.PoolManager(
            num_pools=256, maxsize=max(1, settings.concurrency), block=False, retries=False,
            headers={"User-Agent": settings.user_agent, "Accept": accept_header,
                     "Accept-Encoding": "identity"},
        )
        self.pool.pool_classes_by_scheme = _guarded_pool_classes(self.policy)

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
                retriable = (exc.reason in ("timeout", "connection_error", "http_429")
                             or exc.reason.startswith("http_5"))
                if not retriable or attempt >= self.settings.retries:
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
        for hop in range(self.settings.max_redirects + 1):
            if time.monotonic() > deadline:
                raise FetchError("timeout")
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
                    if resp.status != 200:
                        status = resp.status if 100 <= resp.status < 600 else "other"
                        raise FetchError(f"http_{status}",
                                         retry_after_seconds(resp.headers.get("Retry-After")))
                    mime = (resp.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                    if accept is not None and not accept(mime):
                        raise FetchError(f"not_{type_name}")
                    declared = resp.headers.get("Content-Length", "").strip()
                    if declared.isdigit() and int(declared) > max_bytes:
                        raise FetchError("too_large")  # refused before reading a byte
                    body = self._read_body(resp, declared, deadline, max_bytes)
                    done = True
                    return Response(url, resp.status, dict(resp.headers.items()), body, mime,
                                    resp.headers.getlist("X-Robots-Tag"))
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
        except _Blocked:
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

    def _read_body(self, resp, declared: str, deadline: float, max_bytes: int) -> bytes:
        buf = bytearray()
        try:
            # read1 returns what has arrived, so the deadline is checked even while a server
            # drips a byte at a time (read(n) would wait for n bytes).
            while chunk := resp.read1(64 * 1024):
                buf += chunk
                if len(buf) > max_bytes:
                    raise FetchError("too_large")
                if time.monotonic() > deadline:  # a slow drip must not hold a thread forever
                    raise FetchError("timeout")
        except urllib3.exceptions.TimeoutError:
            raise FetchError("timeout") from None
        except (urllib3.exceptions.HTTPError, OSError):
            raise FetchError("truncated") from None
        if declared.isdigit() and len(buf) < int(declared):
            raise FetchError("truncated")
        return bytes(buf)


def stage_client(settings: HttpSettings, accept_header: str, url_check=None):
    """The HTTP client and per-host limiter that a fetching stage (crawler, image fetcher)
    builds in ``setup()`` from its settings: one place for the shared construction."""
    limiter = HostLimiter(settings.rate_per_host, settings.per_host_concurrency,
                          max_delay_s=settings.max_retry_after_s)
    client = HttpClient(settings, limiter=limiter, accept_header=accept_header,
                        url_check=url_check)
    return client, limiter
