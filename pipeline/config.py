"""The run configuration: one YAML file, validated into dataclasses before anything runs.

Bad configuration fails at once with a message naming the key (unknown keys, wrong types,
values out of range), instead of surfacing hours later on a worker.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import math
from dataclasses import dataclass, field
from typing import Any

import yaml

from filters.blocklists import SafetyConfig
from filters.dedup import DedupConfig
from filters.labels import LabelsConfig
from filters.language import PageLanguageConfig
from filters.naturalness import NaturalnessConfig
from filters.nsfw import NsfwConfig
from filters.text import TextCleanerConfig
from pipeline.core import overrides as overrides_mod
from pipeline.core import typed_config
from pipeline.core.errors import ConfigError, yaml_problem
from pipeline.steps.crawl import LINK_POLICIES
from pipeline.steps.extract import MAX_IMAGES_PER_PAGE
from pipeline.web.robots import OPT_OUT_TOKENS
from pipeline.web.settings import DNS_CACHE_SIZE, USER_AGENT
from scoring.score import ScorerConfig

__all__ = ["Config", "ConfigError", "load", "from_dict"]


@dataclass
class InputConfig:
    """WARC files to read (pipeline/steps/read.py); or give crawl.seeds instead."""

    warc: list[str] = field(default_factory=list)  # paths or globs of WARC files
    max_page_bytes: int = 5_000_000  # larger HTML responses are dropped (read_page_too_large)
    part_size: int = 1  # WARC files per part (the unit of parallelism and of resume)
    # A Common Crawl path list (warc.paths.gz: one key per line), local or a URL; each key is
    # read from ``prefix`` + key (default: the list's own folder).  Instead of input.warc.
    paths: str = ""
    prefix: str = ""
    """the folder (or URL prefix) input.paths' keys are read from; default: the list's own folder"""
    paths_every: int = 1  # keep every k-th key of the list ...
    paths_first: int = 0  # ... then the first N of those (0: all)
    # Remote inputs (https://, s3://, gs://): each connect/read waits at most timeout_s; a read
    # that fails mid-file is retried ``retries`` times with backoff, then read_io_error.
    timeout_s: float = 60.0
    retries: int = 4
    """retries of a remote read that failed mid-file, before it is counted as read_io_error"""
    backoff_s: float = 1.0
    """the first retry's wait in seconds, doubled on each retry (at most 30 s)"""

    def check(self):
        # Whether input.warc may be empty depends on crawl.seeds: Config.check decides.
        _positive("input.max_page_bytes", self.max_page_bytes)
        _positive("input.part_size", self.part_size)
        _positive("input.paths_every", self.paths_every)
        _not_negative("input.paths_first", self.paths_first)
        _positive("input.timeout_s", self.timeout_s)
        _check_retries("input.retries", self.retries)
        _not_negative("input.backoff_s", self.backoff_s)
        if self.prefix and not self.paths:
            raise ConfigError("input.prefix is the folder of input.paths' keys: give input.paths too")


@dataclass
class ExtractConfig:
    """Images and their candidate texts from each page (pipeline/steps/extract.py)."""

    surrounding_chars: int = 300  # text kept before and after an image, each side
    max_text_chars: int = 1000  # longer alt/title/caption texts are cut here
    # Page regions and image roles (pipeline/steps/regions.py, image_roles.py): furniture gives no candidates.
    # false: every image and every side of surrounding text, as read (for comparisons).
    page_roles: bool = True
    max_images_per_page: int = MAX_IMAGES_PER_PAGE
    """images with a usable URL judged per page, in document order; later ones are dropped
    unjudged (extract_image_over_page_cap): each would be a fetch to the same site"""

    def check(self):
        _positive("extract.surrounding_chars", self.surrounding_chars)
        _positive("extract.max_text_chars", self.max_text_chars)
        _positive("extract.max_images_per_page", self.max_images_per_page)
        if not isinstance(self.page_roles, bool):
            raise ConfigError(f"extract.page_roles must be true or false (got {self.page_roles!r})")




