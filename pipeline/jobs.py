"""Plan assembly: the three jobs of a run as flat step lists, built from one config.

This is the one module that knows which filters and scoring stages make up a run and in what
order; it sits above ``filters/`` and ``scoring/`` and is imported only by ``build``.  The
jobs themselves (waves, resume) are run by ``pipeline/waves.py``, which sees only step lists.
"""
from __future__ import annotations

from filters.dedup import passes as dedup_passes
from filters.dedup_evaluation import DedupEvaluation
from filters.hash_blocklist import HashBlocklist
from filters.image_decode import ImageDecode
from filters.image_size import ImageSize
from filters.image_store import ImageStore
from filters.labels import ImageLabeler
from filters.language import PageLanguage
from filters.naturalness import NaturalnessFilter
from filters.page_blocklist import PageBlocklist
from filters.nsfw import NsfwFilter
from filters.text import TextCleaner
from filters.url_blocklist import UrlBlocklist
from pipeline.config import auto_num_shards
from pipeline.core.plan import Step
from pipeline.core.stage import Source
from pipeline.steps.crawl import CrawlSource
from pipeline.steps.extract import Extractor
from pipeline.steps.fetch import ImageFetcher
from pipeline.steps.read import WarcReader
from pipeline.steps.write import ShardWriter
from pipeline.waves import Job, finished_counts, finished_wave_dirs, sink, source
from pipeline.web.urls import canonical_url
from scoring.best_text import BestText
from scoring.pairs import ImagePairs
from scoring.score import Scorer
from scoring.text_share import SharedText


def page_steps(cfg) -> list[Step]:
    """Job 1 (per input part): English pages to cleaned candidate texts.  Cheap steps first:
    a candidate with no usable text is never downloaded.  A blocklisted URL (safety lists)
    is dropped as soon as its candidate exists, long before any fetch."""
    urls, pages = UrlBlocklist.from_config(cfg.safety), PageBlocklist.from_config(cfg.safety)
    return [
        *([Step("map", pages)] if pages else []),
        Step("map", PageLanguage(cfg.language)),
        Step("map", Extractor.from_config(cfg.extract)),
        *([Step("map", urls)] if urls else []),
        Step("map", TextCleaner(cfg.text)),
    ]


def image_steps(cfg) -> list[Step]:
    """Job 2 (per image-URL bucket): fetch each URL once, filter images (the model-based
    filters only see images that passed the size check), make (image, text) pairs.

    Naturalness runs before NSFW (bench/images.py: NSFW then only sees natural photos), and
    the labeler reuses the EfficientNet pass that naturalness made.  The stored JPEG is
    encoded after the filters (``image_store``), only for the images that passed them."""
    f = cfg.fetch
    urls = UrlBlocklist.from_config(cfg.safety)  # redirect targets, checked before following
    scoring = [Step("map", Scorer(cfg.score))] if cfg.score.enabled else []
    hashes = HashBlocklist.from_config(cfg.safety)  # image hashes: after the fetch, before decode
    # evaluation images: decoded and checked before any filter that could sample one
    evaluation = DedupEvaluation.from_config(cfg.dedup, cfg.image)
    return [
        Step("group", ImageFetcher.from_config(f, blocklist=urls)),
        *([Step("map", hashes)] if hashes else []),
        *([Step("map", evaluation)] if evaluation else []),
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


def num_shards(cfg, work: str) -> int:
    """``output.num_shards``, or when unset the number chosen from the images the images job
    stored (``pipeline.config.auto_num_shards``): known before the corpus job starts, and the
    same on every engine and every resume."""
    if cfg.output.num_shards:
        return cfg.output.num_shards
    return auto_num_shards(finished_counts(work, "images", ImageStore.name).kept)


def corpus_steps(cfg, out_dir: str, shards: int) -> list[Step]:
    """Job 3 (whole corpus): near-duplicates, over-shared texts, best text per image, shards.

    Near-duplicate images are merged first (one group step per hash band, filters/dedup.py):
    copies of one photo then count as one image for the over-shared texts, and the texts of
    them all compete for the kept image's best text.

    Texts shared by more than K distinct images are counted over all pairs, before the best
    text of each image is chosen: a generic caption ("Stock photo") then cannot survive as
    the winner on a few images, and an image that had one can still keep a specific text."""
    return [
        *(Step("group", stage) for stage in dedup_passes(cfg.dedup)),
        Step("group", SharedText(cfg.text_share.max_images_per_text)),
        Step("group", BestText()),
        Step("group", ShardWriter(out_dir, shards, cfg.labels.store_embedding)),
    ]


def input_source(cfg) -> Source:
    """The run's input: a crawl from seed URLs, or the WARC files."""
    if cfg.crawl.seeds:
        # page URLs checked before any request, redirects before they are followed
        return CrawlSource.from_config(cfg.crawl, blocklist=PageBlocklist.from_config(cfg.safety))
    return WarcReader.from_config(cfg.input)


def build_jobs(cfg, out_dir: str, work: str):
    """The run's three jobs (see pipeline/waves.py), each made when the job before it has
    finished: a job's units (the buckets that job wrote) are known only then."""
    buckets, wave = cfg.run.buckets, cfg.run.wave_size

    def pages():
        src = input_source(cfg)
        return Job("pages", src.parts(), src, page_steps(cfg), wave_size=wave,
                   sink=lambda d: sink(d, buckets, "image_url", canonical_url))

    def images():
        src = source(finished_wave_dirs(work, "pages"), buckets)
        return Job("images", src.parts(), src, image_steps(cfg), wave_size=wave,
                   sink=lambda d: sink(d, buckets, "image.sha256"))

    def corpus():
        src = source(finished_wave_dirs(work, "images"), buckets)
        return Job("corpus", ["corpus"], src, corpus_steps(cfg, out_dir, num_shards(cfg, work)),
                   parts=src.parts())

    return [pages, images, corpus]
