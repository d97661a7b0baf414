"""Extraction: an HTML :class:`Page` -> one :class:`Candidate` per (image URL, text source).

Decoding lives in :mod:`pipeline.web.charset`, the parse and walk in :mod:`pipeline.steps.html_images`;
this module is the stage: its drop reasons, de-duplication and the candidate records.
"""
from __future__ import annotations

import posixpath
from urllib.parse import urlsplit

from pipeline.core.errors import ConfigError
from pipeline.core.records import Candidate, Page
from pipeline.core.stage import Drop, MapStage
from pipeline.steps.html_images import find_images, html_dim
from pipeline.web.charset import decode_html, looks_undecodable


class Extractor(MapStage):
    """Turns an HTML page into candidates: one per (image URL, text source) with text.

    Images: every ``<img>`` with a usable http(s) URL (see :func:`pipeline.steps.html_images.choose_urls`), resolved
    against ``<base href>`` and the page URL.  Texts, in order of preference: ``alt``, the
    enclosing ``<figure>``'s ``<figcaption>`` (``caption``), the img's ``title``, and the text
    around the image inside its nearest block element (``surrounding``: up to
    ``surrounding_chars`` each side, kept apart in ``meta["before"]`` / ``meta["after"]``).
    A source repeating an earlier source's text for the same image is skipped, and identical
    (image URL, source, text) triples on one page are kept once.  Texts are entity-decoded and
    whitespace-collapsed; alt/title/caption are cut to ``max_text_chars`` on a word boundary.

    Drops, one per page: ``extract_undecodable`` (the body decodes to mostly replacement or
    control characters), ``extract_no_images`` (no usable image), ``extract_no_text``.
    """

    name = "extract"

    def __init__(self, surrounding_chars: int = 300, max_text_chars: int = 1000):
        for key, value in (("surrounding_chars", surrounding_chars),
                           ("max_text_chars", max_text_chars)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"extract.{key} must be an integer > 0 (got {value!r})")
        self.surrounding_chars = surrounding_chars
        self.max_text_chars = max_text_chars

    @classmethod
    def from_config(cls, cfg) -> "Extractor":
        """From a :class:`pipeline.config.ExtractConfig`."""
        return cls(cfg.surrounding_chars, cfg.max_text_chars)

    def process(self, page: Page) -> list[Candidate] | Drop:
        ctype = page.headers.get("content-type") or page.content_type
        body = page.body.encode("utf-8") if isinstance(page.body, str) else page.body
        text, codec, how = decode_html(body, ctype)
        if looks_undecodable(text, body, how):
            return self.drop("undecodable")
        found = find_images(text, page.url, self.surrounding_chars, self.max_text_chars)
        # The language step's decision (text-based) wins over the page's own <html lang>.
        page_lang = page.meta.get("lang") or found.lang
        usable = [img for img in found.images if img.url]
        if not usable:
            return self.drop("no_images")
        out: list[Candidate] = []
        seen: set[tuple[str, str, str]] = set()
        for img in usable:
            meta = {"n_images": len(usable), "url_attr": img.url_attr, "encoding": codec,
                    "file_name": posixpath.basename(urlsplit(img.url).path),
                    "in_figure": img.figure is not None, "in_link": img.in_link}
            for key in ("width", "height"):
                dim = html_dim(img.attrs.get(key))
                if dim is not None:
                    meta[f"img_{key}"] = dim
            texts = (("alt", img.alt), ("caption", img.caption), ("title", img.title),
                     ("surrounding", f"{img.before} {img.after}".strip()))
            norms: set[str] = set()
            for source, value in texts:
                norm = value.casefold()
                if not value or norm in norms or (img.url, source, value) in seen:
                    continue
                norms.add(norm)
                seen.add((img.url, source, value))
                m = dict(meta, before=img.before, after=img.after) if source == "surrounding" \
                    else dict(meta)  # one dict per record: later stages may edit it
                out.append(Candidate(page.url, img.url, source, value, value, found.title,
                                     page_lang, img.index, m))
        if not out:
            return self.drop("no_text")
        return out
