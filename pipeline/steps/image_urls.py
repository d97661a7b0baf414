"""An image's URL, read from its attributes: ``src``, ``srcset``, ``<picture>`` sources and the
attributes lazy-loading scripts keep the real URL in; which of them an image shows
(:func:`choose_urls`); and the width/height attributes.

Kept apart from the walk (:mod:`pipeline.steps.html_images`) because it is pure string work on
attribute values, tested and tuned (``resolve`` is on every image's path) on its own.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

if TYPE_CHECKING:  # only for the annotation: the record lives with the texts it carries
    from pipeline.steps.image_texts import ImageRef


# Attributes where lazy-loading scripts keep the real URL, in order of trust; after them any
# other data-*src attribute (data-retina-src, data-dejavu-src...) is tried.  Zurb Foundation's
# data-interchange holds its rules ("[a.jpg, (small)], [b.jpg, (large)]": interchange_url).
LAZY_URL_ATTRS = ("data-src", "data-lazy-src", "data-original", "data-lazy", "data-origin",
                  "data-normal", "data-interchange")
SRCSET_ATTRS = ("srcset", "data-srcset", "data-lazy-srcset")
# Any other attribute naming an image URL: data-*src*, data-source-*, data-original-*,
# data-*image-url ("data-retina-src", "data-source-large", "data-img-src-set").
_DATA_SRC_RE = re.compile(r"^data-(?:[\w-]*src[\w-]*|source[\w-]*|original[\w-]*|[\w-]*image-?url)$")
# File names that only hold the place of a lazily loaded image (leer.gif, shim.gif,
# lazyload-transparent-image-data.gif, 1x1.trans.gif, missing-image.svg, ...).
_PLACEHOLDER_RE = re.compile(
    r"(?:^|[^a-z])(?:blank|spacer|pixel|transparent|trans|placeholder|holder|lazy[a-z]*|loading|loader"
    r"|empty|leer|shim|dummy|grey|gray|1x1|clear|missing-image|no-?image|default)(?=[^a-z]|$)")
# A lazy container's URL must name an image file (a player's data-src names an embed page).
IMAGE_URL_RE = re.compile(r"\.(?:jpe?g|png|gif|webp|avif|bmp)(?:$|[?&#%/])", re.I)
_URL_JUNK_RE = re.compile(r"[\t\n\r]")
# An image file's extension anywhere, tabs and line breaks (which resolve drops) allowed
# inside it: what a URL naming an image file (IMAGE_URL_RE) needs of its unresolved form.
_IMAGE_EXT_RE = re.compile(r"\.[\t\n\r]*(?:j[\t\n\r]*p|p[\t\n\r]*n|g[\t\n\r]*i|w[\t\n\r]*e|a[\t\n\r]*v"
                           r"|b[\t\n\r]*m)", re.I)
_PLAIN_URL_RE = re.compile(r"^https?://[^/\s#?\\@\[\]]+(?:[/?][^\s#\\]*)?$")
# A path from the site's root ("/img/a.jpg?w=300"): no "//" (another host), params (";"),
# fragment, backslash, space, or empty query, which urljoin would rewrite or drop.
_ROOT_REF_RE = re.compile(r"/(?!/)[^\s#;?\\]*(?:\?[^\s#\\]+)?")
# The scheme and host of a base URL that urlsplit reads as such, verbatim (lower-case scheme,
# no userinfo, no brackets).
_ORIGIN_RE = re.compile(r"https?://[^/\s#?\\@\[\]]+(?=[/?#]|\Z)")
_ORIGINS: dict[str, str] = {}
_DIM_RE = re.compile(r"^\s*(\d{1,6})(?:\.\d+)?\s*(?:px)?\s*$", re.I)
# Between two rules of an Interchange value: "], [".
_RULE_SEP_RE = re.compile(r"\]\s*,\s*\[")


def first_srcset_url(srcset: str | None) -> str:
    """The first URL of a ``srcset`` ("a.jpg 1x, b.jpg 2x" -> "a.jpg")."""
    if not srcset:
        return ""
    parts = srcset.strip().split(None, 1)
    return parts[0].rstrip(",") if parts else ""


# No server takes a longer URL (Apache's request line stops at 8,190 bytes, nginx's at 8 KB):
# a longer src is not an image to fetch, and one of megabytes (a hostile page) would travel in
# every record after the extract step.  The longest image URL of the 510 real pages has 1,473
# characters (docs/captions.md, "Worst-case cost of hostile input").
MAX_URL_CHARS = 8192


def resolve(base: str, ref: str | None) -> str:
    """An absolute http(s) URL without fragment, or "" (empty, data:, javascript:, ...,
    or longer than :data:`MAX_URL_CHARS`)."""
    if not ref or len(ref) > MAX_URL_CHARS:
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
            url = origin + ref
            return url if len(url) <= MAX_URL_CHARS else ""
    try:
        url = urldefrag(urljoin(base, ref))[0]
        parts = urlsplit(url)
    except ValueError:  # e.g. an invalid IPv6 host
        return ""
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    url = url.replace(" ", "%20")
    return url if len(url) <= MAX_URL_CHARS else ""


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


def interchange_url(value: str, base: str) -> str:
    """The URL of a Zurb Foundation Interchange value, "" when it is none.

    Interchange writes comma-separated ``[path, (query)]`` rules ("[a.jpg, (default)],
    [b.jpg, (large)]") in ``data-interchange``, and some sites put the same in a lazy
    attribute (austria.info's ``data-lazy``).  Foundation applies the last rule whose media
    query matches, and rules are written smallest first; on a desktop screen every size query
    matches, so the last rule's path that resolves is the picture a reader sees.  A path may
    hold commas (``w_300,h_250``): as Foundation does, a rule is split at its last comma."""
    inner = value.strip()
    if inner[:1] != "[" or inner[-1:] != "]":
        return ""
    for rule in reversed(_RULE_SEP_RE.split(inner[1:-1])):
        path, sep, query = rule.rpartition(",")
        query = query.strip()
        if sep and query[:1] == "(" and query[-1:] == ")":
            url = resolve(base, path.strip())
            if url:
                return url
    return ""


def _lazy_value(value: str, base: str) -> str:
    """A lazy attribute's URL: an Interchange value's (the one test most values pass at its
    first character), else the value resolved as one URL."""
    first = value[0]
    if first == "[" or (first.isspace() and value.lstrip()[:1] == "["):
        return interchange_url(value, base)
    return resolve(base, value)


# Older lazy loaders keep the real URL outside data-*: jQuery "delayed image" scripts in
# ``longdesc`` (HuffPost, Livestrong, Blogger's follower widget), Yahoo's ``lzbg`` in an inline
# ``background-image`` over a transparent src.  Read last, and only when the value names an
# image file (a true longdesc names a description page).
_STYLE_URL_RE = re.compile(r"background(?:-image)?\s*:[^;]*?url\(\s*(['\"]?)([^'\")]+)\1\s*\)", re.I)


# A lazy loader's attribute of its own outside data-*, named for what it holds: NitroPack's
# ``nitro-lazy-src`` / ``nitro-lazy-srcset`` (over an inline SVG placeholder), CNET's and
# theperspective.com's ``lazysrc`` (qa22: a recipe page of the new sites gave no image).
_OWN_LAZY_RE = re.compile(r"^(?!data-)[\w-]*lazy[-_]?src(set)?$")


def _own_lazy_url(attrs: dict, base: str) -> tuple[str, str]:
    """``(url, attribute)`` of a lazy loader's own attribute (``_OWN_LAZY_RE``) naming an image
    file, a ``...lazy-src`` before a ``...lazy-srcset``; ``("", "")`` when none does, or when
    the image has a ``srcset`` of its own, which a browser shows at once (theperspective.com's
    images carry both: its srcset stays the URL, as before)."""
    if attrs.get("srcset"):
        return "", ""
    got = sorted((m.group(1) is not None, name) for name in attrs
                 if "lazy" in name and (m := _OWN_LAZY_RE.match(name)))
    for _, name in got:
        url = resolve(base, first_srcset_url(attrs[name]))
        if url and IMAGE_URL_RE.search(url):
            return url, name
    return "", ""


def _old_lazy_url(attrs: dict, base: str) -> tuple[str, str]:
    if "lazy" in "".join(attrs):  # one C-level test: most images name no lazy attribute
        url, name = _own_lazy_url(attrs, base)
        if url:
            return url, name
    value = attrs.get("longdesc")
    if value:
        url = resolve(base, value)
        if url and IMAGE_URL_RE.search(url):
            return url, "longdesc"
    value = attrs.get("style")
    if value and "url(" in value:
        m = _STYLE_URL_RE.search(value)
        url = resolve(base, m.group(2)) if m else ""
        if url and IMAGE_URL_RE.search(url):
            return url, "style"
    return "", ""


def _may_be_old(attrs: dict) -> bool:
    """Whether :func:`_old_lazy_url` could find a URL in ``attrs`` (its cheap gate)."""
    return "longdesc" in attrs or "style" in attrs or "lazy" in "".join(attrs)


def lazy_url(attrs: dict, base: str) -> tuple[str, str]:
    """``(url, attribute)`` of the first usable lazy-loading attribute, or ``("", "")``."""
    for name in attrs:  # every attribute read below is a data-* one; most images have none
        if name[:5] == "data-":
            break
    else:
        return _old_lazy_url(attrs, base) if _may_be_old(attrs) else ("", "")
    for name in LAZY_URL_ATTRS:
        if attrs.get(name):
            url = _lazy_value(attrs[name], base)
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
            url = interchange_url(value, base) if value.lstrip()[:1] == "[" else \
                resolve(base, first_srcset_url(value))
            if url and not url.endswith((".html", ".htm", ".js", ".json", ".php")):
                return url, name
    return _old_lazy_url(attrs, base) if _may_be_old(attrs) else ("", "")


def is_placeholder(url: str) -> bool:
    path = url.split("?", 1)[0].split("#", 1)[0]  # an absolute URL: its path's last segment
    name = path[path.rfind("/") + 1:] if path.count("/") > 2 else ""
    return bool(_PLACEHOLDER_RE.search(name.lower()))


# A low-quality image placeholder (LQIP, "blur-up": lazysizes' README, Medium) asked of a
# resizing server: a blur (imgix / Sanity / Contentstack "blur", Cloudinary "e_blur"), a quality
# of 10 or less (imgix / Contentful / Next.js "q", "quality", Cloudinary "q_N"), or a side of
# 64 px or less ("w", "width", "h", "height", Cloudinary "w_N" / "h_N"); homechef's imgix
# "?w=75&blur=100&q=0", monsterpetsupplies' Cloudinary "c_scale,w_1,h_1" (fiftieth pass).
_PX_64 = r"0*(?:[1-9]|[1-5]\d|6[0-4])"  # 1 to 64
_LQIP_RE = re.compile(
    rf"[?&](?:blur=0*[1-9]\d*|q(?:uality)?=0*(?:10|\d)|(?:w|width|h|height)={_PX_64})(?=[&#]|$)"
    rf"|[/,](?:e_blur(?=[:,/])|q_0*(?:10|\d)(?=[,/])|[wh]_{_PX_64}(?=[,/]))", re.I)


def is_lqip(url: str) -> bool:
    """Whether an image URL asks its server for a low-quality placeholder (``_LQIP_RE``)."""
    return _LQIP_RE.search(url) is not None


def _best_lazy(img: ImageRef, base: str) -> str:
    """The lazy attribute's best candidate: a lazy srcset's largest (srcset_largest), else the
    lazy URL as read."""
    if img.lazy_attr.endswith("srcset"):
        ref = srcset_largest(img.attrs.get(img.lazy_attr))[0]
        url = resolve(base, ref) if ref else ""
        if url:
            return url
    return img.lazy_url


def choose_urls(images: list[ImageRef], base: str = "") -> None:
    """Sets each image's ``url`` and ``url_attr``.

    The src wins unless it is unusable (missing, empty, data:, javascript:) or a placeholder
    while a lazy-loading attribute holds another URL, or the lazy URL is Foundation
    Interchange's (``data-interchange``), whose script replaces the src on load.  A src asking
    for a low-quality placeholder (:func:`is_lqip`: a blur, quality 10 or less, a side of 64 px
    or less) gives way to the lazy attribute's best candidate (a lazy srcset's largest) when
    that is another URL and no such placeholder itself.  A placeholder src has a placeholder-like
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
                             or is_placeholder(src)
                             # Interchange's script replaces any src (thirteenth pass)
                             or img.lazy_attr == "data-interchange"):
            img.url, img.url_attr = img.lazy_url, img.lazy_attr
        elif img.lazy_url and is_lqip(src) \
                and (best := _best_lazy(img, base)) != src and not is_lqip(best):
            # a blurred / tiny src the lazy loader replaces (fiftieth pass): its best candidate
            img.url, img.url_attr = best, img.lazy_attr
        elif src and img.srcset_url and is_placeholder(src) \
                and resolve(base, img.srcset_url) not in ("", src):
            img.url, img.url_attr = resolve(base, img.srcset_url), "srcset"  # a real srcset
        elif src:
            img.url, img.url_attr = src, "src"
        elif img.srcset_url and resolve(base, img.srcset_url):
            img.url, img.url_attr = resolve(base, img.srcset_url), "srcset"
        elif img.picture_url:
            img.url, img.url_attr = img.picture_url, "picture"


