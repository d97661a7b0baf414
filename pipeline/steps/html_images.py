"""Finding a page's images and their texts (alt, title, figcaption, surrounding text).

The page is parsed once with selectolax's lexbor backend (an HTML5 parser, so broken markup
comes out as a browser would build it) and walked once in document order.  The walk collects
the ``<img>`` elements and a flat list of text tokens, noting for every image where it sits in
that list and the token range of its nearest block element, so the text before and after an
image is a slice of the list rather than a second search of the tree.

The image URLs are read in :mod:`pipeline.steps.image_urls`; the image records and their
texts are in :mod:`pipeline.steps.image_texts`.
"""
from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser

from pipeline.steps.image_texts import ImageRef, PageImages, collapse, cut
from pipeline.steps.image_urls import (IMAGE_URL_RE, choose_urls, first_srcset_url, lazy_url,
                                       resolve)
from pipeline.steps.regions import region_of


# Elements that end the "surrounding text" of an image and separate words in running text.
BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html legend li main menu "
    "nav ol p pre section summary table tbody thead tfoot tr td th caption ul".split())
# Subtrees whose text is not page text (and whose <img>, if any, are not shown to readers).
SKIP_TAGS = frozenset(
    "script style template svg math iframe textarea select object noframes head".split())
# Elements other than <img> that lazy-loading scripts turn into one: an image URL in a lazy
# attribute and an alt-like attribute ("<div data-src=... data-alt=...>").
LAZY_CONTAINER_CSS = "[data-alt]:not(img)"
# The images and the lazy containers of a page in one query, in document order (lexbor's
# selector search is one walk of the tree): what the walk must reach (image_subtrees).
_ITEMS_CSS = "img, " + LAZY_CONTAINER_CSS
# The same query finds the <base href> elements of the body (_page_items); each selector of
# the list excludes the others' elements, as lexbor reports an element once per selector.
_BASE_CSS = "base[href]"
_ITEMS_BASE_CSS = _ITEMS_CSS + ", " + _BASE_CSS + ":not([data-alt])"
_SITE_NAME_CSS = 'meta[property="og:site_name"]'
_AUTHOR_CSS = 'meta[name="author"]'
# A JSON-LD author object's name, "author": {"@type": "Person", "name": "Sylvia Fountaine"} or
# the first of a list of them (thirty-sixth pass): read from the source, not the parsed script.
_LD_AUTHOR_RE = re.compile(r'"author"\s*:\s*\[?\s*\{[^{}]{0,400}?"name"\s*:\s*"([^"\\]{3,80})"')
# Caption containers of the conventions written before <figcaption> (thirty-eighth pass,
# docs/captions.md, each from the CMS's own template code): a class token of the container
# -> the selector of its caption element.  WordPress's [caption] and [gallery] shortcodes
# without html5 support (img_caption_shortcode, gallery_shortcode: "div.wp-caption >
# p.wp-caption-text", "dl.gallery-item > dd.wp-caption-text"), Blogger's post editor (a
# caption table's second row), MediaWiki's legacy thumbnail (Linker::makeThumbLink2),
# docutils' HTML4 figure (its p.caption a child of the div).  Their figcaption forms are
# read by the walk already.  A schema.org ImageObject (itemscope, an itemtype ending so)
# holds its caption as an element with itemprop="caption".
_CMS_BOXES = {"wp-caption": ".wp-caption-text", "gallery-item": ".wp-caption-text",
              "tr-caption-container": "td.tr-caption", "thumbinner": ".thumbcaption",
              "figure": "p.caption"}
_SCHEMA_CAPTION_CSS = "[itemprop=caption]"
# How far above an image its container may be (Blogger's table: img < a < td < tr < tbody <
# table, five; WordPress, MediaWiki, docutils: one to three).
_CMS_DEPTH = 5


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
(_IMG_ID,) = (tag_id for tag_id, do in _ACTION_ID.items() if do == _DO_IMG)


def tag_ids(*names: str) -> frozenset[int]:
    """Lexbor's fixed tag ids of HTML element ``names``: a node's ``tag_id`` is compared
    without decoding its name (``tag`` makes a string per call)."""
    make = LexborHTMLParser("").create_node
    return frozenset(make(name).tag_id for name in names)


