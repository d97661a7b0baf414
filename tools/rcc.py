"""Read files out of a Qt resource file (``.rcc``), for photos that a package ships packed.

GCompris (``gcompris-qt-data``) packs each activity's images into one ``.rcc`` per activity;
its photographs (animals, monuments, musicians, ...) are real-photo data for the relevance
evaluation (``scoring/data/real_captions.jsonl``).  The format (Qt's ``rcc`` tool, versions
1-3): a header ``qres``, version, and the offsets of the tree, the data and the names; the
tree is fixed-size nodes (directories list their children, files point at a data blob, which
is stored raw or zlib-compressed behind a 4-byte length).  zstd-compressed entries (flag 4)
are not read (GCompris does not use them).

    files(path) -> {inner path: offset}        read(path, inner path) -> bytes
"""
from __future__ import annotations

import functools
import struct
import zlib

COMPRESSED, DIRECTORY, COMPRESSED_ZSTD = 0x01, 0x02, 0x04


class RccError(ValueError):
    pass


def _u32(b: bytes, at: int) -> int:
    return struct.unpack_from(">I", b, at)[0]


def _u16(b: bytes, at: int) -> int:
    return struct.unpack_from(">H", b, at)[0]


@functools.lru_cache(maxsize=4)
def _index(path: str) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """(the file's bytes, {inner path: (flags, data offset)})."""
    with open(path, "rb") as f:
        b = f.read()
    if b[:4] != b"qres":
        raise RccError(f"{path}: not a Qt resource file")
    version, tree, data, names = (_u32(b, 4 + 4 * i) for i in range(4))
    if version not in (1, 2, 3):
        raise RccError(f"{path}: rcc version {version} not supported")
    node_size = 14 if version == 1 else 22

    def name(node: int) -> str:
        at = names + _u32(b, tree + node * node_size)
        n = _u16(b, at)
        return b[at + 6: at + 6 + 2 * n].decode("utf-16-be")

    out: dict[str, tuple[int, int]] = {}
    stack = [(0, "")]
    while stack:
        node, prefix = stack.pop()
        at = tree + node * node_size
        flags = _u16(b, at + 4)
        if flags & DIRECTORY:
            count, first = _u32(b, at + 6), _u32(b, at + 10)
            for child in range(first, first + count):
                stack.append((child, f"{prefix}{name(child)}/"))
        else:
            out[prefix.rstrip("/")] = (flags, data + _u32(b, at + 10))
    return b, out


def files(path: str) -> list[str]:
    """Inner paths of every file in the resource file, sorted."""
    return sorted(_index(path)[1])


def read(path: str, inner: str) -> bytes:
    """The bytes of one file (``inner`` as :func:`files` lists it)."""
    b, index = _index(path)
    if inner not in index:
        raise KeyError(f"{path}: no {inner!r}")
    flags, at = index[inner]
    blob = b[at + 4: at + 4 + _u32(b, at)]
    if flags & COMPRESSED_ZSTD:
        raise RccError(f"{path}: {inner} is zstd-compressed (not supported)")
    if flags & COMPRESSED:
        return zlib.decompress(blob[4:])
    return blob
