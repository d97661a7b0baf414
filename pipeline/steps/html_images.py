"""Finding a page's images and their texts (alt, title, figcaption, surrounding text).

The page is parsed once with selectolax's lexbor backend (an HTML5 parser, so broken markup
comes out as a browser would build it) and walked once in document order.  The walk collects
the ``<img>`` elements and a flat list of text tokens, noting for every image where it sits in
that list and the token range of its nearest block element, so the text before and after an
image is a slice of the list rather than a second search of the tree.
"""
from __future__ import annotations

import html
import posixpath
from bisect import bisect_right
import re
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser

from pipeline.steps.regions import region_of


# Elements that end the "surrounding text" of an image and separate words in running text.
BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html legend li main menu "
    "nav ol p pre section summary table tbody thead tfoot tr td th caption ul".split())
# Subtrees whose text is not page text (and whose <img>, if any, are not shown to readers).
SKIP_TAGS = frozenset(
    "script style template svg math iframe textarea select object noframes head".split())
# Attributes where lazy-loading scripts keep the real URL, in order of trust; after them any
# other data-*src attribute (data-retina-src, data-dejavu-src...) is tried.
LAZY_URL_ATTRS = ("data-src", "data-lazy-src", "data-original", "data-lazy", "data-origin",
                  "data-normal")
SRCSET_ATTRS = ("srcset", "data-srcset", "data-lazy-srcset")
# Any other attribute naming an image URL: data-*src*, data-source-*, data-original-*,
# data-*image-url ("data-retina-src", "data-source-large", "data-img-src-set").
_DATA_SRC_RE = re.compile(r"^data-(?:[\w-]*src[\w-]*|source[\w-]*|original[\w-]*|[\w-]*image-?url)$")
# Elements other than <img> that lazy-loading scripts turn into one: an image URL in a lazy
# attribute and an alt-like attribute ("<div data-src=... data-alt=...>").
LAZY_CONTAINER_CSS = "[data-alt]:not(img)"
_SITE_NAME_CSS = 'meta[property="og:site_name"]'
# File names that only hold the place of a lazily loaded image (leer.gif, shim.gif,
# lazyload-transparent-image-data.gif, 1x1.trans.gif, missing-image.svg, ...).
_PLACEHOLDER_RE = re.compile(
    r"(?:^|[^a-z])(?:blank|spacer|pixel|transparent|trans|placeholder|holder|lazy[a-z]*|loading|loader"
    r"|empty|leer|shim|dummy|grey|gray|1x1|clear|missing-image|no-?image|default)(?=[^a-z]|$)")
# A lazy container's URL must name an image file (a player's data-src names an embed page).
_IMAGE_URL_RE = re.compile(r"\.(?:jpe?g|png|gif|webp|avif|bmp)(?:$|[?&#%/])", re.I)
_URL_JUNK_RE = re.compile(r"[\t\n\r]")
_PLAIN_URL_RE = re.compile(r"^https?://[^/\s#?\\@\[\]]+(?:[/?][^\s#\\]*)?$")
# A path from the site's root ("/img/a.jpg?w=300"): no "//" (another host), params (";"),
# fragment, backslash, space, or empty query, which urljoin would rewrite or drop.
_ROOT_REF_RE = re.compile(r"/(?!/)[^\s#;?\\]*(?:\?[^\s#\\]+)?")
# The scheme and host of a base URL that urlsplit reads as such, verbatim (lower-case scheme,
# no userinfo, no brackets).
_ORIGIN_RE = re.compile(r"https?://[^/\s#?\\@\[\]]+(?=[/?#]|\Z)")
_ORIGINS: dict[str, str] = {}
_DIM_RE = re.compile(r"^\s*(\d{1,6})(?:\.\d+)?\s*(?:px)?\s*$", re.I)
# A <base> element exists only where the source has a start tag named so (any case): the
# regex costs a third less than the tree-wide query it spares on the pages without one.
_BASE_TAG_RE = re.compile("<[bB][aA][sS][eE]")
_ESCAPED_ENTITY_RE = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});")


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


