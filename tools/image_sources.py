"""Where the offline image data for the naturalness classifier (and NSFW calibration) lives.

Every source is a named group of real files that a package installs.  Sources, not files, are
split three ways, so every reported figure is on images from places the step being measured
never saw (another photographer, another clip-art category, another kind of graphic):

- ``train``: what the head is fitted on (with crops and re-encodings, and the rendered
  graphics of ``tools/render_graphics.py``);
- ``val``: what the recipe (features, regularisation, threshold) is chosen on;
- ``test``: scored once, at the end, by ``tools/naturalness_eval.py`` and the test.

Each file belongs to one split only: paths are resolved (openclipart-png symlinks one drawing
into several categories) and files are deduplicated by content hash, the test split first,
then val, then train, so a drawing shared by a test and a training category is test data.

The packages mix photographs with renders and illustrations, so every file is labelled here
by name, after looking at it; ambiguous files (a photo of a painting, blurred renders that
could be photos, procedural textures) are left out of every split.

Installs (``make setup``): ``apt-get install mate-backgrounds openclipart-png opencv-doc
plasma-workspace-wallpapers lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 ukui-wallpapers
gnome-backgrounds palapeli-data wesnoth-1.16-data``; ``pip install scikit-image matplotlib
scikit-learn``.
"""
from __future__ import annotations

import functools
import glob
import hashlib
import os
import random

from PIL import Image, ImageOps

from tools import image_sources_wide as wide

SPLITS = ("train", "val", "test", "test7", "val8")
# ``test7``: issue 15's seventh round's fresh test split, made only of packages no step had seen
# (``tools/image_sources_wide.py``'s ``test7_sources``); ``test`` was scored for ten heads.
# ``val8``: the eighth round's new-source part of val (``val8_sources``): the widened val that
# round chooses on is ``val`` + ``val8``, so validation sees kinds the old val lacks.

MATE = "/usr/share/backgrounds/mate"
OPENCLIPART = "/usr/share/openclipart/png"
OPENCV = "/usr/share/doc/opencv-doc/examples/data"
PLASMA = "/usr/share/wallpapers"
BACKGROUNDS = "/usr/share/backgrounds"  # lomiri-wallpapers-*, ukui-wallpapers
GNOME = "/usr/share/backgrounds/gnome"
PALAPELI = "/usr/share/palapeli/collection"
WESNOTH = "/usr/share/games/wesnoth/1.16/data/core/images"  # wesnoth-1.16-data


def _pkg_dir(module: str, *sub: str) -> str:
    try:
        mod = __import__(module, fromlist=["__file__"])
    except ImportError:
        return ""
    return os.path.join(os.path.dirname(mod.__file__), *sub)


def _in(folder: str, names) -> list[str]:
    return [os.path.join(folder, n) for n in names]


def _skimage(names):
    d = _pkg_dir("skimage", "data")
    return _in(d, names) if d else []


