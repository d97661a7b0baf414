"""The ``url_blocklist`` step: candidates whose image (or page) URL a blocklist names are
dropped as soon as the extract step makes them, before anything is fetched
(``filters/blocklists.py`` has the list formats; ``page_blocklist`` drops blocked pages).

Reasons: ``url_blocklist_domain``, ``url_blocklist_prefix``, ``url_blocklist_regex`` (the
``safety.url_blocklist`` rules) and ``url_blocklist_hash`` (an MD5 / SHA-256 of the URL in
``safety.hash_blocklist``).  Counted, never sampled (``withhold_rejects``).
"""
from __future__ import annotations

import re

from filters.blocklists import UrlRules, merge_url_lists, read_hash_list, url_digests
from pipeline.core.records import Candidate
from pipeline.core.stage import MapStage


class UrlBlocklist(MapStage):
    name = "url_blocklist"
    withhold_rejects = True  # what a blocklist matches is never written out, not even as a sample

    def __init__(self, rules: UrlRules, hashes: frozenset = frozenset()):
        self.rules = rules
        self.hashes = hashes
        self._compiled = None

    @classmethod
    def from_config(cls, safety) -> "UrlBlocklist | None":
        """The step, or None when no list is given."""
        if not safety.url_blocklist and not safety.hash_blocklist:
            return None
        hashes = frozenset().union(*(read_hash_list(p) for p in safety.hash_blocklist))
        return cls(merge_url_lists(safety.url_blocklist), hashes)

    def __getstate__(self):
        return {**self.__dict__, "_compiled": None}

    def setup(self) -> None:
        self._compiled = [re.compile(p) for p in self.rules.patterns]

    def blocked(self, url: str) -> str | None:
        """Which kind of entry names ``url`` ("domain", "prefix", "regex", "hash"), or None."""
        if self._compiled is None:
            self.setup()
        kind = self.rules.match(url, self._compiled)
        if kind:
            return kind
        if self.hashes and url_digests(url) & self.hashes:
            return "hash"
        return None

    def process(self, cand: Candidate):
        for url in (cand.image_url, cand.page_url):
            why = self.blocked(url)
            if why:
                return self.drop(why)
        return [cand]
