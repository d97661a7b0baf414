"""Image fetching: each image URL is downloaded once, however many pages use it.

``ImageFetcher`` is a group stage keyed by the canonical image URL.  The executor runs
``concurrency`` groups at once in threads: fetching is I/O-bound, so threads give the
concurrency without extra processes.  Every request goes through :mod:`pipeline.web.http` (SSRF
guard at every hop, retries with backoff and ``Retry-After``, caps) and, by default, the
image host's robots.txt and the response's ``X-Robots-Tag`` opt-out.  Every failure mode
becomes a counted reason for each candidate that pointed at the image.

Vector images (SVG) are refused with their own reason (``fetch_svg``) instead of being
rasterised: they are logos, icons and diagrams, not the natural photos LAIT keeps, and
rendering untrusted SVG is a needless attack surface.

Safety lists: the image URLs were checked before this step (``url_blocklist``); a redirect to
a URL the lists name is never followed (``fetch_redirect_blocklist_<kind>``), and such drops
are counted but never sampled into rejects.parquet nor shown in the report.
"""
from __future__ import annotations

import io

from PIL import Image

from pipeline.core.records import ImageItem
from pipeline.core.stage import GroupStage, Keep
from pipeline.web.http import (
    OPT_OUT_TOKENS,
    FetchError,
    canonical_url,
    check_address,
    check_blocklist,
    is_blocklisted,
    opt_out_tokens,
    stage_client,
)
from pipeline.web.robots import RobotsCache, agent_token

__all__ = ["ImageFetcher", "FetchError", "check_address"]

Image.MAX_IMAGE_PIXELS = None  # we check the header size ourselves (image_size stage)

# Served as these, a body is worth reading; anything else is refused before the body.
GENERIC_TYPES = ("", "application/octet-stream", "binary/octet-stream")
SVG_TYPES = ("image/svg+xml", "image/svg")


def accept_image(mime: str) -> bool:
    return mime.startswith("image/") or mime in GENERIC_TYPES


class ImageFetcher(GroupStage):
    """Downloads each image URL once (SSRF guard, robots.txt, opt-out, timeouts, byte and
    redirect caps, retries) and reads its header (format, size) without decoding pixels."""

    name = "fetch"

    def __init__(self, timeout_s: float = 10.0, max_bytes: int = 20_000_000,
                 user_agent: str = "lait-builder", concurrency: int = 16, retries: int = 1,
                 allow_private: bool = False, allow_networks=(), max_redirects: int = 5,
                 max_time_s: float = 30.0, backoff_s: float = 0.5,
                 max_retry_after_s: float = 30.0, robots: bool = True,
                 opt_out=OPT_OUT_TOKENS, rate_per_host: float = 0.0,
                 per_host_concurrency: int = 0, blocklist=None):
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.user_agent = user_agent
        self.concurrency = concurrency
        self.retries = retries
        self.allow_private = allow_private
        self.allow_networks = list(allow_networks)
        self.max_redirects = max_redirects
        self.max_time_s = max_time_s
        self.backoff_s = backoff_s
        self.max_retry_after_s = max_retry_after_s
        self.robots = robots
        self.opt_out = list(opt_out)
        self.rate_per_host = rate_per_host
        self.per_host_concurrency = per_host_concurrency
        # blocked(url) -> rule kind or None (filters.url_blocklist.UrlBlocklist, from the plan)
        self.blocklist = blocklist
        self._http = None
        self._robots = None

    @classmethod
    def from_config(cls, fc, blocklist=None) -> "ImageFetcher":
        """From ``pipeline.config.FetchConfig`` (and the safety lists' URL check)."""
        return cls(blocklist=blocklist, timeout_s=fc.timeout_s, max_bytes=fc.max_bytes, user_agent=fc.user_agent,
                   concurrency=fc.concurrency, retries=fc.retries,
                   allow_private=fc.allow_private, allow_networks=fc.allow_networks,
                   max_redirects=fc.max_redirects, max_time_s=fc.max_time_s,
                   backoff_s=fc.backoff_s, max_retry_after_s=fc.max_retry_after_s,
                   robots=fc.robots, opt_out=fc.opt_out, rate_per_host=fc.rate_per_host,
                   per_host_concurrency=fc.per_host_concurrency)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_http"] = state["_robots"] = None  # sockets and locks stay in their worker
        return state

    def withholds(self, reason: str) -> bool:
        return is_blocklisted(reason)  # a redirect to a listed URL: counted, never sampled

    def setup(self) -> None:
        self._http, limiter = stage_client(self, "image/avif,image/webp,image/png,image/jpeg,image/*;q=0.8")
        self._agent = agent_token(self.user_agent)
        if self.robots:
            self._robots = RobotsCache(self._http, self.user_agent, limiter)

    def key(self, candidate) -> str:
        return canonical_url(candidate.image_url)

    def reduce(self, key: str, candidates: list):
        url = min(c.image_url for c in candidates)  # the same choice on every engine
        try:
            item = self.fetch(url)
        except FetchError as exc:
            return [self.drop(exc.reason)] * len(candidates)
        item.candidates = sorted(candidates, key=lambda c: (c.page_url, c.img_index, c.text_source, c.text))
        # One image for the whole group: every candidate is kept, the first carries the output.
        return [Keep((item,))] + [Keep(())] * (len(candidates) - 1)

    def fetch(self, url: str) -> ImageItem:
        if self._http is None:
            self.setup()
        check_blocklist(self._http.url_check, url)  # url_blocklist ran already: for direct use
        self._http.policy.check_url(url)
        if self._robots is not None:
            self._robots.check(url)
        resp = self._http.get(url, accept=self._accept, type_name="image_type")
        if self.opt_out and opt_out_tokens(resp.robots_tags, self.opt_out, self._agent):
            raise FetchError("opt_out")
        item = self.probe(url, resp.body, resp.mime)
        # The compliance facts each sample keeps (docs/fetching.md): robots.txt was read and
        # allows the image (a disallow raised above), and the X-Robots-Tag values it carried.
        item.meta["compliance"] = {"robots_txt": "allowed" if self._robots is not None else "not_checked",
                                   "opt_out": sorted(set(resp.robots_tags))}
        return item

    @staticmethod
    def _accept(mime: str) -> bool:
        if mime in SVG_TYPES:
            raise FetchError("svg")
        return accept_image(mime)

    @staticmethod
    def probe(url: str, data: bytes, mime: str) -> ImageItem:
        """Reads format and size from the header only; pixels are decoded later, and only
        for images that pass the size check."""
        if not data:
            raise FetchError("empty")
        try:
            with Image.open(io.BytesIO(data)) as im:
                fmt, (w, h) = im.format or "", im.size
        except Exception:
            head = data[:1024].lstrip().lower()
            if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in head):
                raise FetchError("svg") from None
            raise FetchError("not_an_image") from None
        return ImageItem(image_url=url, data=data, candidates=[], width=w, height=h,
                         orig_width=w, orig_height=h, orig_format=fmt.lower(),
                         orig_bytes=len(data), mime=mime)
