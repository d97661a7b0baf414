"""Input embeddings of ImageBERT (Qi et al. 2020, section 3).

Text:   e = LN(word + segment(0) + position(i)),  BERT's own layout, so a BERT checkpoint loads.
Visual: e = LN(feat_proj(r) + loc_proj(c) + segment(1) + dummy_position),
        c = (x1/W, y1/H, x2/W, y2/H, area/(W H)), one shared learned position for every visual
        token because regions have no order. The segment table is the text's (type 1), as BERT
        checkpoints already ship a two-row table.
Pixel-BERT: a CNN turns pixels into a feature map whose cells become visual tokens (with the
        cell's box as location, which Pixel-BERT does not use but costs nothing).
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from filters.efficientnet import FEATURE_DIM, EfficientNetLite0

from .config import ModelConfig


class TextEmbeddings(nn.Module):
    """Word + segment + sequence-position embeddings (BERT)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.word = nn.Embedding(cfg.vocab_size, cfg.hidden, padding_idx=0)
        self.position = nn.Embedding(cfg.max_position, cfg.hidden)
        self.segment = nn.Embedding(cfg.type_vocab_size, cfg.hidden)
        self.ln = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.word(ids) + self.position(pos)[None] + self.segment.weight[0]
        return self.drop(self.ln(x))


class VisualEmbeddings(nn.Module):
    """Region (or feature-pixel) tokens: feature + 5-D location + segment + one dummy position."""

    def __init__(self, cfg: ModelConfig, feat_dim: int):
        super().__init__()
        self.feat_proj = nn.Linear(feat_dim, cfg.hidden)
        self.loc_proj = nn.Linear(5, cfg.hidden)
        self.dummy_position = nn.Parameter(torch.zeros(cfg.hidden))
        self.ln = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)
        self.drop = nn.Dropout(cfg.dropout)
        nn.init.normal_(self.dummy_position, std=0.02)

    def forward(self, feats: torch.Tensor, boxes: torch.Tensor, segment: torch.Tensor) -> torch.Tensor:
        x = self.feat_proj(feats) + self.loc_proj(boxes) + segment + self.dummy_position
        return self.drop(self.ln(x))


def grid_boxes(h: int, w: int, device=None) -> torch.Tensor:
    """5-D locations [h*w, 5] of the cells of an h x w grid over the whole image (row-major)."""
    ys = torch.arange(h, device=device, dtype=torch.float32)
    xs = torch.arange(w, device=device, dtype=torch.float32)
    y, x = torch.meshgrid(ys, xs, indexing="ij")
    x1, y1, x2, y2 = x / w, y / h, (x + 1) / w, (y + 1) / h
    return torch.stack([x1, y1, x2, y2, (x2 - x1) * (y2 - y1)], -1).reshape(h * w, 5)


class TinyCNN(nn.Module):
    """A small random-init CNN (stride 32) so Pixel-BERT mode can be tested on a CPU."""

    def __init__(self, out_dim: int = 128):
        super().__init__()
        chans = [3, 16, 32, 64, 96, out_dim]
        layers = []
        for a, b in zip(chans[:-1], chans[1:]):
            layers += [nn.Conv2d(a, b, 3, stride=2, padding=1), nn.BatchNorm2d(b), nn.ReLU()]
        self.net = nn.Sequential(*layers)
        self.out_dim = out_dim

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class PixelEncoder(nn.Module):
    """Pixel-BERT's visual path: CNN over the image -> 2x2 max-pool -> feature pixels as tokens.

    Random sampling of `pixel_sample` feature pixels happens only in training (pre-training
    robustness + compute); at evaluation every feature pixel is used.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if cfg.pixel_backbone == "tiny":
            self.cnn = TinyCNN()
            self.mean = self.std = None
        else:
            self.cnn = EfficientNetLite0()  # ImageNet weights loaded by load_pretrained()
            del self.cnn._fc                # the classifier is unused here (and DDP wants no unused params)
            self.cnn.out_dim = FEATURE_DIM
        self.out_dim = self.cnn.out_dim
        self.pool = cfg.pixel_pool
        self.sample = cfg.pixel_sample

    def load_pretrained(self):
        if isinstance(self.cnn, EfficientNetLite0):
            sd = EfficientNetLite0.from_pretrained().state_dict()
            self.cnn.load_state_dict({k: v for k, v in sd.items() if not k.startswith("_fc.")})

    def train(self, mode: bool = True):
        super().train(mode)
        # Batch statistics of a few images per GPU are noise: keep the CNN's BN frozen.
        for m in self.cnn.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()
        return self

    def feature_map(self, images: torch.Tensor) -> torch.Tensor:
        """images [K,3,H,W] in [0,1] -> the pooled feature map [K,C,h,w] (no randomness: BN is
        frozen and the CNN has no dropout, so an image's map does not depend on its batch)."""
        if hasattr(self.cnn, "normalize"):
            images = self.cnn.normalize(images)
        fmap = self.cnn.forward_features(images)
        if self.pool > 1:
            fmap = F.max_pool2d(fmap, self.pool, ceil_mode=True)
        return fmap

    def tokens(self, fmap: torch.Tensor, rows: torch.Tensor | None = None):
        """Feature map [K,C,h,w] -> feats [N,k,C], boxes [N,k,5] for the N rows that use the
        images ``rows`` [N] (indices into K; None: one row per image).  In training each row
        draws its own `pixel_sample` feature pixels, as a row did when it had its own copy."""
        k, c, h, w = fmap.shape
        feats = fmap.flatten(2).transpose(1, 2)                       # [K, h*w, C]
        if rows is not None:
            feats = feats.index_select(0, rows)                       # [N, h*w, C]
        b = feats.shape[0]
        boxes = grid_boxes(h, w, fmap.device).expand(b, -1, -1)
        if self.training and self.sample and self.sample < h * w:
            idx = torch.rand(b, h * w, device=fmap.device).argsort(-1)[:, : self.sample]
            feats = feats.gather(1, idx[..., None].expand(-1, -1, c))
            boxes = boxes.gather(1, idx[..., None].expand(-1, -1, 5))
        return feats, boxes

    def forward(self, images: torch.Tensor, rows: torch.Tensor | None = None):
        """images [K,3,H,W] in [0,1] (and ``rows`` [N], the image of each row; None: one row an
        image) -> feats [N,k,C], boxes [N,k,5]."""
        return self.tokens(self.feature_map(images), rows)
