"""The memory pre-flight check of `lait train`: an estimate of a stage's peak memory from its
config, checked against what the machine has free before anything is written.

Without it, the BERT-base config at batch 48 on a 24 GB CPU machine trained for a while and
was then killed by the kernel at 22 GB resident (no message, no checkpoint).  The estimate adds
up what a training step keeps alive at its peak, in bytes:

- the model state: fp32 weights, their gradients and AdamW's two moments (16 bytes a
  parameter; the parameters are counted on torch's meta device, nothing is allocated), and the
  larger of the activations and a checkpoint's host copies (written after the backward);
- the activations autograd keeps for the backward: per token and layer of each pass (the 3B
  joint rows of the ITM negatives, the B text-only and B image-only rows of ITC) the tensors a
  post-LN BERT layer saves (``ACT_H`` bytes per hidden unit, ``ACT_I`` per FFN unit, and
  ``ACT_ATTN`` per attention score when dropout runs SDPA's unfused path), the embeddings, and
  the MLM / MOC / MRFR heads on the masked positions; every text at its full length;
- the batch tensors (the region features twice: inputs and MRFR targets), two alive at once,
  and the DataLoader's prefetched ones;
- the shuffle buffers of decoded samples (region features in their stored dtype: float16 from
  `lait features`, 2 bytes a value; float32 otherwise), bounded by the shards' own size: a
  buffer never holds more than the decoded data;
- the process as it is when the check runs (torch loaded), and ``RUNTIME`` for what the run
  loads next (tokenizer, webdataset, allocator slack); each DataLoader worker ``WORKER``.

``SCALE`` and the constants were read once off measured peak RSS (bench/train_memory.py,
docs/trainer.md "Memory pre-flight check").  The check refuses a stage only when the estimate
times ``LOW`` (the smallest measured / estimate ratio seen) still exceeds the free memory, so
a config that ran in calibration is never refused on a machine that ran it.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from .config import Config, ConfigError

log = logging.getLogger(__name__)

GB = 1e9
# Bytes autograd keeps per token per layer (fp32; dropout masks one byte):
#   per hidden unit: the layer input, Q K V, the attention output, two dropout masks, both
#   LayerNorm inputs and the first one's output: 4 + 12 + 4 + 1 + 1 + 4 + 4 + 4 = 34;
#   per FFN unit: the GELU's input and output, 8;  per attention score (heads x L per token)
#   with dropout on the CPU, where SDPA takes its unfused path: the theory's softmax output,
#   mask and dropped probabilities are 9, but 26.3 was measured (the masked scores and the
#   softmax's own copies are kept too); the fused kernels (no dropout, or CUDA) keep none.
ACT_H, ACT_I, ACT_ATTN = 34, 8, 26.3
EMB_H = 16        # per token: embedding sum, LayerNorm in/out, dropout mask
HEAD_VOCAB = 12   # per masked token and vocabulary entry: logits, log-softmax, their gradient
SCALE = 0.98      # measured / theoretical activations (calibration: the theory held)
RUNTIME = 0.14 * GB  # what the run loads after the check (calibration)
WORKER = 0.3 * GB   # a DataLoader worker process's own pages (forked: the rest is shared)
SAMPLE_OVERHEAD = 2048  # a decoded sample's dict, token list and array headers
LOW = 0.94        # smallest measured / estimate over the calibration runs (refusal margin)
WARN_AT = 0.9     # warn when the estimate is over this share of the free memory


@dataclass
class Estimate:
    """A stage's peak memory, in bytes, by part; ``device`` is what ``total`` is checked on."""
    parts: dict[str, float] = field(default_factory=dict)
    host: dict[str, float] = field(default_factory=dict)   # host parts of a CUDA run
    params: int = 0

    @property
    def total(self) -> float:
        return sum(self.parts.values())

    def describe(self) -> str:
        return ", ".join(f"{k} {v / GB:.2f}" for k, v in self.parts.items() if v >= 0.005 * GB)


def count_parameters(cfg: Config) -> tuple[int, int]:
    """(all, trainable) parameters of the model this config builds, on the meta device."""
    import torch

    from .pretrain import ImageBERT
    with torch.device("meta"):
        model = ImageBERT(cfg)
    return (sum(p.numel() for p in model.parameters()),
            sum(p.numel() for p in model.parameters() if p.requires_grad))