# <base> by lexbor's tag id: _page_items tells the query's <base> elements from the rest.
(_BASE_ID,) = tag_ids("base")
# The tags of the pre-figcaption caption containers (_CMS_BOXES): div, table, dl.
_BOX_TAG_IDS = tag_ids("div", "table", "dl")


def _after_figure(node, fig_id: int) -> bool:
    """Whether ``node`` (a figcaption) follows the figure of mem_id ``fig_id`` as its next
    element sibling, whitespace between them."""
    prev = node.prev
    while prev is not None and prev.tag == "-text" and not (prev.text_content or "").strip():
        prev = prev.prev
    return prev is not None and prev.tag == "figure" and prev.mem_id == fig_id


def _innermost_link(stack: list) -> object:
    """The innermost open ``<a>`` of the walk's stack (a link's frame has a negative kind):
    looked up only for an image inside a link, rather than kept for every link opened."""
    i = len(stack)
    while i:  # an index walk: reversed() would make an iterator object per image
        i -= 1
        if stack[i][1] < 0:
            return stack[i][0]
    return None


# What an element that holds an image is to image_subtrees: opens a block frame (its text
# range), or a frame whose state an image reads (a figure's caption, a picture's source, a
# link), or neither.
_BLOCK_DOS = frozenset((_DO_BLOCK, _DO_FIGURE, _DO_FIGCAPTION))
_FRAME_DOS = frozenset((_DO_FIGURE, _DO_PICTURE, _DO_A))
# The elements that open a block frame: an image's nearest ancestor among them is the
# block whose token range is its ``ImageRef.block`` (image_cards climbs through it).
BLOCK_TAG_IDS = frozenset(tag_id for tag_id, do in _ACTION_ID.items() if do in _BLOCK_DOS)


def image_subtrees(root, items, containers: frozenset = frozenset(),
                   alone: set | None = None) -> list | None:
    """The parts of ``root`` the walk must read for its images: ``items``, the ``<img>``
    elements of ``root`` and its lazy containers (their mem_ids in ``containers``) in
    document order.  Returns ``[(element, its ancestors below root, outermost first)]`` in
    document order, or None when that is all of ``root``.

    An image's texts are read from token ranges inside its nearest block element (the text
    around it), its figure (the caption; a figcaption just after the figure is in the
    figure's parent) and its links (link shares).  So the subtree an image needs is its
    nearest block ancestor above its outermost figure, picture or link: no state of the walk
    read for the image is opened above it.  An image with no such block below ``root``
    needs all of ``root``.  Pages are mostly markup no image needs (58% of the nodes of the
    bench's pages), and the walk costs per node.  Images the walk never reaches (inside a
    skipped element: script, svg, ...) need nothing.  A lazy container is read like its
    image, itself included (its own block, figure or link frame is open for its image).

    ``alone`` (a set): an ``<img>`` with no such block is walked as a subtree of its own
    instead, its outermost figure, picture or link, else itself, and its mem_id added to
    ``alone``.  Its record is then the whole walk's but for its token ranges (its figure,
    picture and links are open, its region reads its ancestors): its texts must be read from
    the whole walk (:meth:`PageImages.fill`).  Such images are nearly all tracking pixels
    straight under ``<body>``: on 19 of the bench's 110 pages they cost the whole walk."""
    top = root.mem_id
    # mem_id -> (skipped, inside a frame, the subtree above the outermost frame, the
    # nearest block, the outermost frame): for the element and its ancestors, each read
    # once per page.
    memo = {top: (False, False, None, None, None)}
    tops: dict = {}
    for item in items:
        node, todo = (item if item.mem_id in containers else item.parent), []
        while (got := memo.get(node.mem_id)) is None:
            todo.append(node)
            node = node.parent
            if node is None:
                return None  # not below root (never met): the walk decides, as before
        for node in reversed(todo):
            skipped, framed, sub, near, frame = got
            do = _ACTION_ID.get(node.tag_id, _DO_PLAIN)
            if do > _DO_A:
                skipped = True  # the walk does not enter it
            elif do in _FRAME_DOS and not framed:
                framed, sub, frame = True, near, node  # the block above the outermost frame
            if do in _BLOCK_DOS:
                near = node
            got = (skipped, framed, sub, near, frame)
            memo[node.mem_id] = got
        skipped, framed, sub, near, frame = got
        if skipped:
            continue
        sub = sub if framed else near
        if sub is None:
            if alone is None or item.mem_id in containers:
                return None
            alone.add(item.mem_id)
            sub = frame if framed else item
        tops.setdefault(sub.mem_id, sub)
    out = []
    for sub in tops.values():  # in document order: each first met at its first image
        above, node = [], sub.parent
        while node.mem_id != top:
            if node.mem_id in tops:
                break  # inside another subtree, walked with it
            above.append(node)
            node = node.parent
        else:
            out.append((sub, above[::-1]))
    return out


