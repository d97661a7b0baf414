"""Image-text retrieval: fine-tuning with ImageBERT's three losses and R@1/5/10 evaluation.

The model is a cross-encoder: the score of a pair is the ITM logit on [CLS]. Evaluation scores
every image against every caption of the test set (N^2 pairs, as ImageBERT does on the 1k
sets). A caption counts as correct for an image when its text equals the image's own caption,
so duplicate captions in web data do not count as misses.

Losses (cfg.retrieval.loss), each over groups of 1 positive + P-1 sampled negatives (half
with another caption for the image, half with another image for the caption):
  bce     : binary cross-entropy on every pair (the paper's best),
  ce      : softmax cross-entropy, the positive among the P,
  triplet : max(0, margin - s(pos) + s(hardest negative)) on sigmoid scores.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

from .checkpoints import load_checkpoint, recover_checkpoint, save_checkpoint, stage_lock, trim_metrics
from .config import Config, ConfigError, StageConfig, to_dict
from .data import PretrainCollator, read_samples, tokenizer_for
from .memory import EVAL_ROWS, check_memory
from .stream import loader_workers, make_loader, pop_bad_samples
from .pretrain import ImageBERT
from .train import lr_at, setup_dist

log = logging.getLogger(__name__)


class RetrievalCollator(PretrainCollator):
    """Groups of [positive, negative x P-1] per sample, no masking."""

    masking = False

    def __call__(self, samples: list[dict], text_only: bool = False) -> dict:
        B, P = len(samples), 1 + self.cfg.retrieval.negatives
        rows = []
        for i in range(B):
            rows.append((i, i, 1))
            for k in range(P - 1):
                j = self._other(samples, i)
                rows.append((j, i, 0) if k % 2 == 0 else (i, j, 0))
        ti, vi = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
        match = np.array([r[2] for r in rows], dtype=bool)
        batch = self._text(samples, ti, match)
        batch.update(self._visual(samples, vi, match))
        batch["itm_labels"] = torch.from_numpy(match.astype(np.float32))
        return batch


def retrieval_loss(scores: torch.Tensor, kind: str, margin: float = 0.2) -> torch.Tensor:
    """scores [B, P] logits, column 0 the positive."""
    if kind == "bce":
        y = torch.zeros_like(scores)
        y[:, 0] = 1.0
        return F.binary_cross_entropy_with_logits(scores, y)
    if kind == "ce":
        return F.cross_entropy(scores, torch.zeros(len(scores), dtype=torch.long, device=scores.device))
    s = torch.sigmoid(scores)
    return F.relu(margin - s[:, 0] + s[:, 1:].max(1).values).mean()


def average_gradients(model: torch.nn.Module, world: int) -> None:
    """Data parallel under torchrun: every rank steps with the mean of the ranks' gradients, so
    all hold one model.  (Scoring goes through ``model.score``, not ``forward``, which DDP's
    wrapper would need; fine-tuning is short, one flat all-reduce per step is enough.)"""
    # The parameters scoring leaves without a gradient (the pre-training heads) are the same on
    # every rank: they stay without one, as in a single process.
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= world
    i = 0
    for g in grads:
        g.copy_(flat[i:i + g.numel()].view_as(g))
        i += g.numel()


def finetune(cfg: Config, init: str, progress: bool = True) -> str:
    """Fine-tune from a pre-training checkpoint folder; returns the fine-tuned checkpoint path.

    Resumes like a pre-training stage: ``retrieval/last/`` is written every
    ``retrieval.ckpt_every`` steps, and the same command run again (same config, same
    ``init``) goes on from there; a finished run is not redone.  A ``last/`` of another run
    (another loss, say, or another starting checkpoint) is not resumed: that run starts from
    step 0 and replaces it."""
    rank, world, device = setup_dist()
    # Before anything is written: a batch that cannot fit was killed by the kernel mid-run.
    check_memory(cfg, 0, device, world, int(os.environ.get("LOCAL_WORLD_SIZE", world)),
                 loader_workers(cfg.data.num_workers, world, warn=False), task="finetune")
    out_dir = os.path.join(cfg.out_dir, "retrieval")
    os.makedirs(out_dir, exist_ok=True)
    with stage_lock(out_dir) if rank == 0 else contextlib.nullcontext():  # rank 0 writes the files
        return _finetune(cfg, init, progress, rank, world, device, out_dir)


def _resumable(last: str, init: str, cfg: Config) -> bool:
    """Whether ``last`` is a checkpoint of this very run: the same starting checkpoint and
    config, so its steps are this command's steps."""
    recover_checkpoint(last)
    try:
        with open(os.path.join(last, "state.json")) as f:
            state = json.load(f)
    except (OSError, ValueError):
        return False
    mine = json.loads(json.dumps(to_dict(cfg), default=str))  # as state.json holds it
    if state.get("init") == os.path.abspath(init) and state.get("config") == mine:
        return os.path.exists(os.path.join(last, "model.safetensors"))
    log.info("%s is of another fine-tuning run (another config or starting checkpoint): "
             "starting from step 0", last)
    return False


