"""Black-and-white and low-key (dark, night) variants of the training photos' crops.

The held-out misses of the naturalness head were photos far from the training photos' look:
dark and night scenes, minimal and black-and-white pictures (issue 15).  The offline packages
hold few such photos, so ``tools/train_naturalness.py make-data`` derives them from the train
split's own photo crops: every third crop becomes, in turn, a black-and-white print (contrast
moved, one in three toned like sepia) or a low-key exposure (a gamma of 1.8-3.2, darker still,
half of them with a night cast: blue shift and sensor noise).  Each kind is written as its own
natural source (``photo_bw``, ``photo_lowkey``), so the trainer's per-source weights give each
the weight of one photo source.  Seeded by each crop's content (``content_rng``): the same
crops give the same bytes, wherever ``out`` is.
"""
from __future__ import annotations

import glob
import os
import random

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

from tools.image_sources import content_rng

EVERY = 3  # one crop in EVERY gets a variant
KINDS = ("photo_bw", "photo_lowkey")


def black_and_white(im: Image.Image, rng: random.Random) -> Image.Image:
    g = ImageEnhance.Contrast(ImageOps.grayscale(im)).enhance(rng.uniform(0.8, 1.6))
    if rng.random() < 0.3:  # a toned print
        dark = (rng.randint(20, 60),) * 3
        light = (rng.randint(200, 255), rng.randint(190, 240), rng.randint(150, 210))
        return ImageOps.colorize(g, dark, light)
    return g.convert("RGB")


def low_key(im: Image.Image, rng: random.Random) -> Image.Image:
    a = np.asarray(im.convert("RGB")).astype(np.float32) / 255
    a = a ** rng.uniform(1.8, 3.2) * rng.uniform(0.5, 0.9)
    if rng.random() < 0.5:  # night: a blue cast and sensor noise
        noise = np.random.default_rng(rng.randint(0, 1 << 30)).normal(0, 0.02, a.shape)
        a = a * np.array([0.7, 0.8, 1.1], np.float32) + noise
    return Image.fromarray((np.clip(a, 0, 1) * 255).astype(np.uint8))


def write_variants(out: str, sources: list[str], seed: int = 0) -> dict[str, int]:
    """From ``out/natural/<source>/*.jpg`` of ``sources``, writes ``out/natural/photo_bw`` and
    ``out/natural/photo_lowkey``; returns the count of each."""
    crops = sorted(p for s in sources for p in glob.glob(os.path.join(out, "natural", s, "*.jpg")))
    counts = dict.fromkeys(KINDS, 0)
    for i, path in enumerate(crops[::EVERY]):
        rng = content_rng(seed, path, "variant")
        kind = KINDS[i % 2]
        with Image.open(path) as im:
            img = black_and_white(im, rng) if kind == "photo_bw" else low_key(im, rng)
        dst = os.path.join(out, "natural", kind, f"{i:04d}.jpg")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        img.save(dst, quality=rng.randint(70, 95))
        counts[kind] += 1
    return counts
