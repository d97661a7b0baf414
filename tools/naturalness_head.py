"""``train``: the naturalness head fitted on folders of images and exported to ONNX.

    python -m tools.train_naturalness train --natural /tmp/naturalness/natural \
        --other /tmp/naturalness/other --out filters/models/naturalness_head.onnx

A file's features are what the pipeline computes for an image (:func:`embed_files`): the
frozen EfficientNet-lite0 embedding of its shared 224-px view and the view's pixel statistics
(``filters/image_stats.py``).  A logistic regression on the standardised features, every
source (the folder holding a file) weighing the same within its class (:func:`source_weights`),
is exported as a small ONNX graph (:func:`export_head`) that ``filters/naturalness.py`` runs.
``select`` (``tools/train_naturalness.py``) fits the same way to choose C and the threshold.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.linear_model import LogisticRegression

from filters.backbone import Backbone, decode_pixels, square_view
from filters.image_stats import DIM as STATS_DIM
from filters.image_stats import stats_batch
from filters.nsfw import POOL_DIM, NsfwModel

C = 0.0003  # chosen by `select` on the val split (portable int8 backbone + pixel statistics)
THRESHOLD = 0.5  # likewise; folded into the exported bias
# The second opinion's head (``--nsfw-pool``): chosen by `select`'s arithmetic on the widened val
# (docs/images.md, fourteenth round), so that ``train --nsfw-pool`` on make-data's folders
# rebuilds the committed ``naturalness_second_head.onnx`` byte for byte.
SECOND_C = 0.0003
SECOND_THRESHOLD = 0.32


def image_files(folders: list[str]) -> list[str]:
    exts = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp")
    out = []
    for folder in folders:
        for root, _, names in os.walk(folder):
            out += [os.path.join(root, n) for n in names if n.lower().endswith(exts)]
    return sorted(out)


def embed_files(paths: list[str], backbone: Backbone, batch: int = 32,
                nsfw: NsfwModel | None = None) -> np.ndarray:
    """The head's features of image files: [N, 1280 + 19], the backbone embedding and the
    view's pixel statistics (``filters/image_stats.py``); with ``nsfw`` (int8, no JPEG round
    trip, as the pipeline's second opinion runs it) its pooled features too: [N, 1280 + 19 +
    1024]."""
    feats = []
    for i in range(0, len(paths), batch):
        views = []
        for p in paths[i:i + batch]:
            with open(p, "rb") as f:
                views.append(square_view(decode_pixels(f.read())))
        parts = [backbone.run(views)[0], stats_batch(views)]
        if nsfw is not None:
            parts.append(nsfw.run(views)[1])
        feats.append(np.concatenate(parts, axis=1))
    return np.concatenate(feats)


def export_head(mean: np.ndarray, std: np.ndarray, w: np.ndarray, b: float, path: str,
                threshold: float = 0.5, nsfw_pool: bool = False) -> None:
    """(features - mean) / std . w + b -> sigmoid, as a small ONNX graph whose inputs are the
    embedding and the pixel statistics (concatenated first: the features ``fit`` saw), and
    with ``nsfw_pool`` open_nsfw's pooled features as a third input (the second opinion's
    head).  ``threshold`` (chosen on val) is folded into the bias, so the pipeline's 0.5 cut
    is it."""
    f32 = np.float32
    b -= float(np.log(threshold / (1 - threshold)))
    n_emb = mean.shape[0] - STATS_DIM - (POOL_DIM if nsfw_pool else 0)
    names = ["embedding", "stats"] + (["nsfw_pool"] if nsfw_pool else [])
    inits = [numpy_helper.from_array(mean[None].astype(f32), "mean"),
             numpy_helper.from_array(std[None].astype(f32), "std"),
             numpy_helper.from_array(w[:, None].astype(f32), "w"),
             numpy_helper.from_array(np.array([b], f32), "b"),
             numpy_helper.from_array(np.array([-1], np.int64), "flat")]
    nodes = [helper.make_node("Concat", names, ["x"], axis=1),
             helper.make_node("Sub", ["x", "mean"], ["c"]),
             helper.make_node("Div", ["c", "std"], ["z"]),
             helper.make_node("MatMul", ["z", "w"], ["zw"]),
             helper.make_node("Add", ["zw", "b"], ["logit"]),
             helper.make_node("Sigmoid", ["logit"], ["p"]),
             helper.make_node("Reshape", ["p", "flat"], ["natural"])]
    graph = helper.make_graph(
        nodes, "naturalness_head",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", d])
         for n, d in zip(names, (n_emb, STATS_DIM, POOL_DIM))],
        [helper.make_tensor_value_info("natural", TensorProto.FLOAT, ["batch"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="lait-train-naturalness")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def source_weights(sources: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Sample weights giving every source (a training folder) the same total weight within
    its class, and both classes the same total (as ``class_weight="balanced"``): 30 crops of
    OpenCV's 75 photos must not outweigh the MATE photos, nor 250 clip-art files a wallpaper."""
    w = np.ones(len(y))
    for src in np.unique(sources):
        m = sources == src
        w[m] = 1.0 / m.sum()
    for cls in (0, 1):
        m = y == cls
        w[m] *= len(y) / 2 / w[m].sum()
    return w


