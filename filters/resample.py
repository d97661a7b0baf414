"""Antialiased resizes of 8-bit RGB images with torch's vectorised uint8 kernels.

Pillow resamples in scalar C; torch's antialiased bilinear and bicubic on uint8 channels-last
images use AVX2 and compute Pillow's filters (the same triangle and a = -0.5 cubic kernels,
support widened by the scale factor): at most one level apart from Pillow's pixels, in about
half the time, conversions included (bench/images.py).  torch is a pinned dependency that the
pair scorer (MiniLM) already loads in the same image workers.
"""
from __future__ import annotations

import warnings

import numpy as np

_torch = None


def _load():
    global _torch
    if _torch is None:
        import torch

        # np.asarray of a PIL image is read-only; interpolate only reads its input, so the
        # "not writable" warning torch.from_numpy gives for it is noise (and a copy would cost).
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        # One thread: engines run one worker process per core (the scorer, if it loads
        # later, sets its own count).
        if torch.get_num_threads() > 1:
            torch.set_num_threads(1)
        _torch = torch
    return _torch


def resize(pixels: np.ndarray, size: tuple[int, int], mode: str = "bicubic") -> np.ndarray:
    """RGB uint8 HxWx3 -> the same image at ``size`` = (width, height), HxWx3 uint8.

    ``mode`` is "bilinear" or "bicubic", antialiased when shrinking, as Pillow's filters."""
    torch = _load()
    x = torch.from_numpy(np.asarray(pixels)).permute(2, 0, 1)[None]  # NCHW view, channels-last
    with torch.inference_mode():
        y = torch.nn.functional.interpolate(x, size=(size[1], size[0]), mode=mode,
                                            antialias=True, align_corners=False)
    # The output is NCHW-contiguous: torch's own copy to HWC is about twice numpy's speed.
    return y[0].permute(1, 2, 0).contiguous().numpy()
