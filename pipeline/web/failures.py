"""What a failed request is, and what a stage and the retry loop make of it.

Every failure of :mod:`pipeline.web.http` is a :class:`FetchError` whose ``reason`` is the
snake_case suffix a stage puts after its own name (``timeout``, ``http_404``,
``blocked_address``, ...).  The reasons are sorted here, in one place, because three readers
judge them: the client's retry loop (:func:`is_retried`, within one request), the build's
``--retry-failed`` (:func:`is_transient`, across runs) and the stages' rejects sampling
(:func:`is_blocklisted`, never sampled).
"""
from __future__ import annotations

import email.utils
import time


class FetchError(Exception):
    """A failed request; ``reason`` names the failure (``timeout``, ``http_404``, ...)."""

    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


# Failures whose cause is the network or the server's state at that moment, not the resource:
# a later run may well succeed (``lait build --retry-failed`` fetches them again).  Robots
# unreachable is one: it is a refused connection, a timeout or a 5xx on robots.txt; and
# truncated: the connection broke (or the server hung up) before the body was complete.
TRANSIENT_REASONS = frozenset({"timeout", "connection_error", "dns_error", "http_429",
                               "robots_unreachable", "truncated"})


def is_transient(reason: str) -> bool:
    """True for a :class:`FetchError` reason (``timeout``, ``http_503``...) worth retrying later."""
    return reason in TRANSIENT_REASONS or (reason.startswith("http_5") and reason[5:].isdigit())


# Retried at once, within one request, by HttpClient.get: narrower than TRANSIENT_REASONS,
# since a DNS failure or a truncated body is unlikely to heal within a backoff of seconds and
# robots_unreachable is not a request's own failure.
RETRIED_REASONS = frozenset({"timeout", "connection_error", "http_429"})


def is_retried(reason: str) -> bool:
    """Whether :meth:`pipeline.web.http.HttpClient.get` tries a request again after it failed
    with ``reason``: timeouts, connection errors, 429 and 5xx."""
    return reason in RETRIED_REASONS or reason.startswith("http_5")


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
