"""``make-data``: the naturalness head's training folders, written from the offline sources.

    python -m tools.train_naturalness make-data /tmp/naturalness

The train split's sources (``tools/image_sources.py``; never the test split) become
``out/natural/<source>/*.jpg`` and ``out/other/<source>/*.jpg``: random crops and colour-moved
variants of the photos (plus ``tools/photo_variants.py``'s black-and-white and low-key ones),
crops of wallpapers, logos and renders, whole clip-art files on white or a light colour, and
``tools/render_graphics.py``'s rendered graphics.  Every random choice is seeded by the
seed, a fixed salt, the sha256 of the file it draws from (a crop's, for the appended
variants) and the crop's number, never by a path: the same packages give the same bytes
wherever they are unpacked (``$LAIT_CACHE``, the .deb cache) and wherever ``out`` is
(docs/images.md, eleventh round).  The recipe and its history are in
``tools/train_naturalness.py``.
"""
from __future__ import annotations

import os
import random
import sys

from PIL import Image, ImageEnhance, ImageOps

from tools.image_sources import (
    content_rng,
    flatten,
    missing,
    natural_sources,
    nonnatural_sources,
    spread,
)
from tools.image_sources_wide import NO_VARIANTS, candidate_sources
from tools.photo_variants import write_variants
from tools.render_graphics import KINDS, render

PHOTO_CROPS = 50
PHOTO_JITTERED = 40
CLIPART_PER_CATEGORY = 250
# Sources used as whole files (figures on transparency or white, placed like clip art; UI
# screenshots as they are shown) rather than as random crops, at most CLIPART_PER_CATEGORY each.
WHOLE_FILE_SOURCES = ("openclipart", "wesnoth_portraits", "stellarium_drawn", "stellarium_aratea",
                      "kstars_screenshots", "povray_renders", "openshot_procedural", "visp_screens")
# A source of few photos (<= FEW_PHOTOS files) needs many crops of each to show variety; one
# of many photos has it in its files: at most PHOTOS_PER_SOURCE of them (evenly spread), with
# MANY_CROPS + MANY_JITTERED each.  (Stellarium's 333 deep-sky photos must not become 30,000
# crops; a source's weight is fixed by source_weights anyway.)
FEW_PHOTOS = 25
PHOTOS_PER_SOURCE = 40
MANY_CROPS, MANY_JITTERED = 10, 5
ARTWORK_CROPS = 12
# Photo sources of cut-outs on transparency (issue 15's fourth round): placed whole on a plain
# background, like clip art, rather than cropped (a crop would cut the background away).
CUTOUT_SOURCES = ("scratch_cutouts",)
CUTOUT_PLACEMENTS = 4
RENDERED_PER_KIND = 150
# The shipped head's splits (a refit on train + val scored lower: tools/train_naturalness.py).
TRAIN_SPLITS = ("train",)


def _save(im: Image.Image, path: str, rng: random.Random) -> None:
    longest = rng.randrange(300, 641)
    if max(im.size) > longest:
        im.thumbnail((longest, longest), Image.Resampling.LANCZOS)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    im.save(path, format="JPEG", quality=rng.randrange(50, 96))


def _crop(im: Image.Image, rng: random.Random) -> Image.Image:
    w, h = im.size
    area = rng.uniform(0.15, 1.0) * w * h
    aspect = rng.uniform(0.6, 1.7)
    cw, ch = min(w, int((area * aspect) ** 0.5)), min(h, int((area / aspect) ** 0.5))
    x, y = rng.randrange(w - cw + 1), rng.randrange(h - ch + 1)
    out = im.crop((x, y, x + cw, y + ch))
    if rng.random() < 0.5:
        out = ImageOps.mirror(out)
    if rng.random() < 1 / 7:
        out = out.convert("L").convert("RGB")
    return out


def _jitter(im: Image.Image, rng: random.Random) -> Image.Image:
    """A crop (or a small texture patch) with its colours moved: the training photos are few
    and mostly green close-ups, and without this the classifier learns "green = natural"."""
    w, h = im.size
    if rng.random() < 0.6:
        im = _crop(im, rng)
    else:  # 1/4..1/9 of the longest side: surfaces such as bark, sand, water, stone
        side = max(w, h) // rng.randrange(4, 10)
        x, y = rng.randrange(max(1, w - side)), rng.randrange(max(1, h - side))
        im = im.crop((x, y, x + side, y + side))
    if rng.random() < 0.5:
        hh, ss, vv = im.convert("HSV").split()
        shift = rng.randrange(256)
        hh = hh.point(lambda v: (v + shift) % 256)
        im = Image.merge("HSV", (hh, ss, vv)).convert("RGB")
    im = ImageEnhance.Color(im).enhance(rng.uniform(0.3, 1.5))
    im = ImageEnhance.Contrast(im).enhance(rng.uniform(0.6, 1.4))
    im = ImageEnhance.Brightness(im).enhance(rng.uniform(0.6, 1.3))
    if rng.random() < 0.25:
        im = im.convert("L").convert("RGB")
    return im


