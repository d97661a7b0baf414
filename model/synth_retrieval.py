"""A synthetic retrieval benchmark for the multi-stage question: scenes of one or two coloured
shapes on textured backgrounds, captioned with colour, shape and place.

Three kinds of split, each from its own seed so no image repeats across them:
  clean  (stage 2, like Conceptual Captions): every caption describes its image;
  noisy  (stage 1, like LAIT): more images, other wording, and a share of captions that are
         web noise: another sample's caption (a wrong pair) or junk ("DSC67113", "free image");
  test / val: clean captions in stage 2's wording.

Writes webdataset shards (<key>.jpg, .txt, .json) in the layout the pipeline writes; run
`lait features --grid 4` on them (or `write_split(..., features=True)`) to add regions.
`python -m model.synth_retrieval OUT` writes the whole benchmark (stage1, stage2, stage2small,
val, test, test2, stage2narrow) with region features, and OUT/vocab.txt (configs/imagebert_synth.yaml reads them).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re

import numpy as np
import webdataset as wds
from PIL import Image, ImageDraw, ImageFilter

COLOURS = {"red": (210, 35, 35), "green": (40, 170, 60), "blue": (35, 70, 215), "yellow": (240, 215, 40),
           "purple": (140, 50, 170), "orange": (245, 135, 25), "white": (245, 245, 245), "black": (20, 20, 20)}
SHAPES = ["circle", "square", "triangle", "star", "cross", "diamond"]
# place name -> centre (x, y) as a fraction of the image side
PLACES = {"left": (0.27, 0.5), "right": (0.73, 0.5), "top": (0.5, 0.27), "bottom": (0.5, 0.73),
          "middle": (0.5, 0.5)}
PLACE_PHRASE = {"left": "on the left", "right": "on the right", "top": "at the top",
                "bottom": "at the bottom", "middle": "in the middle"}
PAIRS = [("left", "right"), ("top", "bottom")]   # two-object scenes: one of these layouts
TEXTURES = ["stripes", "checker", "noise", "gradient", "dots"]

# Stage 2 / test wording (like curated captions) and stage 1 wording (web-like, other words).
CLEAN_ONE = ["a {c} {s} {p}", "a {c} {s} {p} of the picture", "there is a {c} {s} {p}"]
CLEAN_TWO = ["a {c1} {s1} {p1} and a {c2} {s2} {p2}", "a {c1} {s1} and a {c2} {s2}, {p1} and {p2}"]
WEB_ONE = ["{c} {s} {p} - stock image", "photo of a {c} {s} {p}", "{c} {s} {p}, background texture"]
WEB_TWO = ["{c1} {s1} {p1}, {c2} {s2} {p2}", "photo: {c1} {s1} and {c2} {s2}"]
JUNK = ["DSC{n}", "IMG_{n}.jpg", "free image", "click to enlarge", "stock photo {n}", "untitled",
        "image", "download wallpaper", "photo by user{n}", "thumbnail"]


def _texture(kind: str, rng, size: int) -> Image.Image:
    base = rng.integers(70, 170, 3)
    alt = np.clip(base + rng.integers(-50, 50, 3), 0, 255)
    y, x = np.mgrid[0:size, 0:size]
    if kind == "stripes":
        a = rng.uniform(0, np.pi)
        m = (np.sin((x * np.cos(a) + y * np.sin(a)) / rng.uniform(3, 8)) > 0)
    elif kind == "checker":
        k = int(rng.integers(8, 24))
        m = ((x // k + y // k) % 2) == 0
    elif kind == "dots":
        k = int(rng.integers(10, 20))
        m = ((x % k - k / 2) ** 2 + (y % k - k / 2) ** 2) < (k / 4) ** 2
    elif kind == "gradient":
        t = (x if rng.random() < 0.5 else y) / size
        img = base[None, None] * (1 - t[..., None]) + alt[None, None] * t[..., None]
        return Image.fromarray(img.astype(np.uint8))
    else:
        n = rng.normal(0, 1, (size // 8, size // 8))
        m = np.kron(n, np.ones((8, 8)))[:size, :size] > 0
    img = np.where(m[..., None], base[None, None], alt[None, None]).astype(np.uint8)
    return Image.fromarray(img).filter(ImageFilter.GaussianBlur(1.0))


def _shape(d: ImageDraw.ImageDraw, shape: str, cx: float, cy: float, r: float, fill) -> None:
    if shape == "circle":
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
    elif shape == "square":
        d.rectangle((cx - r, cy - r, cx + r, cy + r), fill=fill)
    elif shape == "triangle":
        d.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=fill)
    elif shape == "diamond":
        d.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=fill)
    elif shape == "cross":
        w = r / 2.6
        d.rectangle((cx - r, cy - w, cx + r, cy + w), fill=fill)
        d.rectangle((cx - w, cy - r, cx + w, cy + r), fill=fill)
    else:  # star
        pts = []
        for k in range(10):
            a = -np.pi / 2 + k * np.pi / 5
            rr = r if k % 2 == 0 else r * 0.45
            pts.append((cx + rr * np.cos(a), cy + rr * np.sin(a)))
        d.polygon(pts, fill=fill)


def narrow_pairs(seed: int) -> dict[str, list[str]]:
    """A seeded half of the colour x shape grid: colour -> its 3 allowed shapes (of 6), each
    shape allowed with exactly 4 colours (of 8), 24 of the 48 pairs. A cyclic design ({i, i+1,
    i+3} mod 6 for six colours, {0, 2, 4} and {1, 3, 5} for the other two) under a seeded
    permutation of colours and of shapes, so no block of colours owns a block of shapes (every
    colour shares shapes with most others) and every word still occurs in the narrow set: what
    it lacks are combinations, the web's extra coverage that stage 1 can add."""
    rng = np.random.default_rng(seed)
    cols = [list(COLOURS)[i] for i in rng.permutation(len(COLOURS))]
    shp = [SHAPES[i] for i in rng.permutation(len(SHAPES))]
    rows = [[i % 6, (i + 1) % 6, (i + 3) % 6] for i in range(6)] + [[0, 2, 4], [1, 3, 5]]
    return {c: sorted(shp[k] for k in r) for c, r in zip(cols, rows)}


