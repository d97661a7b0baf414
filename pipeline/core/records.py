"""The records every stage and both engines share.

Records are small dataclasses that pickle cheaply (Beam and Spark move them between workers)
and convert to and from plain dicts.  Each carries its provenance: the page it came from, the
image URL, and which part of the page a text came from.  Facts that later stages add and that
do not need a typed column (rule hits, label lists, feature values) go in ``meta``, a
JSON-serialisable dict, so adding a stage never changes the schema.
"""
from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Where a candidate text came from; order = preference when two texts tie.
TEXT_SOURCES = ("alt", "caption", "title", "surrounding")


def transient(default=None):
    """A field that lives only while a record is inside one fused bundle of steps (decoded
    pixels, cached model passes): never compared, never in :func:`to_dict`, and never carried
    into a :class:`Pair` (``ImageItem.facts`` leaves it behind)."""
    return field(default=default, repr=False, compare=False, metadata={"transient": True})


@dataclass
class Page:
    """One fetched web page (an HTML response from a WARC file or the crawler)."""

    url: str
    body: bytes
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    source: str = ""  # the WARC file or "crawl"
    meta: dict[str, Any] = field(default_factory=dict)
    # The decoded text and parse tree (pipeline.web.html.ParsedPage), made by the first step
    # that needs them and read by the next ones: a page is parsed once.
    parsed: Any = transient()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["parsed"] = None  # a lexbor tree does not pickle; the next process parses again
        return state


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
class ImageFacts:
    """What the pipeline knows about one stored image; the :class:`Pair` s of an image share
    one (so its bytes and metadata are not copied per text).

    ``meta`` holds facts without a typed column (labels, phash, ...); ``meta["embedding"]``
    is the EfficientNet-lite0 embedding as a float16 array, encoded (:func:`encode_embedding`)
    only when a sample is written.
    """

    image_url: str
    data: bytes
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


@dataclass
class ImageItem(ImageFacts):
    """One image URL, fetched once, with every candidate text that points at it.

    ``data`` holds the fetched bytes until the store stage (after the image filters) replaces
    them with the stored (resized, re-encoded) image and sets ``sha256``; ``width``/``height``
    describe the stored image from the decode stage on.
    """

    candidates: list[Candidate] = field(default_factory=list)
    # The decoded stored image (PIL RGB: what ``data`` holds once stored; ``np.asarray`` gives
    # HxWx3 uint8), set by the decode stage so that later image filters in the same fused
    # bundle never decode again; kept as PIL because the filters resample it in PIL and a numpy
    # round trip copies.
    pixels: Any = transient()
    # The shared 224x224 RGB view of the image models (filters/backbone.py) and the backbone's
    # (embedding, logits) for it: computed once, read by naturalness, NSFW and the labeler.
    view: Any = transient()
    backbone_out: Any = transient()
    # open_nsfw's outputs for the view, ((precision, jpeg_reencode), score, pooled features):
    # computed by naturalness's second opinion for the images it is unsure of, and reused by
    # the NSFW step when its model settings are the same (filters/nsfw.py).
    nsfw_out: Any = transient()

    def facts(self) -> ImageFacts:
        """The image's facts without its candidates or transient fields (a copy of ``meta``)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(ImageFacts)}
        return ImageFacts(**{**d, "meta": dict(self.meta)})

    def clear_model_cache(self) -> None:
        """Frees the cached view and backbone outputs once the last model has read them."""
        self.view = self.backbone_out = self.nsfw_out = None


@dataclass
class Pair:
    """One (stored image, text) pair: what ``best_text`` chooses from and the writer stores."""

    key: str  # derived from the stored image's content
    candidate: Candidate
    image: ImageFacts  # shared by every pair of the image
    score: float | None = None

    def metadata(self) -> dict[str, Any]:
        """The JSON metadata stored beside the image (``<key>.json`` and the parquet row)."""
        c, im = self.candidate, self.image
        meta = dict(im.meta)
        if meta.get("embedding") is not None:
            meta["embedding"] = encode_embedding(meta["embedding"])
        return {
            "key": self.key,
            "caption": c.text,
            "raw_text": c.raw_text,
            "text_source": c.text_source,
            "image_url": im.image_url,
            "page_url": c.page_url,
            "page_title": c.page_title,
            "page_lang": c.page_lang,
            "width": im.width,
            "height": im.height,
            "original_width": im.orig_width,
            "original_height": im.orig_height,
            "original_format": im.orig_format,
            "original_bytes": im.orig_bytes,
            "sha256": im.sha256,
            "nsfw": im.nsfw,
            "natural": im.natural,
            "score": self.score,
            "text_meta": c.meta,
            # includes the EfficientNet-lite0 embedding (base64 float16): the scorer's
            # self-supervision and users' dedup / retrieval read it from the shards
            "image_meta": meta,
        }


def encode_embedding(vec) -> str:
    """An embedding as written in the shards' ``image_meta``: base64 of little-endian float16
    (1280 values: 3.4 kB)."""
    if isinstance(vec, str):  # already encoded (e.g. a record read back from a shard)
        return vec
    return base64.b64encode(np.asarray(vec, "<f2").tobytes()).decode("ascii")


def decode_embedding(value) -> np.ndarray | None:
    """``image_meta["embedding"]`` (the float16 array of a record in flight, or the base64
    text of a written shard) -> a float32 vector; None if absent or unreadable."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return value.astype(np.float32)
    if not value:
        return None
    try:
        return np.frombuffer(base64.b64decode(value), "<f2").astype(np.float32)
    except (ValueError, TypeError):
        return None


def label_pairs(meta: dict | None) -> list[tuple[str, float]]:
    """``image_meta["labels"]`` as ``[(class name, probability), ...]``.  Written as
    ``[{"name": ..., "p": ...}, ...]`` (a list of structs Arrow and Hugging Face ``datasets``
    infer); shards written before that hold ``[[name, p], ...]``, which is still read."""
    out = []
    for item in (meta or {}).get("labels") or []:
        if isinstance(item, dict):
            out.append((str(item.get("name")), float(item.get("p"))))
        else:
            out.append((str(item[0]), float(item[1])))
    return out


RECORD_TYPES = {cls.__name__: cls for cls in (Page, Candidate, ImageFacts, ImageItem, Pair)}


def to_dict(record) -> dict[str, Any]:
    """A plain dict with the record's type name under ``__type__`` (nested records too)."""
    d = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)
         if not f.metadata.get("transient")}
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
