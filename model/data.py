"""Data: webdataset shards -> tokenise -> mask -> padded batches.

One sample's decoding (a bad one is logged and counted, and the reading goes on) and the
collator that masks and makes the ITM negatives, run in the DataLoader workers so the GPU only
runs the model.  The stream that feeds them (shard order shuffled per epoch, a sample shuffle
buffer, shards split across ranks and workers) is in stream.py.
"""
from __future__ import annotations

import glob
import io
import logging
import os
import random

import braceexpand
import numpy as np
import torch
import webdataset as wds
from PIL import Image
from tokenizers import BertWordPieceTokenizer

from .config import Config, ConfigError
from .encoder import minilm_dir, resolve_bert_dir

log = logging.getLogger(__name__)
IGNORE = -100
# Image members a webdataset sample may carry: the pipeline writes `.jpg`
# (pipeline/steps/write.py); img2dataset and other tools write `.png`, `.jpeg`, `.webp`.
IMAGE_EXTS = ("jpg", "jpeg", "png", "webp")


def image_bytes(sample: dict) -> bytes:
    """The encoded image of a webdataset sample (dict of extension -> bytes), whichever of
    IMAGE_EXTS it has (case-insensitive; the first in that order if several); a ValueError
    naming the sample's keys when it has none."""
    by_ext = {k.lower(): k for k in sample if isinstance(k, str) and not k.startswith("__")}
    for ext in IMAGE_EXTS:
        if ext in by_ext:
            return sample[by_ext[ext]]
    raise ValueError(f"no image member (looked for {', '.join('.' + e for e in IMAGE_EXTS)}; "
                     f"the sample has {', '.join('.' + k for k in sorted(by_ext)) or 'nothing'})")


# --- shards and tokens -----------------------------------------------------------------------

def local_only(path: str, what: str) -> None:
    """The trainer reads and writes local files: a URL (``lait build --out s3://...`` makes
    such shards) was "no .tar shards found" for shards that are there, and an output URL
    became a local folder named ``s3:``."""
    if "://" in path and not path.startswith("file://"):
        raise ConfigError(f"{what} {path}: the trainer reads and writes local folders only; "
                          "copy the shards to a local folder first (aws s3 sync, gsutil rsync, "
                          "rclone copy, ...)")


def list_shards(spec: str) -> list[str]:
    """A folder (its *.tar, or shards/*.tar), a glob, or a brace pattern -> sorted shard paths."""
    if not spec:
        raise ConfigError("no shards given")
    out: list[str] = []
    for part in spec.split(","):
        part = part.strip()
        local_only(part, "shards")
        if os.path.isdir(part):
            found = sorted(glob.glob(os.path.join(part, "*.tar"))) or \
                sorted(glob.glob(os.path.join(part, "shards", "*.tar")))
        else:
            found = sorted(f for p in braceexpand.braceexpand(part) for f in glob.glob(p))
        out += found
    if not out:
        raise ConfigError(f"no .tar shards found for {spec!r}")
    return out


class Tokenizer:
    """BERT WordPiece through the `tokenizers` library; [CLS] text [SEP], truncated."""

    def __init__(self, vocab: str, lowercase: bool = True):
        if not os.path.exists(vocab):
            raise ConfigError(f"vocab file not found: {vocab}")
        self.tok = BertWordPieceTokenizer(vocab, lowercase=lowercase)
        self.vocab_size = self.tok.get_vocab_size()
        ids = {t: self.tok.token_to_id(t) for t in ("[PAD]", "[CLS]", "[SEP]", "[MASK]")}
        if any(v is None for v in ids.values()):
            raise ConfigError(f"{vocab} lacks BERT special tokens: {ids}")
        self.pad, self.cls, self.sep, self.mask = (ids[t] for t in ("[PAD]", "[CLS]", "[SEP]", "[MASK]"))
        # Random replacements come from ordinary word pieces, not [unusedN] / specials.
        self.first_word = 1000 if self.vocab_size > 5000 else 5

    def encode(self, text: str, max_len: int) -> list[int]:
        ids = self.tok.encode(text, add_special_tokens=False).ids[: max_len - 2]
        return [self.cls] + ids + [self.sep]

    def decode(self, ids) -> str:
        return self.tok.decode([int(i) for i in ids])