def seen(objs, allowed: dict[str, list[str]]) -> bool:
    """Whether every object of a scene is a (colour, shape) pair the narrow set contains."""
    return all(s in allowed[c] for c, s, _ in objs)


def scene(rng, size: int = 128, allowed: dict[str, list[str]] | None = None
          ) -> tuple[Image.Image, list[tuple[str, str, str]]]:
    """One image and its objects [(colour, shape, place)]: one object (60%) or two. With
    `allowed` (colour -> shapes) each object's shape is drawn among its colour's allowed
    shapes; without it, among all (the draws, hence the bytes, of the unrestricted splits)."""
    im = _texture(TEXTURES[int(rng.integers(len(TEXTURES)))], rng, size)
    d = ImageDraw.Draw(im)
    if rng.random() < 0.6:
        places = [list(PLACES)[int(rng.integers(len(PLACES)))]]
    else:
        places = list(PAIRS[int(rng.integers(len(PAIRS)))])
    colours = rng.choice(list(COLOURS), len(places), replace=False)
    objs = []
    for place, colour in zip(places, colours):
        opts = SHAPES if allowed is None else allowed[str(colour)]
        shape = opts[int(rng.integers(len(opts)))]
        fx, fy = PLACES[place]
        r = size * rng.uniform(0.13, 0.19)
        cx, cy = (fx + rng.uniform(-0.05, 0.05)) * size, (fy + rng.uniform(-0.05, 0.05)) * size
        _shape(d, shape, cx, cy, r, COLOURS[colour])
        objs.append((str(colour), shape, place))
    return im, objs


def caption(objs, rng, web: bool = False) -> str:
    return re.sub(r"\ba orange", "an orange", _caption(objs, rng, web))


def _caption(objs, rng, web: bool) -> str:
    if len(objs) == 1:
        (c, s, p), = objs
        t = (WEB_ONE if web else CLEAN_ONE)[int(rng.integers(3))]
        return t.format(c=c, s=s, p=PLACE_PHRASE[p])
    (c1, s1, p1), (c2, s2, p2) = objs
    t = (WEB_TWO if web else CLEAN_TWO)[int(rng.integers(2))]
    if "{p1} and {p2}" in t:
        return t.format(c1=c1, s1=s1, c2=c2, s2=s2, p1=p1, p2=p2)
    return t.format(c1=c1, s1=s1, c2=c2, s2=s2, p1=PLACE_PHRASE[p1], p2=PLACE_PHRASE[p2])


