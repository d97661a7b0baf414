"""The wider naturalness sources of issue 15's second round (``tools/image_sources.py`` splits
them with the others): photos of other kinds (deep-sky astrophotography, panoramas, ground
close-ups, monuments at night, animals, concerts) and the non-photo kinds the first head let
through (paintings, realistic renders, game art, real UI screenshots, painted and drawn
figures).  Every list was made by looking at the files (contact sheets of every file, or of
every third file for the large folders); what could be either (planet globes from spacecraft
mosaics, star charts, statue photos among the constellation art, procedural snow textures,
photos with holes cut out for a game) is left out.

Packages: ``stellarium-data`` (deep-sky photos, landscape panoramas, constellation art,
Carolingian manuscript paintings), ``kstars-data`` (its handbook's screenshots),
``extremetuxracer-data`` (rendered mountain skyboxes, game screenshots), ``gcompris-qt-data``
(photos and painting reproductions, packed in Qt resource files: unpacked once into
``$LAIT_CACHE`` or ``~/.cache/lait``, see :func:`gcompris`); the third round's val sources:
``hugin-data``, ``fotoxx-common``, ``colobot-common-textures``; the fourth round's:
``kalzium-data`` and ``enlightenment-data`` (val), ``scratch`` (train candidates, in no split).
"""
from __future__ import annotations

import glob
import os
import tarfile

from PIL import Image

from tools import debs, rcc
from tools.eet import largest_jpeg

STELLARIUM = "/usr/share/stellarium"
KSTARS_DOCS = "/usr/share/doc/HTML/en/kstars"
ETR = "/usr/share/games/etr"
GCOMPRIS_RCC = "/usr/share/gcompris-qt/rcc"
MIN_SIDE = 300  # smaller files never reach the filter (the size step) and teach it nothing


def _big(paths) -> list[str]:
    out = []
    for p in sorted(paths):
        try:
            with Image.open(p) as im:
                if min(im.size) >= MIN_SIDE:
                    out.append(p)
        except OSError:  # not an image (or broken): not data
            continue
    return out


def _under(root: str, *patterns: str) -> list[str]:
    return _big(p for pat in patterns for p in glob.glob(os.path.join(root, pat), recursive=True))


# Stellarium's landscapes that are photographs: the Garching and Hurricane Ridge panoramas
# (transparent sky, composited on white like any cut-out), their ground close-ups (flowers,
# grass, trampled snow), the Mars rover and Apollo 17 panoramas.  The rest are renders or masks.
STELLARIUM_LANDSCAPE_PHOTOS = [
    "garching/garching-gl1.png", "garching/garching-gl2.png", "garching/garching-gl3.png",
    "garching/garching-gl4.png", "garching/garching-ground3.png", "guereins/guereinsb.png",
    *[f"hurricane/hurricane{i}.png" for i in range(1, 9)], "hurricane/hurricaneb.png",
    "mars/mars.png", "moon/apollo17.png",
]
# Constellation art drawn or painted for Stellarium (figures on black); the cultures whose
# folders also hold photos (a clay tablet, the Dendera ceiling, the Farnese Atlas), star charts
# or manuscript scans are left out, and the Leiden Aratea's paintings are their own source.
STELLARIUM_DRAWN_CULTURES = [
    "arabic_al-sufi", "aztec", "belarusian", "boorong", "chinese_contemporary", "dakota",
    "hawaiian_starlines", "indian", "inuit", "kamilaroi", "khoi-san", "macedonian", "ojibwe",
    "romanian", "western", "xhosa", "zulu",
]


def stellarium_deep_sky() -> list[str]:
    """Amateur and observatory photographs of nebulae, clusters and galaxies: dark, minimal."""
    return _under(STELLARIUM, "nebulae/default/*.png", "nebulae/default/*.jpg")


def stellarium_landscapes() -> list[str]:
    return _big(os.path.join(STELLARIUM, "landscapes", n) for n in STELLARIUM_LANDSCAPE_PHOTOS)


def stellarium_drawn() -> list[str]:
    return _big(p for c in STELLARIUM_DRAWN_CULTURES
                for p in glob.glob(os.path.join(STELLARIUM, "skycultures", c, "**", "*.png"), recursive=True))


def stellarium_aratea() -> list[str]:
    """The Leiden Aratea's painted constellations (a 9th-century manuscript): fine-art
    reproductions, cut out or with the page around them."""
    return _under(STELLARIUM, "skycultures/greek_leidenAratea/**/*.png",
                  "skycultures/greek_leidenAratea/**/*.jpg")


def kstars_screenshots() -> list[str]:
    """KStars' handbook: dialogs, sky-map views, plots (real UI screenshots)."""
    return _under(KSTARS_DOCS, "*.png")


def etr_renders() -> list[str]:
    """Extreme Tux Racer: rendered mountain skyboxes (realistic terrain renders, day, dusk and
    night), course previews (game screenshots), its splash and object art."""
    return _under(ETR, "env/**/*.png", "courses/**/preview.png", "objects/*.png",
                  "textures/splash_1.png")


def _cache_dir() -> str:
    return os.path.join(os.environ.get("LAIT_CACHE") or os.path.expanduser("~/.cache/lait"),
                        "gcompris-qt")


