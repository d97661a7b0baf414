"""The records every stage and both engines share.

Records are small dataclasses that pickle cheaply (Beam and Spark move them between workers)
and convert to and from plain dicts.  Each carries its provenance: the page it came from, the
image URL, and which part of the page a text came from.  Facts that later stages add and that
do not need a typed column (rule hits, label lists, feature values) go in ``meta``, a
JSON-serialisable dict, so adding a stage never changes the schema.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

# Where a candidate text came from; order = preference when two texts tie.
TEXT_SOURCES = ("alt", "caption", "title", "surrounding")


@dataclass
class Page:
    """One fetched web page (an HTML response from a WARC file or the crawler)."""

    url: str
    body: bytes
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    source: str = ""  # the WARC file or "crawl"
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Candidate:
    """One (image URL, text) pair found on a page, before the image is fetched."""

    page_url: str
    image_url: str
    text_source: str  # one of TEXT_SOURCES
    text: str  # the cleaned text (equal to raw_text until a cleaning stage edits it)
    raw_text: str  # the text as extracted from the page
    page_title: str = ""
    page_lang: str = ""
    img_index: int = 0  # position of the <img> among the page's images
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImageItem:
    """One image URL, fetched once, with every candidate text that points at it.

    ``data`` holds the fetched bytes until the store stage (after the image filters) replaces
    them with the stored (resized, re-encoded) image and sets ``sha256``; ``width``/``height``
    describe the stored image from the decode stage on.
    """

    image_url: str
    data: bytes
    candidates: list[Candidate]
    width: int = 0
    height: int = 0
    orig_width: int = 0
    orig_height: int = 0
    orig_format: str = ""
    orig_bytes: int = 0
    mime: str = ""
    sha256: str = ""
    nsfw: float | None = None
    natural: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    # The decoded stored image (PIL RGB: what ``data`` holds once stored; ``np.asarray`` gives
    # HxWx3 uint8), set by the decode stage so that later image filters in the same fused
    # bundle never decode again; kept as PIL because the filters resample it in PIL and a numpy
    # round trip copies.
    # Never persisted: the ``pairs`` stage clears it before any shuffle.
    pixels: Any = field(default=None, repr=False, compare=False)


@dataclass
class Pair:
    """One (stored image, text) pair: what aggregation chooses from and the writer stores."""

    key: str  # derived from the stored image's content
    candidate: Candidate
    image_url: str
    data: bytes
    width: int
    height: int
    orig_width: int
    orig_height: int
    orig_format: str
    orig_bytes: int
    sha256: str
    nsfw: float | None = None
    natural: float | None = None
    score: float | None = None
    image_meta: dict[str, Any] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        """The JSON metadata stored beside the image (``<key>.json`` and the parquet row)."""
        c = self.candidate
        return {
            "key": self.key,
            "caption": c.text,
            "raw_text": c.raw_text,
            "text_source": c.text_source,
            "image_url": self.image_url,
            "page_url": c.page_url,
            "page_title": c.page_title,
            "page_lang": c.page_lang,
            "width": self.width,
            "height": self.height,
            "original_width": self.orig_width,
            "original_height": self.orig_height,
            "original_format": self.orig_format,
            "original_bytes": self.orig_bytes,
            "sha256": self.sha256,
            "nsfw": self.nsfw,
            "natural": self.natural,
            "score": self.score,
            "text_meta": c.meta,
            # includes the EfficientNet-lite0 embedding (base64 float16): the scorer's
            # self-supervision and users' dedup / retrieval read it from the shards
            "image_meta": self.image_meta,
        }


RECORD_TYPES = {cls.__name__: cls for cls in (Page, Candidate, ImageItem, Pair)}


def to_dict(record) -> dict[str, Any]:
    """A plain dict with the record's type name under ``__type__`` (nested records too)."""
    d = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    for k, v in d.items():
        if dataclasses.is_dataclass(v):
            d[k] = to_dict(v)
        elif isinstance(v, list) and v and dataclasses.is_dataclass(v[0]):
            d[k] = [to_dict(x) for x in v]
    d["__type__"] = type(record).__name__
    return d


def from_dict(d: dict[str, Any]):
    """Inverse of :func:`to_dict`."""
    d = dict(d)
    cls = RECORD_TYPES[d.pop("__type__")]
    for k, v in d.items():
        if isinstance(v, dict) and "__type__" in v:
            d[k] = from_dict(v)
        elif isinstance(v, list) and v and isinstance(v[0], dict) and "__type__" in v[0]:
            d[k] = [from_dict(x) for x in v]
    return cls(**d)