def words() -> list[str]:
    """Every word the generator can write (lowercased, punctuation split off as BERT does)."""
    text = " ".join(CLEAN_ONE + CLEAN_TWO + WEB_ONE + WEB_TWO + JUNK + list(COLOURS) + SHAPES
                    + list(PLACES) + list(PLACE_PHRASE.values()) + ["an"])
    for ch in "{}":
        text = text.replace(ch, " ")
    out = set()
    for w in re.findall(r"[a-z]+|[^a-z0-9\s]", text.lower()):
        out.add(w)
    return sorted(out - {"c", "s", "p", "c1", "c2", "s1", "s2", "p1", "p2", "n"})


def write_vocab(path: str) -> str:
    """A small WordPiece vocab.txt covering every caption the generator writes (digits as
    pieces, so junk like "DSC67113" tokenises): keeps a CPU benchmark's embedding table and
    MLM decoder at ~100 rows instead of BERT's 30,522."""
    digits = [str(d) for d in range(10)]
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words(), *digits, *("##" + d for d in digits)]
    pieces += [p for p in ("_", "##_") if p not in pieces]
    with open(path, "w") as f:
        f.write("\n".join(dict.fromkeys(pieces)) + "\n")
    return path


def junk(rng) -> str:
    return JUNK[int(rng.integers(len(JUNK)))].format(n=int(rng.integers(1000, 99999)))