@dataclass
class FetchConfig:
    """Image downloads (pipeline/steps/fetch.py): each image URL once per run, politely."""

    timeout_s: float = 10.0  # connect and read timeout of each request
    max_time_s: float = 30.0  # wall clock of one attempt, body included (slow drips)
    max_bytes: int = 20_000_000
    """larger image responses are dropped"""
    max_redirects: int = 5
    """redirects followed per image (the SSRF guard checks every hop)"""
    user_agent: str = USER_AGENT
    """User-Agent sent with every image request and matched against robots.txt"""
    concurrency: int = 16  # threads per worker fetching images
    retries: int = 1  # extra attempts after 429 / 5xx / timeouts / connection errors
    backoff_s: float = 0.5  # first retry's wait; doubles each attempt
    max_retry_after_s: float = 30.0  # a longer Retry-After gives up instead of waiting
    robots: bool = True  # obey the image host's robots.txt
    opt_out: list[str] = field(default_factory=lambda: list(OPT_OUT_TOKENS))  # X-Robots-Tag
    rate_per_host: float = 0.0  # requests/s per image host (0: no limit)
    per_host_concurrency: int = 0  # requests in flight per image host (0: no cap)
    allow_private: bool = False  # reach ANY address, private included (never for real crawls)
    allow_networks: list[str] = field(default_factory=list)  # e.g. [127.0.0.1/32] for tests
    dns_cache_size: int = DNS_CACHE_SIZE
    """image hosts whose DNS answer, failure included, a worker reuses for the run (0: off)"""

    def check(self):
        _positive("fetch.timeout_s", self.timeout_s)
        _positive("fetch.max_time_s", self.max_time_s)
        _positive("fetch.max_bytes", self.max_bytes)
        _positive("fetch.concurrency", self.concurrency)
        for name in ("retries", "max_redirects", "backoff_s", "max_retry_after_s",
                     "rate_per_host", "per_host_concurrency"):
            _not_negative(f"fetch.{name}", getattr(self, name))
        _check_retries("fetch.retries", self.retries)
        _check_user_agent("fetch.user_agent", self.user_agent)
        _check_opt_out("fetch.opt_out", self.opt_out)
        _check_networks("fetch.allow_networks", self.allow_networks)
        _check_dns_cache_size("fetch.dns_cache_size", self.dns_cache_size)


@dataclass
class CrawlConfig:
    """Seed URLs -> pages (pipeline/steps/crawl.py), instead of input.warc.  Polite defaults."""

    seeds: list[str] = field(default_factory=list)  # start URLs (http/https)
    seeds_per_part: int = 1  # hosts per part: a host is crawled by one part, one worker
    link_policy: str = "same_site"  # same_site (seed host + subdomains) | same_host | open
    max_depth: int = 2  # links followed from a seed
    max_pages: int = 1000  # pages fetched per part
    user_agent: str = USER_AGENT
    """User-Agent sent with every request and matched against robots.txt groups"""
    robots: bool = True  # obey robots.txt (fetched once per host)
    rate_per_host: float = 1.0  # requests/s per host; a larger robots Crawl-delay wins; 0: no limit
    per_host_concurrency: int = 2
    """requests in flight per host (0: no limit)"""
    concurrency: int = 8  # threads per part
    timeout_s: float = 10.0
    """connect and read timeout of each request"""
    max_time_s: float = 30.0
    """wall clock of one attempt, body included (slow drips)"""
    max_bytes: int = 5_000_000
    """larger pages are cut off and dropped"""
    max_redirects: int = 5
    """redirects followed per request (the SSRF guard checks every hop)"""
    retries: int = 2
    """extra attempts after 429 / 5xx / timeouts / connection errors"""
    backoff_s: float = 1.0
    """first retry's wait; doubles each attempt"""
    max_retry_after_s: float = 60.0
    """a longer Retry-After gives up instead of waiting"""
    content_types: list[str] = field(default_factory=lambda: ["text/html", "application/xhtml+xml"])
    """media types of the responses that are parsed as pages"""
    opt_out: list[str] = field(default_factory=lambda: list(OPT_OUT_TOKENS))  # header and meta
    allow_private: bool = False
    """reach ANY address, private included (never for real crawls)"""
    allow_networks: list[str] = field(default_factory=list)
    """networks reachable despite the SSRF guard, e.g. [127.0.0.1/32] for tests"""
    dns_cache_size: int = DNS_CACHE_SIZE
    """hosts whose DNS answer, failure included, a part's crawl reuses for the run (0: off)"""

    def check(self):
        if not self.seeds:
            return  # no crawl: input.warc is the source (Config.check says which is needed)
        for url in self.seeds:
            if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
                raise ConfigError(f"crawl.seeds: {url!r} is not an http(s) URL")
        if self.link_policy not in LINK_POLICIES:
            raise ConfigError(f"crawl.link_policy must be one of {list(LINK_POLICIES)}, "
                              f"got {self.link_policy!r}")
        for name in ("seeds_per_part", "max_pages", "concurrency", "timeout_s", "max_time_s",
                     "max_bytes"):
            _positive(f"crawl.{name}", getattr(self, name))
        for name in ("max_depth", "rate_per_host", "per_host_concurrency", "max_redirects",
                     "retries", "backoff_s", "max_retry_after_s"):
            _not_negative(f"crawl.{name}", getattr(self, name))
        _check_retries("crawl.retries", self.retries)
        _check_user_agent("crawl.user_agent", self.user_agent)
        if not self.content_types:
            raise ConfigError("crawl.content_types: give at least one media type")
        _check_opt_out("crawl.opt_out", self.opt_out)
        _check_networks("crawl.allow_networks", self.allow_networks)
        _check_dns_cache_size("crawl.dns_cache_size", self.dns_cache_size)