# Attributes naming a larger version of the same picture: WordPress (Jetpack) galleries'
# data-orig-file / data-large-file, lightbox and zoom scripts' data-full* / data-zoom* /
# data-large* / data-hires.  Read only for a thumbnail too small to be fetched.
LARGER_ATTRS = ("data-orig-file", "data-large-file", "data-full-url", "data-full-src",
                "data-full", "data-zoom-image", "data-zoom-src", "data-large",
                "data-large-src", "data-hires", "data-highres")
_LARGER_SET, _SRCSET_SET = frozenset(LARGER_ATTRS), frozenset(SRCSET_ATTRS)
# A descriptor token; a comma ends the candidate, and the next one's URL may follow with no space
# (HTML's srcset parsing: "a.jpg 1x,b.jpg 2x", as littlethings' Contentful images write it).
_DESCRIPTOR_RE = re.compile(r"^(\d{1,5}(?:\.\d+)?)([wx])(?:,(.*))?$")


def srcset_largest(srcset: str | None) -> tuple[str, float, str]:
    """``(url, value, "w" or "x")`` of a ``srcset``'s largest candidate, ``("", 0, "")`` when it
    has no descriptor.  Split on whitespace, not commas: image-CDN URLs hold commas
    (``?rect=128,32,245,245&w=48``); a token that is a descriptor belongs to the URL before,
    and what follows its comma, if anything, is the next candidate's URL."""
    best = ("", 0.0, "")
    url = ""
    for token in (srcset or "").split():
        m = _DESCRIPTOR_RE.match(token)
        if m is None:
            url = token.rstrip(",")
            continue
        if url and (m.group(2) == best[2] or not best[2]) and float(m.group(1)) > best[1]:
            best = (url, float(m.group(1)), m.group(2))
        url = (m.group(3) or "").rstrip(",")
    return best