def write_split(out: str, n: int, seed: int, noise: float = 0.0, web: bool = False,
                per_shard: int = 500, size: int = 128, allowed: dict[str, list[str]] | None = None) -> dict:
    """Write `n` samples to out/shards/NNNNN.tar. `noise`: the share of captions replaced, half
    by another sample's caption (a wrong pair), half by junk. `allowed`: restrict the colour x
    shape pairs (see `narrow_pairs`). Returns counts."""
    rng = np.random.default_rng(seed)
    os.makedirs(os.path.join(out, "shards"), exist_ok=True)
    items = []
    for _ in range(n):
        im, objs = scene(rng, size, allowed)
        items.append((im, objs, caption(objs, rng, web)))
    counts = {"samples": n, "clean": 0, "swapped": 0, "junk": 0}
    for i, (im, objs, cap) in enumerate(items):
        kind = "clean"
        if rng.random() < noise:
            if rng.random() < 0.5:
                j = int(rng.integers(n - 1))
                cap, kind = items[j + (j >= i)][2], "swapped"
            else:
                cap, kind = junk(rng), "junk"
        counts[kind] += 1
        items[i] = (im, objs, cap, kind)
    for sh in range(0, n, per_shard):
        # mtime fixed: the same seed writes the same bytes
        with wds.TarWriter(os.path.join(out, "shards", f"{sh // per_shard:05d}.tar"), mtime=0.0) as w:
            for i in range(sh, min(n, sh + per_shard)):
                im, objs, cap, kind = items[i]
                buf = io.BytesIO()
                im.save(buf, "JPEG", quality=90)
                w.write({"__key__": f"s{seed}_{i:06d}", "jpg": buf.getvalue(), "txt": cap.encode(),
                         "json": json.dumps({"width": size, "height": size, "objects": objs,
                                             "caption_kind": kind}).encode()})
    meta = {"seed": seed, "noise": noise, "web": web, **counts}
    if allowed is not None:   # only then: the other splits' synth.json keep their bytes
        meta["allowed"] = allowed
    with open(os.path.join(out, "synth.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return counts


# name -> (samples, seed, noise, web wording); seeds differ so no image repeats across splits.
# stage2small: a scarce clean stage-2 set (500 images), the LAIT-like case where the curated
# set, not the step budget, is the limit (docs/trainer.md, "fourth pass").
BENCHMARK = {"stage1": (6000, 101, 0.5, True), "stage2": (3000, 202, 0.0, False),
             "stage2small": (500, 606, 0.0, False),
             "val": (200, 303, 0.0, False), "test": (200, 404, 0.0, False),
             "test2": (200, 505, 0.0, False),
             "stage2narrow": (1000, 707, 0.0, False)}
# stage2narrow: a clean set narrower than the web (docs/trainer.md, "fifth pass"): only the
# colour x shape pairs of narrow_pairs(NARROW_SEED), while stage 1 and val/test/test2 cover
# all 48; seen/unseen scoring splits a test set by the same pairs.
NARROW = {"stage2narrow"}
NARROW_SEED = 7
# Fresh held-out sets (docs/trainer.md, "seventh pass"): the test sets' kind (clean, stage-2
# wording, all 48 colour x shape pairs) with a new seed, written in blocks of HELDOUT_BLOCK
# images, one shard each, so every block is scored exactly as a 200-image test set is (all
# N x N pairs of the block): R@K and chance stay comparable with val / test / test2, and K
# blocks give K x 200 queries for K x 200^2 scored pairs, not (K x 200)^2.
HELDOUT_BLOCK = 200


def parse_heldout(spec: str, block: int = HELDOUT_BLOCK) -> tuple[str, int, int]:
    """'NAME:N:SEED' -> (name, n, seed); a bad spec or a seed another split uses fails at once
    (a shared seed would repeat that split's images)."""
    parts = spec.split(":")
    if len(parts) != 3 or not parts[0] or not parts[1].isdigit() or not parts[2].isdigit():
        raise ValueError(f"held-out set {spec!r}: want NAME:N:SEED, e.g. test3:1200:808")
    name, n, seed = parts[0], int(parts[1]), int(parts[2])
    if name in BENCHMARK:
        raise ValueError(f"held-out set {name!r}: that name is a benchmark split")
    if n < block or n % block:
        raise ValueError(f"held-out set {name!r}: {n} images is not a whole number of blocks of {block}")
    used = {s: k for k, (_, s, _, _) in BENCHMARK.items()}
    if seed in used:
        raise ValueError(f"held-out set {name!r}: seed {seed} is split {used[seed]!r}'s")
    return name, n, seed


def write_heldout(out: str, specs: list[str], grid: int = 4, block: int = HELDOUT_BLOCK,
                  features: bool = True, progress: bool = False) -> dict:
    """Fresh held-out sets out/<name>/ and out/<name>_feat/ from 'NAME:N:SEED' specs: clean,
    stage-2 wording, no pair restriction (test's `write_split` call with another seed and n),
    one shard per block. Finished sets are kept. `features=False`: the raw shards only."""
    from .features import GridExtractor, run_features
    parsed = [parse_heldout(s, block) for s in specs]
    for key, what in ((0, "name"), (2, "seed")):
        vals = [p[key] for p in parsed]
        if len(set(vals)) != len(vals):
            raise ValueError(f"held-out sets: a {what} is given twice ({', '.join(map(str, vals))})")
    ex, done = None, {}
    for name, n, seed in parsed:
        raw, feat = os.path.join(out, name), os.path.join(out, name + "_feat")
        if not os.path.exists(os.path.join(raw, "synth.json")):
            write_split(raw, n, seed, 0.0, False, per_shard=block)
        if not features:
            done[name] = os.path.join(raw, "shards")
            continue
        if not os.path.exists(os.path.join(feat, "features.json")):
            ex = ex or GridExtractor(grid=grid)
            run_features(raw, feat, ex, progress=progress)
        done[name] = os.path.join(feat, "shards")
    return done


def write_benchmark(out: str, grid: int = 4, scale: float = 1.0, progress: bool = False) -> dict:
    """Every split of BENCHMARK under out/<split>/ (raw) and out/<split>_feat/ (with regions).
    Finished splits are kept (a rerun only does what is missing)."""
    from .features import GridExtractor, run_features
    ex = None
    done = {}
    for name, (n, seed, noise, web) in BENCHMARK.items():
        raw, feat = os.path.join(out, name), os.path.join(out, name + "_feat")
        if not os.path.exists(os.path.join(raw, "synth.json")):
            write_split(raw, max(8, int(n * scale)), seed, noise, web,
                        allowed=narrow_pairs(NARROW_SEED) if name in NARROW else None)
        if not os.path.exists(os.path.join(feat, "features.json")):
            ex = ex or GridExtractor(grid=grid)
            run_features(raw, feat, ex, progress=progress)
        done[name] = os.path.join(feat, "shards")
    done["vocab"] = write_vocab(os.path.join(out, "vocab.txt"))
    return done


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--grid", type=int, default=4)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every split's size")
    ap.add_argument("--heldout", action="append", default=[], metavar="NAME:N:SEED",
                    help=f"write only fresh held-out sets of the test sets' kind (N a multiple of "
                         f"{HELDOUT_BLOCK}, one shard per block of {HELDOUT_BLOCK}); repeatable")
    a = ap.parse_args(argv)
    if a.heldout:
        try:
            done = write_heldout(a.out, a.heldout, a.grid, progress=True)
        except ValueError as e:
            ap.error(str(e))
        print(json.dumps(done, indent=1))
        return 0
    print(json.dumps(write_benchmark(a.out, a.grid, a.scale, progress=True), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
