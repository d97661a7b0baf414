"""Accuracy of the naturalness classifier on a split of sources it was not trained on.

    python -m tools.naturalness_eval                    # the test split, int8 backbone
    python -m tools.naturalness_eval --split val --backbone float

The splits are ``tools/image_sources.py``'s: ``test`` is the held-out figure (scored once the
recipe is fixed), ``val`` is what the recipe was chosen on.  Natural photos are scored whole
and as two 70% crops; non-natural files as they are (at most 40 per clip-art category,
evenly spread).  Only images that the pipeline's size step would pass on (both sides >= 300
px, at most 100 M pixels) are scored, as in a run.  Each image is stored as the pipeline
stores it (transparency on white, longest side 512, JPEG quality 90) before it is scored.
Images are scored as the filter decides: the flat-graphic pre-check, then the head; the
head alone is reported too (``without_precheck``), with what the pre-check fired on.
Prints accuracy, balanced accuracy, per-source accuracy and the errors as JSON.
"""
from __future__ import annotations

import argparse
import io
import json
import sys

import numpy as np
from PIL import Image

from filters.backbone import square_view
from filters.image_stats import stats_batch
from filters.naturalness import Naturalness
from tools.image_sources import (
    SPLITS,
    flatten,
    missing,
    natural_sources,
    nonnatural_sources,
    spread,
)

CLIPART_PER_CATEGORY = 40
CAPPED = ("openclipart",)  # at most CLIPART_PER_CATEGORY files each
MIN_SIDE, MAX_PIXELS = 300, 100_000_000  # the pipeline's size step runs before naturalness


def eligible(size: tuple[int, int]) -> bool:
    """Would the size step pass an image this big on to the naturalness filter?"""
    return min(size) >= MIN_SIDE and size[0] * size[1] <= MAX_PIXELS


def _header_size(path: str) -> tuple[int, int]:
    with Image.open(path) as im:  # reads the header only
        return im.size


def stored_pixels(im: Image.Image) -> np.ndarray:
    """What the pipeline keeps of an image: RGB, longest side <= 512, JPEG q90, decoded."""
    im = flatten(im)
    if max(im.size) > 512:
        im.thumbnail((512, 512), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=90)
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))


def split_set(split: str = "test") -> list[tuple[str, int, str, np.ndarray]]:
    """(source, label 1=natural, path, pixels) for every scored image of ``split``."""
    Image.MAX_IMAGE_PIXELS = None  # one clip-art file claims 623 M pixels; eligible() skips it
    nat, oth = natural_sources(split), nonnatural_sources(split)
    gone = missing(nat) + missing(oth)
    if gone or (split not in ("test7", "val8") and not any(k.startswith("openclipart") for k in oth)):
        raise FileNotFoundError(f"{split} sources missing: {gone or 'openclipart'}: run `make setup` "
                                "(the Debian and pip packages of tools/image_sources.py)")
    out = []
    for source, files in nat.items():
        for path in files:
            im = flatten(Image.open(path))
            w, h = im.size
            cw, ch = int(w * 0.7), int(h * 0.7)
            for crop in (im, im.crop((0, 0, cw, ch)), im.crop((w - cw, h - ch, w, h))):
                if eligible(crop.size):
                    out.append((source, 1, path, stored_pixels(crop)))
    for source, files in oth.items():
        files = [p for p in files if eligible(_header_size(p))]
        if source.startswith(CAPPED):
            files = spread(files, CLIPART_PER_CATEGORY)
        for path in files:
            out.append((source, 0, path, stored_pixels(Image.open(path))))
    return out


def embed_set(data, backbone) -> np.ndarray:
    """Backbone embeddings [N, 1280] of ``split_set`` rows."""
    return np.concatenate([backbone.run([square_view(px) for *_, px in data[i:i + 32]])[0]
                           for i in range(0, len(data), 32)])


def stats_set(data) -> np.ndarray:
    """Pixel statistics [N, 19] of ``split_set`` rows' views (``filters/image_stats.py``)."""
    return stats_batch([square_view(px) for *_, px in data])


def report(data, probs: np.ndarray, threshold: float = 0.5) -> dict:
    """Accuracy figures of natural probabilities ``probs`` for ``split_set`` rows."""
    labels = np.array([lab for _, lab, _, _ in data])
    right = (probs >= threshold).astype(int) == labels
    per_source = {}
    for (source, _, _, _), ok in zip(data, right):
        n, k = per_source.get(source, (0, 0))
        per_source[source] = (n + 1, k + int(ok))
    nat, oth = right[labels == 1], right[labels == 0]
    return {
        "accuracy": round(float(right.mean()), 4),
        "balanced_accuracy": round(float((nat.mean() + oth.mean()) / 2), 4),
        "natural_accuracy": round(float(nat.mean()), 4), "n_natural": int(nat.size),
        "other_accuracy": round(float(oth.mean()), 4), "n_other": int(oth.size),
        "per_source": {s: round(k / n, 4) for s, (n, k) in sorted(per_source.items())},
        "errors": [(p.rsplit("/", 1)[-1], round(float(q), 3))
                   for (_, _, p, _), q, ok in zip(data, probs, right) if not ok],
    }


def precheck_report(data, flat: np.ndarray) -> dict:
    """What the flat-graphic pre-check fired on, per label and per source."""
    labels = np.array([lab for _, lab, _, _ in data])
    fired: dict[str, int] = {}
    for (source, _, _, _), f in zip(data, flat):
        fired[source] = fired.get(source, 0) + int(f)
    return {"fired_natural": int(flat[labels == 1].sum()),
            "fired_other": int(flat[labels == 0].sum()),
            "per_source": {s: n for s, n in sorted(fired.items()) if n}}


def evaluate(model=None, threshold: float = 0.5, split: str = "test", backbone: str = "int8") -> dict:
    """Scores ``split`` as the filter decides with ``model`` (default: the shipped pre-check,
    head and second opinion on the ``backbone``): a flat graphic scores 0, the others the
    head's probability (the second head's where the head is unsure).  ``without_precheck``
    holds the heads' figures alone."""
    model = model or Naturalness(backbone)
    data = split_set(split)
    views = [square_view(px) for *_, px in data]
    emb, stats = embed_set(data, model.backbone), stats_batch(views)
    head = model.second(model.head(emb, stats=stats), emb, stats,
                        lambda idx: model.second.nsfw.run([views[i] for i in idx])[1])
    flat = model.flat([px for *_, px in data])
    alone = report(data, head, threshold)
    return {"split": split, "backbone": backbone, "precheck_on": bool(model.config.flat_check),
            "second_opinion": model.config.second_opinion,
            **report(data, np.where(flat, np.float32(0.0), head), threshold),
            "precheck": precheck_report(data, flat),
            "without_precheck": {k: v for k, v in alone.items() if k != "errors"}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", default="test", choices=SPLITS)
    ap.add_argument("--backbone", default="int8", choices=["float", "int8"])
    args = ap.parse_args(argv)
    print(json.dumps(evaluate(split=args.split, backbone=args.backbone)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
