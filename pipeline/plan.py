"""The plan: an ordered list of steps built from one config, translated by each engine driver.

A step is data (its kind and its stage core); drivers hold no stage logic.  ``kind`` is
``"source"`` (parts -> records), ``"map"`` (record -> records) or ``"group"`` (records sharing
a key -> records; the engine shuffles by ``stage.key``).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Step:
    kind: str
    stage: object

    @property
    def name(self) -> str:
        return self.stage.name


@dataclass
class Plan:
    steps: list[Step]
    parts: list[str]
    out_dir: str = ""
    config: dict = field(default_factory=dict)

    def __post_init__(self):
        names = [s.name for s in self.steps]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:  # counts are keyed by step name
            raise ValueError(f"step names must be unique in a plan; repeated: {dup}")
        if not self.steps or self.steps[0].kind != "source":
            raise ValueError("a plan starts with a source step")

    @property
    def step_names(self) -> list[str]:
        return [s.name for s in self.steps]


def page_steps(cfg) -> list[Step]:
    """Job 1 (per input part): English pages to cleaned candidate texts.  Cheap steps first:
    a candidate with no usable text is never downloaded."""
    from filters.language import PageLanguage
    from filters.text import TextCleaner
    from pipeline.extract import Extractor

    return [
        Step("map", PageLanguage(cfg.language)),
        Step("map", Extractor.from_config(cfg.extract)),
        Step("map", TextCleaner(cfg.text)),
    ]


def image_steps(cfg) -> list[Step]:
    """Job 2 (per image-URL bucket): fetch each URL once, filter images (the model-based
    filters only see images that passed the size check), make (image, text) pairs.

    Naturalness runs before NSFW (bench/images.py: NSFW then only sees natural photos), and
    the labeler reuses the EfficientNet pass that naturalness made.  The stored JPEG is
    encoded after the filters (``image_store``), only for the images that passed them."""
    from filters.image import ImageDecode, ImageSize, ImageStore
    from filters.labels import ImageLabeler
    from filters.naturalness import NaturalnessFilter
    from filters.nsfw import NsfwFilter
    from pipeline.fetch import ImageFetcher
    from scoring.aggregate import ImagePairs
    from scoring.model import Scorer

    f = cfg.fetch
    scoring = [Step("map", Scorer(cfg.score))] if cfg.score.enabled else []
    return [
        Step("group", ImageFetcher.from_config(f)),
        Step("map", ImageSize(cfg.image.min_width, cfg.image.min_height, cfg.image.max_pixels)),
        Step("map", ImageDecode(cfg.image.resize_longest, cfg.image.jpeg_quality, store=False)),
        Step("map", NaturalnessFilter(cfg.naturalness)),
        Step("map", NsfwFilter(cfg.nsfw)),
        Step("map", ImageLabeler(cfg.labels, backbone=cfg.naturalness.backbone,
                                 threads=cfg.naturalness.threads)),
        Step("map", ImageStore(cfg.image.jpeg_quality)),
        Step("map", ImagePairs()),
        *scoring,  # LAIT step 4: each pair scored once, here, so a resumed run keeps scores
    ]


def corpus_steps(cfg, out_dir: str) -> list[Step]:
    """Job 3 (whole corpus): over-shared texts, best text per image, shards.

    Texts shared by more than K distinct images are counted over all pairs, before the best
    text of each image is chosen: a generic caption ("Stock photo") then cannot survive as
    the winner on a few images, and an image that had one can still keep a specific text."""
    from pipeline.writer import ShardWriter
    from scoring.aggregate import BestText, SharedText

    return [
        Step("group", SharedText(cfg.aggregate.max_images_per_text)),
        Step("group", BestText()),
        Step("group", ShardWriter(out_dir, cfg.output.num_shards)),
    ]


def build_jobs(cfg, out_dir: str, work: str):
    """The run's three jobs (see pipeline/run.py), built lazily: each job's units are known
    only once the job before it has finished."""
    from pipeline import run
    from pipeline.http import canonical_url
    from pipeline.sources import WarcSource

    if cfg.crawl.seeds:  # crawl the web from seed URLs instead of reading WARC files
        from pipeline.crawl import CrawlSource

        source = CrawlSource.from_config(cfg.crawl)
    else:
        source = WarcSource.from_config(cfg.input)
    buckets, wave = cfg.run.buckets, cfg.run.wave_size

    def pages():
        return run.Job("pages", source.parts(), lambda units, d: Plan(
            [Step("source", source), *page_steps(cfg), run.sink(d, buckets, "image_url", canonical_url)],
            parts=units, out_dir=out_dir), wave)

    def images():
        src = run.source(run.finished_wave_dirs(work, "pages"), buckets)
        return run.Job("images", src.parts(), lambda units, d: Plan(
            [Step("source", src), *image_steps(cfg), run.sink(d, buckets, "sha256")],
            parts=units, out_dir=out_dir), wave)

    def corpus():
        src = run.source(run.finished_wave_dirs(work, "images"), buckets)
        return run.Job("corpus", ["corpus"], lambda units, d: Plan(
            [Step("source", src), *corpus_steps(cfg, out_dir)],
            parts=src.parts() if units else [], out_dir=out_dir), 0)

    return [pages, images, corpus]