def walk(root, base: str, containers: frozenset = frozenset(),
         subtrees: list | None = None) -> tuple[list[str], list[ImageRef], list[tuple[int, int]]]:
    """Text tokens and images of ``root`` in document order (see the module docstring).

    Iterative, so pages nested thousands of elements deep do not hit the recursion limit.
    Block frames are ``[start, end]`` token ranges; figure frames ``[cap_start, cap_end]``
    of their first figcaption (-1 while unknown); a figure without one takes a
    ``<figcaption>`` that is its next sibling.  Each image notes its region
    (:func:`pipeline.steps.regions.region_of` over the open elements).  ``containers`` holds the
    mem_ids of lazy containers (``LAZY_CONTAINER_CSS``), walked as images.  Also returns the
    token ranges of link text.

    ``subtrees`` (from :func:`image_subtrees`): walk only these elements, each with its
    ancestors below ``root`` (outermost first), in document order, instead of all of ``root``.
    Every token range an image's texts read lies inside its subtree, so the texts are the
    same; the token indices are not (nothing reads them but as ranges).
    """
    link_spans: list[tuple[int, int]] = []
    memo: dict = {}
    last_figure: tuple = (0, None)
    tokens: list[str] = []
    images: list[ImageRef] = []
    blocks = [[0, -1]]
    figures: list[list[int]] = []
    # The figure frames of the open figcaptions that follow their figure: each ends its own
    # (last_figure may have moved to a figure inside it, or been cleared by an inner one).
    adj_captions: list[list[int]] = []
    pictures: list[list[str]] = []
    links = 0
    add = tokens.append
    # (first node, the stack above it, the stack's length once the subtree is left: -1 for
    # the whole of root, never reached)
    starts = [(root.child, [], -1)] if subtrees is None else \
        [(top, [(anc, _PLAIN) for anc in above], len(above)) for top, above in subtrees]
    for node, stack, floor in starts:
        push = stack.append
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
                            adj_captions.pop()[1] = len(tokens)
                            last_figure = (0, None)
                        elif kind == _FIGCAPTION and figures and figures[-1][0] >= 0 \
                                and figures[-1][1] < 0:
                            figures[-1][1] = len(tokens)  # the figure's first figcaption ends
                        add(" ")
                if len(stack) == floor:
                    break  # the subtree's top element closed: its next sibling is not walked
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
                            adj_captions.append(last_figure[1])
                elif do == _DO_PICTURE:
                    pictures.append([""])
                    kind = _PICTURE
                else:  # a link
                    links += 1
                    kind = -len(tokens) - 1  # a link's frame holds where its text starts
                if containers and node.mem_id in containers:
                    attrs = node.attributes
                    lazy, lazy_attr = lazy_url(attrs, base)
                    if lazy and IMAGE_URL_RE.search(lazy):
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
                    figures[-1] if figures else None, links > 0, region=region_of(stack, memo),
                    link=_innermost_link(stack) if links else None, node=node))
                if len(stack) == floor:
                    break  # an image walked alone (image_subtrees): its siblings are not
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


def element_text(node) -> str:
    """An element's text as the walk reads it: blocks (and ``<br>``) spaced apart, nothing of a
    skipped element (a heading's own ``<style>``: CSS-in-JS writes one there), no docutils
    permalink ("¶" in ``a.headerlink``)."""
    return collapse("".join(text_pieces(node)))