def tokenizer_for(cfg: Config) -> Tokenizer:
    vocab = cfg.data.vocab
    if vocab is None:
        d = resolve_bert_dir(cfg.model.init_from) if cfg.model.init_from else minilm_dir()
        vocab = os.path.join(d, "vocab.txt")
    tok = Tokenizer(vocab, cfg.data.lowercase)
    if tok.vocab_size != cfg.model.vocab_size:
        raise ConfigError(f"vocab {vocab} has {tok.vocab_size} tokens but model.vocab_size={cfg.model.vocab_size}")
    return tok


# --- one sample --------------------------------------------------------------------------

class BadSamples:
    """Logs the first bad sample of each distinct error (capped) and counts them all (training:
    `bad_samples` in metrics.jsonl); never raises."""

    def __init__(self, cap: int = 20):
        self.count, self.cap, self.seen = 0, cap, set()
        self.last = None  # the latest error, for the message when nothing at all is usable

    def __call__(self, exn, key: str = "?") -> bool:
        self.count += 1
        self.last = exn
        # Once per distinct error (streams loop over epochs; shards with no regions.npz at
        # all gave `cap` identical lines) and at most `cap` lines; metrics count every one.
        what = repr(exn)
        if what not in self.seen and len(self.seen) < self.cap:
            self.seen.add(what)
            log.warning("skipping bad sample %s: %s (others with this error are skipped "
                        "without a line)", key, what)
        return True


def decode_sample(s: dict, cfg: Config, tok: Tokenizer, text_only: bool = False) -> dict:
    """webdataset sample -> {key, ids, feats, boxes, labels} or {key, ids, image}; ``feats``
    float16 when stored so, else float32 (the collator makes the batch float32)."""
    caption = s["txt"].decode("utf-8").strip()
    if not caption:
        raise ValueError("empty caption")
    max_text = cfg.data.max_len if text_only else cfg.text_len()
    out = {"key": s["__key__"], "ids": tok.encode(caption, max_text)}
    if text_only:
        return out
    if cfg.model.visual == "pixels":
        size = cfg.model.image_size
        im = Image.open(io.BytesIO(image_bytes(s))).convert("RGB").resize((size, size), Image.BILINEAR)
        out["image"] = np.asarray(im, dtype=np.uint8).transpose(2, 0, 1).copy()
        return out
    if "regions.npz" not in s:
        raise ValueError("no regions.npz (run `lait features` on the shards first)")
    z = np.load(io.BytesIO(s["regions.npz"]))
    feats, boxes, labels = z["features"], z["boxes"], z["labels"]
    scores = z["scores"] if "scores" in z else np.ones(len(feats), np.float32)
    if feats.ndim != 2 or feats.shape[1] != cfg.model.region_dim or len(boxes) != len(feats):
        raise ValueError(f"regions.npz features {feats.shape} / boxes {boxes.shape}: "
                         f"expected [R, {cfg.model.region_dim}] and [R, 5]")
    if len(feats) == 0:
        raise ValueError("no regions")
    # One NaN feature or box turns every weight NaN at the next step (and the run goes on,
    # writing NaN checkpoints); a negative label stops it in MOC's cross-entropy.  Labels past
    # num_object_classes are ignored by MOC on purpose (model/pretrain.py).
    if not (np.isfinite(feats).all() and np.isfinite(boxes).all()):
        raise ValueError("regions.npz has non-finite features or boxes")
    if len(labels) != len(feats) or (labels < 0).any():
        raise ValueError(f"regions.npz labels {labels.shape}: expected [R] of class ids >= 0")
    if len(feats) > cfg.data.max_regions:  # keep the most confident regions
        keep = np.sort(np.argsort(-scores, kind="stable")[: cfg.data.max_regions])
        feats, boxes, labels = feats[keep], boxes[keep], labels[keep]
    # Features stay in their stored dtype when it is float16 (what `lait features` writes):
    # a shuffle buffer of 5000 samples held float32 copies, 2.6 GB per DataLoader worker at
    # 100 x 1280.  The collator widens them into its float32 batch, exactly (every float16 is
    # a float32), so the batches are the same bits.  Other dtypes become float32 as before.
    if feats.dtype != np.float16:
        feats = feats.astype(np.float32)
    out.update(feats=feats, boxes=boxes.astype(np.float32), labels=labels.astype(np.int64))
    return out