def larger_url(img: ImageRef, base: str, min_px: int) -> tuple[str, str, int | None]:
    """``(url, where, width)`` of a larger version of a thumbnail's picture that the page itself
    names, or ``("", "", None)``; ``where`` says which markup named it (recorded as the
    candidate's ``url_attr``), ``width`` is its width where the markup says it.

    In order: an attribute of :data:`LARGER_ATTRS`; the largest ``srcset`` candidate, when
    it is ``min_px`` wide or more (a ``2x`` one: when twice the declared width is); the
    enclosing link's ``href`` when it names the same picture's file (``<a href="photo.jpg"><img
    src="photo-150x150.jpg">``); the absolute image URL an image proxy is given in the
    thumbnail's query (``timthumb.php?src=https://.../photo.jpg&w=100``).  Never a URL the
    page does not hold: no size is rewritten in a URL, no relative path is joined to a host
    it was not given with."""
    attrs = img.attrs
    # One set test in C first: most thumbnails carry none of the eleven attributes.
    for name in () if _LARGER_SET.isdisjoint(attrs) else LARGER_ATTRS:
        value = attrs.get(name)
        if value:
            url = resolve(base, first_srcset_url(value))
            if url and url != img.url and IMAGE_URL_RE.search(url):
                return url, name, None
    for name in () if _SRCSET_SET.isdisjoint(attrs) else SRCSET_ATTRS:
        value = attrs.get(name)
        if not value:
            continue
        ref, size, unit = srcset_largest(value)
        declared = html_dim(attrs.get("width"))
        width = int(size) if unit == "w" else int(size * declared) if declared else 0
        if ref and width >= min_px:
            url = resolve(base, ref)
            if url and url != img.url:
                return url, f"{name} {int(size)}{unit}", width
    link = img.link
    if link is not None:
        href = link.attributes.get("href")
        # Most links go to a page, not an image file: an href without an image file's
        # extension is passed over before resolve (urljoin, the costly part), which never
        # adds one.
        if href and _IMAGE_EXT_RE.search(href):
            url = resolve(base, href)
            if url and url != img.url and _same_picture(img.url, url):
                return url, "a href", None
    m = _PROXY_RE.search(img.url)
    if m:
        url = resolve("", unquote(m.group(2)))
        if url and IMAGE_URL_RE.search(url):
            return url, f"proxy {m.group(1).lower()}", None
    return "", "", None


