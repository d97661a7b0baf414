"""The ``best_text`` step (LAIT step 5): one text per image.

Pairs are grouped by the stored image's content (sha256: the same picture reached through
several URLs or pages counts once) and the best-scored text is kept; the others are dropped
as ``best_text_not_best``.
"""
from __future__ import annotations

from pipeline.core.records import TEXT_SOURCES, Pair
from pipeline.core.stage import GroupStage, Keep

_SOURCE_RANK = {s: i for i, s in enumerate(TEXT_SOURCES)}


def rank(pair: Pair) -> tuple:
    """Sort key, best first: score, then text source, then a content tie-break so that the
    choice never depends on the order in which an engine delivers a group."""
    c = pair.candidate
    score = pair.score if pair.score is not None else 0.0
    return (-score, _SOURCE_RANK.get(c.text_source, 99), -len(c.text.split()), c.text,
            pair.image.image_url, c.page_url, c.img_index)


class BestText(GroupStage):
    """Keeps the best text of each stored image (see :func:`rank`)."""

    name = "best_text"

    def key(self, pair: Pair) -> str:
        return pair.image.sha256

    def reduce(self, key, pairs):
        best = min(pairs, key=rank)
        return [Keep((p,)) if p is best else self.drop("not_best") for p in pairs]
