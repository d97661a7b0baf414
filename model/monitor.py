"""Watching pre-training: ITM on a small held-out validation shard, and a warning when a head
sits at its prior.

Why: on web-noisy captions the training ITM loss cannot tell "learning nothing" from "the data
is noisy" (a model that answers "no" to every pair scores the 1:2 prior, loss 0.636, accuracy
0.667, and that number looks like progress on a log). A clean held-out shard scored the same
way every `val_every` steps separates the two: its AUC is 0.5 at the prior whatever the noise.
"""
from __future__ import annotations

import logging
import math

import numpy as np
import torch

from .data import PretrainCollator, read_samples

log = logging.getLogger(__name__)


def prior_loss(pos_share: float) -> float:
    """BCE of the best constant answer when `pos_share` of the pairs match (1/3 -> 0.6365)."""
    p = min(max(pos_share, 1e-6), 1 - 1e-6)
    return -(p * math.log(p) + (1 - p) * math.log(1 - p))


def itm_stats(logit: torch.Tensor, y: torch.Tensor) -> dict:
    """Loss, accuracy, balanced accuracy and AUC of ITM logits against 0/1 labels."""
    logit, y = logit.float(), y.float()
    pos, neg = logit[y > 0], logit[y <= 0]
    loss = float(torch.nn.functional.binary_cross_entropy_with_logits(logit, y))
    acc = float(((logit > 0).float() == y).float().mean())
    bal = 0.5 * (float((pos > 0).float().mean()) + float((neg <= 0).float().mean()))
    # AUC = P(score of a random positive > score of a random negative), ties count half
    d = pos[:, None] - neg[None, :]
    auc = float((d > 0).float().mean() + 0.5 * (d == 0).float().mean())
    return {"itm": loss, "itm_acc": acc, "itm_bal_acc": bal, "itm_auc": auc,
            "itm_pos_logit": float(pos.mean()), "itm_neg_logit": float(neg.mean())}


class ValidationITM:
    """Fixed ITM batches (positives + in-batch negatives, made once with a fixed seed) from a
    held-out shard; `__call__(model)` returns val_* metrics. Masking is off: the question is
    only whether the model tells matched pairs from mismatched ones."""

    def __init__(self, cfg, tok, shards: str, size: int = 128, batch_size: int = 32, seed: int = 0):
        samples = read_samples(shards, cfg, tok)
        if len(samples) < 2:
            raise ValueError(f"validation shards {shards} have {len(samples)} usable samples; need 2+")
        rng = np.random.default_rng(seed)
        samples = [samples[i] for i in np.sort(rng.permutation(len(samples))[:size])]
        col = PretrainCollator(cfg, tok, seed)
        col.masking = False
        self.batches = [col(samples[i:i + batch_size]) for i in range(0, len(samples), batch_size)
                        if len(samples[i:i + batch_size]) > 1]
        self.n = len(samples)

    @torch.no_grad()
    def __call__(self, model, device) -> dict:
        was = model.training
        model.eval()
        logits, ys = [], []
        for b in self.batches:
            b = {k: v.to(device) for k, v in b.items()}
            logits.append(model.score(b).float().cpu())
            ys.append(b["itm_labels"].cpu())
        model.train(was)
        return {"val_" + k: v for k, v in itm_stats(torch.cat(logits), torch.cat(ys)).items()}


# Before this step of a stage (or before its warm-up ends, whichever is later) sitting at the
# prior is what every learning run does: the head learns its bias within ~25 steps, and the
# clean synthetic run with the contrastive term left the prior at step ~150 (100 warm-up
# steps; docs/trainer.md, "Why ITM stalled").  Earlier intervals say nothing, so they are not
# counted: the tiny configs' 20-step stages (`make demo`) warned on every run.
MIN_STEP = 200


class PriorWatch:
    """Says when ITM sits at its prior: training loss within `tol` of the constant answer's
    loss and (when validation runs) validation AUC below 0.55, for `patience` log intervals in
    a row, counting only intervals at step >= :data:`MIN_STEP` and past `warmup_steps`. Logs once when it starts, and once when the head leaves it."""

    def __init__(self, pos_share: float, tol: float = 0.02, patience: int = 3,
                 itc_weight: float = 0.0, warmup_steps: int = 0):
        self.prior = prior_loss(pos_share)
        self.min_step = max(MIN_STEP, warmup_steps)
        # The hint names the contrastive term only where it is off: with it on already, the
        # remedies are the ones docs/trainer.md gives (warm-up, stage-1 length, itm_weight).
        self.hint = ("pretrain.itc_weight > 0 gets it off" if not itc_weight
                     else f"pretrain.itc_weight is {itc_weight:g} already")
        self.tol, self.patience = tol, patience
        self.run, self.stuck_since, self.first, self.auc = 0, None, None, None

    def update(self, record: dict) -> bool:
        loss = record.get("itm")
        if loss is None:
            return False
        near = abs(loss - self.prior) <= self.tol * self.prior
        self.auc = record.get("val_itm_auc", self.auc)   # validation runs less often than logging
        if self.auc is not None:
            near = near and self.auc < 0.55
        near = near and (record.get("step") or 0) >= self.min_step   # too early to mean anything
        self.run = self.run + 1 if near else 0
        step = record.get("step")
        if self.run == 1:
            self.first = step
        stuck = self.run >= self.patience
        if stuck and self.stuck_since is None:
            self.stuck_since = self.first
            log.warning("ITM head stuck at its prior since step %s: loss %.4f vs prior %.4f%s "
                        "(it answers 'no match' to every pair; %s, see docs/trainer.md)",
                        self.first, loss, self.prior,
                        f", val AUC {self.auc:.3f}" if self.auc is not None else "", self.hint)
        elif not near and self.stuck_since is not None:
            log.info("ITM head left its prior at step %s (loss %.4f)", step, loss)
            self.stuck_since = None
        return stuck