# An image proxy or resizer serving a thumbnail of the picture whose absolute URL it is given
# ("timthumb.php?src=https://...jpg&w=200", "gear-image.ashx?size=s&img=http%3a%2f%2f...jpg").
_PROXY_RE = re.compile(r"[?&](src|img|image|url|u|i|file)=(https?(?::|%3a)[^&#]+)", re.I)


_NAME_WORD_RE = re.compile(r"[a-z]{3,}")
# Words of a file name that say how it is served, not what it shows.
_SERVING_WORDS = frozenset("jpg jpeg png gif webp thumb thumbs thumbnail small large medium "
                           "full scaled crop cropped resized image img".split())


def _same_picture(thumb: str, href: str) -> bool:
    """Whether a link's target is an image file showing the thumbnail's picture: its path names
    an image file (not a wiki's ``File:Photo.jpg`` page, a colon in the last segment) whose
    name holds the words of the thumbnail's file name ("photo-150x150.jpg" -> "photo.jpg"),
    not another picture (a magnifier icon linking to the photo it enlarges)."""
    path = href.split("?", 1)[0].split("#", 1)[0]
    name = path[path.rfind("/") + 1:].lower()
    if ":" in name or not IMAGE_URL_RE.search(name + "?"):
        return False
    own = thumb.split("?", 1)[0].split("#", 1)[0]
    words = set(_NAME_WORD_RE.findall(own[own.rfind("/") + 1:].lower())) - _SERVING_WORDS
    target = set(_NAME_WORD_RE.findall(name)) - _SERVING_WORDS
    return bool(words) and len(words & target) * 2 >= len(words)
