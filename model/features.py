"""`lait features IN OUT`: copy shards, adding `<key>.regions.npz` to every sample.

regions.npz: features [R, D] (float16 by default), boxes [R, 5] as ImageBERT's 5-D location
(x1/W, y1/H, x2/W, y2/H, area/(W H)), labels int64 [R], scores float32 [R].

Extractors:
- GridExtractor (default): EfficientNet-lite0's last feature map as a g x g grid of regions.
  The input is resized to 32 g pixels square, so the map is exactly g x g; a cell's box is its
  part of the image, its label the ImageNet class the classifier head gives the cell's
  feature, its score that class's probability. `regions` < g*g keeps the most confident cells.
- OnnxDetector: any ONNX model with one image input and outputs named boxes [N,4] (input pixel
  coordinates x1,y1,x2,y2), labels [N], scores [N], features [N,D] (e.g. a Faster R-CNN export).
  Keeps regions scoring >= min_score, between min_regions and max_regions of them (VL-BERT: 10-100).

Shards are processed one by one, each written to a temp name and renamed when complete, so a
rerun skips finished shards and a killed run leaves no half shard. Samples keep their members
and order; a sample whose image cannot be decoded is copied without regions and counted.
"""
from __future__ import annotations

import glob
import io
import json
import logging
import os
import shutil
import tarfile
import time
import zlib

import numpy as np
import onnxruntime as ort
import torch
from PIL import Image
from tqdm import tqdm

from filters.efficientnet import EfficientNetLite0
from pipeline.core.errors import UsageError
from pipeline.steps.write import PARQUET_DIR, parquet_files

from .data import image_bytes, local_only

log = logging.getLogger(__name__)


class GridExtractor:
    """EfficientNet-lite0 feature map cells as regions (batched, on GPU when present)."""

    def __init__(self, grid: int = 10, regions: int | None = None, device: str | None = None,
                 weights: str | None = None):
        self.grid = grid
        self.regions = regions or grid * grid
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        # channels-last: depthwise convolutions run ~1.7x faster on CPU (measured), also on GPU.
        self.net = EfficientNetLite0.from_pretrained(weights).eval().to(self.device)
        self.net = self.net.to(memory_format=torch.channels_last)
        self.dim = 1280
        g = grid
        ys, xs = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
        x1, y1 = xs.ravel() / g, ys.ravel() / g
        self.boxes = np.stack([x1, y1, x1 + 1 / g, y1 + 1 / g, np.full(g * g, 1 / g / g)], 1).astype(np.float32)

    @torch.inference_mode()
    def __call__(self, images: list[Image.Image]) -> list[dict]:
        x = self.net.preprocess(images, size=32 * self.grid).contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.device.type == "cuda"):
            fmap = self.net.forward_features(x)
        fmap = fmap.float()
        probs = self.net.classify_cells(fmap).softmax(-1)             # [B, g*g, 1000]
        scores, labels = probs.max(-1)
        feats = fmap.flatten(2).transpose(1, 2)                        # [B, g*g, 1280]
        out = []
        for b in range(len(images)):
            keep = np.arange(self.grid ** 2)
            if self.regions < len(keep):
                keep = np.sort(scores[b].argsort(descending=True)[: self.regions].cpu().numpy())
            out.append({"features": feats[b, keep].cpu().numpy(), "boxes": self.boxes[keep],
                        "labels": labels[b, keep].cpu().numpy().astype(np.int64),
                        "scores": scores[b, keep].cpu().numpy().astype(np.float32)})
        return out


class OnnxDetector:
    """A user's detector exported to ONNX (see module docstring for the expected outputs)."""

    def __init__(self, path: str, size: int = 600, min_score: float = 0.5, min_regions: int = 10,
                 max_regions: int = 100, scale_255: bool = False):
        prov = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in ort.get_available_providers()]
        self.sess = ort.InferenceSession(path, providers=prov)
        self.input = self.sess.get_inputs()[0].name
        names = {o.name for o in self.sess.get_outputs()}
        need = {"boxes", "labels", "scores", "features"}
        if not need <= names:
            raise ValueError(f"ONNX detector {path} must output {sorted(need)}, has {sorted(names)}")
        self.size, self.min_score, self.scale = size, min_score, 255.0 if scale_255 else 1.0
        self.min_regions, self.max_regions = min_regions, max_regions
        self.dim = None

    def __call__(self, images: list[Image.Image]) -> list[dict]:
        out = []
        for im in images:
            x = np.asarray(im.convert("RGB").resize((self.size, self.size), Image.BILINEAR), np.float32)
            x = (x.transpose(2, 0, 1)[None] / 255.0 * self.scale).astype(np.float32)
            boxes, labels, scores, feats = self.sess.run(["boxes", "labels", "scores", "features"], {self.input: x})
            order = np.argsort(-scores, kind="stable")
            n = int((scores >= self.min_score).sum())
            n = min(max(n, self.min_regions), self.max_regions, len(order))
            keep = order[:n]
            b = np.clip(boxes[keep].astype(np.float32) / self.size, 0.0, 1.0)
            area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
            out.append({"features": feats[keep].astype(np.float32), "boxes": np.concatenate([b, area[:, None]], 1),
                        "labels": labels[keep].astype(np.int64), "scores": scores[keep].astype(np.float32)})
        return out