def first_srcset_url(srcset: str | None) -> str:
    """The first URL of a ``srcset`` ("a.jpg 1x, b.jpg 2x" -> "a.jpg")."""
    if not srcset:
        return ""
    parts = srcset.strip().split(None, 1)
    return parts[0].rstrip(",") if parts else ""


def resolve(base: str, ref: str | None) -> str:
    """An absolute http(s) URL without fragment, or "" (empty, data:, javascript:, ...)."""
    if not ref:
        return ""
    if ref.startswith(("https://", "http://")) and _PLAIN_URL_RE.match(ref):
        return ref  # already absolute and clean: skip urljoin, the costly part
    ref = _URL_JUNK_RE.sub("", ref.strip())
    if not ref or ref.lower().startswith(("data:", "javascript:", "about:", "blob:", "#")):
        return ""
    if ref[0] == "/" and _ROOT_REF_RE.fullmatch(ref) and "/." not in ref.split("?", 1)[0]:
        # A path from the root without dot segments: urljoin's result is the base's
        # origin + ref, without its two parses and unparse (a fifth of the walk's time).
        origin = _origin(base)
        if origin:
            return origin + ref
    try:
        url = urldefrag(urljoin(base, ref))[0]
        parts = urlsplit(url)
    except ValueError:  # e.g. an invalid IPv6 host
        return ""
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return url.replace(" ", "%20")


def _origin(base: str) -> str:
    """``scheme://host`` of ``base`` where urljoin would take them as they are, else ""."""
    got = _ORIGINS.get(base)
    if got is None:
        m = _ORIGIN_RE.match(base)
        got = m.group(0) if m and m.group(0).isascii() else ""
        if len(_ORIGINS) > 4096:
            _ORIGINS.clear()
        _ORIGINS[base] = got
    return got


def html_dim(value: str | None) -> int | None:
    """An img width/height attribute as pixels ("300", "300px"), None if not a number."""
    m = _DIM_RE.match(value) if value else None
    return int(m.group(1)) if m else None


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


@dataclass
class PageImages:
    title: str = ""
    lang: str = ""
    base: str = ""
    site_name: str = ""  # <meta property="og:site_name">: an alt saying just this is a logo
    images: list[ImageRef] = field(default_factory=list)
    # The walk's text tokens and link spans, for fill(): texts are made only for the images
    # that need them (an icon's surrounding text is never read).
    tokens: list = field(default_factory=list, repr=False)
    spans: list = field(default_factory=list, repr=False)
    ends: list = field(default_factory=list, repr=False)
    surrounding_chars: int = 300
    max_text_chars: int = 1000

    def fill(self, img: ImageRef) -> ImageRef:
        """Sets the image's alt, title, caption and surrounding texts (with link shares)."""
        tokens, limit = self.tokens, self.max_text_chars
        img.alt = cut(collapse(img.attrs.get("alt")), limit)
        img.title = cut(collapse(img.attrs.get("title")), limit)
        fig = img.figure
        if fig is not None and fig[1] >= 0:
            img.caption = cut(collapse("".join(tokens[fig[0]:fig[1]])), limit)
        if img.url:
            chars = self.surrounding_chars
            img.before, lo = _before(tokens, img.block[0], img.pos, chars)
            img.after, hi = _after(tokens, img.pos, img.block[1], chars)
            img.window = (lo, img.pos, hi)
        return img

    def links(self, img: ImageRef, after: bool) -> tuple[float, int]:
        """``(share of link text, number of links)`` of the image's before / after text."""
        lo, pos, hi = img.window
        if after:
            return _link_share(img.after, self.tokens, self.spans, self.ends, pos, hi)
        return _link_share(img.before, self.tokens, self.spans, self.ends, lo, pos)