def gcompris(activity: str, names: list[str] | None = None) -> list[str]:
    """Files of one GCompris activity's ``resource`` folder (``names``: those inner names, else
    every .webp / .jpg / .png), unpacked from its ``.rcc`` once into the cache; [] when the
    package is not installed."""
    pack = os.path.join(GCOMPRIS_RCC, f"{activity}.rcc")
    if not os.path.isfile(pack):
        return []
    prefix = f"gcompris/src/activities/{activity}/resource/"
    inner = [f for f in rcc.files(pack) if f.startswith(prefix)
             and f.lower().endswith((".webp", ".jpg", ".jpeg", ".png"))]
    if names is not None:
        inner = [prefix + n for n in names if prefix + n in inner]
    out = []
    for f in inner:
        dst = os.path.join(_cache_dir(), activity, f[len(prefix):])
        if not os.path.isfile(dst):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            tmp = f"{dst}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(rcc.read(pack, f))
            os.replace(tmp, dst)  # atomic: a parallel run never reads half a file
        out.append(dst)
    return _big(out)


GCOMPRIS_DETAILS_PHOTOS = [f"image/{n}_background.webp" for n in (
    "Chenonceau", "EgeskovSlotSpejling", "EilanDonanCastle", "FanoeWindmill", "GizahPyramids",
    "NDP", "Nagoya", "Neuschwanstein", "OperaSidney", "TajMahal", "TowerBridgeLondon")]
GCOMPRIS_PAINTINGS = [f"image/{n}_background.webp" for n in (  # Van Gogh, in `details`
    "Eglise_dAuvers-sur-Oise", "Gogh4", "PortraitOfPereTanguy", "Van_Gogh_The_Night_Cafe",
    "VincentVanGogh0012", "VincentVanGogh0013", "VincentVanGogh0019", "VincentVanGoghBridge")]
GCOMPRIS_MASTERPIECES = [f"image/{n}.webp" for n in (
    "Bosschaert_04_background", "Paul_Gauguin_006_background", "Pieter_Bruegel_background",
    "Pieter_Bruegel_service", "Van_Gogh_0011_background", "lady_unicorn_background")]
GCOMPRIS_OBJECT_PHOTOS = [f"images/{n}.webp" for n in (  # `categorization`'s photos
    "alphabets/alphabets", "monuments/victoriaMemorial", "numbers/numbers", "others/baseball",
    "others/volleyball", "renewable/windmill6", "tools/spray")]


def gcompris_sources() -> dict[str, tuple[str, list[str]]]:
    """{source: (label "natural" / "other", files)} of the GCompris groups."""
    return {
        "gcompris_monuments": ("natural", gcompris("explore_monuments")),
        "gcompris_erase": ("natural", gcompris("erase")),
        "gcompris_animals": ("natural", gcompris("explore_farm_animals") + gcompris("explore_world_animals")),
        "gcompris_details": ("natural", gcompris("details", GCOMPRIS_DETAILS_PHOTOS)),
        "gcompris_music_sea_objects": ("natural", gcompris("explore_world_music") + gcompris("clickgame")
                                       + gcompris("categorization", GCOMPRIS_OBJECT_PHOTOS)),
        "gcompris_paintings": ("other", gcompris("details", GCOMPRIS_PAINTINGS)),
        # Bosschaert, Gauguin, Bruegel, Van Gogh, the Lady and the Unicorn: backgrounds of a
        # shape game (white holes where the shapes go), and one Bruegel detail.
        "gcompris_masterpieces": ("other", gcompris("babyshapes", GCOMPRIS_MASTERPIECES)),
    }



# Issue 15's third round (val only): the photos of two photo programs' manuals (panoramas
# under a flat sky, fisheye and stereographic projections of them, chromatic-aberration
# close-ups, a river at dusk), their screenshots, and a game's art (texture atlases of its 3D
# models, interface sheets, rendered intro screens).  Every file >= 300 px was looked at on
# contact sheets; what is left out is named below.
HUGIN_HELP = "/usr/share/hugin/xrc/data/help_en_EN"  # hugin-data
FOTOXX = "/usr/share/fotoxx/images"  # fotoxx-common
COLOBOT = "/usr/share/games/colobot"  # colobot-common-textures

HUGIN_PHOTOS = [f"{n}.jpg" for n in (
    "Big_ben_circ_fisheye", "Big_ben_cylindrical", "Big_ben_equirectangular",
    "Big_ben_stereographic", "CA_fringes00", "CA_fringes01", "CA_strange01", "CA_strange02",
    "CA_tCA00", "CA_tCA01", "CA_tCA02", "CA_tCA03", "Medinet_habu_horizontal_fisheye",
    "Medinet_habu_horizontal_stereographic")]
# Its screenshots, the synthetic chromatic-aberration charts and a diagram.  Left out: the
# panoramas drawn over (a grid, a frame), the cube map, the "little planet" projections, the
# captioned Pantheon pair.
HUGIN_GRAPHICS = ["700px-Autopano-done.png", "700px-Hugin2013_photos_tab.png",
                  "700px-Hugin2013_preview_tab.png", "Autopano-searching.png",
                  "CA_artifical_B_Y.jpg", "CA_artifical_R_C.jpg", "Celeste_cpeditor_post.jpg",
                  "Celeste_cpeditor_pre.jpg", "Celeste_images_panel.jpg",
                  "Celeste_preferences.jpg", "Illustration4.png"]
# Fotoxx's manual: two photographs (a river at dusk before and after an edit, stacked; a
# room panorama with black borders).  Its screenshots are many (dialogs, galleries) but were
# tried as training data only (docs/images.md); left out everywhere: photos with an effect
# applied (emboss, waves, markup, mashup, warps), photo grids, colour-checker scans.
FOTOXX_PHOTOS = ["flatten2.jpg", "unbend2.jpg"]


