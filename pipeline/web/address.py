"""The SSRF guard: which addresses a request may reach, checked before and after connecting.

Only http and https; the host is resolved and refused when any address is private, loopback,
link-local, multicast, reserved or a cloud metadata endpoint; an IPv6 address embedding an
IPv4 one (mapped, compatible, SIIT, NAT64, 6to4, Teredo) is judged by the IPv4 address too.
:class:`pipeline.web.http.HttpClient` runs :meth:`AddressPolicy.check_url` at every redirect
hop, and its connections (:func:`guarded_pool_classes`) check the socket's peer address again
after connecting, so a DNS answer that changes between the check and the connect (DNS
rebinding) is refused too.  ``allow_networks`` lists the networks a config trusts anyway
(tests: ``127.0.0.1/32``).

The check's lookups go through a :class:`HostResolutions` when the policy has one: each host
is resolved once per client (one worker's stage, one run) and its addresses, or its failure,
reused, as crawlers' DNS caches do.  The connection still resolves on its own and its peer
address is still checked, so the cache opens no rebinding hole.
"""
from __future__ import annotations

import ipaddress
import socket
import threading
from collections import OrderedDict
from urllib.parse import urlsplit

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from pipeline.web.deadline import current_attempt
from pipeline.web.failures import FetchError

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


class BlockedPeer(Exception):
    """Raised from inside a connection whose peer address the policy refuses.  Deliberately
    not an OSError, so urllib3 lets it through instead of turning it into a connection error
    (the client reports it as ``blocked_address``)."""


class AddressPolicy:
    """Which IP addresses requests may reach: global unicast only, plus the networks listed in
    ``allow_networks``; ``allow_all`` lifts the guard (never for real crawls)."""

    def __init__(self, allow_networks=(), allow_all: bool = False, dns_cache_size: int = 0):
        self.allow_all = allow_all
        self.networks = tuple(ipaddress.ip_network(n, strict=False) for n in allow_networks)
        # host -> addresses or failure, for this policy's life (0: every check looks up again)
        self.resolutions = HostResolutions(dns_cache_size) if dns_cache_size > 0 else None

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
        if self.resolutions is not None:
            addresses = self.resolutions.addresses(parts.hostname)
        else:
            addresses = resolve_host(parts.hostname, port or 80)
        for ip in addresses:
            if not self.allowed(ip):
                raise FetchError("blocked_address")


def resolve_host(host: str, port: int = 80) -> tuple:
    """The addresses ``host`` resolves to (TCP), or :class:`FetchError` ``dns_error``."""
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError, OSError):
        raise FetchError("dns_error") from None
    return tuple(info[4][0] for info in infos)


class HostResolutions:
    """A host's resolution, looked up once and reused: its addresses, or the failure's reason
    (``dns_error``), for at most ``size`` hosts, the least recently used forgotten first.

    Why failures too: a resolver that times out (5 s) on a host costs that again for every
    URL of the host (2,849 lookups for 315 hosts, 580 s of wall for 10 s of CPU, on the qa20
    run, docs/fetching.md); Heritrix, Nutch and Scrapy's DNS cache keep a host's answer,
    failure included, for the crawl.  Threads asking for a host being looked up wait for that
    lookup instead of starting their own.  ``lookups`` counts the real ones (tests, figures).
    """

    def __init__(self, size: int):
        self.size = size
        self.lookups = 0
        self._known: OrderedDict = OrderedDict()  # host -> tuple of addresses | reason str
        self._pending: dict = {}  # host -> Event set when its lookup is done
        self._lock = threading.Lock()

    def addresses(self, host: str) -> tuple:
        """``host``'s addresses (looked up the first time), or its failure raised again."""
        while True:
            with self._lock:
                if host in self._known:
                    self._known.move_to_end(host)
                    got = self._known[host]
                    break
                waiting = self._pending.get(host)
                if waiting is None:
                    self._pending[host] = threading.Event()
                    self.lookups += 1
            if waiting is not None:
                waiting.wait()
                continue  # known now (or forgotten already, when the cache is tiny: ask again)
            got = None
            try:
                got = resolve_host(host)
            except FetchError as exc:
                got = exc.reason
            finally:  # whatever happened, the waiting threads are let go (None: not kept)
                with self._lock:
                    if got is not None:
                        self._known[host] = got
                        if len(self._known) > self.size:
                            self._known.popitem(last=False)
                    self._pending.pop(host).set()
            break
        if isinstance(got, str):
            raise FetchError(got)
        return got


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
            # Pooled connections are reused without _new_conn: register the socket here, so
            # the attempt's watchdog (pipeline.web.deadline) can cut it too.
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
                raise BlockedPeer(peer)
            return sock
    return Guarded


def guarded_pool_classes(policy: AddressPolicy) -> dict:
    """urllib3 pool classes (``PoolManager.pool_classes_by_scheme``) whose connections check
    their peer address against ``policy`` once connected."""
    http_pool = type("GuardedHTTPPool", (HTTPConnectionPool,),
                     {"ConnectionCls": _guarded(HTTPConnection, policy)})
    https_pool = type("GuardedHTTPSPool", (HTTPSConnectionPool,),
                      {"ConnectionCls": _guarded(HTTPSConnection, policy)})
    return {"http": http_pool, "https": https_pool}
