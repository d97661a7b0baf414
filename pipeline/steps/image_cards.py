"""A card's title for a picture whose own block holds no text (fortieth pass, docs/captions.md).

Card markup (Bootstrap / Foundation cards, shop product boxes, recipe plugins' cards, news
teasers) often wraps the picture in a block of its own and puts the title in a sibling block:
``<div class=card><div class=card-img><a href=X><img alt=""></a></div>
<div class=card-body><h3><a href=X>Title</a></h3></div></div>``.  The surrounding text of a
picture is read only inside its nearest block (:mod:`pipeline.steps.html_images`), so such a
picture has none.  Here the card is the picture's nearest ancestor that holds any text, if it
holds no other picture; its title is its one heading, else the text of the links that go where
the picture's own link goes.  Read on demand, from the tree, for the few pictures that need it.
"""
from __future__ import annotations

from pipeline.steps.html_images import BLOCK_TAG_IDS, element_text as _text, tag_ids, text_pieces
from pipeline.steps.image_texts import cut

# How far above the <img> a card may start: 1000bulbs' product box is 5 levels up; higher,
# the first element with text is a page section, not a card.
MAX_CARD_DEPTH = 6
_HEADINGS = "h1, h2, h3, h4, h5, h6"
_PAGE_TAG_IDS = tag_ids("body", "html")


def card_title(node, link, limit: int, by_link: bool = False,
               memo: dict | None = None, blank_block: bool = False) -> tuple[str, bool]:
    """``(title, after)`` of the card around the ``<img>`` ``node`` (``link``: its innermost
    enclosing ``<a>`` or None), or ``("", False)``: no card, or no single title in it.
    ``after``: the title follows the picture in document order.  ``by_link``: only the text
    of the links going where the picture's link goes is a title, not a lone heading (a
    picture in a related / aside region, forty-fourth pass: there a heading beside a picture
    is as often a promo box's); a region picture in no link at all takes the card's one
    heading only where that heading is wholly one link to a page, the card's one link text
    going there (forty-eighth pass, U: popular-posts widgets link the title, not the picture;
    a promo box's "Sponsors" heading links nowhere).  ``memo``: one dict per page, shared by
    its pictures (the pictures of one widget climb through the same ancestors).
    ``blank_block``: the walk read no text in the picture's nearest block
    (:meth:`PageImages.blank_block`)."""
    if by_link and link is not None and not _href(link):
        return "", False  # a link going nowhere to share: no climb
    card = _card(node, {} if memo is None else memo, blank_block)
    if card is None:
        return "", False
    if by_link and link is None:
        title = _linked_heading(card)
        if title is None:
            return "", False
        return cut(_text(title), limit), _follows(card, node, title)
    heads = [] if by_link else _headings(card)
    if len(heads) == 1:
        title = heads[0]
    else:
        title = _same_link(card, link)
        if title is None:
            return "", False
    return cut(_text(title), limit), _follows(card, node, title)


def _headings(card) -> list:
    """The card's headings that hold text."""
    return [h for h in card.css(_HEADINGS) if _text(h)]


def _linked_heading(card):
    """The card's one heading with text if it is wholly one link to a page and that link is
    the card's one link text going there (:func:`_same_link`), else None."""
    heads = _headings(card)
    if len(heads) != 1:
        return None
    links = [a for a in heads[0].css("a[href]") if _text(a)]
    if len(links) != 1 or not _href(links[0]) \
            or " ".join(_text(links[0]).split()).casefold() \
            != " ".join(_text(heads[0]).split()).casefold():
        return None
    return _same_link(card, links[0])


def _card(node, memo: dict, blank_block: bool = False):
    """The nearest ancestor of ``node`` whose text is not blank, within MAX_CARD_DEPTH
    levels, if no other <img> is in it (a copy in <noscript> is the same picture).  ``memo``
    (by mem_id): whether an ancestor holds text (the child the climb came from holds none,
    so the answer is the element's own, whichever picture asks) and its first two <img>
    outside a <noscript>.  ``blank_block``: the walk read no text in the picture's nearest
    block, so no level up to that block holds any; only the levels above it are read."""
    below, card = node, node.parent
    inside = blank_block
    for _ in range(MAX_CARD_DEPTH):
        if card is None or card.tag_id in _PAGE_TAG_IDS:
            return None
        if inside:
            # Inside the blank block, or the block itself: the walk's tokens there hold
            # every text _has_text would read (and a docutils permalink's), so blank,
            # without reading it again (58% of the climb's _has_text calls, bench pages).
            inside = card.tag_id not in BLOCK_TAG_IDS
        else:
            key = card.mem_id
            has = memo.get(key)
            if has is None:
                has = memo[key] = _has_text(card, below)
            if has:
                break
        below, card = card, card.parent
    else:
        return None
    key = -card.mem_id - 1  # the image list's key, apart from the text's
    imgs = memo.get(key)
    mine = node.mem_id
    if imgs is None:
        # Another picture first rejects the card at once: the search stops there instead
        # of listing every picture of a section of them (card_title 3% cheaper, replayed).
        first = card.css_first("img")
        if first is not None and first.mem_id != mine and not _in_noscript(first, card):
            return None
        imgs = []
        for img in card.css("img"):
            if not _in_noscript(img, card):
                imgs.append(img.mem_id)
                if len(imgs) == 2:
                    break
        memo[key] = imgs
    if any(m != mine for m in imgs):
        return None
    return card


def _in_noscript(node, top) -> bool:
    """Whether ``node`` sits in a <noscript> below ``top``."""
    node = node.parent
    while node is not None and node.mem_id != top.mem_id:
        if node.tag == "noscript":
            return True
        node = node.parent
    return False


def _same_link(card, link):
    """The card's one link text going where the picture's link goes (the link itself
    included, where the card is that link), or None."""
    href = _href(link)
    if not href:
        return None
    links = [card] if card.mem_id == link.mem_id else []
    links.extend(card.css("a[href]"))
    found, texts = None, set()
    for a in links:
        if (a.attributes.get("href") or "").strip() != href:
            continue
        text = _text(a)
        if text:
            texts.add(text.casefold())
            found = found or a
    return found if len(texts) == 1 else None


def _href(link) -> str:
    """The href of ``link`` (an ``<a>`` or None) if it goes to a page ("" for none, "#..."
    or "javascript:")."""
    if link is None:
        return ""
    href = (link.attributes.get("href") or "").strip()
    if href.startswith("#") or href.lower().startswith("javascript:"):
        return ""
    return href


def _has_text(node, blank) -> bool:
    """Whether ``node`` holds any text (its :func:`~pipeline.steps.html_images.element_text`
    not blank) outside its child ``blank`` (known to hold none: the climb's last level), read
    only up to the first."""
    child, skip = node.first_child, blank.mem_id
    while child is not None:
        # lexbor's own text of the subtree (in C) first: blank there is blank here too (a
        # skipped element only adds text); only a non-blank one is read piece by piece
        if child.mem_id != skip and child.text(deep=True).strip() and \
                any(piece.strip() for piece in text_pieces(child, True)):
            return True
        child = child.next
    return False


def _follows(card, img, title) -> bool:
    """Whether ``title`` comes after ``img`` in ``card`` (document order; the card itself, a
    link around both, counts as after)."""
    if title.mem_id == card.mem_id:
        return True
    want = {img.mem_id: True, title.mem_id: False}
    for node in card.traverse():
        got = want.get(node.mem_id)
        if got is not None:
            return got
    return True