def _mpl(names):
    return _in(_pkg_dir("matplotlib", "mpl-data", "sample_data"), names)


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
# OpenCV's sample data: photos of people, animals, fruit, buildings, aerial views, circuit
# boards, desks (one of each stereo / sequence pair: the second is nearly the same picture).
OPENCV_PHOTOS = [
    "aero1.jpg", "aero3.jpg", "aloeL.jpg", "apple.jpg", "baboon.jpg", "basketball1.png",
    "board.jpg", "box.png", "box_in_scene.png", "building.jpg", "butterfly.jpg",
    "chicky_512.png", "ela_original.jpg", "fruits.jpg", "home.jpg", "left.jpg", "left01.jpg",
    "left07.jpg", "leuvenA.jpg", "licenseplate_motion.jpg", "messi5.jpg", "orange.jpg",
    "rubberwhale1.png", "squirrel_cls.jpg", "stuff.jpg",
]
# Its drawings, logos, renders, text images, shape tests, a depth map and a painting.
OPENCV_GRAPHICS = [
    "Blender_Suzanne1.jpg", "HappyFish.jpg", "LinuxLogo.jpg", "WindowsLogo.jpg", "aloeGT.png",
    "cards.png", "chessboard.png", "detect_blob.png", "digits.png", "ellipses.jpg",
    "gradient.png", "imageTextN.png", "imageTextR.png", "mask.png", "ml.png", "notes.png",
    "opencv-logo-white.png", "opencv-logo.png", "pic1.png", "pic2.png", "pic3.png", "pic4.png",
    "pic5.png", "pic6.png", "starry_night.jpg", "templ.png", "tmpl.png",
]
# KDE Plasma wallpapers (each a folder holding one picture in several sizes): the photos, and
# the renders and illustrations ("Autumn", a painted tree, and "Volna", a rendered beach,
# are left out: neither clearly photo nor clearly graphic).
PLASMA_PHOTOS = [
    "BytheWater", "ColdRipple", "ColorfulCups", "EveningGlow", "FallenLeaf", "Grey", "Kite",
    "OneStandsOut", "Path", "summer_1am",
]
PLASMA_ARTWORK = [
    "Altai", "Canopee", "Cascade", "Cluster", "Elarun", "Flow", "FlyingKonqui", "Honeywave",
    "IceCold", "Kay", "Kokkini", "MilkyWay", "Opal", "PastelHills", "Patak", "SafeLanding",
    "Shell",
]
# Ubuntu Touch (lomiri) wallpapers: photos by several photographers, and four renders
# ("analogpattern", a glitter bokeh, is left out).
LOMIRI_PHOTOS = [
    "Bridge_by_Sander_Klootwijk.jpg", "Dragonfly_by_Bolly.jpg", "Picture_0B_by_freespace.jpg",
    "Picture_1A_by_freespace.jpg", "Wine_by_Jakkub_Mede.jpg",
    "aitzgorri_by_Aitzol_Berasategi.jpg", "free_by_Peter_Nerlich.jpg",
    "friends_by_Aitzol_Berasategi.jpg", "greentock_by_Peter_Nerlich.jpg",
    "life_by_Aitzol_Berasategi.jpg", "picosdeeuropa_by_Aitzol_Berasategi.jpg",
    "seeding_by_Clements_Engelhardt.jpg", "sunset_by_Aitzol_Berasategi.jpg",
    "Kleiber_by_Lukas_Baubkus.jpg",
]
LOMIRI_ARTWORK = [
    "umang_by_Abhishek_Mudgal.jpg", "Fossa_by_Jasper_Roks.jpg", "Infinite-Sea_by_Aury88.jpg",
    "Painting-Colors_by__herobrine7gamer.jpg",
]
# Ubuntu Kylin's wallpapers: all illustrations and renders.
UKUI_ARTWORK = [
    "2004default.jpg", "calla.png", "city.png", "desert.png", "firstgeneration.jpg",
    "fluent-color.png", "focal-ubuntukylin.png", "goldfish.png", "rhythm.jpg", "rollpaper.png",
    "string.jpg", "the-mouse.jpg",
]
# Palapeli's jigsaw puzzles are made from photos (its table backgrounds are procedural
# textures: left out).
PALAPELI_PHOTOS = [
    "castle-maintenon.jpg", "cincinnati-bridge.jpg", "citrus-fruits.jpg",
    "european-honey-bee.jpg", "panther-chameleon-female.jpg",
]

# Battle for Wesnoth's artwork (all hand-painted digital art, looked at): the story screens'
# painted landscapes (fields, mountains, coasts, swamps: the kinds photos show), and the
# painted character portraits (people, monsters, animals; transparent around the figure).
WESNOTH_MIN_SIDE = 300


def _wesnoth(pattern: str) -> list[str]:
    from PIL import Image

    out = []
    for path in sorted(glob.glob(os.path.join(WESNOTH, pattern), recursive=True)):
        with Image.open(path) as im:
            if min(im.size) >= WESNOTH_MIN_SIDE:
                out.append(path)
    return out


# Clip-art categories per split.  The test ones are the hard ones on purpose: drawings of
# things that also exist as photos (animals, food, people, plants, vehicles).
CLIPART_SPLIT = {
    "test": ("animals", "food", "people", "plants", "transportation"),
    "val": ("buildings", "electronics", "geography", "office", "tools"),
}  # every other category is training data


def _plasma(names) -> list[str]:
    out = []
    for n in names:
        out += sorted(glob.glob(os.path.join(PLASMA, n, "contents", "images*", "*")))
    return out


def clipart_categories() -> list[str]:
    if not os.path.isdir(OPENCLIPART):
        return []
    return sorted(d for d in os.listdir(OPENCLIPART) if os.path.isdir(os.path.join(OPENCLIPART, d)))


