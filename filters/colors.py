"""Colour shares of a picture: the one image fact a caption names that ImageNet labels miss.

Captions name colours ("a red anemone", "the pale blue planet uranus", "a green city bus");
EfficientNet's labels and embedding are trained to ignore them (a red and a yellow flower are
both "daisy").  The labels step stores, for every image, the share of its pixels in each of
eleven basic colour names (``COLORS``), and the scorer compares the colour words of a text
with them (``scoring/features.py``, ``col_*``).

The same rules per horizontal band (``color_layout``: top, middle and bottom third) say where
the colours are: a caption's "sky" is blue or white at the top, its "sea" blue below, its
"grass" green at the bottom, its "snow" white below, its "night" dark (``scoring/scene.py``).
ImageNet's labels see "outdoors" in a beach and a gravel desert alike; the bands do not.

Deterministic on every CPU: the picture is subsampled by striding (no resampling kernel) and
the HSV rules are float64 numpy arithmetic; the shares are rounded to 4 decimals.  Transparent
pixels were laid on white by the decode step, so a cut-out's background counts as white.
"""
from __future__ import annotations

import numpy as np

COLORS = ("white", "black", "grey", "red", "orange", "yellow", "green", "blue", "purple",
          "pink", "brown")
# Caption words -> colour index; the few synonyms that captions use for the same pixels.
WORDS = {"white": 0, "black": 1, "dark": 1, "grey": 2, "gray": 2, "silver": 2, "red": 3,
         "orange": 4, "ginger": 4, "golden": 5, "gold": 5, "yellow": 5, "green": 6, "blue": 7,
         "teal": 7, "turquoise": 7, "purple": 8, "violet": 8, "magenta": 9, "pink": 9,
         "brown": 10, "tan": 10}
SIDE = 64  # about 64 x 64 pixels are plenty for shares


def _hsv(rgb: np.ndarray):
    """Hue (degrees), saturation, value of an (N, 3) float array in 0..1."""
    mx, mn = rgb.max(1), rgb.min(1)
    d = mx - mn
    s = np.where(mx > 0, d / np.where(mx > 0, mx, 1.0), 0.0)
    r, g, b = rgb[:, 0], rgb[:, 1], rgb[:, 2]
    dd = np.where(d > 0, d, 1.0)
    h = np.where(mx == r, ((g - b) / dd) % 6.0, np.where(mx == g, (b - r) / dd + 2.0, (r - g) / dd + 4.0))
    return np.where(d > 0, h * 60.0, 0.0), s, mx


def _sample(pixels):
    """The strided subsample (about ``SIDE`` pixels along the longer side), or None."""
    a = np.asarray(pixels)
    if a.ndim != 3 or a.shape[2] < 3 or a.size == 0:
        return None
    step = max(1, -(-max(a.shape[0], a.shape[1]) // SIDE))
    return a[::step, ::step, :3]


def color_shares(pixels) -> list[float]:
    """Shares (0..1, in ``COLORS`` order) of an RGB uint8 image's pixels, by simple HSV rules:
    white / grey / black by brightness when unsaturated, the rest by hue; dark reds and
    oranges are brown."""
    a = _sample(pixels)
    return [0.0] * len(COLORS) if a is None else _shares(a.reshape(-1, 3))


BANDS = 3  # top, middle, bottom thirds


def color_layout(pixels) -> list[float]:
    """``color_shares`` of each horizontal band (top third first): ``BANDS * len(COLORS)``
    shares.  The bands split the subsample's rows by integer arithmetic, so the same rows
    on every CPU."""
    a = _sample(pixels)
    if a is None or a.shape[0] < BANDS:
        return [0.0] * (BANDS * len(COLORS))
    n = a.shape[0]
    return [x for b in range(BANDS) for x in _shares(a[b * n // BANDS:(b + 1) * n // BANDS].reshape(-1, 3))]


def _shares(flat) -> list[float]:
    rgb = flat.astype(np.float64) / 255.0
    h, s, v = _hsv(rgb)
    grey = s < 0.25
    chrom = ~grey & (v >= 0.2)
    red = chrom & ((h < 15) | (h >= 345))
    orange = chrom & (h >= 15) & (h < 40)
    brown = (red | orange) & (v < 0.6)
    parts = [grey & (v >= 0.8), v < 0.2, grey & (v >= 0.2) & (v < 0.8), red & ~brown, orange & ~brown,
             chrom & (h >= 40) & (h < 70), chrom & (h >= 70) & (h < 170), chrom & (h >= 170) & (h < 260),
             chrom & (h >= 260) & (h < 300), chrom & (h >= 300) & (h < 345), brown]
    return [round(float(p.mean()), 4) for p in parts]
