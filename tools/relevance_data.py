"""Real photos with human captions, and the labelled pairs made from them.

``scoring/data/real_captions.jsonl``: one row per photo (source, Debian / PyPI package, path,
sha256 of the file, caption, split).  Every caption was written by looking at the photo: 8-20
words, concrete, what is visible.  Sources (a package, or one GCompris activity) are split
three ways as ``tools/image_sources.py`` does, each source in one split only:

- ``train``: what the scorer is fitted on (with the generated sample web);
- ``val``: what the recipe (features, regularisation, operating point) is chosen on;
- ``test``: scored once, at the end (``tests/tools/test_eval_relevance.py``).

The sample web's photos (MATE, scikit-image, scikit-learn, matplotlib) are training sources,
since the sample web trains the scorer.  Tux Paint's photo stamps (``tuxpaint-stamps-default``:
real photographs cut out onto a transparent background, which the pipeline lays on white) are
split by their folders: food, seasonal / sports / town / natural forces, space -> val; every
other folder -> train.  Kalzium's photos of lab tools, Stellarium's deep-sky photos and photo
landscapes, Hugin's and Fotoxx's manual photos -> train.  GCompris ``categorization`` is split
by its folders too (fourth round): renewable-energy scenes (dams, solar panels, windmills) ->
val, monuments -> train, the rest (a few objects) stays the ``gcompris_categorization`` train
source; Enlightenment's background photos (``enlightenment-data``: mountains, clouds, snowy
trees, leaves, flowers) -> val.  The seventh round's test split (2026-11-24): KPhotoAlbum's demo
photos (``kphotoalbum``, read from its .deb: snapshots of people, pets, a beach, a canyon, the
sea, a sunset) and the photos of scenes in OpenCV's tutorial pages (``opencv-doc``'s html
folder: a campus path, a harbour, a bus by Big Ben, a courthouse at night), which nothing has
trained or tuned on; GCompris ``categorization``'s hand tools -> train (its spray bottle, the
first round's, stays in the ``gcompris_categorization`` train source).  The fifth round's test
split (``categorization``'s fishes and other objects, scored once) and the third round's
(Scratch's background photos, GCompris ``louis-braille``, scored three times) are val since.
Ninth round (2026-11-24): the seventh round's test split (scored twice) is val, and the test
split is the photos in GIMP's manual (``gimp-help-en``), Kivy's examples
(``python-kivy-examples``) and Scribus's templates (``scribus-data``), read from their .debs.
Tenth round (2026-11-24): the ninth round's test split (scored once) is val, and the test split
is GCompris ``clickgame``'s underwater backgrounds and the photos in Kodi's Estuary skin
(``kodi-data``), FooBillard++'s data (``foobillardplus-data``), Allegro's and pygame's examples
(``allegro5-doc``, ``python-pygame-doc``), Inkscape (``inkscape``) and the stock photos of
LibreOffice's presentation templates (``libreoffice-common``), the last six read from their .debs.
Thirteenth round (2026-11-25): the photos in Ren'Py's demo (``renpy-demo``: a country road, a lava
tube, the Washington Monument, the White House), Gramps's example tree (``gramps``: old portraits,
a group photo, two snapshots) and libvips's docs (``libvips-doc``: an owl), found in the twelfth
round, too few for a test split, are val sources, read from their .debs.
Fourteenth round (2026-11-25): the tenth round's test split, scored three times, is the split
``spent`` (``SPENT``: kept for the record and scorable, ``--split spent``; neither trained nor
tuned on, and not val, so the shipped model's train + val are unchanged); the test split is the
photos found through Debian's Contents index in dlib's examples (``libdlib19.1``), labelme's
(``labelme-examples``), Psychtoolbox's demos (``psychtoolbox-3-common``), Gem's docs (``gem-doc``),
tDiary's themes (``tdiary-theme``), goexif's sample (``golang-github-rwcarlsen-goexif-dev``),
ExpEYES-17's help (``eyes17``), Argyll's docs (``argyll-doc``) and the forensics samples' phone
photos (``forensics-samples-files``), and a second batch found after its first score in darknet's
data, Lifeograph's backgrounds, VLFeat's (``octave-vlfeat``), imaging's, x/image's, node-opencv's,
gdk-pixbuf's, libsixel's and jpeg-decoder's test and example pictures and VIGRA's docs, read from
their .debs.
Sixteenth round (2026-11-25): a second fresh test split, ``test2`` (``TEST2``), of 70 photos from 30
packages no round had opened, found through Debian's Contents index (GNOME's user pictures in
``gnome-control-center-data``, Qt WebEngine's recipe photos, jQuery plugins' example photos,
RMagick's docs, ...; docs/scoring.md, "Sixteenth round"): scored once with the shipped model; like
``spent`` it is not one of ``SPLITS``, so ``tools/train_real.py --splits`` refuses it.
Seventeenth round (2026-11-25): a third fresh test split, ``test3`` (``TEST3``), of 65 photos from 40
packages no round had opened or named, found through Debian's Contents index the same way (GNOME
Taquin's cat photos, the macOS wallpapers in Spectre.css's docs, MicroPython's micro:bit docs, Tagua's
backgrounds, TeX Live's and R packages' examples, ...; docs/scoring.md, "Seventeenth round, part 2"):
built and captioned without scoring anything on it; score-only like ``test2``.
The earlier test splits (GCompris ``erase`` ... Palapeli; then the Tux Paint birds, household,
vehicles and hobbies folders) were each scored with one recipe and are training sources since
(docs/scoring.md).  Off limits (an independent evaluation): the KDE Plasma and lomiri
wallpapers and every package issue 15 names (``tests/off_limits.py``; ``tuxpaint-data`` among
them; the stamps are another package).

Paths: ``/abs/file``, ``python:<module>/<path inside the package>`` (scikit-image, ...),
``/abs/file.rcc:<inner path>`` for a file packed in a Qt resource file (``tools/rcc.py``),
``deb:<package>:/abs/file`` for a file inside a downloaded, not installed, package (``DEB_DIR``;
the Makefile's ``DEB_PKGS``), ``deb:<package>:/abs/file.otp:<member>`` for a picture inside an
OpenDocument file (a zip: LibreOffice's presentation templates) of such a package; an
Enlightenment ``.edj`` path stands for the largest JPEG inside it (:func:`largest_jpeg`).

Labelled pairs per photo (:func:`labelled_pairs`): its own caption (label 1); three other
photos' captions from the same split (0); and four junk texts (0) drawn from the split's own
pool of boilerplate, credits, promo and file names (``JUNK``: the pools differ per split, so
a text-only feature cannot learn the test's strings by heart), plus the photo's own file
name.  The choices are seeded by the photo's hash: the same pairs on every run.
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import random
import zipfile

from tools import debs
from tools.eet import largest_jpeg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "scoring", "data", "real_captions.jsonl")
# Twelfth round: regions of train photos that are whole-frame scenery themselves (a sky, water,
# grass, city lights), cut out (``box``: fractions of the photo) and captioned by eye; rows of
# their own file, so the photo splits above are unchanged (docs/scoring.md, "Twelfth round").
SCENERY = os.path.join(ROOT, "scoring", "data", "scenery_crops.jsonl")
# Where ``deb:`` paths find their package's .deb (the Makefile's DEB_PKGS, fetched by
# ``apt-get download`` at setup): packages read without installing them.
DEB_DIR = debs.deb_dir()
N_CROSS, N_JUNK = 3, 4
# A test split scored too often to be a fresh estimate any more, kept apart from train and val
# (fourteenth round: the tenth round's); its labelled pairs draw on the test pool, as before.
SPENT = "spent"
# Sixteenth round: a second fresh test split (photos from 30 packages no round had opened), scored
# once with the shipped model.  Kept out of SPLITS on purpose: SPLITS is what
# ``tools/train_real.py --splits`` accepts, so test2 can never be named as training data; its
# labelled pairs draw on the test pool of junk texts (``JUNK``), which no training split sees.
TEST2 = "test2"
# Seventeenth round: a third fresh test split (65 photos from 40 packages no round had opened), built
# without scoring anything on it and scored once by the lead; score-only and out of SPLITS as test2.
TEST3 = "test3"
# The splits that are scored but never trained or tuned on, beside SPLITS' test.
SCORE_ONLY = (SPENT, TEST2, TEST3)
# The relevance set's own splits: the naturalness classifier's extra ones in
# tools/image_sources.py (test7, val8) hold no captioned photos.
SPLITS = ("train", "val", "test")
# ``deb:`` paths name a picture inside a LibreOffice presentation template with this separator
# (tenth round: the stock photos of LibreOffice's Impress templates, ``libreoffice-common``).
ODF_SEP = ".otp:"

# Texts that sit beside images on real pages without describing them.  Kinds: boilerplate,
# credit, promo, file name; one pool per split.
JUNK = {
    "train": [
        "Click here to enlarge the picture", "Image", "Photo", "View gallery", "Read more",
        "Share this on Facebook", "Subscribe to our newsletter", "Advertisement",
        "Photo: Getty Images", "Image credit: Shutterstock", "© 2019 All rights reserved",
        "Courtesy of the artist", "Buy now and save 20% on your first order",
        "Free shipping on all orders over $50", "Limited time offer, shop the sale today",
        "IMG_2041.JPG", "DSC00123.jpg", "header-banner-v2.png", "thumbnail", "Loading...",
        "Previous", "Next slide", "Posted by admin on March 3, 2018", "Leave a comment",
        "Follow us on Instagram", "Sponsored content", "Download the app", "Print this page",
        "Source: Wikimedia Commons", "Photo by Reuters", "Logo", "Back to top",
        "Sign up for free", "Privacy policy", "Pin it", "Related posts",
    ],
    "val": [
        "Click to zoom", "Picture", "Enlarge image", "See all photos", "Continue reading",
        "Tweet this", "Join our mailing list", "Ad", "Photo: AP", "Credit: iStock",
        "Copyright 2021 by the author", "Image courtesy of the museum",
        "Order today and get 15% off", "Best deals of the week, don't miss out",
        "Save big on summer styles", "P1030458.JPG", "image001.png", "banner_top.jpg", "placeholder",
        "Please wait", "Back", "Go to slide 3", "Written by staff on 12 May 2020",
        "3 comments", "Like us on Facebook", "Promoted", "Get it on Google Play",
        "Email this article", "Photo credit: Alamy", "Rights reserved", "icon",
    ],
    "test": [
        "Click here to enlarge", "Photograph", "Open full size image", "Gallery", "Learn more",
        "Share on Twitter", "Subscribe now", "Advert", "Photo: Getty Images / AFP",
        "Image: Shutterstock", "All rights reserved", "Photo courtesy of the owner",
        "Shop now and save up to 50%", "Free delivery on orders over 30 euros",
        "Only today: buy one get one free", "IMG_0457.jpg", "DSC_8812.JPG", "hero-image-final.png",
        "untitled", "Loading image", "Next", "Previous image", "Posted on June 1, 2017 by editor",
        "No comments yet", "Follow us", "Sponsored", "Download our app", "Print",
        "Source: Flickr", "Photo by staff photographer", "avatar",
    ],
}


def resolve(path: str) -> str:
    """A row's path on this machine (``python:`` paths inside an installed package, ``deb:``
    paths inside a downloaded .deb: the .deb itself)."""
    if path.startswith("deb:"):
        package = path[len("deb:"):].split(":", 1)[0]
        return debs.find(package, DEB_DIR) or os.path.join(DEB_DIR, f"{package}_.deb")
    if path.startswith("python:"):
        module, _, rest = path[len("python:"):].partition("/")
        mod = __import__(module, fromlist=["__file__"])
        return os.path.join(os.path.dirname(mod.__file__), rest)
    return path.split(".rcc:")[0] + ".rcc" if ".rcc:" in path else path


def read_bytes(path: str) -> bytes:
    if path.startswith("deb:"):
        return deb_member(resolve(path), path[len("deb:"):].split(":", 1)[1])
    if ".rcc:" in path:
        from tools import rcc

        outer, inner = path.split(".rcc:", 1)
        return rcc.read(outer + ".rcc", inner)
    with open(resolve(path), "rb") as f:
        data = f.read()
    return largest_jpeg(data) if path.endswith(".edj") else data


def crop_id(parent_sha256: str, box) -> str:
    """The ``sha256`` field of a scenery crop's row: a hash of its photo's sha256 and its box (an
    id that seeds its labelled pairs and names its neutral URL, whatever the encoder's bytes)."""
    return hashlib.sha256(f"{parent_sha256}:{','.join(f'{b:g}' for b in box)}".encode()).hexdigest()


def photo_bytes(row: dict) -> bytes:
    """The picture of a row: its file, or for a scenery crop (a ``box`` of fractions x0, y0, x1,
    y1 of its photo) that region as PNG."""
    data = read_bytes(row["path"])
    box = row.get("box")
    if not box:
        return data
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        im = im.convert("RGB")
        w, h = im.size
        out = io.BytesIO()
        im.crop((int(box[0] * w), int(box[1] * h), int(box[2] * w), int(box[3] * h))).save(out, "PNG")
        return out.getvalue()


def grey_std(data: bytes) -> float:
    """How far a picture is from a uniform field: the standard deviation of its grey levels (0-255),
    shrunk to 256 px on its longer side (a scenery crop's ``grey_std``; twelfth round)."""
    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        g = im.convert("L")
        g.thumbnail((256, 256))
        return round(float(np.asarray(g, np.float64).std()), 2)


def deb_member(deb: str, inner: str) -> bytes:
    """The bytes of ``inner`` (an absolute path, ``/usr/share/...``) in a Debian package file.

    A .deb is an ``ar`` archive whose ``data.tar.*`` member holds the files; KPhotoAlbum's demo
    photos are read this way, since installing the application would pull some 220 KDE and Qt
    packages for twenty photos."""
    container, sep, member = inner.partition(ODF_SEP)
    if sep:  # a picture inside an OpenDocument file (a zip) of the package
        with zipfile.ZipFile(io.BytesIO(deb_member(deb, container + ODF_SEP[:-1]))) as z:
            if member not in z.namelist():
                raise FileNotFoundError(f"{member} is not in {container}{ODF_SEP[:-1]} of {deb}")
            return z.read(member)
    files = _deb_files(deb)
    key = "./" + inner.lstrip("/")
    if key not in files:
        raise FileNotFoundError(f"{inner} is not in {deb}")
    return files[key]


@functools.lru_cache(maxsize=2)
def _deb_files(deb: str) -> dict[str, bytes]:
    """Every picture file (JPEG, PNG, WebP) and presentation template (``.otp``) of a .deb's data
    archive, by its tar name."""
    with debs.data_tar(deb) as t:
        return {m.name: t.extractfile(m).read() for m in t.getmembers()
                if m.isfile() and m.name.lower().endswith((".jpg", ".jpeg", ".png", ".webp", ".otp"))}



def photos(split: str | None = None, path: str = DATA) -> list[dict]:
    """The rows of ``split`` (all when None), in file order.  Another file in the same format
    (an independent held-out set) may name its own splits."""
    if split is not None and split not in SPLITS + SCORE_ONLY and path == DATA:
        raise ValueError(f"split must be one of {SPLITS + SCORE_ONLY} (got {split!r})")
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r for r in rows if split is None or r["split"] == split]


