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
- Pixel-BERT (``model.visual: pixels``): the CNN's activations, counted off the network itself
  on the meta device (`pixel_path`: what autograd saves for one image, or under no_grad the
  largest layer's input + output; in training with that layer's gradients too), times the
  distinct images it runs on in a step (once each: the ITM negatives and ITC gather from the
  same map), plus each row's gathered tokens; a buffered image decoded, not its JPEG's
  bytes; and the visual tokens
  it really yields, not ``pixel_sample`` (docs/trainer.md "Pixel-BERT's CNN in the memory
  check");
- the process as it is when the check runs (torch loaded), and ``RUNTIME`` for what the run
  loads next (tokenizer, webdataset, allocator slack); each DataLoader worker ``WORKER``.

``SCALE`` and the constants were read once off measured peak RSS (bench/train_memory.py,
docs/trainer.md "Memory pre-flight check").  The check refuses a stage only when the estimate
times ``LOW`` (the smallest measured / estimate ratio seen) still exceeds the free memory, so
a config that ran in calibration is never refused on a machine that ran it.

The same estimate serves `lait finetune` (``task="finetune"``: it trains, with AdamW, on B x
(1 + negatives) scored rows and no pre-training heads) and `lait eval` (``task="eval"``:
inference, so weights only and one layer's working set of a scoring pass; plus the test
samples it holds and the n x n score matrix it ranks); docs/trainer.md "Memory check for
`lait finetune` and `lait eval`".
"""
from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass, field

from .config import Config, ConfigError, ModelConfig

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
CNN_SCALE = 1.0   # measured / counted CNN activations (qa16: the count as theory, not fitted)
LOW = 0.94        # smallest measured / estimate over the calibration runs (refusal margin)
WARN_AT = 0.9     # warn when the estimate is over this share of the free memory
TASKS = ("train", "finetune", "eval")
EVAL_ROWS = 256   # pairs one scoring pass of `lait eval` takes (retrieval.score_matrix's rows)
# Bytes per image-caption pair while eval ranks: the float32 score, the same-caption nested
# list (a pointer each) and its bool tensor, and the two int64 argsorts (retrieval.hits_at_k).
RANK_BYTES = 4 + 8 + 1 + 16


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


@dataclass(frozen=True)
class PixelPath:
    """Pixel-BERT's CNN for one image of the configured size, counted on the meta device.
    Per image (the CNN runs once an image of a step, since speed3): ``saved`` the float bytes
    autograd keeps for the CNN's backward (fp32), ``saved_int`` the integer ones (the max-pool's
    indices), ``widest`` the largest input + output of one layer (alive at once under no_grad;
    in training their gradients, when the backward reaches that layer, beside the saved
    tensors of the layers under it), ``normalised`` the normalised image the encoder holds.
    Per row that reads the image's map (the joint rows with the ITM negatives, ITC's): ``row``
    the float bytes of its tokens (saved by the visual projection), ``row_int`` the integer
    ones its gather keeps (the row's index, the sampling's draw), ``eval_row`` its tokens in
    eval.  ``tokens`` / ``eval_tokens`` the visual tokens of a training / eval pass
    (min(pixel_sample, cells) / every cell of the pooled map)."""
    saved: float
    saved_int: float
    widest: float
    normalised: float
    tokens: int
    eval_tokens: int
    row: float = 0.0
    row_int: float = 0.0
    eval_row: float = 0.0

    def per_image(self, task: str, f: float = 1.0) -> float:
        """Bytes one image costs at the step's peak (``f``: the float parts' scale)."""
        if task == "eval":  # no_grad: one layer's tensors alive at a time
            return f * (self.widest + self.normalised)
        return f * (self.saved + self.widest) + self.saved_int

    def per_row(self, task: str, f: float = 1.0) -> float:
        """Bytes one row's use of an image's map costs (``f`` as above)."""
        if task == "eval":
            return f * self.eval_row
        return f * self.row + self.row_int


def pixel_path(m: ModelConfig) -> PixelPath:
    """`PixelPath` of ``m``'s backbone at ``m.image_size`` (cached: the check bisects)."""
    return _pixel_path(m.pixel_backbone, m.image_size, m.pixel_pool, m.pixel_sample)


