"""Small shards with a learnable image-text correspondence: a coloured shape on a background,
captioned with its colour and shape. Written by the tests themselves (webdataset TarWriter)."""
from __future__ import annotations

import io
import json
import os

import numpy as np
import webdataset as wds
from PIL import Image, ImageDraw

COLOURS = {"red": (220, 30, 30), "green": (30, 180, 40), "blue": (30, 60, 220), "yellow": (235, 220, 40)}
SHAPES = ["circle", "square", "triangle"]
TEMPLATES = ["a {c} {s}", "a {c} {s} on a grey background", "the {s} is {c}", "picture of a {c} {s}"]
REGION_DIM = 16
NUM_CLASSES = 16
REGIONS = 4


def combo(i: int) -> tuple[str, str]:
    return list(COLOURS)[i % 4], SHAPES[(i // 4) % 3]


def draw(colour: str, shape: str, rng, size: int = 96) -> Image.Image:
    im = Image.new("RGB", (size, size), tuple(int(x) for x in rng.integers(90, 140, 3)))
    d = ImageDraw.Draw(im)
    r = int(rng.integers(size // 5, size // 3))
    cx, cy = (int(v) for v in rng.integers(r + 2, size - r - 2, 2))
    box = (cx - r, cy - r, cx + r, cy + r)
    if shape == "circle":
        d.ellipse(box, fill=COLOURS[colour])
    elif shape == "square":
        d.rectangle(box, fill=COLOURS[colour])
    else:
        d.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=COLOURS[colour])
    return im


def regions(colour: str, shape: str, rng) -> dict:
    """One object region (colour + shape one-hots, noisy) among background regions; the object's
    label is its colour-shape class, backgrounds are class 0."""
    ci, si = list(COLOURS).index(colour), SHAPES.index(shape)
    # Non-negative with a positive mean, like CNN (ReLU) features.
    feats = (0.5 + rng.normal(0, 0.1, (REGIONS, REGION_DIM))).astype(np.float32)
    feats[0, ci] += 2.0
    feats[0, 4 + si] += 2.0
    labels = np.zeros(REGIONS, np.int64)
    labels[0] = 1 + ci * 3 + si
    boxes = np.zeros((REGIONS, 5), np.float32)
    xy = rng.uniform(0, 0.5, (REGIONS, 2))
    wh = rng.uniform(0.2, 0.5, (REGIONS, 2))
    boxes[:, 0:2], boxes[:, 2:4] = xy, xy + wh
    boxes[:, 4] = wh[:, 0] * wh[:, 1]
    perm = rng.permutation(REGIONS)
    return {"features": feats[perm].astype(np.float16), "boxes": boxes[perm], "labels": labels[perm],
            "scores": rng.uniform(0.5, 1, REGIONS).astype(np.float32)}


def write_shards(out: str, n: int, per_shard: int = 64, seed: int = 0, with_regions: bool = True,
                 distinct: bool = False, bad: int = 0) -> list[str]:
    """Write `n` samples into out/shards/00000.tar...; `distinct` = one sample per combo
    (at most 12) with a fixed template, for retrieval; `bad` broken samples appended."""
    rng = np.random.default_rng(seed)
    os.makedirs(os.path.join(out, "shards"), exist_ok=True)
    paths = []
    for sh in range((n + per_shard - 1) // per_shard):
        path = os.path.join(out, "shards", f"{sh:05d}.tar")
        with wds.TarWriter(path) as w:
            for i in range(sh * per_shard, min(n, (sh + 1) * per_shard)):
                c, s = combo(i) if distinct else combo(int(rng.integers(12)))
                tmpl = TEMPLATES[0] if distinct else TEMPLATES[int(rng.integers(len(TEMPLATES)))]
                im = draw(c, s, rng)
                buf = io.BytesIO()
                im.save(buf, "JPEG", quality=90)
                sample = {"__key__": f"{sh:03d}{i:06d}", "jpg": buf.getvalue(),
                          "txt": tmpl.format(c=c, s=s).encode(),
                          "json": json.dumps({"width": 96, "height": 96, "colour": c, "shape": s}).encode()}
                if with_regions:
                    z = io.BytesIO()
                    np.savez(z, **regions(c, s, rng))
                    sample["regions.npz"] = z.getvalue()
                w.write(sample)
            if sh == 0:
                for b in range(bad):
                    w.write({"__key__": f"bad{b:04d}", "jpg": b"not a jpeg", "txt": b"a broken sample",
                             "regions.npz": b"garbage"})
        paths.append(path)
    return paths


WORDS = ["a", "the", "is", "on", "grey", "background", "picture", "of", "broken", "sample",
         *COLOURS, *SHAPES]


def write_vocab(path: str) -> str:
    """A WordPiece vocab.txt that covers the synthetic captions: keeps tiny test models tiny."""
    with open(path, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    return path


def tiny_raw(tmp: str, shards: str, **over) -> dict:
    """The tiny test config: 2 x 128, a vocab covering the synthetic captions."""
    raw = {
        "model": dict(hidden=128, layers=2, heads=4, intermediate=256, dropout=0.0, max_position=64,
                      region_dim=REGION_DIM, num_object_classes=NUM_CLASSES, init_from=None,
                      vocab_size=len(WORDS) + 5),
        "data": dict(max_len=32, max_regions=8, shuffle_buffer=64, num_workers=0,
                     vocab=write_vocab(os.path.join(tmp, "vocab.txt"))),
        "pretrain": dict(itm_weight=5.0),
        "stages": {1: dict(shards=shards, steps=30, batch_size=32, lr=3e-3, warmup_steps=10,
                           log_every=5, ckpt_every=1000),
                   2: dict(shards=shards, steps=4, batch_size=8, lr=1e-4, warmup_steps=1, log_every=2)},
        "retrieval": dict(shards=shards, eval_shards=shards, steps=10, batch_size=8, negatives=3,
                          warmup_steps=2, eval_size=12),
        "out_dir": os.path.join(tmp, "run"),
        "precision": "fp32",
        "seed": 7,
    }
    for k, v in over.items():
        raw[k] = {**raw.get(k, {}), **v} if isinstance(v, dict) else v
    return raw


def refused_in_one_line(args: list[str], cwd: str) -> str:
    """Run ``lait ARGS`` (one thread) and return its one ``lait: `` error line, after checking
    what every refusal of a bad configuration must be: exit 2, one line, no traceback."""
    import subprocess
    import sys
    res = subprocess.run([sys.executable, "-m", "tools.cli", *args], capture_output=True, text=True,
                         cwd=cwd, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert res.returncode == 2, res.stderr[-2000:]
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("lait: ")]
    assert len(errors) == 1, res.stderr[-2000:]
    assert "Traceback" not in res.stderr
    return errors[0]