def activation_bytes(cfg: Config, batch: int, act_bytes: float = 4.0,
                     fused_attention: bool = False) -> dict[str, float]:
    """The activations of one micro-batch of ``batch`` pairs, by part (``act_bytes``: 4 in
    fp32; the float parts halve under bf16 autocast; ``fused_attention``: CUDA's SDPA kernels
    keep no attention matrix, with or without dropout)."""
    m, d, p = cfg.model, cfg.data, cfg.pretrain
    f = act_bytes / 4.0
    T, V = cfg.text_len(), cfg.num_visual_tokens()
    paired = p.itm and batch > 1
    n_joint = batch * (1 + int(p.neg_text) + int(p.neg_image)) if paired else batch
    passes = [(n_joint, T + V)]
    if p.itc_weight and batch > 1:
        passes += [(batch, T), (batch, 1 + V)]
    attn = ACT_ATTN if m.dropout > 0 and not fused_attention else 0
    enc = emb = 0.0
    for rows, L in passes:
        per_token = f * (ACT_H * m.hidden + ACT_I * m.intermediate) + attn * f * m.heads * L
        enc += rows * L * m.layers * per_token
        emb += rows * L * EMB_H * f * m.hidden
    masked_text = p.mlm_prob * batch * T          # matched rows only (the conditional mask)
    masked_regions = p.moc_prob * batch * V if m.visual == "regions" else 0.0
    heads = masked_text * (HEAD_VOCAB * f * m.vocab_size + 16 * f * m.hidden)
    if p.moc_weight:
        heads += masked_regions * (HEAD_VOCAB * f * m.num_object_classes + 16 * f * m.hidden)
    if p.mrfr_weight:
        heads += masked_regions * (3 * 4 * m.region_dim + 16 * f * m.hidden)
    return {"activations": SCALE * (enc + emb), "heads": SCALE * heads}


def batch_bytes(cfg: Config, batch: int) -> float:
    """One collated batch: region features and MRFR targets (fp32), boxes, ids and masks."""
    m, p = cfg.model, cfg.pretrain
    n = batch * (1 + int(p.neg_text) + int(p.neg_image)) if p.itm and batch > 1 else batch
    V = cfg.num_visual_tokens()
    if m.visual == "pixels":
        return n * 3 * m.image_size ** 2 * 4.0
    return n * (V * (2 * 4 * m.region_dim + 5 * 4 + 8 + 8 + 2) + cfg.text_len() * 8 * 3)


def sample_bytes(cfg: Config, feature_bytes: int = 2) -> float:
    """A decoded sample in a shuffle buffer: regions with ``feature_bytes`` a feature value
    (their stored dtype: 2 for float16, 4 otherwise; data.decode_sample), or a uint8 image."""
    m = cfg.model
    if m.visual == "pixels":
        return 3 * m.image_size ** 2 + SAMPLE_OVERHEAD
    return cfg.data.max_regions * (feature_bytes * m.region_dim + 5 * 4 + 8) + SAMPLE_OVERHEAD


def feature_bytes(spec: str) -> int:
    """Bytes a region feature value takes in the shuffle buffer: 2 when the first shard's first
    regions.npz holds float16 (kept as stored), else 4 (decoded to float32); 2 when none can
    be read (the loader says why)."""
    import io
    import tarfile

    import numpy as np

    from .data import list_shards
    try:
        with tarfile.open(list_shards(spec)[0]) as tar:
            for member in tar:
                if member.name.endswith(".regions.npz"):
                    with np.load(io.BytesIO(tar.extractfile(member).read())) as z:
                        return 2 if z["features"].dtype == np.float16 else 4
    except (ConfigError, OSError, tarfile.TarError, ValueError, KeyError):
        pass
    return 2


def shards_bytes(spec: str) -> float | None:
    """The shards' size on disk, or None when they cannot be listed (the loader says why)."""
    from .data import list_shards
    try:
        return float(sum(os.path.getsize(s) for s in list_shards(spec)))
    except (ConfigError, OSError):
        return None


def estimate(cfg: Config, stage: int, workers: int = 0, world: int = 1, cuda: bool = False,
             process_bytes: float = 0.0, data_bytes: float | None = None,
             feature_bytes: int = 2) -> Estimate:
    """The peak memory of one rank of stage ``stage``: on the CPU (``parts``) or, with
    ``cuda``, on the GPU (``parts``: state + bf16 activations) and the host (``host``);
    ``feature_bytes``: a region feature value in the shuffle buffer (see `feature_bytes`)."""
    s = cfg.stage(stage)
    n_all, n_train = count_parameters(cfg)
    state = 4.0 * n_all + 12.0 * n_train            # weights; gradients + AdamW moments
    amp = cuda and cfg.precision == "bf16"
    act = activation_bytes(cfg, s.batch_size, 2.0 if amp else 4.0, fused_attention=cuda)
    ckpt = 4.0 * n_all + 8.0 * n_train               # host copies while a checkpoint is written
    one = batch_bytes(cfg, s.batch_size)
    readers = max(1, workers)
    one_sample = sample_bytes(cfg, feature_bytes)
    buffered = readers * cfg.data.shuffle_buffer * one_sample
    if data_bytes is not None:  # float16 stays float16, float32 float32: at most the shards
        buffered = min(buffered, data_bytes / max(1, world) + readers * one_sample)
    loader = buffered + workers * (WORKER + 4 * one)  # prefetch_factor 4 per worker
    est = Estimate(params=n_all)
    if cuda:
        est.parts = {"model and AdamW": state, **act, "batch": 2 * one}
        est.host = {"process": process_bytes + RUNTIME, "checkpoint copies": ckpt,
                    "data loader": loader}
    else:
        # A checkpoint is written after the backward, when the activations are freed.
        est.parts = {"process": process_bytes + RUNTIME, "model and AdamW": state,
                     **act, "checkpoint copies": max(0.0, ckpt - act["activations"]),
                     "batches": 2 * one, "data loader": loader}
    return est