def _named(folder: str, names: list[str]) -> list[str]:
    return _big(os.path.join(folder, n) for n in names)


def hugin_photos() -> list[str]:
    return _named(HUGIN_HELP, HUGIN_PHOTOS)


def hugin_graphics() -> list[str]:
    return _named(HUGIN_HELP, HUGIN_GRAPHICS)


def fotoxx_photos() -> list[str]:
    return _named(FOTOXX, FOTOXX_PHOTOS)


def colobot_game_art() -> list[str]:
    """Colobot's texture atlases of its robots and buildings, its interface sheets and its
    three rendered intro screens (game renders), three effect sprite sheets.  Left out: sky,
    cloud, ground, rock and wood textures (photo-like tiles) and the planet globes."""
    return _under(COLOBOT, "mods/AltTextures/textures/objects/*.png",
                  "mods/AltTextures/textures/effect0[012].png", "textures/interface/*.png")


# Issue 15's fourth round (docs/images.md): the photo kinds the test split misses and train and
# val lacked, from packages already in IMAGE_PKGS.  Every file was looked at on contact sheets.
SCRATCH = "/usr/share/scratch/Media"  # scratch (Scratch 1.4's media library)
KALZIUM_TOOLS = "/usr/share/kalzium/data/toolpics"  # kalzium-data
ENLIGHTENMENT = "/usr/share/enlightenment/data/backgrounds"  # enlightenment-data

# Scratch's costumes that are photographs cut out onto transparency (the decode step lays them
# on white: objects, people, vehicles and animals on a plain white page).  The drawn costumes
# (about 500) are left out, and so are the ambiguous ones (a rock, a scoreboard, a tennis ball).
# They are 80-300 px: the size step would never pass them, so they are training data only.
SCRATCH_CUTOUTS = [f"Costumes/{n}" for n in (
    *[f"Things/{n}.gif" for n in ("cheesy-puffs", "fire-hydrant", "flower-vase", "fortune_cookie",
                                  "fruit_platter", "hair1", "hair2", "lamp", "lego", "marble-building",
                                  "palmtree", "trampoline", "umbrella")], "Things/manhole.png",
    *[f"People/{n}.gif" for n in (
        "amon1", "anjuli-1", "anjuli-2", "anjuli-3", "anjuli-4", "anjuli-5", "anna-1", "anna-2", "anna-3",
        "breakdancer1", "breakdancer2", "breakdancer3", "calvrett-jumping", "calvrett-thinking", "calvrett",
        "cassy-chillin", "cassy-dancing-1", "cassy-dancing-2", "cassy-dancing-3", "cassy-dancing-4",
        "cassy-jumping-1", "cassy-jumping-2", "cassy-phone-1", "cassy-sitting-1", "cassy-standing-1",
        "chamak1", "chamak2", "dan1", "dan2", "dan3", "dan4", "dan5", "dan6", "ed", "football-run",
        "football-stand", "jay", "jodi1", "jodi2", "lee-fan", "mako-laughing", "mako-screaming",
        "mako-stop", "marissa-crouching", "marissa-sitting", "marissa", "nathan", "nina1", "paul1",
        "referee1", "referee2", "ribbon-dancer", "sam", "thai-dancer", "thai-dancer2")],
    *[f"Transportation/{n}.gif" for n in ("airplane", "bike", "bus", "car-blue", "car-bug", "car-cow",
                                          "sail-boat", "train", "tug-boat", "yacht")],
    "Transportation/street-cleaner-mit.png",
    *[f"Animals/{n}.gif" for n in ("bird-flying", "buffalo1", "cow1", "elephant", "giraffe1-a",
                                   "giraffe1-b", "grasshopper2", "insect1-a", "insect1-b", "insect2")],
    "Animals/squirrel1.png")]
# Scratch's backgrounds that are photographs (53 of 73: beaches, canyons, parks, brick walls,
# streets, rooms, sports grounds; the drawn ones left out), as issue 13's relevance data labels
# them (scoring/data/real_captions.jsonl), looked at again here.
SCRATCH_BACKGROUNDS = [f"Backgrounds/{n}.jpg" for n in (
    *[f"Indoors/{n}" for n in ("chalkboard", "clothing-store", "hall", "kitchen", "the-movies-inside")],
    *[f"Nature/{n}" for n in ("beach-malibu", "canyon", "flower-bed", "forest", "garden-rock",
                              "grand-canyon", "gravel-desert", "hill", "lake", "moon", "pathway", "tree",
                              "water-and-rocks", "wave")],
    *[f"Outdoors/{n}" for n in (
        "all-sports-mural", "atom-playground", "bench-with-view", "berkeley-mural", "boardwalk",
        "brick-wall-and-stairs", "brick-wall2", "building-at-mit", "building-fireproof", "castle",
        "city-with-water", "city-with-water2", "driveway", "hallway_outdoors", "hay_field", "houses",
        "mansion", "mural-faro", "parking-ramp", "pool", "route66", "silos", "the-movies",
        "train-tracks1", "train-tracks2", "village", "wooden-house")],
    *[f"Sports/{n}" for n in ("baseball-field", "basketball-court1-a", "basketball-court1-b",
                              "football-field", "playing-field", "tennis-backboard")])] + [
    "Backgrounds/Nature/flowers.gif"]
