"""The ``dedup_evaluation`` step: evaluation images are dropped as soon as their pixels exist.

It runs right after ``hash_blocklist`` (the image bytes checked before any decode), before
every filter that could drop an evaluation image under its own reason and sample it into
rejects.parquet and the report's thumbnails: ``image_size`` (a thumbnail of a COCO test image
is too small), naturalness, NSFW.  The image is decoded here, by the decode step's own code
(:class:`filters.image_decode.ImageDecode`: upright RGB, longest side ``image.resize_longest``)
and the pixels stay on the item, so ``image_decode`` does not decode it again.  The pHash of
those stored pixels is what ``filters/eval_images.py::phash_of`` computes on the other side
(the two agree), kept in ``image_meta["phash"]`` where the labels and ``dedup`` steps find it
(the labels step does not hash again).

An image within ``dedup.max_distance`` bits of a hash that ``dedup.exclude`` names is dropped
as ``dedup_evaluation_image``; the step withholds its drops from the rejects sample.  An image
whose header claims more than ``image.max_pixels`` (a decompression bomb) is not decoded here:
``image_size`` drops it.  One that fails to decode is passed on untouched, for ``image_decode``
to count (``image_decode_failed``).  Every image reaching the corpus job was checked, so no
group of near-duplicates can bring an evaluation image in there: the ``dedup`` step does not
check again.
"""
from __future__ import annotations

from filters.dedup import HashIndex
from filters.eval_images import load_exclude
from filters.image_decode import ImageDecode
from filters.labels import phash
from pipeline.core.records import ImageItem
from pipeline.core.stage import Drop, MapStage


class DedupEvaluation(MapStage):
    name = "dedup_evaluation"
    # Its only drops are test-split images: counted, never sampled into rejects or the report.
    withhold_rejects = True

    def __init__(self, exclude: tuple[int, ...], max_distance: int, resize_longest: int = 512,
                 max_pixels: int = 100_000_000):
        self.exclude = tuple(exclude)  # sorted, distinct pHashes (hashed once, at plan time)
        self.max_distance = max_distance
        self.resize_longest = resize_longest
        self.max_pixels = max_pixels
        self._decode = ImageDecode(resize_longest, store=False)  # the decode step's own code
        self._index = None

    @classmethod
    def from_config(cls, dedup, image) -> "DedupEvaluation | None":
        """The step (``dedup:`` and ``image:`` sections), or None when ``dedup.exclude`` is
        empty.  It runs whether or not ``dedup.enabled`` merges near-duplicates:
        decontamination is not optional once asked for."""
        if not dedup.exclude:
            return None
        longest = image.resize_longest
        return cls(tuple(load_exclude(dedup.exclude, longest)), dedup.max_distance, longest,
                   image.max_pixels)

    def __getstate__(self):
        return {**self.__dict__, "_index": None}

    def setup(self) -> None:
        self._index = HashIndex(list(self.exclude), self.max_distance)

    def process(self, item: ImageItem):
        if self._index is None:
            self.setup()
        if item.orig_width * item.orig_height > self.max_pixels:
            return [item]  # never decoded: image_size drops it (too_many_pixels)
        if item.pixels is None and isinstance(self._decode.process(item), Drop):
            return [item]  # image_decode tries again and counts the failure
        item.meta["phash"] = phash(item.pixels)
        if self._index.matches(int(item.meta["phash"], 16)):
            return self.drop("image")
        return [item]
