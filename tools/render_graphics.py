"""Renders non-natural training images: charts, text, UI-like screenshots, flat colours.

The web is full of these and no package ships them, so the naturalness trainer draws its own:
matplotlib charts (line, bar, scatter, pie, histogram, heatmap, in several styles), text pages
and banners in the DejaVu fonts that matplotlib ships, application windows with title bars,
buttons, lists and form fields, flat colours, gradients, stripes and geometric shapes, and abstract blurred colour clouds.
Everything is drawn from a seeded ``random.Random``, so the same seed gives the same images.

    python -m tools.render_graphics OUT_DIR --n 40   # writes OUT_DIR/<kind>/<i>.png
"""
from __future__ import annotations

import argparse
import io
import os
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from wordfreq import top_n_list

KINDS = ("chart", "text", "ui", "flat", "abstract")
_WORDS = None


def _fonts() -> list[str]:
    import matplotlib  # heavy; and its backend is chosen in render() before pyplot loads

    d = os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data", "fonts", "ttf")
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("DejaVu") and f.endswith(".ttf"))


def _words() -> list[str]:
    global _WORDS
    if _WORDS is None:
        _WORDS = top_n_list("en", 2000)
    return _WORDS


def _colour(rng: random.Random, light: bool | None = None) -> tuple[int, int, int]:
    if light is None:
        return tuple(rng.randrange(256) for _ in range(3))
    lo, hi = (180, 256) if light else (0, 90)
    return tuple(rng.randrange(lo, hi) for _ in range(3))


def _size(rng: random.Random) -> tuple[int, int]:
    w = rng.randrange(320, 900)
    return w, int(w * rng.uniform(0.5, 1.4))


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_words()) for _ in range(n))


def chart(rng: random.Random) -> Image.Image:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = rng.choice(["default", "ggplot", "bmh", "classic", "dark_background",
                        "fivethirtyeight", "seaborn-v0_8-whitegrid", "grayscale"])
    nprng = np.random.default_rng(rng.randrange(2**32))
    w, h = _size(rng)
    with plt.style.context(style):
        fig, ax = plt.subplots(figsize=(w / 100, h / 100), dpi=100)
        kind = rng.choice(["line", "bar", "scatter", "pie", "hist", "heatmap", "area", "barh"])
        k = rng.randrange(1, 5)
        if kind == "line":
            for _ in range(k):
                ax.plot(np.cumsum(nprng.normal(size=rng.randrange(10, 200))), marker=rng.choice(["", "o", "."]))
        elif kind in ("bar", "barh"):
            labels = [rng.choice(_words()) for _ in range(rng.randrange(3, 12))]
            fn = ax.bar if kind == "bar" else ax.barh
            fn(labels, nprng.uniform(1, 100, len(labels)))
        elif kind == "scatter":
            for _ in range(k):
                ax.scatter(nprng.normal(size=200), nprng.normal(size=200), s=rng.choice([4, 10, 30]))
        elif kind == "pie":
            n = rng.randrange(2, 8)
            ax.pie(nprng.uniform(1, 10, n), labels=[rng.choice(_words()) for _ in range(n)])
        elif kind == "hist":
            ax.hist(nprng.normal(size=1000), bins=rng.randrange(5, 60))
        elif kind == "heatmap":
            im = ax.imshow(nprng.uniform(size=(rng.randrange(4, 30), rng.randrange(4, 30))),
                           cmap=rng.choice(["viridis", "magma", "coolwarm", "Blues"]))
            fig.colorbar(im)
        else:
            ax.stackplot(range(30), *(nprng.uniform(0, 5, (k, 30))))
        if rng.random() < 0.8:
            ax.set_title(_sentence(rng, rng.randrange(2, 6)))
            ax.set_xlabel(rng.choice(_words()))
            if kind in ("line", "scatter"):
                ax.legend([_sentence(rng, 1) for _ in range(k)])
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


def text(rng: random.Random) -> Image.Image:
    w, h = _size(rng)
    dark = rng.random() < 0.25
    bg = _colour(rng, light=not dark) if rng.random() < 0.5 else ((20, 20, 20) if dark else (255, 255, 255))
    im = Image.new("RGB", (w, h), bg)
    d = ImageDraw.Draw(im)
    fonts = _fonts()
    y = rng.randrange(5, 40)
    banner = rng.random() < 0.3  # a few large words, as in headers, ads and memes
    while y < h:
        size = rng.randrange(28, 90) if banner else rng.randrange(10, 28)
        font = ImageFont.truetype(rng.choice(fonts), size)
        d.text((rng.randrange(5, 40), y), _sentence(rng, rng.randrange(2, 5) if banner else 14),
               fill=_colour(rng, light=dark), font=font)
        y += int(size * rng.uniform(1.2, 2.0))
    return im


