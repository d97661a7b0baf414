"""JPEG streams kept inside Enlightenment's Eet archives (``.edj``), read without the EFL.

Enlightenment's backgrounds (``enlightenment-data``) are photos stored as lossy images, one
plain JPEG per screen size.  Shared by the relevance data (``tools/relevance_data.py``) and the
naturalness sources (``tools/image_sources_wide.py``), which sit on either side of
``tools/image_sources.py``: a module of its own keeps the imports acyclic.
"""
from __future__ import annotations

import re


def largest_jpeg(data: bytes) -> bytes:
    """The largest JPEG stream stored in an Enlightenment theme file (``.edj``, an Eet archive).

    Enlightenment's backgrounds (``enlightenment-data``) are photos kept in Eet as lossy images,
    one plain JPEG per screen size; the largest is the full picture.  Each stream is walked
    marker by marker to its end, so whatever the archive stores after it is not taken."""
    best = b""
    for m in re.finditer(b"\xff\xd8\xff", data):
        end = _jpeg_end(data, m.start())
        if end is not None and end - m.start() > len(best):
            best = data[m.start():end]
    if not best:
        raise ValueError("no JPEG stream in the .edj file")
    return best


def _jpeg_end(data: bytes, at: int) -> int | None:
    """The offset just past the end marker of the JPEG stream starting at ``at`` (None when
    the stream is cut short or not a JPEG)."""
    i, n = at + 2, len(data)
    while i + 1 < n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xD9:
            return i + 2
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:  # markers without a length
            i += 2
            continue
        if i + 4 > n:
            return None
        i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
        if marker == 0xDA:  # a scan: entropy-coded bytes up to the next real marker
            while True:
                i = data.find(b"\xff", i)
                if i < 0 or i + 1 >= n:
                    return None
                nxt = data[i + 1]
                if nxt != 0x00 and not 0xD0 <= nxt <= 0xD7:
                    break
                i += 2
    return None
