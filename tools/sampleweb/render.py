"""Non-natural images the sample web draws itself with PIL: charts, banners, UI screenshots,
flat colours, gradients (the "graphic" kind, large enough to pass a size filter, so only a
naturalness classifier can reject them) and small site furniture (logo, icons, buttons,
spacer, avatars, an ad leaderboard) that a size filter must drop.

Everything is drawn from fixed numbers and a seeded ``random.Random``, and encoded with fixed
settings, so the bytes are the same on every run.
"""
from __future__ import annotations

import io
import random

from PIL import Image, ImageDraw, ImageFont

PALETTE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]


def font(size: int) -> ImageFont.FreeTypeFont:
    # Pillow's bundled scalable font: no system font files, same glyphs everywhere.
    return ImageFont.load_default(size=size)


def encode(im: Image.Image, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format=fmt, **kw)
    return buf.getvalue()


def _axes(d: ImageDraw.ImageDraw, w: int, h: int, title: str):
    d.text((20, 12), title, fill=(20, 20, 20), font=font(22))
    x0, y0, x1, y1 = 60, 60, w - 20, h - 40
    d.line([(x0, y0), (x0, y1), (x1, y1)], fill=(60, 60, 60), width=2)
    for i in range(5):
        y = y1 - (y1 - y0) * i // 4
        d.line([(x0 - 5, y), (x1, y)], fill=(225, 225, 225), width=1)
        d.text((10, y - 8), str(25 * i), fill=(90, 90, 90), font=font(14))
    return x0, y0, x1, y1


def bar_chart(title: str, labels: list[str], rng: random.Random, w=640, h=420) -> Image.Image:
    im = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(im)
    x0, y0, x1, y1 = _axes(d, w, h, title)
    n = len(labels)
    step = (x1 - x0) / n
    for i, lab in enumerate(labels):
        v = rng.uniform(0.15, 1.0)
        bx = x0 + step * i + step * 0.15
        d.rectangle([bx, y1 - (y1 - y0) * v, bx + step * 0.7, y1 - 1], fill=PALETTE[i % len(PALETTE)])
        d.text((bx, y1 + 8), lab, fill=(60, 60, 60), font=font(14))
    return im


def line_chart(title: str, series: int, rng: random.Random, w=640, h=420) -> Image.Image:
    im = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(im)
    x0, y0, x1, y1 = _axes(d, w, h, title)
    for s in range(series):
        v, pts = rng.uniform(0.2, 0.8), []
        for i in range(12):
            v = min(0.98, max(0.02, v + rng.uniform(-0.15, 0.15)))
            pts.append((x0 + (x1 - x0) * i / 11, y1 - (y1 - y0) * v))
        d.line(pts, fill=PALETTE[s], width=3)
        for p in pts:
            d.ellipse([p[0] - 4, p[1] - 4, p[0] + 4, p[1] + 4], fill=PALETTE[s])
    return im


def pie_chart(title: str, parts: int, rng: random.Random, w=480, h=420) -> Image.Image:
    im = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(im)
    d.text((20, 12), title, fill=(20, 20, 20), font=font(22))
    weights = [rng.uniform(1, 5) for _ in range(parts)]
    start = 0.0
    for i, wt in enumerate(weights):
        end = start + 360 * wt / sum(weights)
        d.pieslice([90, 70, 390, 370], start, end, fill=PALETTE[i], outline="white", width=2)
        start = end
    return im


def banner(text: str, sub: str, bg, fg, w=600, h=400) -> Image.Image:
    im = Image.new("RGB", (w, h), bg)
    d = ImageDraw.Draw(im)
    pad = max(4, h // 30)
    d.rectangle([pad, pad, w - pad - 1, h - pad - 1], outline=fg, width=max(2, pad // 2))
    big, small = min(54, h * 2 // 5), min(26, h // 5)  # leaderboards are only 90 px high
    d.text((w // 2, h // 2 - small), text, fill=fg, font=font(big), anchor="mm")
    d.text((w // 2, h // 2 + big * 3 // 4), sub, fill=fg, font=font(small), anchor="mm")
    return im


def screenshot(title: str, rng: random.Random, w=800, h=500) -> Image.Image:
    """A desktop-app-like window: title bar, sidebar, toolbar buttons, lines of 'text'."""
    im = Image.new("RGB", (w, h), (236, 236, 236))
    d = ImageDraw.Draw(im)
    d.rectangle([0, 0, w, 34], fill=(52, 58, 64))
    d.text((14, 8), title, fill="white", font=font(16))
    for i, c in enumerate([(237, 106, 94), (245, 191, 79), (98, 197, 84)]):
        d.ellipse([w - 90 + 26 * i, 10, w - 76 + 26 * i, 24], fill=c)
    d.rectangle([0, 34, 180, h], fill=(222, 226, 230))
    for i in range(8):
        d.text((16, 52 + 32 * i), f"Item {i + 1}", fill=(40, 40, 40), font=font(15))
    for i in range(4):
        d.rounded_rectangle([200 + 100 * i, 48, 288 + 100 * i, 76], 6, fill=(0, 123, 255))
        d.text((214 + 100 * i, 54), ["New", "Open", "Save", "Share"][i], fill="white", font=font(14))
    for i in range(11):
        d.rectangle([200, 100 + 32 * i, 200 + rng.randint(200, w - 230), 112 + 32 * i], fill=(180, 180, 180))
    return im


def gradient(c0, c1, w=600, h=400, vertical=False) -> Image.Image:
    # Built from a 256-step ramp and resized: exact, fast, and free of per-pixel Python loops.
    ramp = Image.linear_gradient("L")
    if not vertical:
        ramp = ramp.rotate(90, expand=True).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    mask = ramp.resize((w, h), Image.Resampling.BILINEAR)
    return Image.composite(Image.new("RGB", (w, h), c1), Image.new("RGB", (w, h), c0), mask)


def icon(symbol: str, color, size=32) -> Image.Image:
    im = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(im)
    d.rounded_rectangle([0, 0, size - 1, size - 1], size // 5, fill=color)
    d.text((size // 2, size // 2), symbol, fill="white", font=font(size * 2 // 3), anchor="mm")
    return im


def button(text: str, color, w=120, h=40) -> Image.Image:
    im = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(im)
    d.rounded_rectangle([1, 1, w - 2, h - 2], 8, fill=color)
    d.text((w // 2, h // 2), text, fill="white", font=font(17), anchor="mm")
    return im


def logo(name: str, w=200, h=60) -> Image.Image:
    im = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    d = ImageDraw.Draw(im)
    d.ellipse([4, 6, 52, 54], fill=(214, 39, 40))
    d.text((28, 30), name[0], fill="white", font=font(30), anchor="mm")
    d.text((62, 30), name, fill=(40, 40, 40), font=font(24), anchor="lm")
    return im


def avatar(color, size=64) -> Image.Image:
    im = Image.new("RGB", (size, size), (240, 240, 240))
    d = ImageDraw.Draw(im)
    d.ellipse([size // 4, size // 8, size * 3 // 4, size * 5 // 8], fill=color)
    d.ellipse([size // 8, size * 9 // 16, size * 7 // 8, size * 3 // 2], fill=color)
    return im


def spacer_gif() -> bytes:
    return encode(Image.new("P", (1, 1), 0), "GIF", transparency=0)
