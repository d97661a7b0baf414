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
from pipeline.web.address import check_address
from pipeline.web.failures import FetchError, is_blocklisted
from pipeline.web.http import stage_client
from pipeline.web.robots import OPT_OUT_TOKENS, RobotsCache, agent_token, opt_out_tokens
from pipeline.web.settings import HttpSettings
from pipeline.web.urls import canonical_url

__all__ = ["ImageFetcher", "FetchError", "check_address"]

Image.MAX_IMAGE_PIXELS = None  # we check the header size ourselves (image_size stage)

# Served as these, a body is worth reading; anything else is refused before the body.
GENERIC_TYPES = ("", "application/octet-stream", "binary/octet-stream")
SVG_TYPES = ("image/svg+xml", "image/svg")


FETCH_HTTP = HttpSettings()  # the image fetcher's HTTP defaults (pipeline.web.settings)


def accept_image(mime: str) -> bool:
    return mime.startswith("image/") or mime in GENERIC_TYPES


class ImageFetcher(GroupStage):
    """Downloads each image URL once (SSRF guard, robots.txt, opt-out, timeouts, byte and
    redirect caps, retries) and reads its header (format, size) without decoding pixels."""

    name = "fetch"
    # Its set-up copy (DNS answers, failures included; robots.txt rules) lasts one run: a
    # build forgets it (pipeline.core.executor.forget_run_state), so --retry-failed asks again.
    per_run = True

    def __init__(self, robots: bool = True, opt_out=OPT_OUT_TOKENS, blocklist=None,
                 http: HttpSettings = FETCH_HTTP, **http_changes):
        """``http``: the HTTP settings (user agent, timeouts, caps, retries, politeness,
        threads, SSRF exceptions); ``http_changes`` change some of them by name."""
        self.robots = robots
        self.opt_out = list(opt_out)
        # blocked(url) -> rule kind or None (filters.url_blocklist.UrlBlocklist, from the plan)
        self.blocklist = blocklist
        self.http = http.with_(**http_changes)
        self._client = None
        self._robots = None

    @property
    def concurrency(self) -> int:
        """Groups fetched at once (the executor runs them in this many threads)."""
        return self.http.concurrency

    @classmethod
    def from_config(cls, fc, blocklist=None) -> "ImageFetcher":
        """From ``pipeline.config.FetchConfig`` (and the safety lists' URL check)."""
        return cls(robots=fc.robots, opt_out=fc.opt_out, blocklist=blocklist,
                   http=HttpSettings.of(fc, FETCH_HTTP))

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_client"] = state["_robots"] = None  # sockets and locks stay in their worker
        return state

    def withholds(self, reason: str) -> bool:
        return is_blocklisted(reason)  # a redirect to a listed URL: counted, never sampled

    def setup(self) -> None:
        self._client, limiter = stage_client(
            self.http, "image/avif,image/webp,image/png,image/jpeg,image/*;q=0.8",
            self.blocklist.blocked if self.blocklist else None)
        self._agent = agent_token(self.http.user_agent)
        if self.robots:
            self._robots = RobotsCache(self._client, self.http.user_agent, limiter)

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
        if self._client is None:
            self.setup()
        self._client.admit(url)  # lists (url_blocklist ran already: for direct use), SSRF guard
        if self._robots is not None:
            self._robots.check(url)
        resp = self._client.get(url, accept=self._accept, type_name="image_type")
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
