"""Where the offline image data for the naturalness classifier (and NSFW calibration) lives.

Every source is a named group of real files that a package installs; sources, not files, are
split between training and the held-out test, so the reported accuracy is on images from
places the classifier never saw (another photographer, another clip-art category, another
kind of graphic).

Installs: ``apt-get install mate-backgrounds openclipart-png``; ``pip install scikit-image
matplotlib`` (scikit-learn is already a dependency).
"""
from __future__ import annotations

import glob
import os

MATE = "/usr/share/backgrounds/mate"
OPENCLIPART = "/usr/share/openclipart/png"


def _pkg_dir(module: str, *sub: str) -> str:
    try:
        mod = __import__(module, fromlist=["__file__"])
    except ImportError:
        return ""
    return os.path.join(os.path.dirname(mod.__file__), *sub)


def _skimage(names):
    d = _pkg_dir("skimage", "data")
    return [os.path.join(d, n) for n in names] if d else []


# Photographs in scikit-image's data files (its README names the photographers); microscopy,
# fundus and telescope images are photographs too.
SKIMAGE_PHOTOS = [
    "astronaut.png", "brick.png", "camera.png", "cell.png", "chelsea.png", "clock_motion.png",
    "coffee.png", "coins.png", "grass.png", "gravel.png", "hubble_deep_field.jpg", "ihc.png",
    "microaneurysms.png", "moon.png", "motorcycle_left.png", "motorcycle_right.png",
    "retina.jpg", "rocket.jpg",
]
# Its synthetic or drawn images: a logo, rendered text, a page scan, colour charts, a
# silhouette, a phantom.
SKIMAGE_GRAPHICS = [
    "logo.png", "text.png", "page.png", "color.png", "chessboard_RGB.png", "phantom.png",
    "horse.png",
]

# Clip-art categories kept out of training.  They are the hard ones on purpose: drawings of
# things that also exist as photos (animals, food, people, plants, vehicles).
HELDOUT_CLIPART = ("animals", "food", "people", "plants", "transportation")


def clipart_categories() -> list[str]:
    if not os.path.isdir(OPENCLIPART):
        return []
    return sorted(d for d in os.listdir(OPENCLIPART) if os.path.isdir(os.path.join(OPENCLIPART, d)))


def clipart_files(category: str) -> list[str]:
    return sorted(glob.glob(os.path.join(OPENCLIPART, category, "**", "*.png"), recursive=True))


def natural_sources(split: str) -> dict[str, list[str]]:
    """Named groups of real photographs for ``split`` in ("train", "test")."""
    if split == "train":
        return {
            "mate_nature": sorted(glob.glob(os.path.join(MATE, "nature", "*.jpg"))),
            "sklearn": sorted(glob.glob(os.path.join(_pkg_dir("sklearn", "datasets", "images"), "*.jpg"))),
            "matplotlib": [os.path.join(_pkg_dir("matplotlib", "mpl-data", "sample_data"), "grace_hopper.jpg")],
        }
    return {"skimage_photos": _skimage(SKIMAGE_PHOTOS)}


def nonnatural_sources(split: str) -> dict[str, list[str]]:
    """Named groups of real non-photographic files for ``split`` (rendered graphics, made by
    ``tools/render_graphics.py``, are added to the training split by the trainer)."""
    heldout = set(HELDOUT_CLIPART)
    cats = [c for c in clipart_categories() if (c in heldout) == (split == "test")]
    out = {f"openclipart_{c}": clipart_files(c) for c in cats}
    if split == "test":
        mpl = _pkg_dir("matplotlib", "mpl-data", "sample_data")
        out["skimage_graphics"] = _skimage(SKIMAGE_GRAPHICS)
        out["mate_artwork"] = sorted(glob.glob(os.path.join(MATE, "abstract", "*"))
                                     + glob.glob(os.path.join(MATE, "desktop", "*")))
        out["matplotlib_graphics"] = [os.path.join(mpl, "logo2.png"),
                                      os.path.join(mpl, "Minduka_Present_Blue_Pack.png")]
    return out


def calibration_photos() -> list[str]:
    """Real photos for int8 calibration: the training-side photos only, so the held-out
    test photos (scikit-image) stay unseen by every model-building step."""
    return [p for ps in natural_sources("train").values() for p in ps]


def missing(groups: dict[str, list[str]]) -> list[str]:
    """Source names with no file on this machine (a package not installed)."""
    return [k for k, v in groups.items() if not v or not all(os.path.isfile(p) for p in v)]
