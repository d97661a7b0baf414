"""An image's record (:class:`ImageRef`), a page's images (:class:`PageImages`) and the texts an
image's candidate is built from: alt, title, figcaption, the text before and after it, and
how much of that text is link text.

The walk (:mod:`pipeline.steps.html_images`) only notes token positions; the texts are cut
from its token list here, image by image, so an image that is never a candidate (an icon)
never has its surrounding text read.
"""
from __future__ import annotations

import html
import re
from bisect import bisect_right
from dataclasses import dataclass, field


_ESCAPED_ENTITY_RE = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});")
# A link that opens an image file: a lightbox's link to the full-size picture
# (``<a href="photo.jpg" title="..."><img src="photo-thumb.jpg"></a>``).  Lightbox scripts
# show the link's ``data-title`` (Lightbox2), ``data-caption`` (fancybox) or ``title``
# (Lightbox 1, Slimbox, Magnific Popup, ...) as the caption of that picture, so that text is
# the picture's own title when the image has none (sixteenth pass, docs/captions.md).
_IMAGE_HREF_RE = re.compile(r"\.(?:jpe?g|png|gif|webp|avif)(?:[?#]|$)", re.I)
_LIGHTBOX_ATTRS = ("data-title", "data-caption", "title")
_TAG_RE = re.compile(r"<[^>]*>")


def collapse(text: str | None) -> str:
    """Whitespace runs (incl. no-break space) -> one space; twice-escaped entities decoded."""
    if not text:
        return ""
    text = " ".join(text.split())
    # The parser decoded entities once; "&amp;eacute;" in the source leaves "&eacute;" behind.
    if "&" in text and _ESCAPED_ENTITY_RE.search(text):
        text = " ".join(html.unescape(text).split())
    return text


def cut(text: str, limit: int, keep_end: bool = False) -> str:
    """At most ``limit`` chars of collapsed ``text`` (its end if ``keep_end``), whole words."""
    if len(text) <= limit:
        return text
    if keep_end:
        part = text[-limit:]
        if text[-limit - 1] != " " and " " in part:
            part = part.split(" ", 1)[1]
        return part.strip()
    part = text[:limit]
    if text[limit] != " " and " " in part:
        part = part.rsplit(" ", 1)[0]
    return part.strip()


@dataclass(slots=True)  # one per <img>: slots make them cheaper to build and read
class ImageRef:
    """One ``<img>`` as found on a page, before texts are turned into candidates."""

    index: int  # position among the page's <img> elements (document order)
    src_url: str  # the resolved src ("" when missing or unusable)
    lazy_url: str  # the first usable lazy-loading URL (see lazy_url)
    lazy_attr: str
    srcset_url: str  # the first URL of the img's srcset, as written (resolved when used)
    picture_url: str  # the first URL of its <picture>'s first <source srcset>
    attrs: dict
    pos: int = 0  # token position of the image
    block: list | None = None  # [start, end) tokens of the nearest block element
    figure: list | None = None  # [start, end) tokens of the enclosing figure's figcaption
    in_link: bool = False
    alt: str = ""
    title: str = ""
    caption: str = ""
    before: str = ""
    after: str = ""
    url: str = ""  # the chosen absolute URL, "" when none is usable
    url_attr: str = ""
    window: tuple = (0, 0, 0)  # token range [lo, pos) before and [pos, hi) after it
    container: bool = False  # a lazy container element, not an <img>
    region: str = ""  # the page region it sits in (pipeline/steps/regions.py), "" in the content
    link: object = None  # the innermost enclosing <a> element; its href is read only when
    # a larger version of a thumbnail is looked for (image_urls.larger_url)
    node: object = None  # the <img> element: a card's title is read from the tree around it
    # only when its own block holds no text (image_cards.card_title)