def _finetune(cfg: Config, init: str, progress: bool, rank: int, world: int, device, out_dir: str) -> str:
    r = cfg.retrieval
    torch.manual_seed(cfg.seed)
    model = ImageBERT(cfg).to(device)
    load_checkpoint(init, model)
    sched = StageConfig(steps=r.steps, lr=r.lr, min_lr=0.0, warmup_steps=r.warmup_steps, decay="linear")
    opt = torch.optim.AdamW(model.parameters(), lr=r.lr, weight_decay=0.01)
    last, path = os.path.join(out_dir, "last"), os.path.join(out_dir, "final")
    state = {"init": os.path.abspath(init), "loss_kind": r.loss, "config": to_dict(cfg)}
    start = 0
    if _resumable(last, init, cfg):
        start = load_checkpoint(last, model, [(opt, r.lr)])["step"]
        log.info("resuming fine-tuning from %s at step %d", last, start)
    if start >= r.steps:
        if rank == 0 and not os.path.exists(os.path.join(path, "model.safetensors")):
            save_checkpoint(path, model, (), {**state, "step": start})  # killed before final/
        log.info("fine-tuning already done (%d steps): %s", start, path)
        return path
    tok = tokenizer_for(cfg)
    # The stream's seed depends on the step it starts at, as in pre-training: a resumed run
    # does not replay the samples it already saw from the start.
    batches = iter(make_loader(cfg, r.shards, r.batch_size, tok, rank, world, seed=cfg.seed + 99 + start,
                               collator=RetrievalCollator))
    amp = (torch.autocast("cuda", dtype=torch.bfloat16)
           if device.type == "cuda" and cfg.precision == "bf16" else contextlib.nullcontext())
    if rank == 0:  # the records of the run that writes retrieval/final, up to where it resumes
        trim_metrics(os.path.join(out_dir, "metrics.jsonl"), start)
    P = 1 + r.negatives
    model.train()
    t0 = time.time()
    with open(os.path.join(out_dir, "metrics.jsonl"), "a") if rank == 0 else contextlib.nullcontext() as mf:
        for step in range(start, r.steps):
            for g in opt.param_groups:
                g["lr"] = lr_at(step, sched)
            cpu = next(batches)
            pop_bad_samples(cpu, {})
            batch = {k: v.to(device) for k, v in cpu.items()}
            with amp:
                scores = model.score(batch).float().view(-1, P)
            loss = retrieval_loss(scores, r.loss, r.margin)
            loss.backward()
            if world > 1:
                average_gradients(model, world)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            done = step + 1
            if rank == 0 and (done % 10 == 0 or done == r.steps):
                rec = {"step": done, "loss": float(loss.detach()), "acc": float((scores.detach().argmax(1) == 0).float().mean()),
                       "pairs_per_s": (done - start) * r.batch_size / (time.time() - t0)}
                mf.write(json.dumps(rec) + "\n")
                mf.flush()
                if progress:
                    log.info("finetune %s", rec)
            if rank == 0 and (done % r.ckpt_every == 0 or done == r.steps):
                save_checkpoint(last, model, [(opt, r.lr)], {**state, "step": done})
    if rank == 0:
        save_checkpoint(path, model, (), {**state, "step": r.steps})  # eval names a model mismatch
    return path


