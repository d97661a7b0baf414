"""The ``page_blocklist`` step: a page whose URL ``safety.url_blocklist`` or
``safety.hash_blocklist`` names is dropped before the language step reads it, so neither the
page nor any image on it is looked at, sampled or fetched (``url_blocklist`` then checks the
image URLs the extract step finds).  Reasons: ``page_blocklist_domain``, ``_prefix``,
``_regex``, ``_hash``; counted, never sampled.
"""
from __future__ import annotations

from filters.url_blocklist import UrlBlocklist
from pipeline.core.records import Page


class PageBlocklist(UrlBlocklist):
    name = "page_blocklist"

    def process(self, page: Page):
        why = self.blocked(page.url)
        return self.drop(why) if why else [page]