# Kalzium's photographs of lab equipment: glassware, burners, balances, spatulas on plain
# white, beige or tiled backgrounds (near-empty frames of thin glass).  Left out: the drawn
# syringe (kolbenprober.png) and a 60 px funnel.  Most are 200-450 px: the size step passes 8.
KALZIUM_TOOL_PHOTOS = [f"{n}.jpg" for n in (
    "abzug", "becherglas", "brechungsmesser", "brenner", "destillierbruecke", "dsc",
    "erlenmeyerkolben", "exikator", "halter", "heizplatte", "hplc", "korkring", "messzylinder",
    "moerser", "phpapier", "pileusball", "pipette", "rg-halter", "rg-staender", "rg",
    "rotationsverdampfer", "rueckflusskuehler", "ruehrfisch", "rundkolben", "scheidetrichter",
    "schutzbrille", "spatel", "spritzflasche", "thermometer", "thermometer2", "tonschale",
    "trichter", "trockenrohr", "uhrglas", "verteiler", "vollpipette", "waage",
    "wasserstrahlpumpe")]
# Enlightenment's backgrounds that are photographs: fog, dark mountains at dusk, storm clouds,
# god rays, close-ups of maple, spruce, bamboo and lichen, snowy birches, flowers, lanterns.
# Left out: the drawn Dunes and Sunset-Hills, and three near-flat textures (Flat-Fan,
# Flat-Stone-Pattern, Paper-Flower); the Squiggle files hold no JPEG.
ENLIGHTENMENT_PHOTOS = [
    "Bamboo", "Foggy-Trees", "God-Rays", "Green-Maple", "Lichen-Branches", "Mountain", "Peaks",
    "Red-Maple", "Sea-of-Lanterns", "Snow-Trees", "Spruce-Needles", "Sunset-Clouds",
    "White-Flower", "Yellow-Flower"]


def scratch_cutouts() -> list[str]:
    return [p for p in (os.path.join(SCRATCH, n) for n in SCRATCH_CUTOUTS) if os.path.isfile(p)]


def scratch_backgrounds() -> list[str]:
    return _named(SCRATCH, SCRATCH_BACKGROUNDS)


def kalzium_tools() -> list[str]:
    """All 38 (val scores the 8 the size step passes, as a run would)."""
    return [p for p in (os.path.join(KALZIUM_TOOLS, n) for n in KALZIUM_TOOL_PHOTOS) if os.path.isfile(p)]


def enlightenment_cache() -> str:
    return os.path.join(os.path.dirname(_cache_dir()), "enlightenment")


def enlightenment_photos() -> list[str]:
    """The largest JPEG of each background's ``.edj`` (``tools/eet.py``), written once into the
    cache as ``<name>.jpg``; [] when the package is not installed."""
    out = []
    for name in ENLIGHTENMENT_PHOTOS:
        src = os.path.join(ENLIGHTENMENT, f"{name}.edj")
        if not os.path.isfile(src):
            continue
        dst = os.path.join(enlightenment_cache(), f"{name}.jpg")
        if not os.path.isfile(dst):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(src, "rb") as f:
                data = largest_jpeg(f.read())
            tmp = f"{dst}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, dst)  # atomic, as the GCompris files
        out.append(dst)
    return out


# Issue 15's seventh round (docs/images.md): packages found in Debian's Contents index that no
# earlier round opened, read from their .deb (the Makefile's DEB_PKGS, ``LAIT_DEB_DIR``) and
# unpacked once into the cache, as the GCompris files.  Every file >= 300 px (and every POV-Ray
# preview) was looked at on contact sheets; what is left out is named below.  The train
# candidates are in no split until a round ships them (``candidate_sources``); the fresh test
# split ``test7`` is made only of packages no step has seen.
def deb_cache() -> str:
    """Where files read out of a .deb are written: ``<cache>/debs/<package>/<path>``."""
    return os.path.join(os.path.dirname(_cache_dir()), "debs")


def _deb(package: str) -> str:
    return debs.find(package)


def _inner(member: tarfile.TarInfo) -> str:
    return member.name[2:] if member.name.startswith("./") else member.name


def deb_files(package: str, names: list[str]) -> list[str]:
    """Files ``names`` (paths inside the package, no leading ``./``) of ``package``'s .deb,
    written once into the cache; [] when the .deb is not downloaded (``missing`` says so)."""
    deb = _deb(package)
    if not deb:
        return []
    root = os.path.join(deb_cache(), package)
    want = {n for n in names if not os.path.isfile(os.path.join(root, n))}
    if want:
        with debs.data_tar(deb) as tf:
            for m in tf.getmembers():
                if _inner(m) in want and m.isfile():
                    dst = os.path.join(root, _inner(m))
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    tmp = f"{dst}.{os.getpid()}.tmp"
                    with open(tmp, "wb") as fh:
                        fh.write(tf.extractfile(m).read())
                    os.replace(tmp, dst)  # atomic, as the GCompris files
    return [p for p in (os.path.join(root, n) for n in names) if os.path.isfile(p)]


