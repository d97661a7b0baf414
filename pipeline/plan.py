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


def build_plan(cfg, out_dir: str) -> Plan:
    """The LAIT plan for a validated :class:`pipeline.config.Config`, cheap steps first: a
    candidate with no usable text is never downloaded, an image URL is fetched once, and the
    model-based image filters only see images that passed the size check."""
    from filters.image import ImageDecode, ImageSize
    from filters.text_basic import TextLength
    from pipeline.extract import Extractor
    from pipeline.fetch import ImageFetcher
    from pipeline.sources import WarcSource
    from pipeline.writer import ShardWriter
    from scoring.aggregate import BestText, ImagePairs, SharedText

    if cfg.crawl.seeds:  # crawl the web from seed URLs instead of reading WARC files
        from pipeline.crawl import CrawlSource

        source = CrawlSource.from_config(cfg.crawl)
    else:
        source = WarcSource.from_config(cfg.input)
    steps = [
        Step("source", source),
        Step("map", Extractor.from_config(cfg.extract)),
        Step("map", TextLength(cfg.text.min_words, cfg.text.max_words,
                               cfg.text.min_chars, cfg.text.max_chars)),
        Step("group", ImageFetcher.from_config(cfg.fetch)),
        Step("map", ImageSize(cfg.image.min_width, cfg.image.min_height, cfg.image.max_pixels)),
        Step("map", ImageDecode(cfg.image.resize_longest, cfg.image.jpeg_quality)),
        Step("map", ImagePairs()),
        Step("group", BestText()),
        Step("group", SharedText(cfg.aggregate.max_images_per_text)),
        Step("group", ShardWriter(out_dir, cfg.output.num_shards)),
    ]
    return Plan(steps=steps, parts=source.parts(), out_dir=out_dir, config=cfg.to_dict())