@functools.lru_cache(maxsize=32)
def _pixel_path(backbone: str, size: int, pool: int, sample: int) -> PixelPath:
    import torch

    from .embeddings import PixelEncoder
    with torch.device("meta"):
        enc = PixelEncoder(ModelConfig(visual="pixels", pixel_backbone=backbone, image_size=size,
                                       pixel_pool=pool, pixel_sample=sample))
    own = list(enc.parameters()) + list(enc.buffers())  # in the model state, not per image
    kept: list = []

    def pack(t):  # each tensor once, by identity (a tensor saved twice is one tensor)
        if not any(t is o for o in own + kept):
            kept.append(t)
        return t
    image = torch.zeros(1, 3, size, size, device="meta")
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fmap = enc.train().feature_map(image)       # once an image
    nbytes = lambda ts: float(sum(t.numel() * t.element_size() for t in ts))  # noqa: E731
    saved = nbytes(t for t in kept if t.is_floating_point())
    saved_int = nbytes(t for t in kept if not t.is_floating_point())
    own += kept
    kept.clear()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):   # once a row
        feats, _ = enc.tokens(fmap, torch.zeros(1, dtype=torch.long, device="meta"))
    kept.append(feats)  # the visual projection's saved input
    # an expanded index is a view: count what it holds, not its shape
    held = lambda ts: float(sum(min(t.numel() * t.element_size(), t.untyped_storage().nbytes())  # noqa: E731
                                for t in ts))
    row = held(t for t in kept if t.is_floating_point())
    row_int = held(t for t in kept if not t.is_floating_point())
    widest = [0.0]

    def layer(mod, args, out):
        widest[0] = max(widest[0], nbytes([args[0], out]))
    hooks = [mod.register_forward_hook(layer) for mod in enc.modules() if not list(mod.children())]
    with torch.no_grad():
        eval_feats, _ = enc.eval()(image)
    for h in hooks:
        h.remove()
    normalised = nbytes([image]) if hasattr(enc.cnn, "normalize") else 0.0
    return PixelPath(saved, saved_int, widest[0], normalised, feats.shape[1], eval_feats.shape[1],
                     row, row_int, nbytes([eval_feats]))