def deb_names(package: str, prefix: str, exts=(".jpg", ".jpeg", ".png")) -> list[str]:
    """Image paths under ``prefix`` in ``package``'s .deb, sorted (the file list is kept in
    the cache beside the files, named after the .deb, so it is read once per version)."""
    deb = _deb(package)
    if not deb:
        return []
    listing = os.path.join(deb_cache(), package, f".{os.path.basename(deb)}.list")
    if not os.path.isfile(listing):
        with debs.data_tar(deb) as tf:
            names = sorted(_inner(m) for m in tf.getmembers() if m.isfile())
        os.makedirs(os.path.dirname(listing), exist_ok=True)
        with open(f"{listing}.{os.getpid()}.tmp", "w") as fh:
            fh.write("\n".join(names) + "\n")
        os.replace(f"{listing}.{os.getpid()}.tmp", listing)
    with open(listing) as fh:
        names = fh.read().split()
    return [n for n in names if n.startswith(prefix) and n.lower().endswith(exts)]


# --- train candidates ---
# POV-Ray's example scenes' previews (povray-examples, 10 MB): 1,162 ray-traced renders
# (glass, metal and stone spheres on checkered floors under a blue sky, isosurfaces, lit
# rooms, tiled patterns, fonts), all 160 x 120 or smaller: the size step would never pass
# them, so they are training data only, used whole like clip art.
POVRAY_PREVIEWS = "usr/share/doc/povray/examples/previews/"
# OpenShot's transition masks (openshot-qt, 57 MB): 400 procedural greyscale patterns (wipes,
# spirals, ripples, stripes, fractal noise, radial gradients), and its Blender title
# animations' preview frames (3D text, particles, lens flares, a clapboard).  Left out: its
# world map and Earth globe (a satellite texture), its application icons.
OPENSHOT_TRANSITIONS = "usr/lib/python3/dist-packages/openshot_qt/transitions/extra/"
OPENSHOT_TITLES = [f"usr/lib/python3/dist-packages/openshot_qt/blender/icons/{n}.png" for n in (
    "blinds", "blur", "colors", "dissolve", "explode", "fly_by_1", "fly_by_two_titles", "glare",
    "glass_slider", "lens_flare", "magic_wand", "neon_curves", "rotate_360",
    "slide_left_to_right", "snow", "spacemovie_intro", "wireframe_text", "zoom_clapboard")]
# ViSP's HTML documentation (libvisp-doc, 31 MB): 15 photographs of robots, boards, a pan-tilt
# camera, a robot kit's parts on white, a grey camera frame of a man holding a chessboard, a
# room with a drone tag; and its screenshots, plots and diagrams (cmake, Visual Studio, Eclipse,
# Xcode dialogs, terminals, control-law curves, class diagrams).  Left out: photos drawn over
# (detections, reprojections, tracked models, annotated boards), side-by-side camera frames,
# photos processed by the tutorials (histogram equalisation, binarisation, contours, CLAHE),
# renders of its simulator and of Blender scenes.
VISP_HTML = "usr/share/doc/libvisp-dev/html/"
VISP_PHOTOS = [f"{VISP_HTML}img-{n}.jpg" for n in (
    "chessboard-01", "drone_tag", "flir-ptu-setup", "jetson-tx2-quasar", "jetson-tx2",
    "mbot-auriga-mounted", "mbot-cable-mounted", "mbot-camera-mounted", "mbot-material-camera",
    "mbot-material", "mbot-robot", "mbot-rpi-mounted", "mbot-rpi-shield-mounted",
    "mbot-rpi-support", "mbot-serial-adapter")]
VISP_LEFT_OUT = ("tutorial-brighness", "tutorial-contrast", "tutorial-autothreshold", "auto-threshold",
                 "tutorial-connected", "tutorial-contour", "tutorial-count-coins", "tutorial-flood",
                 "Blender", "drone_view", "franka-ibvs-converge.png", "franka-pbvs-converge.png",
                 "franka-ibvs-start", "franka-pbvs-start", "munkres", "target-square",
                 "java-apriltag-app-detect", "java-apriltag-app-open-image",
                 "java-mbt-generic-app-open-data-set", "mbot-2D-half", "mbot-ibvs-features",
                 "mbot-pbvs-features", "tracking-mb-generic-depth", "detection-objects",
                 "detection-apriltag-realtime", "pose-qrcode", "tracker-mb", "calib-reprojection",
                 "calib-line-fitting", "chessboard-undistort", "eye2hand", "shield-wiring",
                 "grid-patterns", "vpWireFrameSimulator", "bebop2-coord")


def povray_renders() -> list[str]:
    return deb_files("povray-examples", deb_names("povray-examples", POVRAY_PREVIEWS, (".jpg",)))


def openshot_procedural() -> list[str]:
    return deb_files("openshot-qt", deb_names("openshot-qt", OPENSHOT_TRANSITIONS) + OPENSHOT_TITLES)


def visp_photos() -> list[str]:
    return _big(deb_files("libvisp-doc", VISP_PHOTOS))


def visp_screens() -> list[str]:
    names = [n for n in deb_names("libvisp-doc", VISP_HTML, (".jpg", ".jpeg", ".png"))
             if n not in VISP_PHOTOS and not any(k in n for k in VISP_LEFT_OUT)]
    return _big(deb_files("libvisp-doc", names))


# --- the fresh test split (test7): packages no step has seen ---
LABELME = "usr/share/doc/labelme-examples/examples/"
# labelme's example photos (labelme-examples): a street with two men, three women on a sofa, a
# Maltese bus, a kitten on white, a black dog on a dark backdrop, a shelf of objects, a street
# with a lorry (one frame of its video); the copies drawn over with masks are left out.
LABELME_PHOTOS = [LABELME + n for n in (
    "bbox_detection/data_dataset_voc/JPEGImages/2011_000003.jpg",
    "bbox_detection/data_dataset_voc/JPEGImages/2011_000006.jpg",
    "bbox_detection/data_dataset_voc/JPEGImages/2011_000025.jpg",
    "classification/data_annotated/0001.jpg", "classification/data_annotated/0002.jpg",
    "tutorial/apc2016_obj3.jpg", "video_annotation/data_dataset_voc/JPEGImages/00000100.jpg")]
