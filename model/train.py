"""Multi-stage pre-training loop: `lait train --config C --stage N`.

Straight-line, nanoGPT-style: build the model, pick the starting weights (BERT for stage 1,
the previous stage's final checkpoint for stage 2, or this stage's own last checkpoint when
resuming), then step. bf16 autocast on GPU, DDP under torchrun, gradient accumulation,
warmup + decay, checkpoints as safetensors + JSON (checkpoints.py), metrics as JSON lines.

Layout under cfg.out_dir:  stage1/last/  stage1/final/  stage1/metrics.jsonl  stage2/...
"""
from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import shutil
import time

import torch
import torch.distributed as dist
from tqdm import tqdm

from .checkpoints import (load_checkpoint, load_optimizers, recover_checkpoint, save_checkpoint,
                          stage_lock, trim_metrics)
from .config import Config, ConfigError, StageConfig, to_dict
from .data import tokenizer_for
from .memory import check_memory
from .stream import loader_workers, make_loader, pop_bad_samples
from .monitor import PriorWatch, ValidationITM
from .pretrain import ImageBERT, count_params

log = logging.getLogger(__name__)


def lr_at(step: int, s: StageConfig, base_lr: float | None = None) -> float:
    """Linear warmup to the peak, then linear / cosine decay to min_lr (or constant)."""
    peak = s.lr if base_lr is None else base_lr
    floor = s.min_lr * peak / s.lr if s.lr else 0.0
    if step < s.warmup_steps:
        return peak * (step + 1) / s.warmup_steps
    if s.decay == "constant":
        return peak
    t = min(1.0, (step - s.warmup_steps) / max(1, s.steps - s.warmup_steps))
    k = 1.0 - t if s.decay == "linear" else 0.5 * (1.0 + math.cos(math.pi * t))
    return floor + (peak - floor) * k


# --- distributed -------------------------------------------------------------------------------

def setup_dist() -> tuple[int, int, torch.device]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    rank = dist.get_rank() if dist.is_initialized() else 0
    if torch.cuda.is_available():
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        return rank, world, torch.device("cuda", local)
    return rank, world, torch.device("cpu")


# --- optimisers --------------------------------------------------------------------------------