def read_samples(spec: str, cfg: Config, tok: Tokenizer, limit: int | None = None,
                 sample: int | None = None, seed: int = 0) -> list[dict]:
    """Good samples of some shards, in shard order: all, the first `limit`, or `sample` of
    them drawn uniformly at random with `seed` (reservoir sampling: one pass, at most `sample`
    decoded samples in memory, the same draw for the same shards and seed). A test set's first
    N in shard order is not a random sample: shards are often sorted by key or source."""
    bad = BadSamples()
    out: list = []
    rng = random.Random(seed)
    seen = 0
    for s in wds.WebDataset(list_shards(spec), shardshuffle=False, nodesplitter=None,
                            workersplitter=None, handler=bad, empty_check=False):
        try:
            d = decode_sample(s, cfg, tok)
        except Exception as e:  # noqa: BLE001 - a bad sample must never stop a run
            bad(e, s.get("__key__", "?"))
            continue
        seen += 1
        if sample:
            if len(out) < sample:
                out.append((seen, d))
            else:
                j = rng.randrange(seen)
                if j < sample:
                    out[j] = (seen, d)
        else:
            out.append(d)
        if limit and not sample and len(out) >= limit:
            break
    if sample:
        out = [d for _, d in sorted(out, key=lambda x: x[0])]
    return out


# --- masking and batching ------------------------------------------------------------------