def lazy_url(attrs: dict, base: str) -> tuple[str, str]:
    """``(url, attribute)`` of the first usable lazy-loading attribute, or ``("", "")``."""
    for name in attrs:  # every attribute read below is a data-* one; most images have none
        if name[:5] == "data-":
            break
    else:
        return "", ""
    for name in LAZY_URL_ATTRS:
        if attrs.get(name):
            url = resolve(base, attrs[name])
            if url:
                return url, name
    for name in SRCSET_ATTRS[1:]:
        if attrs.get(name):
            url = resolve(base, first_srcset_url(attrs[name]))
            if url:
                return url, name
    for name, value in attrs.items():
        if value and name[:5] == "data-" and name not in LAZY_URL_ATTRS \
                and _DATA_SRC_RE.match(name):
            url = resolve(base, first_srcset_url(value))
            if url and not url.endswith((".html", ".htm", ".js", ".json", ".php")):
                return url, name
    return "", ""


def is_placeholder(url: str) -> bool:
    path = url.split("?", 1)[0].split("#", 1)[0]  # an absolute URL: its path's last segment
    name = path[path.rfind("/") + 1:] if path.count("/") > 2 else ""
    return bool(_PLACEHOLDER_RE.search(name.lower()))


def choose_urls(images: list["ImageRef"], base: str = "") -> None:
    """Sets each image's ``url`` and ``url_attr``.

    The src wins unless it is unusable (missing, empty, data:, javascript:) or a placeholder
    while a lazy-loading attribute holds another URL.  A placeholder src has a placeholder-like
    file name or is shared by images whose lazy URLs differ (one src, many real images).  With
    no usable src, the img's own ``srcset`` and then its ``<picture>``'s first ``<source>``
    are tried; a placeholder src gives way to the img's srcset too.  ``srcset_url`` is the
    srcset's first URL as written: it is resolved against ``base`` only when it is used.
    """
    lazy_by_src: dict[str, set] = {}
    for img in images:
        if img.src_url and img.lazy_url:
            lazy_by_src.setdefault(img.src_url, set()).add(img.lazy_url)
    for img in images:
        src = img.src_url
        if img.lazy_url and (not src or len(lazy_by_src.get(src, ())) >= 2
                             or is_placeholder(src)):
            img.url, img.url_attr = img.lazy_url, img.lazy_attr
        elif src and img.srcset_url and is_placeholder(src) \
                and resolve(base, img.srcset_url) not in ("", src):
            img.url, img.url_attr = resolve(base, img.srcset_url), "srcset"  # a real srcset
        elif src:
            img.url, img.url_attr = src, "src"
        elif img.srcset_url and resolve(base, img.srcset_url):
            img.url, img.url_attr = resolve(base, img.srcset_url), "srcset"
        elif img.picture_url:
            img.url, img.url_attr = img.picture_url, "picture"


# Frame kinds; a link's kind is negative: -(the index of its first token + 1).
_PLAIN, _BLOCK, _FIGURE, _FIGCAPTION, _PICTURE, _ADJ_CAPTION = range(6)
# What the walk does with an element, by tag: one dict lookup instead of a chain of tests
# per element (a page has thousands).  Below _A it is entered; unlisted tags are plain.
_DO_PLAIN, _DO_BLOCK, _DO_FIGURE, _DO_FIGCAPTION, _DO_PICTURE, _DO_A, _DO_IMG, _DO_BREAK, \
    _DO_SOURCE, _DO_SKIP, _DO_EMPTY_TEXT = range(11)
_ACTION = {**{t: _DO_BLOCK for t in BLOCK_TAGS}, **{t: _DO_SKIP for t in SKIP_TAGS},
           "figure": _DO_FIGURE, "figcaption": _DO_FIGCAPTION, "picture": _DO_PICTURE,
           "a": _DO_A, "img": _DO_IMG, "br": _DO_BREAK, "hr": _DO_BREAK,
           "source": _DO_SOURCE}


def _tag_ids() -> dict[int, int]:
    """``_ACTION`` keyed by lexbor's tag id: reading ``tag_id`` costs an element a quarter less
    than ``tag``, which decodes the element's name into a new str every time.  The ids of
    the HTML names lexbor knows are fixed small numbers; a name it does not know gets an id
    made from an address (per document), never one of these."""
    make = LexborHTMLParser("").create_node
    out = {}
    for name, do in _ACTION.items():
        node = make(name)
        if node.tag != name or node.tag_id >= _KNOWN_IDS or node.tag_id in out:
            raise RuntimeError(f"lexbor has no fixed tag id for <{name}>")
        out[node.tag_id] = do
    return out