@dataclass
class ImageConfig:
    """Size check, decoding, resizing and the stored JPEG (filters/image_*.py)."""

    min_width: int = 300  # ImageBERT: both sides >= 300 px
    min_height: int = 300
    """ImageBERT: both sides >= 300 px"""
    max_pixels: int = 100_000_000  # larger claims are decompression bombs
    resize_longest: int = 512  # stored image's longest side (0 keeps the original size)
    jpeg_quality: int = 90
    """quality of the stored JPEG (1..100)"""

    def check(self):
        _positive("image.min_width", self.min_width)
        _positive("image.min_height", self.min_height)
        _positive("image.max_pixels", self.max_pixels)
        if self.resize_longest < 0:
            raise ConfigError("image.resize_longest must be >= 0")
        if not 1 <= self.jpeg_quality <= 100:
            raise ConfigError("image.jpeg_quality must be within 1..100")


@dataclass
class TextShareConfig:
    """``text_share:`` section (called ``aggregate:`` before the step names said what they do;
    that name is still read)."""

    max_images_per_text: int = 10  # a text shared by more distinct images is dropped

    def check(self):
        _positive("text_share.max_images_per_text", self.max_images_per_text)


# Samples per shard aimed at when output.num_shards is not set: 10,000 stored 512-px JPEGs make
# tars of roughly 0.3-0.5 GB, in the range webdataset recommends for streaming.
SAMPLES_PER_SHARD = 10_000


def auto_num_shards(stored_images: int) -> int:
    """``output.num_shards`` when it is not set: one shard per SAMPLES_PER_SHARD images stored by
    the images job (each keeps at most one text, so that bounds the corpus), at least one.
    A count, not a timing: the same input gives the same number, hence the same bytes, on every
    engine."""
    return max(1, math.ceil(stored_images / SAMPLES_PER_SHARD))


@dataclass
class OutputConfig:
    """The shards (pipeline/steps/write.py): OUT/shards/*.tar, OUT/parquet/*.parquet."""

    num_shards: int | None = None
    """samples are spread over this many shards by a hash of their key; null (the default):
    ceil(images stored / 10,000), at least 1, counted after the images job"""
    image_format: str = "jpg"
    """stored image format (only jpg)"""

    def check(self):
        if self.num_shards is not None:
            _positive("output.num_shards", self.num_shards)
        if self.image_format != "jpg":
            raise ConfigError("output.image_format: only 'jpg' is supported")


@dataclass
class RunConfig:
    """Parallelism and resume (pipeline/waves.py)."""

    buckets: int = 16  # image-URL / image-content buckets between jobs
    wave_size: int = 8  # units per engine job; a finished wave is never redone

    def check(self):
        _positive("run.buckets", self.buckets)
        _positive("run.wave_size", self.wave_size)