def clipart_split(category: str) -> str:
    return next((s for s, cats in CLIPART_SPLIT.items() if category in cats), "train")


def clipart_files(category: str) -> list[str]:
    return sorted(glob.glob(os.path.join(OPENCLIPART, category, "**", "*.png"), recursive=True))


def _declared(split: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(natural, non-natural) source groups of ``split`` as declared, before deduplication."""
    gc = {k: files for k, (_, files) in wide.gcompris_sources().items()}
    if split == "train":
        nat = {"mate_nature": sorted(glob.glob(os.path.join(MATE, "nature", "*.jpg"))),
               "opencv_photos": _in(OPENCV, OPENCV_PHOTOS),
               "sklearn": sorted(glob.glob(os.path.join(_pkg_dir("sklearn", "datasets", "images"), "*.jpg"))),
               "matplotlib": _mpl(["grace_hopper.jpg"]),
               "gcompris_monuments": gc["gcompris_monuments"], "gcompris_erase": gc["gcompris_erase"],
               "stellarium_deep_sky": wide.stellarium_deep_sky()}
        oth = {"opencv_graphics": _in(OPENCV, OPENCV_GRAPHICS),
               "ukui_artwork": _in(BACKGROUNDS, UKUI_ARTWORK),
               "gnome_backgrounds": sorted(glob.glob(os.path.join(GNOME, "*.webp"))),
               "wesnoth_story": _wesnoth("story/*.jpg"),
               "wesnoth_portraits": _wesnoth("portraits/**/*.png"),
               "stellarium_drawn": wide.stellarium_drawn(), "stellarium_aratea": wide.stellarium_aratea(),
               "kstars_screenshots": wide.kstars_screenshots()}
        # the tenth round's (docs/images.md): colour skies and textures, and landscape photos
        tn, to = wide.tenth_round_sources()
        nat.update(tn)
        oth.update(to)
        # the thirteenth round's: underwater photos, lit 3D renders and game scenes
        tn, to = wide.thirteenth_round_sources()
        nat.update(tn)
        oth.update(to)
    elif split == "val":
        nat = {"plasma_photos": _plasma(PLASMA_PHOTOS), "palapeli_photos": _in(PALAPELI, PALAPELI_PHOTOS),
               "gcompris_animals": gc["gcompris_animals"], "gcompris_details": gc["gcompris_details"],
               # issue 15's third round: panoramas, projections, lens close-ups
               "hugin_photos": wide.hugin_photos(), "fotoxx_photos": wide.fotoxx_photos(),
               # the fourth round: objects on plain backgrounds; fog, dusk, close-ups
               "kalzium_tools": wide.kalzium_tools(), "enlightenment_photos": wide.enlightenment_photos()}
        oth = {"plasma_artwork": _plasma(PLASMA_ARTWORK), "lomiri_artwork": _in(BACKGROUNDS, LOMIRI_ARTWORK),
               "gcompris_paintings": gc["gcompris_paintings"],
               "hugin_graphics": wide.hugin_graphics(), "colobot_game_art": wide.colobot_game_art()}
    elif split == "test":
        # The first five sources were scored for several heads (docs/images.md); the other
        # four (issue 15's second round) were added unseen and scored once.
        nat = {"skimage_photos": _skimage(SKIMAGE_PHOTOS), "lomiri_photos": _in(BACKGROUNDS, LOMIRI_PHOTOS),
               "stellarium_landscapes": wide.stellarium_landscapes(),
               "gcompris_music_sea_objects": gc["gcompris_music_sea_objects"]}
        oth = {"skimage_graphics": _skimage(SKIMAGE_GRAPHICS),
               "mate_artwork": sorted(glob.glob(os.path.join(MATE, "abstract", "*"))
                                      + glob.glob(os.path.join(MATE, "desktop", "*"))),
               "matplotlib_graphics": _mpl(["logo2.png", "Minduka_Present_Blue_Pack.png"]),
               "gcompris_masterpieces": gc["gcompris_masterpieces"], "etr_renders": wide.etr_renders()}
    elif split == "test7":
        return wide.test7_sources()  # no clip art: every openclipart category is in a split
    elif split == "val8":
        return wide.val8_sources()
    else:
        raise ValueError(f"split must be one of {SPLITS} (got {split!r})")
    for c in clipart_categories():
        if clipart_split(c) == split:
            oth[f"openclipart_{c}"] = clipart_files(c)
    return nat, oth


def file_hash(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# Mixed into every seed of the naturalness data with a file's sha256 (``content_rng``):
# changing it draws other crops of every file.
SALT = "lait-naturalness-1"


@functools.lru_cache(maxsize=4096)
def _content_key(path: str, size: int, mtime: int) -> str:
    return file_hash(path)


def content_rng(seed: int, path: str, *what) -> random.Random:
    """The generator of one random choice about the file ``path`` (a crop, a placement, a
    variant): seeded by ``seed``, SALT, the file's sha256 and ``what`` (the choice's kind and
    number), never by the path, so a file gives the same training data wherever it is
    unpacked (issue 15's eleventh round: the crops of sources read out of .debs were seeded by
    their path, and moved when the .deb cache did)."""
    st = os.stat(path)
    return random.Random(":".join(map(str, (SALT, seed, _content_key(path, st.st_size, st.st_mtime_ns)) + what)))


@functools.lru_cache(maxsize=1)
def _assigned() -> dict[str, tuple[dict[str, list[str]], dict[str, list[str]]]]:
    """Every split's groups with each file (by resolved path and by content) in one place
    only: the fresh test split first, then test, val, val8, train; within a split, the first group that lists it."""
    declared = {split: _declared(split) for split in ("test7", "test", "val", "val8", "train")}
    real = {p: os.path.realpath(p) for groups in declared.values() for g in groups
            for files in g.values() for p in files if os.path.isfile(p)}
    # Only files whose size another file shares can be copies: hash just those.
    sizes: dict[int, set[str]] = {}
    for r in set(real.values()):
        sizes.setdefault(os.path.getsize(r), set()).add(r)
    key = {r: (file_hash(r) if len(same) > 1 else r) for same in sizes.values() for r in same}
    seen: set[str] = set()
    out = {}
    for split, groups in declared.items():
        kept_groups = []
        for group in groups:
            kept = {}
            for source, files in group.items():
                kept[source] = []
                for path in files:
                    if path not in real:  # a package not installed: missing() says so
                        kept[source].append(path)
                    elif key[real[path]] not in seen:
                        seen.add(key[real[path]])
                        kept[source].append(real[path])
            kept_groups.append(kept)
        out[split] = tuple(kept_groups)
    return out


def natural_sources(split: str) -> dict[str, list[str]]:
    """Named groups of real photographs of ``split`` (one of SPLITS)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} (got {split!r})")
    return _assigned()[split][0]


