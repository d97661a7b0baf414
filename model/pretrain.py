"""ImageBERT: one single-stream Transformer over [CLS] text [SEP] + visual tokens, returning each
pre-training task's loss. Masking and ITM negatives are made by the data collator
(`model.data.PretrainCollator`); this module only consumes the labels it writes, so the
conditional mask (masked losses on matched pairs only) is visible in one place: the collator
sets every masked label of a negative pair to "ignore".
"""
from __future__ import annotations

import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import load_file

from .config import Config, ModelConfig
from .embeddings import PixelEncoder, TextEmbeddings, VisualEmbeddings
from .encoder import Encoder, bert_to_ours, check_bert_config, resolve_bert_dir
from .heads import ITCHead, build_heads

log = logging.getLogger(__name__)
IGNORE = -100


class ImageBERT(nn.Module):
    """The ImageBERT network with MLM / MOC / MRFR / ITM heads.

    batch keys: input_ids [N,T], text_mask [N,T]; regions: feats [N,R,D], boxes [N,R,5],
    vis_mask [N,R]; or pixels: images [K,3,H,W] (each distinct image once) and image_rows [N]
    (the image of each row; absent: one row an image); labels: mlm_labels [N,T], moc_labels [N,R],
    mrfr_mask [N,R], mrfr_targets [N,R,D], itm_labels [N]. A text-only batch (VL-BERT) has no
    visual keys and no itm_labels.
    """

    def __init__(self, cfg: Config):
        super().__init__()
        m = cfg.model
        self.cfg, self.mcfg = cfg, m
        self.text = TextEmbeddings(m)
        self.pixels = PixelEncoder(m) if m.visual == "pixels" else None
        feat_dim = self.pixels.out_dim if self.pixels is not None else m.region_dim
        self.visual = VisualEmbeddings(m, feat_dim)
        self.encoder = Encoder(m)
        self.pooler = nn.Linear(m.hidden, m.hidden)
        self.heads = build_heads(m, m.region_dim)
        if cfg.pretrain.itc_weight:
            self.heads["itc"] = ITCHead(m, cfg.pretrain.itc_dim)
        self.apply(self._init)
        self.match_keep = 1.0   # set per stage by the trainer (stages.N.match_keep)
        # Pixel-BERT: the CNN runs once per distinct image of a forward and every use (the
        # joint rows with their ITM negatives, ITC's image-only pass) reads that map.  False is
        # the reference (bench/pixel_step.py, tests): the CNN over each row's own copy, as before.
        self.share_cnn = True

    @staticmethod
    def _init(mod: nn.Module):
        # BERT's initialisation; the CNN keeps PyTorch's defaults (or its pretrained weights).
        if isinstance(mod, (nn.Linear, nn.Embedding)):
            nn.init.normal_(mod.weight, std=0.02)
            if isinstance(mod, nn.Linear) and mod.bias is not None:
                nn.init.zeros_(mod.bias)
        elif isinstance(mod, nn.LayerNorm):
            nn.init.ones_(mod.weight)
            nn.init.zeros_(mod.bias)

    def init_pretrained(self) -> list[str]:
        """Load the BERT checkpoint named by model.init_from (and the CNN's ImageNet weights).
        Returns the names of our parameters it did not set (visual path, MOC/MRFR/ITM heads)."""
        if self.pixels is not None:
            self.pixels.load_pretrained()
        if not self.mcfg.init_from:
            return []
        path = resolve_bert_dir(self.mcfg.init_from)
        check_bert_config(self.mcfg, path)
        ours = bert_to_ours(load_file(f"{path}/model.safetensors"), self.mcfg.layers)
        missing, unexpected = self.load_state_dict(ours, strict=False)
        assert not unexpected, unexpected
        log.info("initialised from %s (%d tensors; %d left at random init)", path, len(ours), len(missing))
        return missing

    # --- the network --------------------------------------------------------------------
    def encode(self, batch: dict, fmap: torch.Tensor | None = None) -> tuple[torch.Tensor, int]:
        """Returns hidden states [N,L,H] and where visual tokens start (``fmap``: the CNN's map
        of batch["images"], when the caller has it)."""
        ids, text_mask = batch["input_ids"], batch["text_mask"]
        parts, masks = [self.text(ids)], [text_mask]
        vis_start = ids.shape[1]
        if "feats" in batch or "images" in batch:
            emb, vmask = self._visual_tokens(batch, fmap)
            parts.append(emb)
            masks.append(vmask)
        h = self.encoder(torch.cat(parts, 1), torch.cat(masks, 1))
        return h, vis_start

    def feature_map(self, batch: dict) -> torch.Tensor | None:
        """Pixel-BERT: the CNN's map of each distinct image in the batch (None: no images, or
        the per-row reference).  The CNN is a function of each image alone (BN frozen, no
        dropout), so one map serves every row of that image."""
        if self.pixels is None or "images" not in batch or not self.share_cnn:
            return None
        return self.pixels.feature_map(batch["images"])

    def _visual_tokens(self, batch: dict,
                       fmap: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Visual token embeddings [N,R,H] and their mask [N,R]."""
        if self.pixels is not None:
            rows = batch.get("image_rows")
            if fmap is None and not self.share_cnn:
                # The reference: every row's own copy through the CNN (4 copies an image a step).
                images = batch["images"] if rows is None else batch["images"].index_select(0, rows)
                fmap, rows = self.pixels.feature_map(images), None
            elif fmap is None:
                fmap = self.pixels.feature_map(batch["images"])
            feats, boxes = self.pixels.tokens(fmap, rows)
            vmask = torch.ones(feats.shape[:2], dtype=torch.bool, device=feats.device)
        else:
            feats, boxes, vmask = batch["feats"], batch["boxes"], batch["vis_mask"]
        feats = feats.to(self.visual.feat_proj.weight.dtype)
        if self.mcfg.global_image_token:
            # The whole-image token: mean of the (already masked) inputs, whole-image box.
            w = vmask[..., None].to(feats.dtype)
            g = (feats * w).sum(1, keepdim=True) / w.sum(1, keepdim=True).clamp(min=1)
            gbox = feats.new_tensor([0, 0, 1, 1, 1]).expand(feats.shape[0], 1, 5)
            feats, boxes = torch.cat([g, feats], 1), torch.cat([gbox, boxes.to(feats.dtype)], 1)
            vmask = torch.cat([vmask.new_ones(vmask.shape[0], 1), vmask], 1)
        return self.visual(feats, boxes.to(feats.dtype), self.text.segment.weight[1]), vmask

    def _itc(self, batch: dict,
             fmap: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """In-batch contrastive loss between the text alone ([CLS] text [SEP]) and the image
        alone ([CLS] + visual tokens), both through the same encoder, over the B positive rows.
        Rows whose captions are the same text are all targets (a soft label), not negatives.
        With `match_keep` < 1 (a noisy stage) only that share of the pairs, those the model
        itself finds most plausible (lowest contrastive loss), count: returns the loss and the
        0/1 weights of the B pairs (None when all count)."""
        g = batch["itc_group"]
        B = len(g)
        one = {k: v[:B] for k, v in batch.items() if k in ("input_ids", "text_mask", "feats", "boxes",
                                                             "vis_mask")}
        if "images" in batch:  # the positives' images: rows 0..B-1 of the joint pass
            rows = batch.get("image_rows")
            one["images"] = batch["images"]
            one["image_rows"] = rows[:B] if rows is not None else torch.arange(B, device=g.device)
        ht = self.encoder(self.text(one["input_ids"]), one["text_mask"])
        emb, vmask = self._visual_tokens(one, fmap)
        cls = self.text(one["input_ids"][:, :1])          # [CLS] opens the image-only sequence
        hv = self.encoder(torch.cat([cls, emb], 1), torch.cat([one["text_mask"][:, :1], vmask], 1))
        if self.cfg.pretrain.itc_pool == "mean":
            ht, hv = _mean(ht, one["text_mask"]), _mean(hv[:, 1:], vmask)
        else:
            ht, hv = ht[:, 0], hv[:, 0]
        logits = self.heads["itc"](ht, hv)                # [images, texts]
        same = (g[:, None] == g[None, :]).float()
        target = same / same.sum(1, keepdim=True)
        per = 0.5 * (F.cross_entropy(logits, target, reduction="none")
                     + F.cross_entropy(logits.T, target, reduction="none"))
        keep = self.match_keep
        if keep >= 1.0:
            return per.mean(), None
        # Small-loss selection (co-teaching's rule): a web caption that does not fit its image
        # has a high loss once the model knows anything; its gradient would pull the pair
        # together anyway. The weights are not differentiated (a choice, not a target).
        k = max(1, int(round(keep * B)))
        w = torch.zeros_like(per)
        w[per.detach().topk(k, largest=False).indices] = 1.0
        return (per * w).sum() / k, w

    def pooled(self, h: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.pooler(h[:, 0]))

    def score(self, batch: dict) -> torch.Tensor:
        """Image-text matching logit per pair [N] (ITM head; the retrieval score)."""
        h, _ = self.encode(batch)
        return self.heads["itm"](self.pooled(h))

    def forward(self, batch: dict) -> dict[str, torch.Tensor]:
        """All pre-training losses, their weighted sum under "loss", and accuracies."""
        p = self.cfg.pretrain
        fmap = self.feature_map(batch)   # once a step; the joint rows and ITC gather from it
        h, vs = self.encode(batch, fmap)
        out: dict[str, torch.Tensor] = {}
        total = h.new_zeros(())

        labels = batch["mlm_labels"]
        sel = labels != IGNORE
        logits = self.heads["mlm"](_pick(h[:, :vs], sel), self.text.word.weight)
        out["mlm"] = _masked_ce(logits, labels[sel] if sel.any() else labels.new_zeros(1), sel.any())
        out["mlm_acc"] = (logits.argmax(-1) == labels[sel]).float().mean() if sel.any() else h.new_zeros(())
        total = total + p.mlm_weight * out["mlm"]

        if "moc_labels" in batch and "moc" in self.heads:
            # Visual outputs aligned with the input regions (drop the global token if any).
            hv = h[:, vs + int(self.mcfg.global_image_token):]
            sel = batch["mrfr_mask"]
            hs = _pick(hv, sel)
            if p.moc_weight:
                lab = batch["moc_labels"][sel] if sel.any() else batch["moc_labels"].new_zeros(1)
                lab = lab.masked_fill(lab >= self.mcfg.num_object_classes, IGNORE)
                out["moc"] = _masked_ce(self.heads["moc"](hs), lab, sel.any())
                total = total + p.moc_weight * out["moc"]
            if p.mrfr_weight:
                tgt = batch["mrfr_targets"][sel].float() if sel.any() else None
                pred = self.heads["mrfr"](hs).float()
                out["mrfr"] = F.mse_loss(pred, tgt) if tgt is not None else pred.sum() * 0.0
                total = total + p.mrfr_weight * out["mrfr"]

        pair_w = None
        if "itc_group" in batch and p.itc_weight:
            out["itc"], pair_w = self._itc(batch, fmap)
            total = total + p.itc_weight * out["itc"]
        if "itm_labels" in batch and p.itm:
            logit = self.heads["itm"](self.pooled(h)).float()
            y = batch["itm_labels"].float()
            if pair_w is None:
                out["itm"] = F.binary_cross_entropy_with_logits(logit, y)
            else:
                # Rows 0..B-1 are the positives: a dropped pair is not taught as a match (its
                # in-batch negatives stay, they are wrong pairs whatever the caption).
                w = torch.ones_like(y)
                w[:len(pair_w)] = pair_w
                out["itm"] = (F.binary_cross_entropy_with_logits(logit, y, reduction="none") * w).sum() / w.sum()
            out["itm_acc"] = ((logit > 0).float() == y).float().mean()
            total = total + p.itm_weight * out["itm"]
        out["loss"] = total
        return out


def _mean(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    w = mask[..., None].to(h.dtype)
    return (h * w).sum(1) / w.sum(1).clamp(min=1)


def _pick(h: torch.Tensor, sel: torch.Tensor) -> torch.Tensor:
    # With nothing selected, still run the head on one position (loss x 0): every parameter
    # then gets a gradient each step, which DDP needs.
    return h[sel] if sel.any() else h[:, 0][:1]


def _masked_ce(logits: torch.Tensor, labels: torch.Tensor, any_sel) -> torch.Tensor:
    if not bool(any_sel) or not (labels != IGNORE).any():
        return logits.float().sum() * 0.0
    return F.cross_entropy(logits.float(), labels, ignore_index=IGNORE)


def count_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def model_flops_per_sample(m: ModelConfig, seq_len: int, masked_tokens: float = 0.0) -> float:
    """Training FLOPs of one sequence (forward + backward = 3x forward), matmuls only:
    per layer 24 L H^2 (QKV, proj, FFN with 4H) + 4 L^2 H (scores and weighted sum),
    plus the MLM decoder on the masked tokens. Used for MFU."""
    L, H, I = seq_len, m.hidden, m.intermediate
    per_layer = 2 * L * (4 * H * H + 2 * H * I) + 4 * L * L * H
    fwd = m.layers * per_layer + 2 * masked_tokens * H * m.vocab_size
    return 3.0 * fwd