def eval_images(n: int, rows: int) -> int:
    """The distinct images in one scoring pass of ``rows`` consecutive pairs of an n x n eval
    (pairs image-major: retrieval.score_matrix), which the CNN runs on once each."""
    return max(1, min(n, -(-rows // n) + 1))


def activation_bytes(cfg: Config, batch: int, act_bytes: float = 4.0,
                     fused_attention: bool = False, task: str = "train",
                     images: int | None = None) -> dict[str, float]:
    """The activations of one micro-batch of ``batch`` pairs, by part (``act_bytes``: 4 in
    fp32; the float parts halve under bf16 autocast; ``fused_attention``: CUDA's SDPA kernels
    keep no attention matrix, with or without dropout).  ``task`` "finetune": the scored
    rows only (1 + negatives a pair, the ITM logit); "eval": ``batch`` rows under no_grad, where
    autograd keeps nothing: one layer's tensors are alive at a time, and eval mode has no
    dropout, so SDPA keeps no attention matrix.  Pixel-BERT's CNN runs once per distinct
    image (``images``: eval's per scoring pass, `eval_images`; else the ``batch`` pairs'), and
    each row gathers its tokens from that image's map."""
    m, d, p = cfg.model, cfg.data, cfg.pretrain
    f = act_bytes / 4.0
    T, V = cfg.text_len(), cfg.num_visual_tokens()
    px = pixel_path(m) if m.visual == "pixels" else None
    if px is not None:  # the tokens the CNN yields (pixel_sample is an upper bound)
        V = (px.eval_tokens if task == "eval" else px.tokens) + int(m.global_image_token)
    layers = 1 if task == "eval" else m.layers
    if task == "train":
        paired = p.itm and batch > 1
        n_joint = batch * (1 + int(p.neg_text) + int(p.neg_image)) if paired else batch
        passes = [(n_joint, T + V)]
        uses = n_joint  # rows that read an image's map: the joint rows ...
        if p.itc_weight and batch > 1:
            passes += [(batch, T), (batch, 1 + V)]
            uses += batch  # ... and ITC's image-only rows, the B positives again
    else:
        passes = [(batch * (1 + cfg.retrieval.negatives) if task == "finetune" else batch, T + V)]
        uses = passes[0][0]
    if images is None:  # the CNN runs once per distinct image: the batch's pairs
        images = batch
    cnn = {"CNN activations": CNN_SCALE * (images * px.per_image(task, f) + uses * px.per_row(task, f))
           } if px is not None else {}
    attn = ACT_ATTN if m.dropout > 0 and not fused_attention and task != "eval" else 0
    enc = emb = 0.0
    for rows, L in passes:
        per_token = f * (ACT_H * m.hidden + ACT_I * m.intermediate) + attn * f * m.heads * L
        enc += rows * L * layers * per_token
        emb += rows * L * EMB_H * f * m.hidden
    if task == "eval" and px is not None:
        # no_grad: the CNN's layer tensors are freed before the Transformer runs, so the peak
        # is the larger stage; the part is what the CNN stage adds beyond the Transformer's
        # (whose stage holds every row's gathered tokens too).
        trans = SCALE * (enc + emb)
        stage = CNN_SCALE * max(images * px.per_image(task, f), uses * px.per_row(task, f) + trans)
        cnn = {"CNN activations": stage - trans}
    if task != "train":  # the ITM head on [CLS] only
        return {"activations": SCALE * (enc + emb), **cnn}
    masked_text = p.mlm_prob * batch * T          # matched rows only (the conditional mask)
    masked_regions = p.moc_prob * batch * V if m.visual == "regions" else 0.0
    heads = masked_text * (HEAD_VOCAB * f * m.vocab_size + 16 * f * m.hidden)
    if p.moc_weight:
        heads += masked_regions * (HEAD_VOCAB * f * m.num_object_classes + 16 * f * m.hidden)
    if p.mrfr_weight:
        heads += masked_regions * (3 * 4 * m.region_dim + 16 * f * m.hidden)
    return {"activations": SCALE * (enc + emb), "heads": SCALE * heads, **cnn}


def batch_bytes(cfg: Config, batch: int, task: str = "train", images: int | None = None) -> float:
    """One collated batch: region features and MRFR targets (fp32), boxes, ids and masks
    (``task`` as in `activation_bytes`: the rows a batch of ``batch`` has); Pixel-BERT's holds
    each distinct image once (``images``, default ``batch``) and the image of each row."""
    m, p = cfg.model, cfg.pretrain
    if task == "train":
        n = batch * (1 + int(p.neg_text) + int(p.neg_image)) if p.itm and batch > 1 else batch
    else:
        n = batch * (1 + cfg.retrieval.negatives) if task == "finetune" else batch
    V = cfg.num_visual_tokens()
    if m.visual == "pixels":
        return (batch if images is None else images) * 3 * m.image_size ** 2 * 4.0 + 8.0 * n
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


def count_samples(spec: str) -> int | None:
    """The samples in some shards (their .txt members, from the tar headers only: bad samples
    count too, so it is never below what eval can read), or None when they cannot be read
    (the reader says why)."""
    import tarfile

    from .data import list_shards
    try:
        n = 0
        for path in list_shards(spec):
            with tarfile.open(path) as tar:
                n += sum(1 for name in tar.getnames() if name.endswith(".txt"))
        return n
    except (ConfigError, OSError, tarfile.TarError):
        return None


def batch_size(cfg: Config, task: str, stage: int = 0) -> int:
    """What a task's memory grows with: a stage's batch, fine-tuning's, eval's test pairs."""
    if task == "train":
        return cfg.stage(stage).batch_size
    return cfg.retrieval.batch_size if task == "finetune" else cfg.retrieval.eval_size


def size_key(task: str, stage: int = 0) -> str:
    """The config key of `batch_size`."""
    return {"train": f"stages.{stage}.batch_size", "finetune": "retrieval.batch_size",
            "eval": "retrieval.eval_size"}[task]


def with_size(cfg: Config, task: str, stage: int, n: int) -> Config:
    """A copy of ``cfg`` with `batch_size` set to ``n``."""
    import copy
    c = copy.deepcopy(cfg)
    if task == "train":
        c.stages[stage].batch_size = n
    elif task == "finetune":
        c.retrieval.batch_size = n
    else:
        c.retrieval.eval_size = n
    return c


def decoded_bytes(cfg: Config, spec: str, samples: int | None) -> float | None:
    """What the shards of ``spec`` decode to at most (the shuffle buffers' and eval's bound):
    their bytes on disk for region features (kept in their stored dtype), ``samples`` decoded
    images in pixel mode (a JPEG decodes to far more than its bytes); None when unknown."""
    if cfg.model.visual == "pixels":
        return None if samples is None else samples * sample_bytes(cfg)
    return shards_bytes(spec)


def shards_bytes(spec: str) -> float | None:
    """The shards' size on disk, or None when they cannot be listed (the loader says why)."""
    from .data import list_shards
    try:
        return float(sum(os.path.getsize(s) for s in list_shards(spec)))
    except (ConfigError, OSError):
        return None


def estimate(cfg: Config, stage: int = 0, workers: int = 0, world: int = 1, cuda: bool = False,
             process_bytes: float = 0.0, data_bytes: float | None = None,
             feature_bytes: int = 2, task: str = "train", samples: int | None = None) -> Estimate:
    """The peak memory of one rank of stage ``stage`` (``task`` "train"), of retrieval
    fine-tuning ("finetune") or of retrieval evaluation ("eval": ``samples``, when known, caps
    the test pairs): on the CPU (``parts``) or, with ``cuda``, on the GPU (``parts``: state +
    bf16 activations) and the host (``host``); ``feature_bytes``: a region feature value in the
    shuffle buffer (see `feature_bytes`)."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    b = batch_size(cfg, task, stage)
    n_all, n_train = count_parameters(cfg)
    amp = cuda and cfg.precision == "bf16"
    one_sample = sample_bytes(cfg, feature_bytes)
    if task == "eval":
        return _inference(cfg, min(b, samples) if samples is not None else b, n_all, cuda,
                          process_bytes, data_bytes, one_sample)
    state = 4.0 * n_all + 12.0 * n_train            # weights; gradients + AdamW moments
    act = activation_bytes(cfg, b, 2.0 if amp else 4.0, fused_attention=cuda, task=task)
    ckpt = 4.0 * n_all + 8.0 * n_train               # host copies while a checkpoint is written
    one = batch_bytes(cfg, b, task)
    readers = max(1, workers)
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
                     **act, "checkpoint copies": max(0.0, ckpt - act["activations"]
                                                     - act.get("CNN activations", 0.0)),
                     "batches": 2 * one, "data loader": loader}
    return est


def _inference(cfg: Config, n: int, n_all: int, cuda: bool, process_bytes: float,
               data_bytes: float | None, one_sample: float) -> Estimate:
    """`lait eval` on ``n`` test pairs: the weights (no gradients, no optimizer state), one
    scoring pass of `EVAL_ROWS` pairs under no_grad, the n samples read (at most the shards'
    bytes) and the n x n scores it ranks."""
    rows = max(1, min(EVAL_ROWS, n * n))
    images = eval_images(n, rows)
    act = activation_bytes(cfg, rows, 2.0 if cuda else 4.0, fused_attention=cuda, task="eval",
                           images=images)
    held = n * one_sample
    if data_bytes is not None:
        held = min(held, data_bytes + one_sample)
    device = {"model": 4.0 * n_all, **act, "batches": 2 * batch_bytes(cfg, rows, "eval", images)}
    host = {"process": process_bytes + RUNTIME, "samples": held, "ranking": RANK_BYTES * n * n}
    est = Estimate(params=n_all)
    if cuda:
        est.parts, est.host = device, host
    else:
        est.parts = {**host, **device}
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


def fitting_batch(cfg: Config, stage: int, budget: float, task: str = "train", **kw) -> int:
    """The largest batch size (`batch_size` of ``task``) whose estimate (times LOW) fits
    ``budget`` bytes (0: none)."""
    lo, hi = 0, batch_size(cfg, task, stage)
    while lo < hi:  # the estimate grows with the batch
        mid = (lo + hi + 1) // 2
        if LOW * estimate(with_size(cfg, task, stage, mid), stage, task=task, **kw).total <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def check_memory(cfg: Config, stage: int, device, world: int = 1, local_ranks: int = 1,
                 workers: int = 0, task: str = "train", shards: str | None = None,
                 n: int | None = None) -> Estimate | None:
    """Refuse a stage (ConfigError: one line, exit 2) whose estimated peak memory cannot fit
    the memory free on ``device`` (and, on CUDA, the host's for the loader); warn when it is
    close.  ``task`` "finetune" checks `lait finetune` (``stage`` unused), "eval" `lait eval`
    on ``n`` test pairs (default retrieval.eval_size) of ``shards`` (default
    retrieval.eval_shards).  ``memory_check: false`` in the config skips it."""
    if not cfg.memory_check:
        return None
    if task == "eval":
        shards = shards or cfg.retrieval.eval_shards
        cfg = with_size(cfg, task, stage, n) if n else cfg
    elif task == "finetune":
        shards = cfg.retrieval.shards
    else:
        shards = cfg.stage(stage).shards
    size, key = batch_size(cfg, task, stage), size_key(task, stage)
    run = {"train": f"stage {stage}", "finetune": "fine-tuning", "eval": "evaluation"}[task]
    cuda = getattr(device, "type", str(device)) == "cuda"
    rss = process_rss()
    pixels = cfg.model.visual == "pixels"
    samples = count_samples(shards) if task == "eval" or pixels else None
    kw = dict(workers=workers, world=world, cuda=cuda, data_bytes=decoded_bytes(cfg, shards, samples),
              process_bytes=rss, feature_bytes=feature_bytes(shards),
              samples=samples if task == "eval" else None)
    est = estimate(cfg, stage, task=task, **kw)
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
        fits = lambda: fitting_batch(cfg, stage, host_budget + LOW * rss, task, **kw)  # noqa: E731
        checks.append(("memory", est.total - rss, host_budget, host_where, fits))
    for what, need, budget, where, fits in checks:
        where = where.format(gb=f"{budget / GB:.1f}")
        log.info("%s: %s at %s=%d needs about %.2f GB more (%s GB; %s params); %s",
                 what, run, key, size, need / GB, est.describe(), f"{est.params:,}", where)
        if LOW * need > budget:
            n_fit = fits() if fits else 0
            hint = {"train": f"a smaller {key}", "finetune": f"a smaller {key}",
                    "eval": f"a smaller --n ({key})"}[task]
            if n_fit and task == "train":  # the same pairs per optimiser step, in micro-batches that fit
                s = cfg.stage(stage)
                pairs = s.batch_size * s.grad_accum
                accum = -(-pairs // n_fit)
                hint = (f"--set stages.{stage}.batch_size={-(-pairs // accum)} --set "
                        f"stages.{stage}.grad_accum={accum} (the same {pairs} pairs a step)")
            elif n_fit:
                hint = f"--set {key}={n_fit}" if task == "finetune" else f"--n {n_fit}"
            raise ConfigError(
                f"{run} needs about {need / GB:.1f} GB of {what} at {key}={size} but {where}: "
                f"it would be killed for memory mid-run; try {hint}, or --set memory_check=false "
                f"to start anyway (estimate, GB: {est.describe()})")
        if need > WARN_AT * budget:
            log.warning("%s at %s=%d needs about %.1f GB of %s, close to what %s: it may be killed "
                        "for memory", run, key, size, need / GB, what, where)
    return est