# Its screenshots (the labelling window), matplotlib plots of label masks, a sheet of shapes.
LABELME_GRAPHICS = [LABELME + n for n in (
    "bbox_detection/.readme/annotation.jpg", "classification/.readme/annotation_cat.jpg",
    "classification/.readme/annotation_dog.jpg", "instance_segmentation/.readme/annotation.jpg",
    "instance_segmentation/.readme/draw_label_png_class.jpg",
    "instance_segmentation/.readme/draw_label_png_object.jpg", "primitives/primitives.jpg",
    "semantic_segmentation/.readme/annotation.jpg", "tutorial/.readme/annotation.jpg",
    "tutorial/.readme/draw_json.jpg", "tutorial/.readme/draw_label_png.jpg",
    "video_annotation/.readme/00000100.jpg", "video_annotation/.readme/00000101.jpg")]
# goexif's camera sample (golang-github-rwcarlsen-goexif-dev): a throne hall; its TIFF (a
# scanned letter) is left out.
GOEXIF_PHOTO = ["usr/share/gocode/src/github.com/rwcarlsen/goexif/exif/sample1.jpg"]
# ExpEYES-17's help (eyes17): 7 photographs (the device, its panel close-up, on a laptop, with
# a coil, a pendulum rig, a tray of components on white) and its 50 plot screenshots (scope
# traces on black, matplotlib curves, a hysteresis sketch, two "missing image" boxes).
EYES17 = "usr/share/eyes17/helpFiles/pics/"
EYES17_PHOTOS = [EYES17 + n for n in (
    "accessory.jpg", "eyes-box.jpg", "eyes17-nb.jpg", "eyes17-panel.jpg", "induction-photo.jpg",
    "rod-pend-LB.jpg", "scope-inputs.png")]
# Blob Wars: Blob and Conquer (blobandconquer-data): 18 rendered game screens (mission
# openings in dark corridors, caves, gardens at night, a laser fight), a texture sheet, credits.
BLOB = "usr/share/games/blobAndConquer/gfx/"
# pysiogame (an educational game): icons, clock hands, dialog frames, a sheet of fish, a
# low-poly gradient, a cartoon beaver, rainbow hands.  Left out: a blank dialog background.
PYSIOGAME = "usr/share/games/pysiogame/res/"


def labelme_photos() -> list[str]:
    return deb_files("labelme-examples", LABELME_PHOTOS) + deb_files(
        "golang-github-rwcarlsen-goexif-dev", GOEXIF_PHOTO)


def labelme_graphics() -> list[str]:
    return _big(deb_files("labelme-examples", LABELME_GRAPHICS))


def eyes17_photos() -> list[str]:
    return deb_files("eyes17", EYES17_PHOTOS)


def eyes17_plots() -> list[str]:
    return _big(deb_files("eyes17", [n for n in deb_names("eyes17", EYES17) if n not in EYES17_PHOTOS]))


def blob_renders() -> list[str]:
    return _big(deb_files("blobandconquer-data", deb_names("blobandconquer-data", BLOB)))


def pysiogame_art() -> list[str]:
    return _big(deb_files("pysiogame", [n for n in deb_names("pysiogame", PYSIOGAME)
                                         if not n.endswith("/dialog_bg_d.png")]))


def candidate_sources() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The seventh round's train candidates: (natural, non-natural) groups."""
    return ({"visp_photos": visp_photos()},
            {"povray_renders": povray_renders(), "openshot_procedural": openshot_procedural(),
             "visp_screens": visp_screens()})


# --- the tenth round's train sources (shipped with its heads, docs/images.md) ---
# Red Eclipse's rendered sky faces (redeclipse-data, 862 MB): the marbled colour ``skylump2``
# set and the ``interstellar`` nebula clouds (its flat ``dn`` face out); the grey ``skylump``,
# white, gradient and cloud sets out (greyscale procedural images cost val photos in the
# seventh round; sky renders that look like sky photos are ambiguous).
REDECLIPSE_SKIES = "usr/share/games/redeclipse/data/skyboxes/"
# Mandelbulber's colour textures (mandelbulber2-data): fractal swirls and envmaps, Voronoi
# mosaics, cloudy noise, a gradient, a normal map.  Out: envmap5 (a blurred butterfly photo),
# envmap6 (a sunset photo), lightmap3 (a blurred photo), the colour wheel, checker, grey
# gradient, dot and "material not defined" cards.
MANDELBULBER_TEXTURES = [f"usr/share/mandelbulber2/textures/{n}" for n in (
    "background.jpg", "background2.jpg", "background3.jpg", "background4.jpg", "color_texture.jpg",
    "diffusion_texture.jpg", "displacement_texture.jpg", "envmap.jpg", "envmap2.jpg", "envmap3.jpg",
    "envmap4.JPG", "lightmap.jpg", "normal_map_texture.jpg", "reflectance_texture.jpg",
    "roughness_texture.jpg", "transparency_texture.jpg")]
