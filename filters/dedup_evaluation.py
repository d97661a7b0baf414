"""The ``dedup_evaluation`` step: evaluation images are dropped as soon as their pixels exist.

Right after ``image_decode``, each image's 64-bit pHash is computed on the stored pixels (the
decode's upright RGB image, longest side ``image.resize_longest``: exactly what
``filters/eval_images.py::phash_of`` hashes on the other side, so the two agree) and kept in
``image_meta["phash"]``, where the labels step and the ``dedup`` step find it (the labels step
does not hash again).  An image within ``dedup.max_distance`` bits of a hash that
``dedup.exclude`` names (a COCO / Flickr30k test split) is dropped as
``dedup_evaluation_image`` (the ``dedup`` config's reason, counted on this step's row).

Why here and not in the ``dedup`` step: a filter that runs earlier (naturalness, NSFW) would
otherwise drop the evaluation image under its own reason and sample it into rejects.parquet
and the report's thumbnails.  Here nothing after the decode sees it, and the step withholds
its own drops from the rejects sample.  Since every image that reaches the corpus job was
checked, a group of near-duplicates cannot bring in an evaluation image there: the ``dedup``
step no longer checks.  An image that the size check drops (its header says it is too small
or too large) is dropped before any pixel is decoded, so it is never hashed: it may still be
sampled by ``image_size`` (docs/dedup.md).
"""
from __future__ import annotations

from filters.dedup import HashIndex, parse_phash
from filters.eval_images import load_exclude
from filters.labels import phash
from pipeline.core.records import ImageItem
from pipeline.core.stage import MapStage


class DedupEvaluation(MapStage):
    name = "dedup_evaluation"
    # Its only drops are test-split images: counted, never sampled into rejects or the report.
    withhold_rejects = True

    def __init__(self, exclude: tuple[int, ...], max_distance: int):
        self.exclude = tuple(exclude)  # sorted, distinct pHashes (hashed once, at plan time)
        self.max_distance = max_distance
        self._index = None

    @classmethod
    def from_config(cls, dedup, longest: int = 512) -> "DedupEvaluation | None":
        """The step, or None when ``dedup.exclude`` is empty.  It runs whether or not
        ``dedup.enabled`` merges near-duplicates: decontamination is not optional once asked
        for.  ``longest``: the stored size (``image.resize_longest``), as the decode uses."""
        if not dedup.exclude:
            return None
        return cls(tuple(load_exclude(dedup.exclude, longest)), dedup.max_distance)

    def describe(self):
        return {"exclude_hashes": len(self.exclude), "max_distance": self.max_distance}

    def __getstate__(self):
        return {**self.__dict__, "_index": None}

    def setup(self) -> None:
        self._index = HashIndex(list(self.exclude), self.max_distance)

    def process(self, item: ImageItem):
        if self._index is None:
            self.setup()
        h = parse_phash(item.meta.get("phash"))
        if h is None:
            item.meta["phash"] = phash(item.pixels)
            h = parse_phash(item.meta["phash"])
        if self._index.matches(h):
            return self.drop("image")
        return [item]