@torch.no_grad()
def score_matrix(model: ImageBERT, samples: list[dict], cfg: Config, tok, device, rows: int = EVAL_ROWS) -> torch.Tensor:
    """S[i, j] = score of image i with caption j, for all pairs."""
    model.eval()
    col = RetrievalCollator(cfg, tok, 0)
    n = len(samples)
    pairs = np.array([(i, j) for i in range(n) for j in range(n)])
    out = torch.empty(n * n)
    amp = (torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext())
    for s in range(0, len(pairs), rows):
        p = pairs[s:s + rows]
        match = np.ones(len(p), dtype=bool)
        batch = col._text(samples, p[:, 1], match)
        batch.update(col._visual(samples, p[:, 0], match))
        batch = {k: v.to(device) for k, v in batch.items()}
        with amp:
            out[s:s + len(p)] = model.score(batch).float().cpu()
    return out.view(n, n)


def hits_at_k(S: torch.Tensor, captions: list[str], ks=(1, 5, 10)) -> dict:
    """Per query, whether a correct item is among the top K, both ways: ``{("i2t", k): bool
    tensor over images, ("t2i", k): over captions}``; correct = same caption text as the
    image's own.  recall_at_k averages them; a caller may average over a subset of queries."""
    n = len(captions)
    same = torch.tensor([[captions[i] == captions[j] for j in range(n)] for i in range(n)])
    i2t = S.argsort(1, descending=True)      # per image, captions best first
    t2i = S.argsort(0, descending=True).T    # per caption, images best first
    out = {}
    for k in ks:
        kk = min(k, n)
        out["i2t", k] = same.gather(1, i2t[:, :kk]).any(1)
        out["t2i", k] = same.gather(1, t2i[:, :kk]).any(1)
    return out


def recall_at_k(S: torch.Tensor, captions: list[str], ks=(1, 5, 10)) -> dict:
    """R@K both ways from a score matrix; correct = same caption text as the image's own."""
    return {f"{d}_R@{k}": float(h.float().mean()) for (d, k), h in hits_at_k(S, captions, ks).items()}


def chance_at_k(captions: list[str], ks=(1, 5, 10)) -> dict:
    """Expected R@K of a random ranking, duplicate-aware: an item whose caption text occurs c
    times among N is hit at K with probability 1 - C(N-c, K) / C(N, K). The same both ways
    (an image has c correct captions; a caption has c correct images)."""
    from collections import Counter
    from math import comb
    n = len(captions)
    count = Counter(captions)
    out = {}
    for k in ks:
        kk = min(k, n)
        out[f"chance_R@{k}"] = float(np.mean([1 - comb(n - count[c], kk) / comb(n, kk) for c in captions]))
    return out


def evaluate(cfg: Config, checkpoint: str, shards: str | None = None, n: int | None = None,
             device: str | None = None, seed: int | None = None) -> dict:
    """Load a checkpoint (pre-trained = zero-shot, or fine-tuned) and report R@1/5/10 on `n`
    test samples drawn at random with `seed` (default cfg.seed), with the chance levels."""
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    # Before the samples are read: too many test pairs (the n x n scores) were a kill mid-run.
    check_memory(cfg, 0, dev, task="eval", shards=shards, n=n)
    model = ImageBERT(cfg).to(dev)
    load_checkpoint(checkpoint, model)
    tok = tokenizer_for(cfg)
    seed = cfg.seed if seed is None else seed
    spec = shards or cfg.retrieval.eval_shards
    asked = n or cfg.retrieval.eval_size
    samples = read_samples(spec, cfg, tok, sample=asked, seed=seed)
    if 2 <= len(samples) < asked:  # R@K and chance depend on n: say it is not the n asked
        log.warning("%s: %d test pairs asked (--n / retrieval.eval_size), %d usable there: scored "
                    "on %d, not comparable with a %d-pair figure", spec, asked, len(samples),
                    len(samples), asked)
    if len(samples) < 2:
        # a user's input, not a bug: one line, exit 2 (the warnings above say why each went)
        raise ConfigError(f"{spec}: need at least 2 usable evaluation samples, got "
                          f"{len(samples)} (evaluation reads the shards `lait features` "
                          "writes, with <key>.regions.npz)")
    t0 = time.time()
    S = score_matrix(model, samples, cfg, tok, dev)
    captions = [tok.decode(s["ids"]) for s in samples]
    res = recall_at_k(S, captions)
    res.update(chance_at_k(captions))
    res.update(n=len(samples), distinct_captions=len(set(captions)), sample_seed=seed,
               checkpoint=checkpoint, seconds=round(time.time() - t0, 2))
    return res