def text_pieces(node, texts_only: bool = False):
    """The text nodes' texts of ``node`` in document order, outside skipped elements and
    permalinks, with a space for each block element and ``<br>`` (unless ``texts_only``)."""
    todo = [node]
    while todo:
        node = todo.pop()
        text = node.text_content
        if text is not None:
            yield text
            continue
        tag = node.tag
        if tag in SKIP_TAGS or (tag == "a" and "headerlink" in (
                node.attributes.get("class") or "").split()):
            continue
        if not texts_only and (tag in BLOCK_TAGS or tag == "br"):
            yield " "
        child, kids = node.last_child, []
        while child is not None:  # pushed last to first: popped in document order
            kids.append(child)
            child = child.prev
        todo.extend(kids)


def _caption_box(node, boxes: dict) -> tuple | None:
    """``(container, caption selector)`` of the nearest pre-figcaption caption container
    (``_CMS_BOXES``, a schema.org ImageObject) among the ``_CMS_DEPTH`` nearest ancestors of
    the ``<img>`` ``node``, or None.  Containers are div, table and dl elements (their
    templates'), so only those are read, each one's attributes once per page (``boxes``).
    (body, html and the document above the walk's root are none of them.)"""
    for _ in range(_CMS_DEPTH):
        node = node.parent
        if node is None:
            return None
        if node.tag_id not in _BOX_TAG_IDS:
            continue
        key = node.mem_id
        css = boxes.get(key)
        if css is None:
            css = ""
            attrs = node.attributes
            value = attrs.get("class")
            if value:
                for token in value.split():
                    css = _CMS_BOXES.get(token, "")
                    if css:
                        break
            if not css and "itemscope" in attrs and \
                    (attrs.get("itemtype") or "").endswith("ImageObject"):
                css = _SCHEMA_CAPTION_CSS
            boxes[key] = css
        if css:
            return node, css
    return None


def cms_captions(max_text_chars: int):
    """The reader of a page's pre-figcaption captions, for ``PageImages.captions``: an image
    -> the text of the first caption element of the caption container around it
    (:func:`_caption_box`), the same for every picture in it, or "".  A figcaption is the
    walk's (read as the figure's caption).

    Read on demand, only for an image that keeps no role and has no figcaption
    (:meth:`PageImages.fill`), by climbing from its element: 1,216 of the 2,284 images of
    the bench's pages.  Looked up by the walk for every image it cost 1-1.4% of the extract
    step; on demand the step is 1-2% cheaper (speed pass 17, docs/captions.md "Speed")."""
    boxes: dict = {}  # mem_id -> caption selector of a div / table / dl, or ""
    done: dict = {}  # a container's mem_id -> its caption

    def caption(img: ImageRef) -> str:
        if img.node is None:
            return ""  # a lazy container: read as an image of its own, no container's
        found = _caption_box(img.node, boxes)
        if found is None:
            return ""
        box, css = found
        key = box.mem_id
        if key not in done:
            text = ""
            for node in box.css(css):
                if node.tag == "figcaption" or (css == "p.caption"
                                                and node.parent.mem_id != key):
                    continue  # docutils' caption is a child of its div.figure
                text = cut(element_text(node), max_text_chars)
                if text:
                    break
            done[key] = text
        return done[key]

    return caption


def _author_marks(text: str) -> tuple[bool, list[str]]:
    """``(whether the source has name="author" or name='author', the names the JSON-LD
    author pattern finds)``, from one search of the source for "author" (speed pass 18):
    each of the three searches and the regex's own scan it replaces read the whole page
    (2.5% of the extract step, mostly UCS-2 text).  Both quoted forms of "author" are
    found at its occurrences; the regex is tried at each '"author"' outside the last match,
    as its finditer would (its pattern starts so and looks neither behind nor at the
    start)."""
    meta, names, end = False, [], 0
    find, match = text.find, _LD_AUTHOR_RE.match
    at = find("author")
    while at >= 0:
        quote = text[at - 1] if at else ""
        if quote in ("'", '"') and text.startswith(quote, at + 6):
            meta = meta or (at >= 6 and text.startswith("name=", at - 6))
            if quote == '"' and at - 1 >= end and (m := match(text, at - 1)) is not None:
                names.append(m.group(1))
                end = m.end()
        at = find("author", at + 6)  # "author" cannot overlap itself
    return meta, names