# Lexbor's fixed ids: the known HTML names' (below 0x1000; see _tag_ids), a text node's (2:
# one without data) and the other non-elements' (document, comment, doctype: passed over).
_KNOWN_IDS = 0x1000
_ACTION_ID = {**_tag_ids(), 2: _DO_EMPTY_TEXT, 3: _DO_SKIP, 4: _DO_SKIP, 5: _DO_SKIP}


def _after_figure(node, fig_id: int) -> bool:
    """Whether ``node`` (a figcaption) follows the figure of mem_id ``fig_id`` as its next
    element sibling, whitespace between them."""
    prev = node.prev
    while prev is not None and prev.tag == "-text" and not (prev.text_content or "").strip():
        prev = prev.prev
    return prev is not None and prev.tag == "figure" and prev.mem_id == fig_id


def walk(root, base: str, containers: frozenset = frozenset()) -> tuple[list[str], list[ImageRef],
                                                                         list[tuple[int, int]]]:
    """Text tokens and images of ``root`` in document order (see the module docstring).

    Iterative, so pages nested thousands of elements deep do not hit the recursion limit.
    Block frames are ``[start, end]`` token ranges; figure frames ``[cap_start, cap_end]``
    of their first figcaption (-1 while unknown); a figure without one takes a
    ``<figcaption>`` that is its next sibling.  Each image notes its region
    (:func:`pipeline.steps.regions.region_of` over the open elements).  ``containers`` holds the
    mem_ids of lazy containers (``LAZY_CONTAINER_CSS``), walked as images.  Also returns the
    token ranges of link text.
    """
    link_spans: list[tuple[int, int]] = []
    memo: dict = {}
    last_figure: tuple = (0, None)
    tokens: list[str] = []
    images: list[ImageRef] = []
    blocks = [[0, -1]]
    figures: list[list[int]] = []
    pictures: list[list[str]] = []
    links = 0
    stack: list[tuple] = []
    push = stack.append
    add = tokens.append
    node = root.child
    while True:
        if node is None:
            if not stack:
                break
            parent, kind = stack.pop()
            node = parent.next
            if kind:  # leaving an element that opened a frame
                if kind < 0:  # a link: -(its first token + 1)
                    links -= 1
                    if len(tokens) > -kind - 1:
                        link_spans.append((-kind - 1, len(tokens)))
                elif kind == _PICTURE:
                    pictures.pop()
                else:
                    blocks.pop()[1] = len(tokens)
                    if kind == _FIGURE:
                        frame = figures.pop()
                        last_figure = (parent.mem_id, frame) if frame[0] < 0 else (0, None)
                    elif kind == _ADJ_CAPTION:
                        last_figure[1][1] = len(tokens)
                        last_figure = (0, None)
                    elif kind == _FIGCAPTION and figures and figures[-1][0] >= 0 \
                            and figures[-1][1] < 0:
                        figures[-1][1] = len(tokens)  # the figure's first figcaption ends
                    add(" ")
            continue
        text = node.text_content  # None unless a text node: most nodes are
        if text is not None:
            add(text)
            node = node.next
            continue
        do = _ACTION_ID.get(node.tag_id, _DO_PLAIN)
        if do <= _DO_A:
            child = node.first_child  # not .child, an alias that costs a second lookup
            kind = _PLAIN
            if do == _DO_PLAIN:
                pass
            elif do <= _DO_FIGCAPTION:
                add(" ")
                blocks.append([len(tokens), -1])
                kind = _BLOCK
                if do == _DO_FIGURE:
                    figures.append([-1, -1])
                    kind = _FIGURE
                elif do == _DO_FIGCAPTION:
                    kind = _FIGCAPTION
                    if figures and figures[-1][0] < 0:
                        figures[-1][0] = len(tokens)
                    elif last_figure[1] is not None and _after_figure(node, last_figure[0]):
                        kind = _ADJ_CAPTION
                        last_figure[1][0] = len(tokens)
            elif do == _DO_PICTURE:
                pictures.append([""])
                kind = _PICTURE
            else:  # a link
                links += 1
                kind = -len(tokens) - 1  # a link's frame holds where its text starts
            if containers and node.mem_id in containers:
                attrs = node.attributes
                lazy, lazy_attr = lazy_url(attrs, base)
                if lazy and _IMAGE_URL_RE.search(lazy):
                    attrs = dict(attrs, alt=attrs.get("data-alt") or attrs.get("alt"))
                    images.append(ImageRef(
                        len(images), "", lazy, lazy_attr, "", "", attrs, len(tokens),
                        blocks[-1], figures[-1] if figures else None, links > 0,
                        region=region_of(stack + [(node, kind)], memo), container=True))
            if child is not None:
                push((node, kind))
                node = child
                continue
            if kind:  # an empty element: open and close at once
                push((node, kind))
                node = None
                continue
        elif do == _DO_IMG:
            attrs = node.attributes
            lazy, lazy_attr = lazy_url(attrs, base)
            images.append(ImageRef(
                len(images), resolve(base, attrs.get("src")), lazy, lazy_attr,
                first_srcset_url(attrs.get("srcset")),
                pictures[-1][0] if pictures else "", attrs, len(tokens), blocks[-1],
                figures[-1] if figures else None, links > 0, region=region_of(stack, memo)))
        elif do == _DO_BREAK:
            add(" ")
        elif do == _DO_SOURCE:
            if pictures and not pictures[-1][0] and node.parent.tag == "picture":
                attrs = node.attributes
                pictures[-1][0] = resolve(base, first_srcset_url(
                    attrs.get("srcset") or attrs.get("data-srcset")))
        elif do == _DO_EMPTY_TEXT:
            add("")  # a text node without data (as before: a token all the same)
        node = node.next
    blocks[0][1] = len(tokens)
    return tokens, images, link_spans


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