def _stems(files: list[str]) -> list[str]:
    """Output names for a source's files: the file stem, or, where two files of the source
    share one (KDE's wallpapers are all ``images/<size>.jpg``), ``NNN_stem`` by position, so
    no file's crops overwrite another's.  (Before this, ``make-data --splits train val``
    kept one crop set of the ten Plasma photos: the train + val refit below was fitted on
    that.)  The train split's sources have distinct stems: their files are named as before."""
    stems = [os.path.splitext(os.path.basename(p))[0] for p in files]
    if len(set(stems)) == len(stems):
        return stems
    return [f"{i:03d}_{s}" for i, s in enumerate(stems)]


def _cutouts(out: str, source: str, files: list[str], seed: int) -> int:
    """Photos cut out onto transparency, laid on white (or a light colour) with uneven margins,
    as a product shot on a web page: CUTOUT_PLACEMENTS each, never cropped into."""
    n = 0
    for path, stem in zip(files, _stems(files)):
        for k in range(CUTOUT_PLACEMENTS):
            rng = content_rng(seed, path, "cutout", k)
            bg = (255, 255, 255) if rng.random() < 0.75 else tuple(rng.randrange(170, 256) for _ in range(3))
            im = flatten(Image.open(path), bg)
            if rng.random() < 0.5:
                im = ImageOps.mirror(im)
            side = max(im.size)
            im = ImageOps.expand(im, tuple(int(side * rng.uniform(0.03, 0.5)) for _ in range(4)), fill=bg)
            _save(im, os.path.join(out, "natural", source, f"{stem}_c{k}.jpg"), rng)
            n += 1
    return n


def make_data(out: str, seed: int = 0, splits=TRAIN_SPLITS, candidates: bool = False) -> dict[str, int]:
    """Writes ``out/natural/<source>/*.jpg`` and ``out/other/<source>/*.jpg`` from the
    sources of ``splits`` (never a test split); ``candidates``: with the seventh round's train
    candidates (``image_sources_wide.candidate_sources``)."""
    if any(s.startswith("test") for s in splits):
        sys.exit("the test split is for the final score only: make-data takes train and val")
    nat, oth = {}, {}
    for split in splits:
        nat.update(natural_sources(split))
        oth.update(nonnatural_sources(split))
    if candidates:
        cn, co = candidate_sources()
        nat.update(cn)
        oth.update(co)
    gone = missing(nat) + missing(oth)
    if gone or not oth:
        sys.exit(f"training sources missing: {gone or 'openclipart'}: run `make setup` (the "
                 "Debian packages of tools/image_sources.py)")

    def crops(path: str, n: int, folder: str, source: str, stem: str) -> Image.Image:
        """``n`` random crops of ``path`` into ``out/folder/source``, named ``stem_NN``."""
        im = flatten(Image.open(path))
        for i in range(n):
            rng = content_rng(seed, path, "crop", i)
            _save(_crop(im, rng), os.path.join(out, folder, source, f"{stem}_{i:02d}.jpg"), rng)
        return im

    counts = {}
    for source, files in nat.items():
        if source.startswith(CUTOUT_SOURCES):
            counts[source] = _cutouts(out, source, files, seed)
            continue
        n_crops, n_jitter = ((PHOTO_CROPS, PHOTO_JITTERED) if len(files) <= FEW_PHOTOS
                             else (MANY_CROPS, MANY_JITTERED))
        files = spread(files, PHOTOS_PER_SOURCE)
        for path, stem in zip(files, _stems(files)):
            im = crops(path, n_crops, "natural", source, stem)
            for i in range(n_jitter):
                rng = content_rng(seed, path, "jitter", i)
                _save(_jitter(im, rng), os.path.join(out, "natural", source, f"{stem}_j{i:02d}.jpg"), rng)
            counts[source] = counts.get(source, 0) + n_crops + n_jitter

    # Variants of the few-photo sources' crops only: the many-photo ones carry their own
    # variety (dark deep-sky photos, night monuments), and the variants stay as they were.
    counts.update(write_variants(out, sorted(s for s, f in nat.items()
                                             if len(f) <= FEW_PHOTOS and s not in NO_VARIANTS), seed))
    for source, files in oth.items():
        if not source.startswith(WHOLE_FILE_SOURCES):  # wallpapers, logos, renders: crops, as photos
            for path, stem in zip(files, _stems(files)):
                crops(path, ARTWORK_CROPS, "other", source, stem)
            counts[source] = len(files) * ARTWORK_CROPS
            continue
        picked = spread(files, CLIPART_PER_CATEGORY)
        for i, path in enumerate(picked):
            rng = content_rng(seed, path, "whole")
            bg = (255, 255, 255) if rng.random() < 0.75 else tuple(rng.randrange(170, 256) for _ in range(3))
            try:
                im = flatten(Image.open(path), bg)
            except Exception:  # a broken file in the package: skip it, it is not data
                continue
            if rng.random() < 0.4:  # clip art placed with margins, as on a web page
                pad = int(max(im.size) * rng.uniform(0.05, 0.4))
                im = ImageOps.expand(im, pad, fill=bg)
            _save(im, os.path.join(out, "other", source, f"{i:03d}.jpg"), rng)
        counts[source] = len(picked)
    for kind in KINDS:  # drawn, not read: seeded by the seed, the kind and the number
        for i in range(RENDERED_PER_KIND):
            rng = random.Random(f"{seed}:render:{kind}:{i}")
            _save(render(kind, seed * 100000 + i), os.path.join(out, "other", f"rendered_{kind}", f"{i:03d}.jpg"), rng)
        counts[f"rendered_{kind}"] = RENDERED_PER_KIND
    return counts