def npz_bytes(r: dict, dtype=np.float16) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, features=r["features"].astype(dtype), boxes=r["boxes"].astype(np.float32),
             labels=r["labels"].astype(np.int64), scores=r["scores"].astype(np.float32))
    return buf.getvalue()


def _samples(path: str, damage: list):
    """Tar members grouped by sample key (webdataset rule: key = name up to the first dot
    of the basename), in file order.  A tar cut short or not a tar ends the samples there and
    appends the error to ``damage``: the sample being read then is dropped (it may lack
    members), the whole ones before it were yielded."""
    try:
        with tarfile.open(path) as tf:
            cur, members = None, []
            for m in tf:
                if not m.isfile():
                    continue
                base = os.path.basename(m.name)
                key = os.path.join(os.path.dirname(m.name), base.split(".", 1)[0])
                if key != cur and members:
                    yield cur, members
                    members = []
                cur = key
                members.append((m, tf.extractfile(m).read()))
            if members:
                yield cur, members
    except (tarfile.TarError, EOFError, zlib.error) as e:
        damage.append(e)


def _add(tf: tarfile.TarFile, name: str, data: bytes, like: tarfile.TarInfo | None = None):
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    info.mtime = like.mtime if like is not None else 0   # deterministic output
    tf.addfile(info, io.BytesIO(data))


def extract_shard(src: str, dst: str, extractor, batch_size: int = 32, dtype=np.float16, bar=None) -> dict:
    counts = {"samples": 0, "with_regions": 0, "bad_image": 0, "bad_shards": 0}
    tmp = dst + ".tmp"
    pending: list = []
    damage: list = []

    def flush(tf):
        imgs = [im for _, _, im in pending if im is not None]
        regs = iter(extractor(imgs)) if imgs else iter(())
        for key, members, im in pending:
            for m, data in members:
                if not os.path.basename(m.name).endswith(".regions.npz"):
                    _add(tf, m.name, data, m)
            if im is not None:
                _add(tf, key + ".regions.npz", npz_bytes(next(regs), dtype), members[0][0])
                counts["with_regions"] += 1
        if bar is not None:
            bar.update(len(pending))
        pending.clear()

    with tarfile.open(tmp, "w", format=tarfile.USTAR_FORMAT) as tf:
        for key, members in _samples(src, damage):
            counts["samples"] += 1
            im = None
            try:
                # member name "<key>.<ext>" -> {ext: bytes}, the shape image_bytes reads
                img = image_bytes({m.name[len(key) + 1:]: d for m, d in members})
                im = Image.open(io.BytesIO(img))
                im.load()
                im = im.convert("RGB")
            except Exception as e:  # noqa: BLE001 - count, copy the sample as is, go on
                counts["bad_image"] += 1
                log.warning("%s: %s: no regions (%r)", os.path.basename(src), key, e)
                im = None
            pending.append((key, members, im))
            if len(pending) >= batch_size:
                flush(tf)
        flush(tf)
    if damage:
        counts["bad_shards"] = 1
        log.warning("%s: damaged tar (%s): its %d whole sample(s) before the damage copied",
                    src, damage[0], counts["samples"])
    os.replace(tmp, dst)
    return counts


def run_features(src_dir: str, dst_dir: str, extractor, batch_size: int = 32, dtype=np.float16,
                 progress: bool = True) -> dict:
    """Copy IN/shards/*.tar (or IN/*.tar) to OUT/shards/ with regions; parquet files
    (IN/parquet/*.parquet, or beside the tars) are copied to OUT/parquet/."""
    local_only(src_dir, "features: input")
    local_only(dst_dir, "features: output")
    src_shards = src_dir if glob.glob(os.path.join(src_dir, "*.tar")) else os.path.join(src_dir, "shards")
    shards = sorted(glob.glob(os.path.join(src_shards, "*.tar")))
    if not shards:
        raise FileNotFoundError(f"no .tar shards in {src_dir} or {src_dir}/shards")
    out_shards = os.path.join(dst_dir, "shards")
    if os.path.realpath(out_shards) == os.path.realpath(src_shards):
        # every output shard would look done (they are the input's): nothing would be added
        raise UsageError(f"features: {dst_dir} is where the input shards are; write the copy "
                         "with regions to another folder (lait features IN OUT)")
    os.makedirs(out_shards, exist_ok=True)
    parquets = glob.glob(os.path.join(src_shards, "*.parquet")) or parquet_files(src_dir)
    if parquets:
        os.makedirs(os.path.join(dst_dir, PARQUET_DIR), exist_ok=True)
    for f in parquets:
        shutil.copy2(f, os.path.join(dst_dir, PARQUET_DIR))
    todo = [s for s in shards if not os.path.exists(os.path.join(out_shards, os.path.basename(s)))]
    total = {"shards": len(shards), "skipped_done": len(shards) - len(todo), "samples": 0,
             "with_regions": 0, "bad_image": 0, "bad_shards": 0}
    bar = None
    if progress:
        bar = tqdm(desc="features", unit="img", dynamic_ncols=True)
    t0 = time.time()
    for s in todo:
        c = extract_shard(s, os.path.join(out_shards, os.path.basename(s)), extractor, batch_size, dtype, bar)
        for k, v in c.items():
            total[k] += v
    if bar is not None:
        bar.close()
    total["seconds"] = round(time.time() - t0, 2)
    with open(os.path.join(dst_dir, "features.json"), "w") as f:
        json.dump(total, f, indent=1)
    return total