# LemonLDAP::NG's portal backgrounds (liblemonldap-ng-portal-perl, 3 MB): Wikimedia Commons
# landscape photos, 1280 px: an autumn forest stream, snow-laden conifers, Cedar Breaks' red
# rock, snowy spruces before Parry Peak, the Aletsch glacier behind Swiss pines.  Out: the
# Anse Source d'Argent beach, another photo of the beach in off-limits tuxtype-data's kcas2.jpg.
LEMONLDAP = "usr/share/lemonldap-ng/portal/htdocs/static/common/backgrounds/"
LEMONLDAP_PHOTOS = [LEMONLDAP + n for n in (
    "1280px-Autumn-clear-water-waterfall-landscape_-_Virginia_-_ForestWander.jpg",
    "1280px-BrockenSnowedTrees.jpg", "1280px-Cedar_Breaks_National_Monument_partially.jpg",
    "1280px-Parry_Peak_from_Winter_Park.jpg", "Aletschgletscher_mit_Pinus_cembra1.jpg")]
# Few-photo sources written without the photo_bw / photo_lowkey variants: the tenth round's
# heads were fitted on LemonLDAP's crops alone (tools/naturalness_data.py).
NO_VARIANTS = ("lemonldap_photos",)


def redeclipse_skies() -> list[str]:
    names = [n for n in deb_names("redeclipse-data", REDECLIPSE_SKIES)
             if os.path.basename(n).startswith("skylump2_")
             or (os.path.basename(n).startswith("interstellar_") and "_dn" not in n)]
    return deb_files("redeclipse-data", names)


def mandelbulber_textures() -> list[str]:
    return deb_files("mandelbulber2-data", MANDELBULBER_TEXTURES)


def lemonldap_photos() -> list[str]:
    return deb_files("liblemonldap-ng-portal-perl", LEMONLDAP_PHOTOS)


def tenth_round_sources() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The tenth round's train sources: (natural, non-natural) groups."""
    return ({"lemonldap_photos": lemonldap_photos()},
            {"redeclipse_skies": redeclipse_skies(), "mandelbulber_textures": mandelbulber_textures()})


def test7_sources() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The seventh round's fresh test split: (natural, non-natural) groups."""
    return ({"labelme_goexif_photos": labelme_photos(), "eyes17_photos": eyes17_photos()},
            {"labelme_graphics": labelme_graphics(), "eyes17_plots": eyes17_plots(),
             "blob_renders": blob_renders(), "pysiogame_art": pysiogame_art()})


# --- the eighth round's new validation part (val8): packages no step had seen ---
# Found in Debian's Contents index as the seventh round's were; none is one of the 55
# off-limits packages, in their Depends + Recommends closure, or a copy of one of their files
# (docs/images.md, eighth round).  Every file >= 300 px was looked at on contact sheets.
# FreedomBox's manual (freedombox-doc-en): 14 product photographs of single-board computers
# and boxes cut out on white (Olimex, Banana Pro, BeagleBone, Cubieboard, Orange Pi,
# Raspberry Pi 2-4, Rock64, an APU box, the pcDuino case); its 171 screenshots of web pages,
# dialogs and phone apps.  Left out: the two thumbnails (copies), and the Danube, Pioneer and
# PINE64 boxes, which look rendered.
FREEDOMBOX = "usr/share/freedombox/manual/en/images/"
FREEDOMBOX_PHOTOS = [FREEDOMBOX + n for n in (
    "a20-olinuxino-lime2.jpg", "a20-olinuxino-micro.jpg", "apu1d.jpg", "banana-pro.jpg",
    "beagleboard.jpg", "cubieboard2.jpg", "orange-pi-zero.jpg", "pcduino3s.jpg",
    "raspberrypi2.jpg", "raspberrypi3.jpg", "raspberrypi3bplus.jpg", "raspberrypi4b.jpg",
    "rock64.jpg", "rockpro64.jpg")]
FREEDOMBOX_LEFT_OUT = ("banana-pro_thumb.jpg", "pioneer-edition_thumb.jpg", "freedombox-danube.jpg",
                       "pioneer-edition.jpg", "pine64-plus.jpg")
# libjxl's test images (libjxl-testdata): 7 photographs (a rocky shore over a lake, tulips,
# blossom on a branch, a daisy-like flower in colour, the same in grey, its close-up, a sunlit
# room); the other encodings of the same flower are left out (copies in content), and its
# wide-gamut colour bars, rings, "Hello" cards and grey patches are graphics.
LIBJXL = "usr/share/libjxl-testdata/"
LIBJXL_PHOTOS = [LIBJXL + n for n in (
    "external/wesaturate/500px/cvo9xd_keong_macan_srgb8.png",
    "external/wesaturate/500px/tmshre_riaphotographs_srgb8.png",
    "external/wesaturate/500px/u76c0g_bliznaca_srgb8.png",
    "jxl/flower/flower.png.im_q85_444.jpg", "jxl/flower/flower.png.im_q85_gray.jpg",
    "jxl/flower/flower_cropped.jpg", "jxl/hdr_room.png")]
LIBJXL_GRAPHICS = "external/wide-gamut-tests/"
# MORSE's documentation (morse-simulator-doc): renders of its Blender robot simulator
# (robots and vehicles on white, lit indoor scenes with people, grass fields, water, a desert
# road), Blender editor screenshots, class and network diagrams.
MORSE = "usr/share/doc/morse/html/_images/"
# propaganda-debian: 22 abstract tiled wallpapers (swirls, marbling, clouds of colour).
PROPAGANDA = "usr/share/wallpapers/"