def _page_items(tree, body, text: str) -> tuple[list, frozenset, object]:
    """``(items, containers, base)``: the ``<img>`` elements and lazy containers of ``body``
    in document order (what the walk must reach: :func:`image_subtrees`), the containers'
    mem_ids, and the page's first ``<base href>`` element or None.

    One query of ``body`` finds all three (lexbor's selector search is one walk of the
    tree), and one of the head its ``<base>`` (the head comes first in document order; the
    parser puts a ``<base>`` in the head or the body only, and a frameset page's ``body``
    here is its root).  A search of the source for "<base" that gated a query of the whole
    tree cost 2.8% of the extract step (speed pass 18)."""
    head = tree.head
    base = head.css_first(_BASE_CSS) if head is not None else None
    if body is None:
        return [], frozenset(), base
    items = body.css(_ITEMS_BASE_CSS)
    others = [n for n in items if n.tag_id != _IMG_ID]  # containers and <base>: few
    if not others:
        return items, frozenset(), base
    if base is None and body.parent is not None:
        # (a body that a later <frameset> took out of the document is still the page's
        # body to lexbor, walked as before; its <base> is the document's no more)
        base = next((n for n in others if n.tag_id == _BASE_ID and "href" in n.attributes),
                    None)
    # a <base> matched as base[href], as a container ([data-alt]) or as both
    containers = frozenset(n.mem_id for n in others
                           if n.tag_id != _BASE_ID or "data-alt" in n.attributes)
    if containers and "data-alt" not in text:
        # As before the query was shared: an attribute written in capitals ("DATA-ALT")
        # makes no container.  The text search (as long as half a walk on a long page)
        # runs only where the query found one.
        containers = frozenset()
    if len(containers) < len(others):  # only the images and the containers are walked
        items = [n for n in items if n.tag_id == _IMG_ID or n.mem_id in containers]
    return items, containers, base


def find_images(text: str, page_url: str, surrounding_chars: int = 300,
                max_text_chars: int = 1000, texts: bool = True, tree=None) -> PageImages:
    """Every ``<img>`` of an HTML document with its URL and its texts (not yet de-duplicated);
    with ``texts=False`` the texts are left for :meth:`PageImages.fill`, image by image.
    ``tree``: ``text`` already parsed (it is only read)."""
    tree = LexborHTMLParser(text) if tree is None else tree
    root = tree.root
    body = tree.body or root
    items, containers, base_node = _page_items(tree, body, text)
    base = resolve(page_url, base_node.attributes.get("href")) if base_node else ""
    base = base or page_url
    title_node = tree.css_first("head > title") or tree.css_first("title")
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
    # The page's author names (thirty-sixth pass): a portrait outside the article whose alt
    # names them is the author's (image_roles.author_names / image_role).
    authors = []
    meta_author, ld_authors = _author_marks(text)
    if meta_author:
        head = tree.head
        node = (head.css_first(_AUTHOR_CSS) if head is not None else None) \
            or tree.css_first(_AUTHOR_CSS)
        if node is not None:
            authors.append(collapse(node.attributes.get("content")))
    authors.extend(ld_authors)
    out.authors = tuple(dict.fromkeys(a for a in authors if a))
    if body is None:
        return out
    # With texts to be read now, every one of them is: an image walked alone would ask
    # for the whole walk at once.
    alone: set | None = None if texts else set()
    subtrees = image_subtrees(body, items, containers, alone)
    out.tokens, out.images, out.spans = walk(body, base, containers, subtrees)
    if subtrees is not None and alone:
        # Their texts are the whole walk's, made only if one of them is asked for
        # (PageImages.fill): a tracking pixel's never are, its role drops it first.
        out.unread = frozenset(img.index for img in out.images
                               if img.node is not None and img.node.mem_id in alone)
        out.whole = lambda: walk(body, base, containers)
    out.captions = cms_captions(max_text_chars)
    choose_urls(out.images, base)
    out.ends = [e for _, e in out.spans]
    if texts:
        for img in out.images:
            out.fill(img)
    return out