class PretrainCollator:
    """Samples -> one padded batch with ITM negatives and ImageBERT's masking.

    Row layout (Pixel-BERT: ``images`` holds each distinct image once, ``image_rows`` the image
    of each row): B positives, then (neg_text) B rows of image i with a caption of another
    sample, then (neg_image) B rows of caption i with another sample's image. Text: 15% of
    tokens chosen, 80% [MASK] / 10% random / 10% kept. Regions: 15% chosen, 90% zeroed / 10%
    kept. Every row is masked alike (so ITM cannot spot positives by their masks), but the
    masked-token labels of negative rows are set to ignore: the conditional mask.
    """

    masking = True

    def __init__(self, cfg: Config, tok: Tokenizer, seed: int = 0):
        self.cfg, self.tok = cfg, tok
        self.rng = np.random.default_rng(seed)

    def __call__(self, samples: list[dict], text_only: bool = False) -> dict:
        p = self.cfg.pretrain
        B = len(samples)
        rows = [(i, i, 1) for i in range(B)]  # (text index, image index, matched)
        if not text_only and p.itm and B > 1:
            if p.neg_text:
                rows += [(self._other(samples, i), i, 0) for i in range(B)]
            if p.neg_image:
                rows += [(i, self._other(samples, i), 0) for i in range(B)]
        ti = np.array([r[0] for r in rows])
        vi = np.array([r[1] for r in rows])
        match = np.array([r[2] for r in rows], dtype=bool)
        batch = self._text(samples, ti, match)
        if text_only:
            return batch
        batch.update(self._visual(samples, vi, match))
        if p.itm and B > 1:
            batch["itm_labels"] = torch.from_numpy(match.astype(np.float32))
        if p.itc_weight and B > 1:
            # Rows 0..B-1 are the positives; samples with the same caption text share a group,
            # so the contrastive term does not count a repeated caption as a negative.
            first: dict = {}
            batch["itc_group"] = torch.tensor([first.setdefault(tuple(s["ids"]), i)
                                               for i, s in enumerate(samples)])
        return batch

    def _other(self, samples, i) -> int:
        # A negative must really be one: skip samples whose caption is the same text.
        cands = [j for j in range(len(samples)) if j != i and samples[j]["ids"] != samples[i]["ids"]]
        if not cands:
            cands = [j for j in range(len(samples)) if j != i]
        return int(self.rng.choice(cands))

    def _text(self, samples, ti, match) -> dict:
        T = max(len(samples[i]["ids"]) for i in ti)
        if self.cfg.compile:  # static shapes: no recompilation per batch
            T = self.cfg.data.max_len if "feats" not in samples[0] and "image" not in samples[0] else self.cfg.text_len()
        ids = np.full((len(ti), T), self.tok.pad, dtype=np.int64)
        for r, i in enumerate(ti):
            ids[r, : len(samples[i]["ids"])] = samples[i]["ids"]
        real = (ids != self.tok.pad) & (ids != self.tok.cls) & (ids != self.tok.sep)
        chosen = real & (self.rng.random(ids.shape) < self.cfg.pretrain.mlm_prob) & self.masking
        labels = np.where(chosen & match[:, None], ids, IGNORE)
        u = self.rng.random(ids.shape)
        masked = ids.copy()
        masked[chosen & (u < 0.8)] = self.tok.mask
        rnd = chosen & (u >= 0.8) & (u < 0.9)
        masked[rnd] = self.rng.integers(self.tok.first_word, self.tok.vocab_size, rnd.sum())
        return {"input_ids": torch.from_numpy(masked), "text_mask": torch.from_numpy(ids != self.tok.pad),
                "mlm_labels": torch.from_numpy(labels)}

    def _visual(self, samples, vi, match) -> dict:
        if self.cfg.model.visual == "pixels":
            # Each distinct image once, and the image of each row: the ITM negatives re-use the
            # batch's own images, so the CNN runs once an image (model/pretrain.py), not once a
            # row (3B rows + ITC's B of B images in pre-training; P an image in fine-tuning).
            used, rows = np.unique(np.asarray(vi), return_inverse=True)
            imgs = np.stack([samples[i]["image"] for i in used])
            return {"images": torch.from_numpy(imgs).float().div_(255.0),
                    "image_rows": torch.from_numpy(rows.reshape(-1).astype(np.int64))}
        R = self.cfg.data.max_regions if self.cfg.compile else max(len(samples[i]["feats"]) for i in vi)
        D = self.cfg.model.region_dim
        N = len(vi)
        feats = np.zeros((N, R, D), np.float32)  # samples' float16 widen here, exactly
        boxes = np.zeros((N, R, 5), np.float32)
        labels = np.full((N, R), IGNORE, np.int64)
        valid = np.zeros((N, R), bool)
        for r, i in enumerate(vi):
            n = len(samples[i]["feats"])
            feats[r, :n], boxes[r, :n], labels[r, :n] = samples[i]["feats"], samples[i]["boxes"], samples[i]["labels"]
            valid[r, :n] = True
        chosen = valid & (self.rng.random((N, R)) < self.cfg.pretrain.moc_prob) & self.masking
        targets = feats.copy()
        zero = chosen & (self.rng.random((N, R)) < 0.9)
        feats[zero] = 0.0
        cond = chosen & match[:, None]
        return {"feats": torch.from_numpy(feats), "boxes": torch.from_numpy(boxes),
                "vis_mask": torch.from_numpy(valid), "mrfr_mask": torch.from_numpy(cond),
                "moc_labels": torch.from_numpy(np.where(cond, labels, IGNORE)),
                "mrfr_targets": torch.from_numpy(targets)}