def freedombox_photos() -> list[str]:
    return deb_files("freedombox-doc-en", FREEDOMBOX_PHOTOS)


def freedombox_screens() -> list[str]:
    # every fourth screenshot (sorted): 171 would outweigh val's other graphics sources
    names = [n for n in deb_names("freedombox-doc-en", FREEDOMBOX, (".png",))]
    return _big(deb_files("freedombox-doc-en", names))[::4]


def libjxl_photos() -> list[str]:
    return deb_files("libjxl-testdata", LIBJXL_PHOTOS)


def libjxl_graphics() -> list[str]:
    return _big(deb_files("libjxl-testdata", deb_names("libjxl-testdata", LIBJXL + LIBJXL_GRAPHICS)
                          + [LIBJXL + "jxl/grayscale_patches.png"]))


def morse_renders() -> list[str]:
    return _big(deb_files("morse-simulator-doc", deb_names("morse-simulator-doc", MORSE)))


def propaganda_art() -> list[str]:
    return _big(deb_files("propaganda-debian", deb_names("propaganda-debian", PROPAGANDA)))


def val8_sources() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The eighth round's new-source part of the widened val: (natural, non-natural) groups."""
    return ({"freedombox_photos": freedombox_photos(), "libjxl_photos": libjxl_photos()},
            {"freedombox_screens": freedombox_screens(), "libjxl_graphics": libjxl_graphics(),
             "morse_renders": morse_renders(), "propaganda_art": propaganda_art()})


# --- the thirteenth round's train sources (docs/images.md: shipped with its first head) ---
# Packages no split, earlier round or relevance split holds, none of the 55 off-limits packages
# nor in their Depends + Recommends closure; every file looked at on contact sheets.
# Krank's level backgrounds (krank, 58 MB): 30 underwater photographs (coral close-ups, reef
# walls against blue water, fish, a moray, a lionfish): dark and texture-like photos.  Out: its
# menu screens (crops and copies of the same photos, one a byte copy).
KRANK = "usr/share/games/krank/levels/unera-backgrounds/"
KRANK_PHOTOS = [f"{KRANK}level-{i:02d}.jpg" for i in range(1, 31)]
# Trackballs' level slides and previews (trackballs-data, 31 MB): lit, shaded 3D renders of
# tiled ramps, towers and pits with a ball.  Out: its three procedural menu backgrounds.
TRACKBALLS = "usr/share/games/trackballs/images/"
TRACKBALLS_RENDERS = ([TRACKBALLS + n for n in (*[f"slide-{i:02d}.jpg" for i in range(1, 11)], "splashScreen.jpg")]
                      + ["usr/share/games/trackballs/levels/" + n for n in (
                          "bx.jpg", "castles.jpg", "child.jpg", "contrib.jpg", "dn.jpg", "ds.jpg", "elite.jpg",
                          "fourSeasons.jpg", "frg.jpg", "jump.jpg", "ki.jpg", "lv.jpg", "mhm.jpg", "motion1.jpg",
                          "sl.jpg")])
# MegaGlest's scenario and tutorial loading screens (megaglest-data, 242 MB): rendered 3D game
# scenes (armies on grass, a river, castles, sepia-toned and lettered), and the menu's
# rendered hang-glider (intro14).  Out: the tech-tree graphs and model textures.
MEGAGLEST = "usr/share/games/megaglest/"
MEGAGLEST_SCENES = ("amazones", "amazones_light", "amazones_pro", "anarchy", "beehive_castle",
                    "beginner_1", "duel", "egypt_mayhem", "indian_attack", "kill_the_magic", "lobby_access",
                    "magic_can_do_it", "my_island", "norsemen_attack", "one_hope", "siege_of_despair",
                    "storming", "tough_duel", "waterworld")
MEGAGLEST_SCREENS = ([f"{MEGAGLEST}scenarios/{n}/loading_screen.jpg" for n in MEGAGLEST_SCENES]
                     + [f"{MEGAGLEST}tutorials/{n}/loading_screen.jpg"
                        for n in ("1_very_basic_tutorial", "2_basic_tutorial", "3_advanced_tutorial")]
                     + [f"{MEGAGLEST}data/core/menu/textures/intro14.png"])
# Warzone 2100's guide screenshots (warzone2100-data, 143 MB): the rendered 3D battlefield under
# the game's panels.
WARZONE = "usr/share/doc/warzone2100/images/"
# Raster3D's example renders (raster3d-doc): a lit ribbon protein on black, a nucleic acid, a
# molecular surface, the shaded colour-sphere chart (its white twin out).
RASTER3D_RENDERS = ["usr/share/doc/raster3d/examples/ex5.jpeg", "usr/share/doc/raster3d/html/r3d_example6.jpeg",
                    "usr/share/doc/raster3d/html/r3d_msms.png", "usr/share/doc/raster3d/html/rgb_black.jpeg"]


def thirteenth_round_sources() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The thirteenth round's train sources: (natural, non-natural) groups."""
    return ({"krank_photos": deb_files("krank", KRANK_PHOTOS)},
            {"trackballs_renders": deb_files("trackballs-data", TRACKBALLS_RENDERS),
             "megaglest_screens": deb_files("megaglest-data", MEGAGLEST_SCREENS),
             "warzone_screens": _big(deb_files("warzone2100-data", deb_names("warzone2100-data", WARZONE))),
             "raster3d_renders": deb_files("raster3d-doc", RASTER3D_RENDERS)})