def nonnatural_sources(split: str) -> dict[str, list[str]]:
    """Named groups of real non-photographic files of ``split`` (rendered graphics, made by
    ``tools/render_graphics.py``, are added to the training split by the trainer)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} (got {split!r})")
    return _assigned()[split][1]


def calibration_photos() -> list[str]:
    """Real photos for the int8 calibration of ``tools/build_image_models.py``.  A fixed list
    (the MATE nature photos, scikit-learn's two, matplotlib's Grace Hopper), independent of
    the splits above, so the int8 models stay byte-identical; all of them are training-side."""
    return (sorted(glob.glob(os.path.join(MATE, "nature", "*.jpg")))
            + sorted(glob.glob(os.path.join(_pkg_dir("sklearn", "datasets", "images"), "*.jpg")))
            + _mpl(["grace_hopper.jpg"]))


def missing(groups: dict[str, list[str]]) -> list[str]:
    """Source names with no file on this machine (a package not installed)."""
    return [k for k, v in groups.items() if not v or not all(os.path.isfile(p) for p in v)]


def flatten(im: Image.Image, bg=(255, 255, 255)) -> Image.Image:
    """RGB, with any transparency composited on ``bg`` (as the decode stage does on white)."""
    im = ImageOps.exif_transpose(im)
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        base = Image.new("RGBA", rgba.size, bg + (255,))
        return Image.alpha_composite(base, rgba).convert("RGB")
    return im.convert("RGB")


def spread(files: list[str], n: int) -> list[str]:
    """n files evenly spread over the sorted list (deterministic, covers sub-folders)."""
    if len(files) <= n:
        return files
    step = len(files) / n
    return [files[int(i * step)] for i in range(n)]