def fit(x: np.ndarray, y: np.ndarray, c: float, sources: np.ndarray | None = None):
    """Logistic regression on the standardised features: (mean, std, classifier).  With
    ``sources``, every source weighs the same within its class (``source_weights``)."""
    mean, std = x.mean(0), x.std(0) + 1e-3
    if sources is None:
        clf = LogisticRegression(C=c, class_weight="balanced", max_iter=3000)
        clf.fit((x - mean) / std, y)
    else:
        clf = LogisticRegression(C=c, max_iter=3000)
        clf.fit((x - mean) / std, y, sample_weight=source_weights(sources, y))
    return mean, std, clf


def folder_set(natural: list[str], other: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(paths, labels, sources): a file's source is the folder that holds it."""
    pos, neg = image_files(natural), image_files(other)
    if not pos or not neg:
        sys.exit(f"no images found (natural: {len(pos)}, other: {len(neg)})")
    paths = pos + neg
    return paths, np.array([1] * len(pos) + [0] * len(neg)), \
        np.array([os.path.basename(os.path.dirname(p)) for p in paths])


def train(natural: list[str], other: list[str], out: str, precision: str = "int8",
          c: float | None = None, threshold: float | None = None, nsfw_pool: bool = False) -> dict:
    """Fits and exports a head; ``nsfw_pool``: the second opinion's
    (``filters/models/naturalness_second_head.onnx``).  C and the threshold default to the
    committed head's (C, THRESHOLD; with ``nsfw_pool`` SECOND_C, SECOND_THRESHOLD)."""
    t0 = time.time()
    if c is None:
        c = SECOND_C if nsfw_pool else C
    if threshold is None:
        threshold = SECOND_THRESHOLD if nsfw_pool else THRESHOLD
    paths, y, sources = folder_set(natural, other)
    x = embed_files(paths, Backbone(precision), nsfw=NsfwModel("int8", jpeg_reencode=False)
                    if nsfw_pool else None)
    mean, std, clf = fit(x, y, c, sources)
    export_head(mean, std, clf.coef_[0], float(clf.intercept_[0]), out, threshold, nsfw_pool)
    p = clf.predict_proba((x - mean) / std)[:, 1]
    return {"natural": int(y.sum()), "other": int((y == 0).sum()), "backbone": precision,
            "features": ["embedding", "stats"] + (["nsfw_pool"] if nsfw_pool else []),
            "C": c, "threshold": threshold,
            "train_accuracy": round(float(((p >= threshold) == y).mean()), 4),
            "seconds": round(time.time() - t0, 1), "out": out}
