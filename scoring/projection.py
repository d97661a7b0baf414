"""A linear map from the image embedding (EfficientNet-lite0, 1280-d) into MiniLM's text space,
learned on a corpus's own (image, text) pairs: the cross-modal feature no package ships.

No CLIP weights exist offline, but a built corpus is a large set of weakly paired images and
texts.  Ridge regression from the (PCA-reduced) image embedding to the text's MiniLM vector
learns which visual directions go with which words; the cosine between the projected image
and a text then says whether they fit.  Because some texts fit any image better than others
(long, generic sentences sit near the centre of the space), the features also compare the
cosine with the same text's cosine to a bank of other images, and the image's cosine with a
bank of other texts: the contrastive view (does this text fit *this* image more than others).

Stored as ``.npz`` of plain arrays (``allow_pickle=False``): safe to load, independent of any
library version.
"""
from __future__ import annotations

import numpy as np

BANK = 64  # images / texts kept as the reference banks


def _unit(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(n, 1e-8)


class Projection:
    """``image_vector(emb)`` -> unit 384-d vector; ``features(emb, text_vec)`` -> proj_* dict."""

    def __init__(self, mean, components, weight, bias, image_bank, text_bank, label_bank=None):
        self.mean = np.asarray(mean, np.float32)
        self.components = np.asarray(components, np.float32)
        self.weight = np.asarray(weight, np.float32)
        self.bias = np.asarray(bias, np.float32)
        self.image_bank = np.asarray(image_bank, np.float32)
        self.text_bank = np.asarray(text_bank, np.float32)
        self.label_bank = None if label_bank is None or not len(label_bank) else np.asarray(label_bank, np.float32)

    @classmethod
    def fit(cls, image_embs: np.ndarray, text_vecs: np.ndarray, label_vecs: np.ndarray | None = None,
            dims: int = 128, alpha: float = 1.0) -> "Projection":
        """Ridge regression on the pairs' rows (image embedding -> text vector).  ``alpha`` is
        relative to the mean variance of the reduced inputs, so it does not depend on scale."""
        x = np.asarray(image_embs, np.float64)
        y = np.asarray(text_vecs, np.float64)
        mean = x.mean(0)
        xc = x - mean
        _, _, vt = np.linalg.svd(xc, full_matrices=False)
        k = max(1, min(dims, vt.shape[0], len(x) - 1))
        comps = vt[:k]
        z = xc @ comps.T
        ybias = y.mean(0)
        lam = alpha * (z * z).sum() / (len(z) * k)
        w = np.linalg.solve(z.T @ z + lam * len(z) * np.eye(k), z.T @ (y - ybias))
        proj = cls(mean, comps, w, ybias, [], [], None)
        # Banks: a spread of training rows (every n-th in a fixed order, so refits agree).
        step = max(1, len(x) // BANK)
        idx = np.arange(0, len(x), step)[:BANK]
        proj.image_bank = proj.image_vectors(x[idx].astype(np.float32))
        proj.text_bank = _unit(y[idx]).astype(np.float32)
        if label_vecs is not None:
            proj.label_bank = np.asarray(label_vecs, np.float32)[idx]
        return proj

    def image_vectors(self, embs: np.ndarray) -> np.ndarray:
        z = (np.asarray(embs, np.float32) - self.mean) @ self.components.T
        return _unit(z @ self.weight + self.bias).astype(np.float32)

    def image_vector(self, emb: np.ndarray) -> np.ndarray:
        return self.image_vectors(emb[None])[0]

    def features(self, emb: np.ndarray, text_vec: np.ndarray) -> dict[str, float]:
        v = self.image_vector(emb)
        cos = float(v @ text_vec)
        others = self.image_bank @ text_vec  # this text against other images
        texts = self.text_bank @ v  # this image against other texts
        return {
            "proj_cos": cos,
            "proj_z": (cos - float(others.mean())) / (float(others.std()) + 1e-3),
            "proj_rank": float((others < cos).mean()),
            "proj_bank_mean": float(others.mean()),
            "proj_text_z": (cos - float(texts.mean())) / (float(texts.std()) + 1e-3),
        }

    def save(self, path: str) -> None:
        arrays = {k: getattr(self, k).astype(np.float16) for k in
                  ("mean", "components", "weight", "bias", "image_bank", "text_bank")}
        if self.label_bank is not None:
            arrays["label_bank"] = self.label_bank.astype(np.float16)
        with open(path, "wb") as f:  # a file object: np.savez would otherwise add ".npz"
            np.savez_compressed(f, **arrays)

    @classmethod
    def load(cls, path: str) -> "Projection":
        with np.load(path, allow_pickle=False) as z:
            a = {k: z[k].astype(np.float32) for k in z.files}
        return cls(a["mean"], a["components"], a["weight"], a["bias"], a["image_bank"],
                   a["text_bank"], a.get("label_bank"))