def missing(rows: list[dict]) -> list[str]:
    """Packages of rows whose file is not on this machine."""
    out = set()
    for r in rows:
        try:
            ok = os.path.isfile(resolve(r["path"]))
        except ImportError:
            ok = False
        if not ok:
            out.add(r["package"])
    return sorted(out)


def file_name(path: str) -> str:
    return os.path.basename(path.split(".rcc:")[-1])


def labelled_pairs(rows: list[dict], split: str, n_cross: int = N_CROSS, n_junk: int = N_JUNK) -> list[dict]:
    """Labelled texts per photo: ``{"photo": i, "text", "label", "kind"}`` with kind one of
    own / cross / junk / filename."""
    captions = [r["caption"] for r in rows]
    pool = JUNK.get(split, JUNK["test"])  # another file's splits get the test pool
    out = []
    for i, r in enumerate(rows):
        rng = random.Random(hashlib.sha256((r.get("sha256") or r["path"]).encode()).hexdigest())
        out.append({"photo": i, "text": r["caption"], "label": 1, "kind": "own"})
        others = [j for j in range(len(rows)) if captions[j] != r["caption"]]
        for j in rng.sample(others, min(n_cross, len(others))):
            out.append({"photo": i, "text": captions[j], "label": 0, "kind": "cross"})
        for t in rng.sample(pool, min(n_junk, len(pool))):
            out.append({"photo": i, "text": t, "label": 0, "kind": "junk"})
        out.append({"photo": i, "text": file_name(r["path"]), "label": 0, "kind": "filename"})
    return out