def ui(rng: random.Random) -> Image.Image:
    w, h = _size(rng)
    im = Image.new("RGB", (w, h), _colour(rng, light=True))
    d = ImageDraw.Draw(im)
    font = ImageFont.truetype(rng.choice(_fonts()), rng.randrange(11, 16))
    accent = _colour(rng)
    bar = rng.randrange(24, 48)
    d.rectangle((0, 0, w, bar), fill=accent)
    d.text((10, bar // 3), _sentence(rng, 3), fill=(255, 255, 255), font=font)
    for i in range(3):
        d.ellipse((w - 20 - 22 * i, 6, w - 8 - 22 * i, 18), fill=_colour(rng))
    side = rng.randrange(0, w // 3)
    if side:
        d.rectangle((0, bar, side, h), fill=_colour(rng, light=rng.random() < 0.6))
        for y in range(bar + 10, h, 28):
            d.text((10, y), _sentence(rng, 2), fill=(40, 40, 40), font=font)
    y = bar + 15
    while y < h - 30:
        x0 = side + 15
        what = rng.random()
        if what < 0.3:  # a button
            bw = rng.randrange(60, 160)
            d.rounded_rectangle((x0, y, x0 + bw, y + 28), 6, fill=accent)
            d.text((x0 + 10, y + 7), _sentence(rng, 1), fill=(255, 255, 255), font=font)
        elif what < 0.6:  # a form field with its label
            d.text((x0, y + 6), _sentence(rng, 2), fill=(30, 30, 30), font=font)
            d.rectangle((x0 + 120, y, w - 20, y + 26), outline=(150, 150, 150), fill=(255, 255, 255))
        else:  # a list row with an icon
            d.rectangle((x0, y, x0 + 20, y + 20), fill=_colour(rng))
            d.text((x0 + 30, y + 3), _sentence(rng, 6), fill=(30, 30, 30), font=font)
            d.line((x0, y + 26, w - 20, y + 26), fill=(210, 210, 210))
        y += rng.randrange(32, 50)
    return im


def flat(rng: random.Random) -> Image.Image:
    w, h = _size(rng)
    a, b = np.array(_colour(rng), np.float32), np.array(_colour(rng), np.float32)
    kind = rng.choice(["solid", "linear", "radial", "stripes", "shapes"])
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if kind == "solid":
        t = np.zeros((h, w), np.float32)
    elif kind == "linear":
        ang = rng.uniform(0, np.pi)
        t = xx * np.cos(ang) + yy * np.sin(ang)
        t = (t - t.min()) / max(1e-6, t.max() - t.min())
    elif kind == "radial":
        t = np.hypot(xx - rng.uniform(0, w), yy - rng.uniform(0, h))
        t = t / t.max()
    else:
        t = ((xx // rng.randrange(8, 80)) % 2).astype(np.float32)
    im = Image.fromarray((a + (b - a) * t[..., None]).clip(0, 255).astype(np.uint8))
    if kind == "shapes" or rng.random() < 0.3:
        d = ImageDraw.Draw(im)
        for _ in range(rng.randrange(1, 12)):
            x0, y0 = rng.randrange(w), rng.randrange(h)
            box = (x0, y0, x0 + rng.randrange(10, w // 2), y0 + rng.randrange(10, h // 2))
            (d.ellipse if rng.random() < 0.5 else d.rectangle)(box, fill=_colour(rng))
    return im


def abstract(rng: random.Random) -> Image.Image:
    """Abstract backgrounds: soft blurred colour clouds on dark or light, optionally mirrored
    into a kaleidoscope (desktop wallpapers, hero-image backdrops, glow effects)."""
    w, h = _size(rng)
    im = Image.new("RGB", (w, h), _colour(rng, light=rng.random() < 0.3))
    d = ImageDraw.Draw(im)
    for _ in range(rng.randrange(3, 25)):
        x0, y0 = rng.randrange(-w // 4, w), rng.randrange(-h // 4, h)
        box = (x0, y0, x0 + rng.randrange(w // 8, w), y0 + rng.randrange(h // 10, h // 2))
        (d.ellipse if rng.random() < 0.7 else d.rectangle)(box, fill=_colour(rng))
    im = im.filter(ImageFilter.GaussianBlur(rng.uniform(4, max(w, h) / 8)))
    if rng.random() < 0.35:
        half = im.crop((0, 0, w // 2, h))
        im.paste(half.transpose(Image.Transpose.FLIP_LEFT_RIGHT), (w - w // 2, 0))
    return im


RENDERERS = {"chart": chart, "text": text, "ui": ui, "flat": flat, "abstract": abstract}


def render(kind: str, seed: int) -> Image.Image:
    return RENDERERS[kind](random.Random(f"{kind}:{seed}"))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description="render non-natural images")
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=40, help="images per kind")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    for kind in KINDS:
        os.makedirs(os.path.join(args.out, kind), exist_ok=True)
        for i in range(args.n):
            render(kind, args.seed * 100000 + i).save(os.path.join(args.out, kind, f"{i:05d}.png"))


if __name__ == "__main__":
    main()