def mem_available() -> float | None:
    """MemAvailable of /proc/meminfo in bytes (None where there is none: not Linux)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def process_rss() -> float:
    """This process's resident memory now (what the estimate starts from)."""
    try:
        with open("/proc/self/statm") as f:
            return float(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0.0


def fitting_batch(cfg: Config, stage: int, budget: float, **kw) -> int:
    """The largest batch size whose estimate (times LOW) fits ``budget`` bytes (0: none)."""
    import copy
    c = copy.deepcopy(cfg)
    lo, hi = 0, cfg.stage(stage).batch_size
    while lo < hi:  # the estimate grows with the batch
        mid = (lo + hi + 1) // 2
        c.stages[stage].batch_size = mid
        if LOW * estimate(c, stage, **kw).total <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def check_memory(cfg: Config, stage: int, device, world: int = 1, local_ranks: int = 1,
                 workers: int = 0) -> Estimate | None:
    """Refuse a stage (ConfigError: one line, exit 2) whose estimated peak memory cannot fit
    the memory free on ``device`` (and, on CUDA, the host's for the loader); warn when it is
    close.  ``memory_check: false`` in the config skips it."""
    if not cfg.memory_check:
        return None
    s = cfg.stage(stage)
    cuda = getattr(device, "type", str(device)) == "cuda"
    rss = process_rss()
    kw = dict(workers=workers, world=world, cuda=cuda, data_bytes=shards_bytes(s.shards),
              process_bytes=rss, feature_bytes=feature_bytes(s.shards))
    est = estimate(cfg, stage, **kw)
    avail = mem_available()
    # The ranks of this host share its memory; each checks its own share.
    host_where = ("this machine has {gb} GB available (MemAvailable)" if local_ranks <= 1 else
                  f"each of the {local_ranks} ranks on this machine has {{gb}} GB (MemAvailable / "
                  f"{local_ranks})")
    host_budget = avail / max(1, local_ranks) if avail is not None else None
    checks = []  # (what, need, budget, where, fits)
    if cuda:
        import torch
        free, _ = torch.cuda.mem_get_info(device)
        checks.append(("GPU memory", est.total, float(free), f"{device} has {{gb}} GB free", None))
        if host_budget is not None:  # shuffle buffers and workers live on the host
            checks.append(("host memory", sum(est.host.values()) - rss, host_budget, host_where, None))
    elif host_budget is not None:
        # What is already resident is not in MemAvailable: compare the growth to come.
        fits = lambda: fitting_batch(cfg, stage, host_budget + LOW * rss, **kw)  # noqa: E731
        checks.append(("memory", est.total - rss, host_budget, host_where, fits))
    for what, need, budget, where, fits in checks:
        where = where.format(gb=f"{budget / GB:.1f}")
        log.info("%s: stage %d at batch %d needs about %.2f GB more (%s GB; %s params); %s",
                 what, stage, s.batch_size, need / GB, est.describe(), f"{est.params:,}", where)
        if LOW * need > budget:
            n = fits() if fits else 0
            hint = f"a smaller stages.{stage}.batch_size"
            if n:  # the same pairs per optimiser step, in micro-batches that fit
                pairs = s.batch_size * s.grad_accum
                accum = -(-pairs // n)
                hint = (f"--set stages.{stage}.batch_size={-(-pairs // accum)} --set "
                        f"stages.{stage}.grad_accum={accum} (the same {pairs} pairs a step)")
            raise ConfigError(
                f"stage {stage} needs about {need / GB:.1f} GB of {what} at stages.{stage}."
                f"batch_size={s.batch_size} but {where}: it would be killed for memory mid-run; "
                f"try {hint}, or --set memory_check=false to start anyway (estimate, GB: "
                f"{est.describe()})")
        if need > WARN_AT * budget:
            log.warning("stage %d at stages.%d.batch_size=%d needs about %.1f GB of %s, close to "
                        "what %s: it may be killed for memory", stage, stage, s.batch_size,
                        need / GB, what, where)
    return est