@dataclass
class Config:
    input: InputConfig = field(default_factory=InputConfig)
    crawl: CrawlConfig = field(default_factory=CrawlConfig)
    language: PageLanguageConfig = field(default_factory=PageLanguageConfig)
    extract: ExtractConfig = field(default_factory=ExtractConfig)
    text: TextCleanerConfig = field(default_factory=TextCleanerConfig)
    safety: SafetyConfig = field(default_factory=SafetyConfig)
    fetch: FetchConfig = field(default_factory=FetchConfig)
    image: ImageConfig = field(default_factory=ImageConfig)
    naturalness: NaturalnessConfig = field(default_factory=NaturalnessConfig)
    nsfw: NsfwConfig = field(default_factory=NsfwConfig)
    labels: LabelsConfig = field(default_factory=LabelsConfig)
    score: ScorerConfig = field(default_factory=ScorerConfig)
    dedup: DedupConfig = field(default_factory=DedupConfig)
    text_share: TextShareConfig = field(default_factory=TextShareConfig)
    output: OutputConfig = field(default_factory=OutputConfig)
    run: RunConfig = field(default_factory=RunConfig)

    def check(self) -> "Config":
        given = [k for k, v in (("input.warc", self.input.warc), ("input.paths", self.input.paths),
                                ("crawl.seeds", self.crawl.seeds)) if v]
        if not given:
            raise ConfigError("input.warc: give at least one WARC path or glob "
                              "(or input.paths for a warc.paths.gz list, or crawl.seeds to "
                              "crawl the web instead)")
        if len(given) > 1:
            raise ConfigError("give one of input.warc, input.paths and crawl.seeds, not "
                              f"{'both' if len(given) == 2 else 'all'} ({' and '.join(given)})")
        for f in dataclasses.fields(self):
            getattr(self, f.name).check()
        if self.dedup.enabled and not self.labels.phash:
            # the dedup step compares the pHashes the labels step sets: without them every
            # near-duplicate would be kept, silently
            raise ConfigError("labels.phash: false leaves the dedup step no hashes to compare "
                              "(dedup.enabled: true): keep labels.phash, or set dedup.enabled: "
                              "false too")
        return self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _positive(name: str, value) -> None:
    if not value > 0:
        raise ConfigError(f"{name} must be > 0 (got {value!r})")


def _not_negative(name: str, value) -> None:
    if value < 0:
        raise ConfigError(f"{name} must be >= 0 (got {value!r})")


# A host's entry is a few addresses: a million is well under a GB, more is a typo.
MAX_DNS_CACHE_SIZE = 1_000_000
def _check_dns_cache_size(name: str, value) -> None:
    if not 0 <= value <= MAX_DNS_CACHE_SIZE:
        raise ConfigError(f"{name} must be within 0..{MAX_DNS_CACHE_SIZE} "
                          f"(0 turns the cache off; got {value!r})")


MAX_RETRIES = 10  # more attempts only hold a worker: the backoff doubles each time


def _check_retries(name: str, value) -> None:
    if not 0 <= value <= MAX_RETRIES:
        raise ConfigError(f"{name} must be within 0..{MAX_RETRIES} (got {value!r})")


def _check_user_agent(name: str, value) -> None:
    # Sent with every request and matched against robots.txt groups: it cannot be blank.
    if not value.strip() or any(c in value for c in "\r\n"):
        raise ConfigError(f"{name}: give a non-empty one-line User-Agent (got {value!r})")


def _check_opt_out(name: str, tokens) -> None:
    bad = sorted(set(tokens) - set(OPT_OUT_TOKENS))
    if bad:
        raise ConfigError(f"{name}: unknown token(s) {bad}; known: {list(OPT_OUT_TOKENS)}")


def _check_networks(name: str, networks) -> None:
    for n in networks:
        try:
            ipaddress.ip_network(n, strict=False)
        except ValueError:
            raise ConfigError(f"{name}: {n!r} is not an IP network (e.g. 127.0.0.1/32)") from None


# Sections renamed with their step (README "Changelog"): old name -> new name.
RENAMED_SECTIONS = {"aggregate": "text_share"}


def _sections(data, where: str = "config") -> dict[str, Any]:
    """The file's top level: a mapping of sections (a YAML list or scalar there was a
    ValueError traceback)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of sections (input:, text:, ...), got a "
                          f"{type(data).__name__}")
    return dict(data)


def from_dict(data: dict[str, Any]) -> Config:
    data = _sections(data or {})
    for old, new in RENAMED_SECTIONS.items():
        if old in data:
            if new in data:
                raise ConfigError(f"give {new}: or its old name {old}:, not both")
            data[new] = data.pop(old)
    return typed_config.build(Config, data).check()


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping giving one key twice (PyYAML keeps the last silently,
    so a repeated section would quietly undo the first)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise ConfigError(f"duplicate key {key!r} (line {key_node.start_mark.line + 1})")
            try:
                seen.add(key)
            except TypeError:
                pass  # an unhashable key: the base class reports it
        return super().construct_mapping(node, deep)


def load(path: str | None, overrides: dict[str, Any] | None = None) -> Config:
    """Reads a YAML config; ``overrides`` (dotted keys) win over the file.  No path: the
    defaults (``lait build --input PATH...`` runs without a YAML file)."""
    if path is None:
        return from_dict(overrides_mod.apply({}, overrides))
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.load(f, Loader=_UniqueKeyLoader) or {}
    except ConfigError as exc:
        raise ConfigError(f"config {path}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {path} is not valid YAML: {yaml_problem(exc)}") from exc
    return from_dict(overrides_mod.apply(_sections(data, f"config {path}"), overrides))
