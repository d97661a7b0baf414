"""Measures the perceptual-hash distance that separates copies of a photo from other photos.

Copies: each real photo of ``tools/relevance_data.py`` (the captioned photos from installed
Debian and Python packages; issue 13/15's off-limits packages are not among them) re-encoded
as JPEG at quality 75 / 50 / 30, resized to 1/2 and 1/4, cropped by 5 % / 10 % / 20 % of each
side, and a 10 % crop at quality 50.  Distinct: every pair of two different photos.  Each
image is stored as the pipeline stores it (longest side 512, JPEG 90) before its 64-bit pHash
(imagehash) is taken, so the distances are those the ``dedup`` step sees.

    .venv/bin/python -m tools.phash_distance          # the table of docs/dedup.md
"""
from __future__ import annotations

import argparse
import io
import itertools
from collections import Counter

import imagehash
import numpy as np
from PIL import Image

from tools import relevance_data as rd

STORE_LONGEST, STORE_QUALITY = 512, 90


def jpeg(im: Image.Image, quality: int) -> Image.Image:
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=quality)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


def stored(im: Image.Image) -> Image.Image:
    w, h = im.size
    s = STORE_LONGEST / max(w, h)
    if s < 1:
        im = im.resize((max(1, round(w * s)), max(1, round(h * s))), Image.LANCZOS)
    return jpeg(im, STORE_QUALITY)


def crop(im: Image.Image, frac: float) -> Image.Image:
    w, h = im.size
    dx, dy = round(w * frac), round(h * frac)
    return im.crop((dx, dy, w - dx, h - dy))


def resize(im: Image.Image, f: float) -> Image.Image:
    w, h = im.size
    return im.resize((max(1, round(w * f)), max(1, round(h * f))), Image.LANCZOS)


VARIANTS = {
    "jpeg q75": lambda im: jpeg(im, 75),
    "jpeg q50": lambda im: jpeg(im, 50),
    "jpeg q30": lambda im: jpeg(im, 30),
    "resize 1/2": lambda im: resize(im, 0.5),
    "resize 1/4": lambda im: resize(im, 0.25),
    "crop 5%": lambda im: crop(im, 0.05),
    "crop 10%": lambda im: crop(im, 0.10),
    "crop 20%": lambda im: crop(im, 0.20),
    "crop 10% + q50": lambda im: jpeg(crop(im, 0.10), 50),
}


def phash(im: Image.Image) -> int:
    return int(str(imagehash.phash(stored(im))), 16)


def measure():
    rows = rd.photos()
    originals, copies = [], {k: [] for k in VARIANTS}
    seen = set()
    for r in rows:
        if r["sha256"] in seen:
            continue
        seen.add(r["sha256"])
        im = Image.open(io.BytesIO(rd.read_bytes(r["path"]))).convert("RGB")
        h = phash(im)
        originals.append(h)
        for name, f in VARIANTS.items():
            copies[name].append(bin(h ^ phash(f(im))).count("1"))
    distinct = [bin(a ^ b).count("1") for a, b in itertools.combinations(originals, 2)]
    return len(originals), copies, distinct


def main(argv: list[str] | None = None) -> None:
    # no options, but --help answers and a stray argument is an error before the long run
    argparse.ArgumentParser(prog="python -m tools.phash_distance",
                            description=__doc__.split("\n\n")[0]).parse_args(argv)
    n, copies, distinct = measure()
    d_all = Counter(distinct)
    print(f"{n} photos, {len(distinct)} distinct pairs")
    print("| max_distance | " + " | ".join(VARIANTS) + " | distinct pairs matched |")
    print("|---" * (len(VARIANTS) + 2) + "|")
    for t in range(0, 21, 2):
        cells = [f"{np.mean(np.array(v) <= t):.2f}" for v in copies.values()]
        fp = sum(c for d, c in d_all.items() if d <= t)
        print(f"| {t} | " + " | ".join(cells) + f" | {fp} ({fp / len(distinct):.4%}) |")
    print("closest distinct pairs:", sorted(distinct)[:10])
    for name, v in copies.items():
        print(f"{name}: median {np.median(v):.0f}, max {max(v)}")


if __name__ == "__main__":
    main()
