"""URL forms shared by the crawler, the extractor, image fetching and the blocklists: the
canonical form two URLs naming one resource share (the dedup key), and URLs without the
credentials a page may carry in them."""
from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from w3lib.url import canonicalize_url


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
