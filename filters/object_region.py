"""The object region of a view: what is not plain background (issue 15, fifth round).

A product photo on white and a drawing on white share their background; the frame-wide
embedding and statistics (``filters/image_stats.py``) are mostly that background.  These
statistics judge the object itself: its shading, sensor noise and grey levels.

On the shared 224-px view: the border colour is the per-channel median of the outermost
``RING``-pixel ring; a pixel is background when every channel is within ``TOL`` of it; the
border is uniform when at least 75% of the ring is background.  With a uniform border and an
object share of at least 0.5%, the object is the non-background mask and its bounding box;
otherwise the whole view is the object.  Integer arithmetic throughout (the median is an
element of the sorted ring, every statistic an exact ratio of integer counts and sums), so
the numbers are the same on every CPU.
"""
from __future__ import annotations

import numpy as np

from filters.image_stats import DIM as FRAME_DIM
from filters.image_stats import _lap, image_stats

RING, TOL = 4, 16
NAMES = ("border_uniform", "object_share", "box_share",
         *(f"box_{i}" for i in range(FRAME_DIM)),
         "obj_lap_zero", "obj_lap_mean", "obj_grey_levels")
DIM = len(NAMES)


def _ring(v: np.ndarray) -> np.ndarray:
    h, w = v.shape[:2]
    return np.concatenate([v[:RING].reshape(-1, 3), v[h - RING:].reshape(-1, 3),
                           v[RING:h - RING, :RING].reshape(-1, 3),
                           v[RING:h - RING, w - RING:].reshape(-1, 3)])


def object_region(view: np.ndarray):
    """(uniform share of the ring, object mask or None, box (r0, r1, c0, c1) inclusive or None)
    of an RGB uint8 view; None where the whole view is the object."""
    v = np.asarray(view)
    ring = _ring(v)
    border = np.sort(ring, axis=0)[len(ring) // 2].astype(np.int16)  # an element: no float
    ring_bg = int(np.count_nonzero((np.abs(ring.astype(np.int16) - border) <= TOL).all(1)))
    if ring_bg * 4 < 3 * len(ring):
        return ring_bg / len(ring), None, None
    mask = (np.abs(v.astype(np.int16) - border) > TOL).any(2)
    n_obj = int(np.count_nonzero(mask))
    if n_obj * 200 < mask.size:
        return ring_bg / len(ring), None, None
    rows, cols = np.flatnonzero(mask.any(1)), np.flatnonzero(mask.any(0))
    return ring_bg / len(ring), mask, (int(rows[0]), int(rows[-1]), int(cols[0]), int(cols[-1]))


def object_stats(view: np.ndarray) -> np.ndarray:
    """An RGB uint8 view (at least 8x8) -> ``DIM`` statistics of its object region (float32)."""
    v = np.asarray(view)
    image_stats(v)  # validates the view the same way
    uniform, mask, box = object_region(v)
    h, w = v.shape[:2]
    if mask is None:
        mask, box = np.ones((h, w), bool), (0, h - 1, 0, w - 1)
    r0, r1, c0, c1 = box
    crop = v[r0:r1 + 1, c0:c1 + 1] if r1 - r0 >= 7 and c1 - c0 >= 7 else v
    u16 = v.astype(np.uint16)
    grey = ((77 * u16[..., 0] + 150 * u16[..., 1] + 29 * u16[..., 2]) >> 8).astype(np.int16)
    # the mask eroded by one pixel (4-neighbours), on the Laplacian's interior grid
    inner = (mask[1:-1, 1:-1] & mask[:-2, 1:-1] & mask[2:, 1:-1]
             & mask[1:-1, :-2] & mask[1:-1, 2:])
    n_in = int(np.count_nonzero(inner))
    lap = np.abs(_lap(grey))[inner]
    levels = int(np.count_nonzero(np.bincount(grey[mask].ravel(), minlength=256)))
    out = [uniform, int(np.count_nonzero(mask)) / mask.size,
           (r1 - r0 + 1) * (c1 - c0 + 1) / (h * w), *image_stats(crop).tolist(),
           np.count_nonzero(lap == 0) / n_in if n_in else 1.0,
           min(int(lap.sum(dtype=np.int64)) / n_in / 32.0, 4.0) if n_in else 0.0,
           levels / 256.0]
    return np.array(out, np.float32)


def object_stats_batch(views) -> np.ndarray:
    """[N, DIM] object-region statistics of N views."""
    return np.stack([object_stats(v) for v in views]) if len(views) else np.zeros((0, DIM), np.float32)


def object_crop(pixels: np.ndarray, view: np.ndarray) -> np.ndarray:
    """The stored pixels cut to the view's object box (the view is ``pixels`` squashed to 256
    and centre-cropped to 224: ``filters/backbone.square_view``); ``pixels`` where the whole
    view is the object."""
    _, mask, box = object_region(view)
    if mask is None:
        return pixels
    h, w = pixels.shape[:2]
    r0, r1, c0, c1 = box
    # view pixel i covers stored rows [(i + 16) * h / 256, (i + 17) * h / 256)
    y0, y1 = (r0 + 16) * h // 256, min(h, -(-(r1 + 17) * h // 256))
    x0, x1 = (c0 + 16) * w // 256, min(w, -(-(c1 + 17) * w // 256))
    if y1 - y0 < 8 or x1 - x0 < 8:
        return pixels
    return pixels[y0:y1, x0:x1]
