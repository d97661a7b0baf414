"""The sample web's image files: committed photos and clip art, crops cut from the photos,
near-duplicates (re-encoded, resized, thumbnails, WebP, the same bytes under a second URL),
and graphics and site furniture rendered with PIL.

Every file belongs to a *group*: near-duplicates of one picture share it, so evaluation can
count a photo once whatever URL the pipeline kept. A crop is a different picture (a distinct
region with its own caption), so it gets its own group.
"""
from __future__ import annotations

import hashlib
import io
import json
import random
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from . import render

ASSETS = Path(__file__).resolve().parent.parent / "sampleweb_assets"
MIN_SIDE = 300  # ImageBERT's size rule: smaller images are of kind "small"
MIME = {".jpg": "image/jpeg", ".png": "image/png", ".gif": "image/gif", ".webp": "image/webp"}


@dataclass
class SiteImage:
    """One image file the site serves under ``images/<path>``."""

    path: str
    data: bytes
    content: str  # what it shows: natural | clipart | graphic | ui
    group: str  # near-duplicates share a group
    variant: str  # original | crop | reencode | resize | thumb | webp | copy | render
    width: int
    height: int
    description: str = ""  # a descriptive English text (clip art and graphics)

    @property
    def kind(self) -> str:
        """The ground-truth image kind: below 300 px on a side is "small" whatever it shows."""
        if min(self.width, self.height) < MIN_SIDE:
            return "small"
        return "natural" if self.content == "natural" else self.content

    @property
    def mime(self) -> str:
        return MIME[Path(self.path).suffix]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def load_assets() -> tuple[dict, dict]:
    manifest = json.loads((ASSETS / "manifest.json").read_text())
    captions = json.loads((ASSETS / "captions.json").read_text())
    return manifest, captions


def _jpeg(im: Image.Image, quality: int) -> bytes:
    return render.encode(im, "JPEG", quality=quality)


def _img(path, data, content, group, variant, im, description="") -> SiteImage:
    return SiteImage(path, data, content, group, variant, im.width, im.height, description)


def build_images(rng: random.Random) -> dict[str, SiteImage]:
    """All image files, keyed by path. ``rng`` picks which photos get which near-duplicates."""
    manifest, _ = load_assets()
    out: dict[str, SiteImage] = {}

    def add(img: SiteImage):
        out[img.path] = img

    photos: dict[str, Image.Image] = {}
    for pid, info in sorted(manifest["photos"].items()):
        data = (ASSETS / info["file"]).read_bytes()
        im = Image.open(io.BytesIO(data))
        im.load()
        photos[pid] = im
        add(_img(f"photos/{pid}.jpg", data, "natural", pid, "original", im))
    for cid, info in sorted(manifest["crops"].items()):
        im = photos[info["parent"]].crop(tuple(info["box"]))
        photos[cid] = im
        add(_img(f"photos/{cid}.jpg", _jpeg(im, 88), "natural", cid, "crop", im))

    # Near-duplicates. Thumbnails for every photo (galleries link them to the full picture);
    # other variants for a seeded subset, so the mix changes with the seed.
    for pid in sorted(photos):
        im = photos[pid]
        t = im.copy()
        t.thumbnail((160, 160), Image.Resampling.BICUBIC, reducing_gap=2.0)
        add(_img(f"thumbs/{pid}_160.jpg", _jpeg(t, 80), "natural", pid, "thumb", t))
        r = rng.random()
        if r < 0.5:
            q = rng.choice([60, 65, 70, 75])
            add(_img(f"gallery/{pid}_q{q}.jpg", _jpeg(im, q), "natural", pid, "reencode", im))
        if 0.3 <= r < 0.75:
            s = rng.choice([0.6, 0.7, 0.8])
            small = im.resize((round(im.width * s), round(im.height * s)), Image.Resampling.BICUBIC,
                              reducing_gap=2.0)
            add(_img(f"resized/{pid}_w{small.width}.jpg", _jpeg(small, 85), "natural", pid, "resize", small))
        if r >= 0.85:
            # WebP encoding is slow: a 640 px copy at the fastest method keeps generation quick.
            w = im.convert("RGB")
            w.thumbnail((640, 640), Image.Resampling.BICUBIC, reducing_gap=2.0)
            add(_img(f"webp/{pid}_w{w.width}.webp", render.encode(w, "WEBP", quality=80, method=0),
                     "natural", pid, "webp", w))
    copies = rng.sample(sorted(manifest["photos"]), 6)
    for pid in sorted(copies):
        orig = out[f"photos/{pid}.jpg"]
        name = hashlib.sha1(orig.data).hexdigest()[:12]
        add(SiteImage(f"cdn/{name}.jpg", orig.data, "natural", pid, "copy", orig.width, orig.height))

    for cid, info in sorted(manifest["clipart"].items()):
        data = (ASSETS / info["file"]).read_bytes()
        im = Image.open(io.BytesIO(data))
        add(_img(f"clipart/{cid}.png", data, "clipart", f"clip:{cid}", "original", im, info["description"]))

    for img in _graphics(rng):
        add(img)
    for img in _furniture():
        add(img)
    return out


