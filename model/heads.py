"""The four pre-training heads of ImageBERT, each on the encoder output.

MLM  : masked language modelling, decoder tied to the word embeddings (BERT).
MOC  : masked object classification, K detector classes.
MRFR : masked region feature regression back to the input feature (L2).
ITM  : image-text matching, one logit from the pooled [CLS] (also the retrieval score).
ITC  : optional, beside the four: projections of the text-only and image-only [CLS] for an
       in-batch contrastive loss (ALBEF's ITC); see `ImageBERT._itc`.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import ModelConfig


class Transform(nn.Module):
    """dense -> GELU -> LayerNorm, BERT's prediction-head transform."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden, cfg.hidden)
        self.ln = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(F.gelu(self.dense(x)))


class MLMHead(Transform):
    """Predicts the original token; the output matrix is the word-embedding table (tied)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        self.bias = nn.Parameter(torch.zeros(cfg.vocab_size))

    def forward(self, x: torch.Tensor, word_emb: torch.Tensor) -> torch.Tensor:
        return F.linear(super().forward(x), word_emb, self.bias)


class ProjectHead(nn.Module):
    """Transform + Linear to `out_dim` (MOC: K classes; MRFR: the region feature size)."""

    def __init__(self, cfg: ModelConfig, out_dim: int):
        super().__init__()
        self.transform = Transform(cfg)
        self.out = nn.Linear(cfg.hidden, out_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.transform(x))


class ITMHead(nn.Module):
    """One matching logit from the pooled [CLS] state (the pooler itself lives on the model so
    that a BERT checkpoint's pooler loads into it)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.out = nn.Linear(cfg.hidden, 1)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.out(pooled).squeeze(-1)


class ITCHead(nn.Module):
    """Text and image projections to a shared unit sphere, and a learned temperature (CLIP:
    initialised at 0.07, logit scale capped at 100)."""

    def __init__(self, cfg: ModelConfig, dim: int):
        super().__init__()
        self.text = nn.Linear(cfg.hidden, dim)
        self.image = nn.Linear(cfg.hidden, dim)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, t: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """[B,H] text, [B,H] image -> similarity logits [B images, B texts]."""
        t = F.normalize(self.text(t).float(), dim=-1)
        v = F.normalize(self.image(v).float(), dim=-1)
        return self.logit_scale.clamp(max=math.log(100)).exp() * v @ t.T


def build_heads(cfg: ModelConfig, region_dim: int) -> nn.ModuleDict:
    heads = {"mlm": MLMHead(cfg), "itm": ITMHead(cfg)}
    if cfg.visual == "regions":
        heads["moc"] = ProjectHead(cfg, cfg.num_object_classes)
        heads["mrfr"] = ProjectHead(cfg, region_dim)
    return nn.ModuleDict(heads)
