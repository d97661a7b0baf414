"""The ``hash_blocklist`` step: right after fetching, before any pixel is decoded, an image
whose bytes' MD5 or SHA-256 a ``safety.hash_blocklist`` file lists is dropped
(``hash_blocklist_image``), counted but never sampled (``withhold_rejects``).

It also writes the compliance facts each sample keeps in ``image_meta["compliance"]``: the
blocklists checked, by file name and version (the file's sha256), beside what the fetch step
recorded (robots.txt, opt-out headers).  Only the image's header was read before this step
(the fetch step's size probe); the decode comes after it.
"""
from __future__ import annotations

from filters.blocklists import digests, list_facts, read_hash_list
from pipeline.core.records import ImageItem
from pipeline.core.stage import MapStage


class HashBlocklist(MapStage):
    name = "hash_blocklist"
    withhold_rejects = True

    def __init__(self, hashes: frozenset, checked: dict):
        self.hashes = hashes
        self.checked = checked  # {"url_blocklist": [facts], "hash_blocklist": [facts]}

    @classmethod
    def from_config(cls, safety) -> "HashBlocklist | None":
        if not safety.url_blocklist and not safety.hash_blocklist:
            return None
        hashes = frozenset().union(*(read_hash_list(p) for p in safety.hash_blocklist))
        checked = {"url_blocklist": [list_facts(p) for p in safety.url_blocklist],
                   "hash_blocklist": [list_facts(p) for p in safety.hash_blocklist]}
        return cls(hashes, checked)

    def process(self, item: ImageItem):
        if self.hashes and set(digests(item.data)) & self.hashes:
            return self.drop("image")
        facts = dict(item.meta.get("compliance", {}))
        facts["blocklists"] = {k: [dict(f) for f in v] for k, v in self.checked.items()}
        item.meta["compliance"] = facts
        return [item]