def build_optimizers(model: ImageBERT, s: StageConfig) -> list[tuple[torch.optim.Optimizer, float]]:
    """AdamW for the Transformer (no decay on biases / LayerNorm); Pixel-BERT's CNN gets its own
    SGD (lr 1e-2, wd 5e-4 in the paper). Returns (optimiser, peak lr) pairs."""
    cnn = {id(p) for p in model.pixels.parameters()} if model.pixels is not None else set()
    decay, no_decay, cnn_params = [], [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if id(p) in cnn:
            cnn_params.append(p)
        elif p.dim() < 2 or ".ln" in name or name.endswith(".bias"):
            no_decay.append(p)
        else:
            decay.append(p)
    fused = torch.cuda.is_available() and next(model.parameters()).is_cuda
    opts = [(torch.optim.AdamW([{"params": decay, "weight_decay": s.weight_decay},
                                {"params": no_decay, "weight_decay": 0.0}],
                               lr=s.lr, betas=tuple(s.betas), fused=fused), s.lr)]
    if cnn_params:
        opts.append((torch.optim.SGD(cnn_params, lr=s.cnn_lr, momentum=0.9,
                                     weight_decay=s.cnn_weight_decay), s.cnn_lr))
    return opts


# --- the loop ----------------------------------------------------------------------------------

def _has_unused(cfg: Config) -> bool:
    """Whether some parameters get no gradient in some steps (DDP must then look for them)."""
    p = cfg.pretrain
    regions = cfg.model.visual == "regions"
    return p.text_only_ratio > 0 or not p.itm or (regions and not (p.moc_weight and p.mrfr_weight))


def stage_dir(cfg: Config, stage: int) -> str:
    return os.path.join(cfg.out_dir, f"stage{stage}")


def latest_checkpoint(cfg: Config, option: str = "--checkpoint") -> str:
    """The final checkpoint of the last configured stage that has one (stage 2 if it ran,
    else stage 1, ...). Fails with the folders it looked in when none exists, and the
    command's ``option`` that gives a checkpoint instead (finetune's is --init)."""
    looked, unfinished = [], []
    for n in sorted(cfg.stages, reverse=True):
        path = os.path.join(stage_dir(cfg, n), "final")
        if os.path.exists(os.path.join(path, "model.safetensors")):
            for sdir in unfinished:  # else eval scores stage 1 while the user thinks of stage 2
                log.warning("%s has no final checkpoint (its run failed or has not finished: "
                            "`lait train --stage %s` resumes it): using %s", sdir,
                            sdir.rsplit("stage", 1)[-1], path)
            return path
        looked.append(path)
        if os.path.isdir(stage_dir(cfg, n)):
            unfinished.append(stage_dir(cfg, n))
    raise ConfigError(f"no pre-training checkpoint: none of {', '.join(looked)} exists; run "
                      f"`lait train --stage {min(cfg.stages) if cfg.stages else 1}` first or pass {option}")


def train(cfg: Config, stage: int, progress: bool = True) -> dict:
    """Run (or resume) one pre-training stage; returns the last logged metrics."""
    cfg.stage(stage)
    rank, world, device = setup_dist()
    # Before anything is written: a stage that cannot fit was killed by the kernel mid-run.
    local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    check_memory(cfg, stage, device, world, local,
                 loader_workers(cfg.data.num_workers, world, warn=False))
    sdir = stage_dir(cfg, stage)
    fresh = not os.path.exists(sdir)
    os.makedirs(sdir, exist_ok=True)
    try:
        with stage_lock(sdir) if rank == 0 else contextlib.nullcontext():  # rank 0 writes the files
            return _train(cfg, stage, progress, rank, world, device)
    except BaseException:
        if rank == 0 and fresh:
            _remove_if_unwritten(sdir)
        raise


def _remove_if_unwritten(sdir: str) -> None:
    """Remove the stage folder a failed run made (no starting checkpoint, bad shards) while it
    holds nothing but the lock and an empty metrics.jsonl: left there, it looked like a stage
    that had run.  A folder with a checkpoint or logged steps stays (the rerun resumes it)."""
    names = set(os.listdir(sdir))
    metrics = os.path.join(sdir, "metrics.jsonl")
    if names <= {".lock", "metrics.jsonl"} and not (
            "metrics.jsonl" in names and os.path.getsize(metrics)):
        shutil.rmtree(sdir, ignore_errors=True)


def _train(cfg: Config, stage: int, progress: bool, rank: int, world: int, device: torch.device) -> dict:
    s = cfg.stage(stage)
    torch.manual_seed(cfg.seed + rank)
    sdir = stage_dir(cfg, stage)

    model = ImageBERT(cfg).to(device)
    opts = build_optimizers(model, s)
    last = os.path.join(sdir, "last")
    recover_checkpoint(last)
    start = 0
    if os.path.exists(os.path.join(last, "model.safetensors")):
        resumed = load_checkpoint(last, model, opts)
        start = resumed["step"]
        log.info("resuming stage %d from %s at step %d", stage, last, start)
    elif stage == min(cfg.stages):
        missing = model.init_pretrained()
        if missing and cfg.model.init_from:
            log.info("random init for: %s", sorted({k.split('.')[0] + '.' + k.split('.')[1] for k in missing}))
    else:
        src = s.init_from or os.path.join(stage_dir(cfg, max(n for n in cfg.stages if n < stage)), "final")
        if not os.path.exists(os.path.join(src, "model.safetensors")):
            raise ConfigError(f"stage {stage} starts from {src}, which has no checkpoint: run the earlier stage first")
        load_checkpoint(src, model)
        log.info("stage %d starts from %s", stage, src)
        if s.carry_optimizer:
            # AdamW's moments and step count go on from the previous stage's end (its last/
            # checkpoint is written at its final step), so there is no fresh-state restart.
            prev = max(n for n in cfg.stages if n < stage)
            plast = os.path.join(stage_dir(cfg, prev), "last")
            with open(os.path.join(plast, "state.json")) as f:
                pstate = json.load(f)
            if pstate.get("step") != cfg.stage(prev).steps:
                raise ConfigError(f"stage {stage} carries the optimiser of {plast}, which is at step "
                                  f"{pstate.get('step')}, not stage {prev}'s last ({cfg.stage(prev).steps})")
            load_optimizers(plast, opts, pstate, keep_hyper=True)
            log.info("stage %d carries the optimiser state of %s", stage, plast)
    if start > s.steps:
        # Else "already done" with the longer run's weights, exit 0, for a shorter stage asked.
        raise ConfigError(f"stage {stage}: {last} is at step {start}, past stages.{stage}.steps "
                          f"({s.steps}): this out_dir holds a longer run; use another out_dir "
                          f"or stages.{stage}.steps >= {start}")
    if start >= s.steps:
        final = os.path.join(sdir, "final")
        if rank == 0 and not os.path.exists(os.path.join(final, "model.safetensors")):
            # Killed after last/ was written at the final step but before final/: last/ holds
            # the final weights.  Without this the stage said "done" and the next stage (or
            # `lait eval`) found no final checkpoint, for ever.
            save_checkpoint(final, model, (), {k: v for k, v in resumed.items() if k != "optimizers"})
            log.info("stage %d: wrote %s from %s (the run was stopped before it)", stage, final, last)
        log.info("stage %d already done (%d steps)", stage, start)
        return {"step": start}

    raw = model
    raw.match_keep = s.match_keep
    if cfg.compile and device.type == "cuda":
        model = torch.compile(model)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None,
            find_unused_parameters=_has_unused(cfg))
    tok = tokenizer_for(cfg)
    loader = make_loader(cfg, s.shards, s.batch_size, tok, rank, world,
                         seed=cfg.seed + 10007 * stage + start, pin=device.type == "cuda")
    val = ValidationITM(cfg, tok, s.val_shards, s.val_size, s.batch_size, cfg.seed) \
        if s.val_shards and cfg.pretrain.itm and rank == 0 else None
    p = cfg.pretrain
    # match_keep < 1 drops that share of positive rows from ITM: the prior moves with it
    watch = PriorWatch(s.match_keep / (s.match_keep + int(p.neg_text) + int(p.neg_image)),
                       itc_weight=p.itc_weight, warmup_steps=s.warmup_steps)
    batches = iter(loader)
    amp = (torch.autocast("cuda", dtype=torch.bfloat16)
           if device.type == "cuda" and cfg.precision == "bf16" else contextlib.nullcontext())

    bar = None
    if progress and rank == 0:
        bar = tqdm(total=s.steps, initial=start, desc=f"stage {stage}", dynamic_ncols=True)
    if rank == 0:
        trim_metrics(os.path.join(sdir, "metrics.jsonl"), start)
    metrics_f = open(os.path.join(sdir, "metrics.jsonl"), "a") if rank == 0 else None
    sums: dict[str, float] = {}
    skipped: dict[int, int] = {}  # reader -> bad samples it skipped (this run)
    n_pairs = n_tokens = n_logged = 0
    t0 = time.time()
    record: dict = {}
    model.train()
    for step in range(start, s.steps):
        for opt, peak in opts:
            for g in opt.param_groups:
                g["lr"] = lr_at(step, s, peak)
        for micro in range(s.grad_accum):
            cpu = next(batches)
            pop_bad_samples(cpu, skipped)
            # Counted on the host copy: no GPU sync in the step.
            n_pairs += int((cpu["itm_labels"] > 0).sum()) if "itm_labels" in cpu else cpu["input_ids"].shape[0]
            n_tokens += int(cpu["text_mask"].sum()) + int(cpu["vis_mask"].sum() if "vis_mask" in cpu else 0)
            batch = {k: v.to(device, non_blocking=True) for k, v in cpu.items()}
            sync = micro == s.grad_accum - 1 or world == 1
            with (contextlib.nullcontext() if sync else model.no_sync()), amp:
                out = model(batch)
            (out["loss"] / s.grad_accum).backward()
            for k, v in out.items():
                sums[k] = sums.get(k, 0.0) + v.detach().float()  # stays on device until logged
            n_logged += 1
        if s.grad_clip:
            torch.nn.utils.clip_grad_norm_(raw.parameters(), s.grad_clip)
        for opt, _ in opts:
            opt.step()
            opt.zero_grad(set_to_none=True)

        done = step + 1
        if done % s.log_every == 0 or done == s.steps:
            dt = max(time.time() - t0, 1e-9)
            vals = torch.tensor([float(sums[k]) / n_logged for k in sorted(sums)]
                                + [n_pairs / dt, n_tokens / dt, float(sum(skipped.values()))])
            if world > 1 and device.type == "cuda":
                vals = vals.to(device)
            if world > 1:
                dist.all_reduce(vals)
                vals[:-3] /= world  # means of the ranks; rates and skips add up
            names = sorted(sums) + ["samples_per_s", "tokens_per_s", "bad_samples"]
            record = {"stage": stage, "step": done, "lr": lr_at(step, s), **dict(zip(names, vals.cpu().tolist()))}
            record["bad_samples"] = int(record["bad_samples"])
            if val is not None and (done % s.val_every == 0 or done == s.steps):
                record.update(val(raw, device))
            record["itm_stuck"] = watch.update(record)
            if metrics_f:
                metrics_f.write(json.dumps(record) + "\n")
                metrics_f.flush()
            if bar:
                bar.set_postfix({k: f"{record[k]:.3g}" for k in ("loss", "mlm", "moc", "mrfr", "itm", "itc", "val_itm_auc", "samples_per_s")
                                 if k in record})
            sums, n_pairs, n_tokens, n_logged, t0 = {}, 0, 0, 0, time.time()
        if bar:
            bar.update(1)
        if rank == 0 and (done % s.ckpt_every == 0 or done == s.steps):
            state = {"step": done, "stage": stage, "config": to_dict(cfg), "metrics": record}
            save_checkpoint(last, raw, opts, state)
            if done == s.steps:
                save_checkpoint(os.path.join(sdir, "final"), raw, (), state)
    if bar:
        bar.close()
    if metrics_f:
        metrics_f.close()
    if world > 1:
        dist.barrier()
    if rank == 0:
        log.info("stage %d done: %s params, %s", stage, f"{count_params(raw):,}", record)
    return record
