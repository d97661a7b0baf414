"""The ``safety:`` section: URL and hash blocklists, read and checked once at config load.

Re-LAION removed the links that hash lists of known abusive images matched (MD5 / SHA-256 of
the image bytes and of the URLs, from child-safety organisations); web-scale pipelines also
filter by domain and URL.  Users pass such lists as files; every match is dropped under its
own reason (``url_blocklist_*`` before fetching, ``hash_blocklist_*`` right after) and, as
these are exactly the records nobody may look at, never sampled into rejects.parquet nor
shown in the report.  Each sample records which lists it was checked against (file name and
the sha256 of the file: the list's version).

``safety.url_blocklist`` files, one entry per line (blank lines and ``#`` comments skipped):

* ``re:PATTERN``: a Python regular expression searched in the URL;
* an entry with ``://``: a URL prefix (compared with the URL and its canonical form);
* anything else: a domain, matching that host and every subdomain (``example.com`` blocks
  ``img.example.com``, not ``badexample.com``).

``safety.hash_blocklist`` files: one hex digest per line (32 digits: MD5, 64: SHA-256), of
image bytes or of a URL (its UTF-8 text, as written on the page and canonical), optionally
followed by whitespace and a comment.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from pipeline.core.errors import ConfigError
from pipeline.web.urls import canonical_url

_HEX = re.compile(r"^([0-9a-fA-F]{32}|[0-9a-fA-F]{64})(?:\s.*)?$")


@dataclass
class SafetyConfig:
    """Blocklists of pages, image URLs and image bytes (filters/blocklists.py, docs/fetching.md).
    Matches are counted, never sampled or shown."""

    # files of URL rules, one per line: a domain (and its subdomains), a URL prefix (with ://)
    # or re:PATTERN; checked before anything is fetched
    url_blocklist: list[str] = field(default_factory=list)
    # files of MD5 / SHA-256 hex digests, one per line, of image bytes (checked right after
    # the fetch, before any decode) or of URLs (checked before fetching)
    hash_blocklist: list[str] = field(default_factory=list)

    def check(self) -> "SafetyConfig":
        for p in self.url_blocklist:
            read_url_list(p)
        for p in self.hash_blocklist:
            read_hash_list(p)
        return self


def _lines(path: str, key: str):
    if not os.path.isfile(path):
        raise ConfigError(f"safety.{key}: {path} is not a file")
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if line and not line.startswith("#"):
                yield n, line


def list_facts(path: str) -> dict:
    """A list's name and version (the sha256 of the file's bytes), recorded in each sample."""
    with open(path, "rb") as f:
        return {"name": os.path.basename(path), "sha256": hashlib.sha256(f.read()).hexdigest()}


@dataclass
class UrlRules:
    domains: frozenset = frozenset()
    prefixes: tuple = ()
    patterns: tuple = ()  # source texts (compiled on use: a compiled pattern pickles poorly)

    def match(self, url: str, compiled: list) -> str | None:
        """The kind of rule ``url`` matches ("domain", "prefix", "regex"), or None."""
        canon = canonical_url(url)
        try:
            host = (urlsplit(canon).hostname or "").rstrip(".")
        except ValueError:
            host = ""
        parts = host.split(".")
        if any(".".join(parts[i:]) in self.domains for i in range(len(parts))):
            return "domain"
        if any(url.startswith(p) or canon.startswith(p) for p in self.prefixes):
            return "prefix"
        if any(rx.search(url) or rx.search(canon) for rx in compiled):
            return "regex"
        return None


def read_url_list(path: str) -> UrlRules:
    domains, prefixes, patterns = set(), [], []
    for n, line in _lines(path, "url_blocklist"):
        if line.startswith("re:"):
            try:
                re.compile(line[3:])
            except re.error as exc:
                raise ConfigError(f"{path}:{n}: bad regular expression ({exc})") from None
            patterns.append(line[3:])
        elif "://" in line:
            prefixes.append(line)
            prefixes.append(canonical_url(line))
        else:
            d = line.lower().strip(".")
            if not re.fullmatch(r"[a-z0-9.-]+", d) or ("." not in d and d != "localhost"):
                raise ConfigError(f"{path}:{n}: {line!r} is neither a domain, a URL prefix "
                                  "(with ://) nor a re: pattern")
            domains.add(d)
    return UrlRules(frozenset(domains), tuple(sorted(set(prefixes))), tuple(patterns))


def merge_url_lists(paths: list[str]) -> UrlRules:
    rules = [read_url_list(p) for p in paths]
    return UrlRules(frozenset().union(*(r.domains for r in rules)),
                    tuple(sorted({p for r in rules for p in r.prefixes})),
                    tuple(p for r in rules for p in r.patterns))


def read_hash_list(path: str) -> frozenset:
    out = set()
    for n, line in _lines(path, "hash_blocklist"):
        m = _HEX.match(line)
        if not m:
            raise ConfigError(f"{path}:{n}: expected an MD5 (32 hex digits) or SHA-256 (64) "
                              f"digest, got {line[:70]!r}")
        out.add(m.group(1).lower())
    return frozenset(out)


def digests(data: bytes) -> tuple[str, str]:
    return hashlib.md5(data).hexdigest(), hashlib.sha256(data).hexdigest()


def url_digests(url: str) -> set[str]:
    """MD5 and SHA-256 of a URL as written and of its canonical form."""
    return {d for u in {url, canonical_url(url)} for d in digests(u.encode("utf-8"))}
