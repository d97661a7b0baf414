"""The evaluation images that ``dedup.exclude`` names, as 64-bit pHashes.

A corpus meant for pre-training before COCO / Flickr30k retrieval must not hold their test
images; the ``dedup_evaluation`` step drops every image within ``dedup.max_distance`` of one of
these (``dedup_evaluation_image``), the same rule as for near-duplicates.  ``dedup.exclude`` lists:

* a folder: every image file under it (jpg, jpeg, png, webp, gif, bmp, tif, tiff);
* a webdataset shard (``.tar``): every image member;
* a hash file (any other file): one 16-hex-digit pHash per line, optionally followed by
  whitespace and a name; blank lines and ``#`` comments skipped.  ``lait hashes DIR -o FILE``
  writes one, so a test split is hashed once, not on every build.

Images are hashed as the pipeline hashes a stored image: decoded upright in RGB, the longest
side brought to ``longest`` (the build's ``image.resize_longest``), then imagehash's pHash.
An image that cannot be decoded is reported, not skipped in silence.
"""
from __future__ import annotations

import os
import re
import tarfile

from filters.image_decode import ImageDecode
from filters.labels import phash
from pipeline.core.errors import ConfigError
from pipeline.core.records import ImageItem
from pipeline.core.stage import Drop

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff")
_LINE = re.compile(r"^([0-9a-fA-F]{16})(?:\s+(.*))?$")


def phash_of(data: bytes, longest: int = 512) -> int:
    """The pHash the labels step would give this image (the same decode, the same resize)."""
    item = ImageItem(image_url="", data=data)
    got = ImageDecode(longest, store=False).process(item)
    if isinstance(got, Drop):
        raise ValueError(got.reason)
    return int(phash(item.pixels), 16)


def _is_image(name: str) -> bool:
    return name.lower().endswith(IMAGE_EXTS)


def images_in(path: str):
    """(name, bytes) of every image in a folder or a webdataset shard, in name order."""
    if os.path.isdir(path):
        found = []
        for root, _, files in os.walk(path):
            found += [os.path.join(root, f) for f in files if _is_image(f)]
        for p in sorted(found):
            with open(p, "rb") as f:
                yield os.path.relpath(p, path), f.read()
    else:
        with tarfile.open(path) as tf:
            members = sorted((m for m in tf.getmembers() if m.isfile() and _is_image(m.name)),
                             key=lambda m: m.name)
            for m in members:
                yield m.name, tf.extractfile(m).read()


def hash_images(path: str, longest: int = 512) -> tuple[list[tuple[int, str]], list[str]]:
    """pHashes of the images in a folder or shard, and the names that could not be decoded."""
    out, bad = [], []
    for name, data in images_in(path):
        try:
            out.append((phash_of(data, longest), name))
        except Exception:  # a broken file in a test split: reported by the caller
            bad.append(name)
    return out, bad


def read_hash_file(path: str) -> list[tuple[int, str]]:
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = _LINE.match(line)
            if not m:
                raise ConfigError(f"{path}:{n}: expected a 16-hex-digit pHash, got {line[:40]!r}")
            out.append((int(m.group(1), 16), m.group(2) or ""))
    return out


def check_sources(paths: list[str]) -> None:
    """Fails at config load on a path that is missing or not a folder, shard or hash file."""
    for p in paths:
        if not os.path.exists(p):
            raise ConfigError(f"dedup.exclude: {p} does not exist")
        if os.path.isfile(p) and p.endswith(".tar") and not tarfile.is_tarfile(p):
            raise ConfigError(f"dedup.exclude: {p} is not a tar (webdataset) file")
        if os.path.isfile(p) and not p.endswith(".tar"):
            read_hash_file(p)  # a malformed line fails here, with its line number


def load_exclude(paths: list[str], longest: int = 512) -> list[int]:
    """The sorted, distinct pHashes of every source in ``dedup.exclude``."""
    hashes = set()
    for p in paths:
        if os.path.isdir(p) or p.endswith(".tar"):
            got, bad = hash_images(p, longest)
            if bad:
                raise ConfigError(f"dedup.exclude: {p}: cannot decode {len(bad)} image(s), "
                                  f"e.g. {bad[0]}")
            if not got:
                raise ConfigError(f"dedup.exclude: {p} holds no images")
        else:
            got = read_hash_file(p)
        hashes.update(h for h, _ in got)
    return sorted(hashes)