def find_images(text: str, page_url: str, surrounding_chars: int = 300,
                max_text_chars: int = 1000, texts: bool = True, tree=None) -> PageImages:
    """Every ``<img>`` of an HTML document with its URL and its texts (not yet de-duplicated);
    with ``texts=False`` the texts are left for :meth:`PageImages.fill`, image by image.
    ``tree``: ``text`` already parsed (it is only read)."""
    tree = LexborHTMLParser(text) if tree is None else tree
    base_node = tree.css_first("base[href]") if _BASE_TAG_RE.search(text) else None
    base = resolve(page_url, base_node.attributes.get("href")) if base_node else ""
    base = base or page_url
    title_node = tree.css_first("head > title") or tree.css_first("title")
    root = tree.root
    lang = ""
    if root is not None:
        attrs = root.attributes
        lang = (attrs.get("lang") or attrs.get("xml:lang") or "").strip()
        lang = lang.replace("_", "-").split("-", 1)[0].lower()
    out = PageImages(title=cut(collapse(title_node.text() if title_node else ""), max_text_chars),
                     lang=lang, base=base, surrounding_chars=surrounding_chars,
                     max_text_chars=max_text_chars)
    if "og:site_name" in text:  # a query costs a tenth of a walk: only where it can match
        # The head comes first in document order: a match there is the page's first, found
        # without a query over the whole tree.
        head = tree.head
        site_node = (head.css_first(_SITE_NAME_CSS) if head is not None else None) \
            or tree.css_first(_SITE_NAME_CSS)
        if site_node is not None:
            out.site_name = collapse(site_node.attributes.get("content"))
    body = tree.body or root
    if body is None:
        return out
    # The query costs a tenth of a walk; most pages have no data-alt at all.
    containers = frozenset(n.mem_id for n in body.css(LAZY_CONTAINER_CSS)) \
        if "data-alt" in text else frozenset()
    out.tokens, out.images, out.spans = walk(body, base, containers)
    choose_urls(out.images, base)
    out.ends = [e for _, e in out.spans]
    if texts:
        for img in out.images:
            out.fill(img)
    return out