GRAPHICS = [
    # name, kind of drawing, title, description
    ("revenue", "bar", "Quarterly revenue 2023", "Bar chart of quarterly revenue in 2023"),
    ("visitors", "bar", "Visitors per month", "Bar chart of website visitors per month"),
    ("rainfall", "bar", "Rainfall by season (mm)", "Bar chart comparing rainfall in each season"),
    ("sales_region", "bar", "Sales by region", "Bar chart of sales in five regions"),
    ("survey", "bar", "Survey answers", "Bar chart of answers to a customer survey"),
    ("temperature", "line", "Average temperature", "Line chart of average monthly temperature"),
    ("stock", "line", "Share price, last 12 months", "Line chart of a share price over twelve months"),
    ("signups", "line", "New sign-ups", "Line chart of new sign-ups for three products"),
    ("traffic", "line", "Server traffic", "Line chart of server traffic during one year"),
    ("budget", "pie", "Budget split", "Pie chart showing how the budget is split"),
    ("energy", "pie", "Energy sources", "Pie chart of electricity generation by source"),
    ("sale_banner", "banner", "SUMMER SALE", "Red banner announcing a summer sale with fifty percent off"),
    ("webinar_banner", "banner", "FREE WEBINAR", "Blue banner inviting readers to a free webinar"),
    ("newsletter_banner", "banner", "SUBSCRIBE", "Green banner asking readers to subscribe to the newsletter"),
    ("opening_banner", "banner", "GRAND OPENING", "Purple banner announcing the grand opening of a shop"),
    ("editor_ui", "screen", "Text Editor", "Screenshot of a text editor window with a sidebar"),
    ("dashboard_ui", "screen", "Analytics Dashboard", "Screenshot of an analytics dashboard application"),
    ("mail_ui", "screen", "Mail", "Screenshot of an email client showing the inbox"),
    ("settings_ui", "screen", "Settings", "Screenshot of a settings dialog with blue buttons"),
    ("flat_blue", "flat", (41, 98, 255), "Plain blue square"),
    ("flat_grey", "flat", (128, 128, 128), "Plain grey square"),
    ("flat_orange", "flat", (255, 140, 0), "Plain orange square"),
    ("gradient_sunset", "gradient", ((255, 94, 58), (255, 205, 80)), "Orange to yellow colour gradient"),
    ("gradient_ocean", "gradient", ((0, 60, 120), (0, 180, 200)), "Dark blue to turquoise colour gradient"),
    ("gradient_grey", "gradient", ((30, 30, 30), (220, 220, 220)), "Black to light grey colour gradient"),
]


def _graphics(rng: random.Random) -> list[SiteImage]:
    out = []
    banner_colors = {"sale_banner": ((200, 16, 46), "white", "50% OFF EVERYTHING"),
                     "webinar_banner": ((0, 82, 204), "white", "Thursday 6 pm"),
                     "newsletter_banner": ((34, 139, 34), "white", "Weekly news in your inbox"),
                     "opening_banner": ((106, 27, 154), (255, 235, 59), "Saturday 10 am")}
    months = ["J", "F", "M", "A", "M", "J", "J", "A", "S", "O", "N", "D"]
    for name, how, arg, desc in GRAPHICS:
        if how == "bar":
            im = _bar_chart(name, arg, months, rng)
        elif how == "line":
            im = render.line_chart(arg, rng.randint(1, 3), rng)
        elif how == "pie":
            im = render.pie_chart(arg, rng.randint(3, 6), rng)
        elif how == "banner":
            bg, fg, sub = banner_colors[name]
            im = render.banner(arg, sub, bg, fg)
        elif how == "screen":
            im = render.screenshot(arg, rng)
        elif how == "flat":
            im = render.Image.new("RGB", (400, 400), arg)
        else:
            im = render.gradient(*arg, vertical=rng.random() < 0.5)
        # Charts and UI are PNG like on the web; smooth banners and gradients JPEG.
        if how in ("banner", "gradient"):
            path, data = f"graphics/{name}.jpg", _jpeg(im, 85)
        else:
            path, data = f"graphics/{name}.png", render.encode(im, "PNG")
        out.append(_img(path, data, "graphic", f"gfx:{name}", "render", im, desc))
    return out


def _bar_chart(name, title, months, rng):
    labels = {"revenue": ["Q1", "Q2", "Q3", "Q4"], "rainfall": ["Spring", "Summer", "Autumn", "Winter"],
              "sales_region": ["North", "South", "East", "West", "Online"],
              "survey": ["Yes", "No", "Maybe"]}.get(name, months)
    return render.bar_chart(title, labels, rng)


def _furniture() -> list[SiteImage]:
    """Small images every site has: a size filter must drop all of them."""
    items = [("ui/logo.png", render.logo("Northwind"), "Northwind logo")]
    for name, sym, col in [("home", "H", (52, 58, 64)), ("search", "S", (52, 58, 64)),
                           ("cart", "C", (0, 123, 255)), ("facebook", "f", (59, 89, 152)),
                           ("twitter", "t", (29, 161, 242)), ("rss", "R", (255, 140, 0)),
                           ("mail", "@", (108, 117, 125))]:
        items.append((f"ui/icon_{name}.png", render.icon(sym, col), f"{name} icon"))
    for name, text, col in [("buy", "Buy now", (220, 53, 69)), ("more", "Read more", (0, 123, 255)),
                            ("subscribe", "Subscribe", (40, 167, 69))]:
        items.append((f"ui/button_{name}.png", render.button(text, col), f"{text} button"))
    for i, col in enumerate([(230, 126, 34), (52, 152, 219), (155, 89, 182)]):
        items.append((f"ui/avatar_{i + 1}.jpg", render.avatar(col), "Round profile picture placeholder"))
    ad = render.banner("MEGA DEAL", "Click here - today only", (255, 215, 0), (200, 0, 0), w=728, h=90)
    items.append(("ui/ad_leaderboard.jpg", ad, "Yellow advertising banner"))
    out = []
    for path, im, desc in items:
        data = _jpeg(im, 85) if path.endswith(".jpg") else render.encode(im, "PNG")
        out.append(_img(path, data, "ui", f"ui:{path[3:-4]}", "render", im, desc))
    out.append(SiteImage("ui/spacer.gif", render.spacer_gif(), "ui", "ui:spacer", "render", 1, 1))
    return out