@dataclass
class PageImages:
    title: str = ""
    lang: str = ""
    base: str = ""
    site_name: str = ""  # <meta property="og:site_name">: an alt saying just this is a logo
    authors: tuple = ()  # <meta name="author">, JSON-LD author names: an alt naming one is a portrait
    images: list[ImageRef] = field(default_factory=list)
    # The walk's text tokens and link spans, for fill(): texts are made only for the images
    # that need them (an icon's surrounding text is never read).
    tokens: list = field(default_factory=list, repr=False)
    spans: list = field(default_factory=list, repr=False)
    ends: list = field(default_factory=list, repr=False)
    # image -> the caption of a CMS's caption container around it, or "" (set by
    # html_images.find_images: html_images.cms_captions)
    captions: object = field(default=None, repr=False)
    # Where images were walked alone (html_images.image_subtrees): their indices, and the
    # walk of the whole body that their texts are read from, made once, on first need.
    unread: frozenset = field(default=frozenset(), repr=False)
    whole: object = field(default=None, repr=False)
    surrounding_chars: int = 300
    max_text_chars: int = 1000

    def fill(self, img: ImageRef) -> ImageRef:
        """Sets the image's alt, title, caption and surrounding texts (with link shares)."""
        if self.whole is not None and img.index in self.unread:
            self._walk_whole()
        tokens, limit = self.tokens, self.max_text_chars
        img.alt = cut(collapse(img.attrs.get("alt")), limit)
        img.title = cut(collapse(img.attrs.get("title")), limit)
        if not img.title and img.link is not None:
            img.title = cut(lightbox_title(img.link.attributes), limit)
        fig = img.figure
        if fig is not None and fig[1] >= 0:
            img.caption = cut(collapse("".join(tokens[fig[0]:fig[1]])), limit)
        if not img.caption and self.captions is not None:
            # a caption written before <figcaption>: a CMS's caption element beside the
            # picture (html_images.cms_captions, thirty-eighth pass)
            img.caption = self.captions(img)
        if img.url:
            chars = self.surrounding_chars
            img.before, lo = _before(tokens, img.block[0], img.pos, chars)
            img.after, hi = _after(tokens, img.pos, img.block[1], chars)
            img.window = (lo, img.pos, hi)
        return img

    def _walk_whole(self) -> None:
        """Every image's token ranges from the walk of the whole body, once: an image walked
        alone is asked for its texts.  The records are the same but for those ranges; an
        image already filled is filled again, its window read from the new tokens."""
        tokens, images, spans = self.whole()
        self.whole = None
        if len(images) != len(self.images):
            raise RuntimeError("the whole walk found other images than the subtrees' walk")
        self.tokens, self.spans, self.ends = tokens, spans, [e for _, e in spans]
        for img, got in zip(self.images, images):
            img.pos, img.block, img.figure = got.pos, got.block, got.figure
            if img.window != (0, 0, 0):
                self.fill(img)

    def blank_block(self, img: ImageRef) -> bool:
        """Whether the walk read no text in the image's nearest block (its tokens all
        whitespace), so no element at or below that block holds any.  Read from the tokens,
        not from the before / after texts: those can be blank where the tokens are not (an
        escaped no-break space, "&amp;nbsp;", decodes to one)."""
        lo, hi = img.block
        return not "".join(self.tokens[lo:hi]).strip()

    def links(self, img: ImageRef, after: bool) -> tuple[float, int]:
        """``(share of link text, number of links)`` of the image's before / after text."""
        lo, pos, hi = img.window
        if after:
            return _link_share(img.after, self.tokens, self.spans, self.ends, pos, hi)
        return _link_share(img.before, self.tokens, self.spans, self.ends, lo, pos)


def lightbox_title(attrs: dict) -> str:
    """The caption a lightbox link (``attrs``: an ``<a>``'s attributes) gives the picture it
    opens, or "": only a link to an image file; its text markup (``<p>``, ``<b>``, the
    sciencemag kind) is dropped, its paragraphs joined."""
    href = attrs.get("href")
    if not href or not _IMAGE_HREF_RE.search(href):
        return ""
    for name in _LIGHTBOX_ATTRS:
        value = attrs.get(name)
        if value and value.strip():
            return collapse(_TAG_RE.sub(" ", value) if "<" in value else value)
    return ""


def _link_share(text: str, tokens: list[str], spans: list[tuple[int, int]], ends: list[int],
                lo: int, hi: int) -> tuple[float, int]:
    """The share of the non-space characters of ``text`` (tokens[lo:hi], collapsed) that
    are link text, and the number of links with text there.  ``spans`` close in document
    order, so ``ends`` (their ends) is sorted: a bisection finds the first one that counts."""
    total = len(text) - text.count(" ")
    if total <= 0 or not spans:
        return 0.0, 0
    linked = n = 0
    j = bisect_right(ends, lo)
    while j < len(spans) and spans[j][0] < hi:
        s, e = spans[j]
        got = len("".join("".join(tokens[max(s, lo):min(e, hi)]).split()))
        linked += got
        n += got > 0
        j += 1
    return min(1.0, linked / total), n


def _before(tokens: list[str], start: int, pos: int, limit: int) -> tuple[str, int]:
    """The text before ``pos`` in the block, and the first token index it read."""
    got, n, i = [], 0, pos - 1
    while i >= start and n <= limit:
        got.append(tokens[i])
        n += len(tokens[i].strip())
        i -= 1
    return cut(collapse("".join(reversed(got))), limit, keep_end=True), i + 1


def _after(tokens: list[str], pos: int, end: int, limit: int) -> tuple[str, int]:
    """The text after ``pos`` in the block, and the token index after the last it read."""
    got, n, i = [], 0, pos
    while i < end and n <= limit:
        got.append(tokens[i])
        n += len(tokens[i].strip())
        i += 1
    return cut(collapse("".join(got)), limit), i
