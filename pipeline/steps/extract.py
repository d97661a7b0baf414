"""Extraction: an HTML :class:`Page` -> one :class:`Candidate` per (image URL, text source).

Decoding lives in :mod:`pipeline.web.charset`, the parse and walk in :mod:`pipeline.steps.html_images`;
this module is the stage: its drop reasons, de-duplication and the candidate records.
"""
from __future__ import annotations

from collections import Counter

from filters.file_names import OWN_REGIONS, named_by_file
from pipeline.core.errors import ConfigError
from pipeline.core.records import Candidate, Page
from pipeline.core.stage import Drop, Keep, MapStage
from pipeline.steps.html_images import find_images
from pipeline.steps.image_cards import card_title
from pipeline.steps.image_names import campaign_link
from pipeline.steps.image_roles import (PICTURE_PX, author_names, image_role, in_ad_slot,
                                        name_facts, query_width, site_credit, site_names)
from pipeline.steps.image_resize import UPLOAD_FAMILIES, resized_url, wp_original
from pipeline.steps.image_urls import html_dim, larger_url
from pipeline.web.charset import looks_undecodable
from pipeline.web.html import TooDeep, parsed
from pipeline.web.urls import strip_userinfo

# A side of surrounding text whose characters are at least this much link text is a list of
# links (a teaser list, a headline grid, navigation), not prose about the image.
MAX_SIDE_LINK_SHARE = 0.5
# Roles an image may have only for its size (declared, named or asked of its server): given
# where the page names a larger version of the same picture (image_urls.larger_url).
SIZE_ROLES = frozenset(("small", "icon", "furniture"))
# Images with a usable URL judged per page (extract.max_images_per_page): the 510 real pages
# have at most 795 (dailymail.co.uk's food page), a hostile 6 MB page 156,250, each a later
# fetch to the same site (docs/captions.md, "A per-page image cap").
MAX_IMAGES_PER_PAGE = 10_000


def below_picture(width: int | None, height: int | None, url: str) -> bool:
    """Whether an image is declared (``width`` / ``height``; else named, "-150x150.jpg") under
    the image step's size both ways (one side unknown: the known one), and not asked of its
    server at that size or more (``?w=1920``): a thumbnail the image step would drop once
    fetched, whatever its role."""
    if width is None and height is None:
        size = name_facts(url)[1]
        if size is None:
            return False
        width, height = size
    return max(width or 0, height or 0) < PICTURE_PX and query_width(url) < PICTURE_PX


# Words of a file's name that make it a promotion, not a post's picture (rule P, thirty-fifth
# pass): breakingbelizenews' sidebar "Weather-Banner_JAN2022-7-80x80.jpg" sponsor graphics.
# "ad", "ads", "advert" and the ad banner sizes ("728x90") already give the thumbnail the ad
# role (image_names._ROLE_TOKENS, image_roles._AD_BANNERS) before W is asked.
_PROMO_WORDS = frozenset(("banner", "sponsor", "sponsored"))


def _wp_original(url: str, role: str, link=None) -> str:
    """A WordPress thumbnail's original upload (:func:`pipeline.steps.image_resize.wp_original`,
    thirty-fourth pass), or "": not for a file named at the image step's size or more both
    ways with no role, which fetched as it is makes a pair already; not for a promotion (rule
    P, thirty-fifth pass): a file named a banner or a sponsor's, or a picture whose link is
    tagged for a campaign (:func:`campaign_link`)."""
    if not role:
        size = name_facts(url)[1]
        if size is not None and min(size) >= PICTURE_PX:
            return ""
    original = wp_original(url)
    if original and _promo(original, link):
        return ""
    return original


def _promo(original: str, link) -> bool:
    """Whether a WordPress original's file name (its thumbnail's "-<W>x<H>" cut) or its
    thumbnail's link says it is a promotion (rule P)."""
    return not _PROMO_WORDS.isdisjoint(name_facts(original)[0]) or campaign_link(link)


# Regions whose text is never about an image beside it; in the others (related, aside) only
# a teaser card's title is.
FURNITURE = frozenset("nav header footer comments share ad newsletter cookie login dialog "
                      "author".split())


class Extractor(MapStage):
    """Turns an HTML page into candidates: one per (image URL, text source) with text.

    Images: every ``<img>`` with a usable http(s) URL (see :func:`pipeline.steps.image_urls.choose_urls`), resolved
    against ``<base href>`` and the page URL.  Texts, in order of preference: ``alt``, the
    enclosing ``<figure>``'s ``<figcaption>`` (``caption``), the img's ``title``, and the text
    around the image inside its nearest block element (``surrounding``: up to
    ``surrounding_chars`` each side, kept apart in ``meta["before"]`` / ``meta["after"]``).
    A source repeating an earlier source's text for the same image is skipped, and identical
    (image URL, source, text) triples on one page are kept once.  Texts are entity-decoded and
    whitespace-collapsed; alt/title/caption are cut to ``max_text_chars`` on a word boundary.

    Before any text is taken, each image's page region and role are read
    (:mod:`pipeline.steps.regions`): an image whose role is spacer, tracker, avatar, icon, logo,
    badge or ad yields no candidate; one dropped for its size only (``SIZE_ROLES``), or one with
    no role declared under the image step's 300 px both ways (:func:`below_picture`), whose page
    names a larger version of its picture (a wider ``srcset`` candidate, ``data-orig-file``,
    a link to the same picture's file, an image proxy's source URL; else its resizing CDN asked
    at 300 px, or a WordPress upload's original, :mod:`pipeline.steps.image_resize`) gives that
    version instead, its source in ``meta["url_attr"]`` and the thumbnail in ``meta["shown_url"]``
    (:func:`pipeline.steps.image_urls.larger_url`).  Surrounding text comes only from prose next to the image
    in the page's content: a side inside a region (navigation, comments, related, ...) or made
    mostly of link text (a teaser list, a headline grid) is discarded, except a teaser card's
    title (one link) beside its picture, and in any region one naming the picture's file
    (:mod:`filters.file_names`); a picture in the content whose own block holds no text takes
    the title of the card around it (:func:`pipeline.steps.image_cards.card_title`), one in a
    related / aside region only the text of the link going where its own link goes.  Alt,
    title and caption are kept in any region; the region is in ``meta["region"]``
    ("content" outside them).

    Drops, one per page: ``extract_undecodable`` (the body decodes to mostly replacement or
    control characters), ``extract_html_too_deep`` (elements nested deeper than
    :data:`pipeline.web.html.MAX_DEPTH`: never parsed, the cost would be super-linear),
    ``extract_no_images`` (no usable image), ``extract_no_text``.  The decoded text and tree
    are the ones the language step made (:func:`pipeline.web.html.parsed`): one parse a page.

    Inside a page two smaller units are counted (``Keep.units``, each in = kept + dropped, in
    stats.json under the step's ``units``): every ``image`` found, kept when it yields a
    candidate, else dropped as ``extract_image_no_url``, ``extract_image_<role>``,
    ``extract_image_no_text`` or ``extract_image_over_page_cap`` (a usable image after the
    first ``max_images_per_page`` of the page, in document order: never judged); and every
    non-empty ``side`` (before / after) of surrounding text, kept, or dropped as ``extract_side_region``, ``extract_side_links`` or
    ``extract_side_repeat`` (the same text as the image's alt, caption or title).
    """

    name = "extract"

    def __init__(self, surrounding_chars: int = 300, max_text_chars: int = 1000,
                 page_roles: bool = True, max_images_per_page: int = MAX_IMAGES_PER_PAGE):
        for key, value in (("surrounding_chars", surrounding_chars),
                           ("max_text_chars", max_text_chars),
                           ("max_images_per_page", max_images_per_page)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"extract.{key} must be an integer > 0 (got {value!r})")
        if not isinstance(page_roles, bool):
            raise ConfigError(f"extract.page_roles must be true or false (got {page_roles!r})")
        self.surrounding_chars = surrounding_chars
        self.max_text_chars = max_text_chars
        self.page_roles = page_roles
        self.max_images_per_page = max_images_per_page

    @classmethod
    def from_config(cls, cfg) -> "Extractor":
        """From a :class:`pipeline.config.ExtractConfig`."""
        return cls(cfg.surrounding_chars, cfg.max_text_chars, cfg.page_roles,
                   cfg.max_images_per_page)

    def process(self, page: Page) -> list[Candidate] | Drop:
        doc = parsed(page)  # decoded (and parsed) once, shared with the language step
        text, codec = doc.html, doc.codec
        body = page.body.encode("utf-8") if isinstance(page.body, str) else page.body
        if looks_undecodable(text, body, doc.how):
            return self.drop("undecodable")
        try:
            tree = doc.tree()
        except TooDeep:  # parsing it would cost super-linear time (pipeline/web/html.py)
            return self.drop("html_too_deep")
        page_url = strip_userinfo(page.url)  # credentials are never stored (nor inherited)
        found = find_images(text, page_url, self.surrounding_chars, self.max_text_chars,
                            texts=False, tree=tree)
        # The language step's decision (text-based) wins over the page's own <html lang>.
        page_lang = page.meta.get("lang") or found.lang
        usable = [img for img in found.images if img.url]
        units: Counter = Counter()
        units["extract_image_no_url"] = len(found.images) - len(usable)
        if not usable:
            return Drop(self.reason("no_images"), _units(units))
        # The first max_images_per_page in document order (deterministic); n_images in the
        # records stays the page's count of usable images.
        units["extract_image_over_page_cap"] = len(usable) - self.max_images_per_page
        out: list[Candidate] = []
        seen: set[tuple[str, str, str]] = set()
        cards: dict = {}  # image_cards' per-page memo: a widget's pictures share ancestors
        sites = site_names(page_url, found.site_name)
        authors = author_names(found.authors)
        for img in usable[:self.max_images_per_page]:
            width, height = html_dim(img.attrs.get("width")), html_dim(img.attrs.get("height"))
            role = self.page_roles and image_role(img.url, img.attrs, width, height, img.region,
                                                  sites, img.link, authors)
            shown = ""
            # A branded alt (image_roles._branded: "Montauk Long Island USA BeFifty") drops
            # the image only when it is all the image has: a site stamping every picture with
            # its name may still caption one beside it ("Figure 3: AndroidManifest SMS filter").
            branded = role == "branded"
            if branded:
                role = ""
            thumb = role in SIZE_ROLES or (self.page_roles and not role
                                           and below_picture(width, height, img.url))
            if thumb or (self.page_roles and not role and width is None and height is None):
                # A thumbnail whose page names a larger version of its picture (a link to
                # the image file, a wider srcset candidate, data-large-file): that version
                # is the candidate, judged again without the thumbnail's declared size.
                # Also for a thumbnail with no role declared under the image step's size
                # (ninth pass): fetched as it is, the image step would drop it.
                bigger, where, big_width = larger_url(img, found.base, PICTURE_PX) \
                    if thumb else ("", "", None)
                big_height = None
                if not bigger and role != "furniture":
                    # None named: the same URL asking its resizing CDN for the picture at
                    # the image step's size (tenth pass; an undeclared image asked under
                    # it, "?w=264&h=177&crop=1", too).  Menu furniture stays (sample 10).
                    bigger, where, big_width, big_height = resized_url(img.url, width,
                                                                       height, PICTURE_PX)
                    if role == "icon" and where in UPLOAD_FAMILIES:
                        bigger = ""  # an icon's upload is an icon (thirty-ninth pass, M' K')
                    if not bigger and thumb:
                        bigger, where = _wp_original(img.url, role, img.link), "wp original"
                if bigger and not image_role(bigger, img.attrs, big_width, big_height,
                                             img.region, sites, img.link, authors):
                    shown, role = img.url, ""
                    img.url, img.url_attr = bigger, where
                    width, height = big_width, big_height
            if role:
                units[f"extract_image_{role}"] += 1
                continue
            found.fill(img)
            if self.page_roles and in_ad_slot(img.region, img.alt, img.caption):
                # a picture in an ad slot, read once its texts are (fifty-second pass, C54)
                units["extract_image_ad"] += 1
                continue
            img_url = strip_userinfo(img.url)
            meta = {"n_images": len(usable), "url_attr": img.url_attr, "encoding": codec,
                    "file_name": file_name(img.url),
                    "in_figure": img.figure is not None, "in_link": img.in_link,
                    "region": img.region or "content"}
            if shown:
                meta["shown_url"] = strip_userinfo(shown)  # the thumbnail the page shows
            if width is not None:
                meta["img_width"] = width
            if height is not None:
                meta["img_height"] = height
            if branded and not (img.caption or img.title or img.before or img.after):
                units["extract_image_branded"] += 1
                continue
            before, after, card = self._card(found, img, units, cards)
            if not card:
                before, after = self._sides(found, img, units)
            texts = (("alt", img.alt), ("caption", img.caption), ("title", img.title),
                     ("surrounding", f"{before} {after}".strip()))
            norms: set[str] = set()
            n_out = len(out)
            for source, value in texts:
                # a docutils / Sphinx permalink glyph ends a caption read as a side ("...¶"):
                # the same text as the caption read without it (thirty-eighth pass)
                norm = value.casefold().rstrip("¶ ")
                if not value or norm in norms or (img.url, source, value) in seen:
                    if value and source == "surrounding":
                        units["extract_side_repeat"] += bool(before) + bool(after)
                        units["side_kept"] -= bool(before) + bool(after)
                    continue
                norms.add(norm)
                seen.add((img.url, source, value))
                m = dict(meta, before=before, after=after) if source == "surrounding" \
                    else dict(meta)  # one dict per record: later stages may edit it
                if card and source == "surrounding":
                    m["card_title"] = True
                if source != "surrounding" and " / " in value and site_credit(value, sites):
                    m["credit_line"] = True  # the site's own credit line: the text step drops it (text_credit)
                if source == "surrounding" and (img.alt or img.caption or img.title):
                    # the picture's own texts: a two-word side they name too is its name
                    # (filters/file_names.named_by_image, sixteenth pass)
                    m["image_text"] = " ".join(t for t in (img.alt, img.caption, img.title)
                                               if t)
                elif meta["region"] not in OWN_REGIONS:
                    # the picture's other own texts, in the furniture (elsewhere its own text
                    # is kept from min_words_own anyway): a two-word alt in a menu that its
                    # own headline names ("Alice Waters" under "Legendary Chef Alice Waters
                    # Comes To LA ...") is its name too (twenty-ninth pass, rule M); a text
                    # repeated verbatim (a logo's alt and title alike) names nothing
                    other = " ".join(t for s2, t in texts[:3]
                                     if t and s2 != source and t.casefold() != norm)
                    if other:
                        m["image_text"] = other
                out.append(Candidate(page_url, img_url, source, value, value, found.title,
                                     page_lang, img.index, m))
            units["image_kept" if len(out) > n_out else "extract_image_no_text"] += 1
        if not out:
            return Drop(self.reason("no_text"), _units(units))
        return Keep(tuple(out), _units(units))

    def _sides(self, found, img, units: Counter) -> tuple[str, str]:
        """The before / after texts of an image that are prose of the content (see the class
        docstring), each side counted."""
        sides = []
        for text, after in ((img.before, False), (img.after, True)):
            if not text:
                sides.append("")
                continue
            if not self.page_roles:
                why = ""
            elif img.region in FURNITURE:
                # A teaser card's title naming the picture's file is its picture's name
                # even in a menu ("Basil Chicken in Coconut Curry Sauce" on
                # Basil-Chicken-in-Coconut-Curry-Sauce-Featured-1-500x500.jpg).
                why = "" if self._named_title(found, img, text, after) else "region"
            else:
                link_share, n_links = found.links(img, after)
                if link_share >= MAX_SIDE_LINK_SHARE:
                    # One link: the title of a teaser card beside its picture (kept); more: a
                    # list of links (navigation, a headline grid).
                    why = "" if n_links == 1 else "links"
                elif img.region:
                    why = "region"
                else:
                    why = ""
            if why:
                units[f"extract_side_{why}"] += 1
                sides.append("")
            else:
                units["side_kept"] += 1
                sides.append(text)
        return sides[0], sides[1]

    def _card(self, found, img, units: Counter, memo: dict) -> tuple[str, str, bool]:
        """``(before, after, True)`` with the title of the picture's card as its one side
        (:func:`pipeline.steps.image_cards.card_title`, fortieth pass), counted as a kept
        side: only for a picture whose own block holds no text and which has no caption of
        its own (a figcaption, a CMS caption element: that is its text), in the content or
        in a related / aside region, where only a link going where the picture's link goes
        names it (as a side there is kept only as one link's text, :meth:`_sides`;
        forty-fourth pass, R), or, for a picture in no link, a heading that is wholly one
        link (forty-eighth pass, U); furniture's pictures gain none (with page roles off every
        side is read, so a card's title too: the comparison pool of tools/caption_draw holds
        it), else ``("", "", False)``."""
        in_region = self.page_roles and bool(img.region)
        if img.before or img.after or img.caption or img.node is None \
                or (in_region and img.region in FURNITURE):
            return "", "", False
        title, after = card_title(img.node, img.link, self.surrounding_chars, in_region, memo,
                                  found.blank_block(img))
        if not title:
            return "", "", False
        units["side_kept"] += 1
        return ("", title, True) if after else (title, "", True)

    @staticmethod
    def _named_title(found, img, text: str, after: bool) -> bool:
        """Whether a side is one link's text (a teaser card's title) naming the image's file
        (:func:`filters.file_names.named_by_file`)."""
        if not named_by_file(text, file_name(img.url)):
            return False
        link_share, n_links = found.links(img, after)
        return n_links == 1 and link_share >= MAX_SIDE_LINK_SHARE


def file_name(url: str) -> str:
    """The last segment of a URL's path ("" for a bare host): ``basename(urlsplit(url).path)``
    without urlsplit's parsing, which cost more than the rest of a candidate's metadata."""
    host = url.find("://") + 3
    end = len(url)
    for mark in "?#":
        i = url.find(mark, host)
        if 0 <= i < end:
            end = i
    start = url.find("/", host, end)  # the path starts after the host, before ? and #
    if start < 0:
        return ""
    return url[url.rfind("/", start, end) + 1:end]


def _units(counts: Counter) -> tuple:
    """``Keep.units`` from the counts: ``image_kept`` / ``side_kept`` are the units kept,
    other keys the drop reasons (of images, ``extract_image_*``, or sides)."""
    out = []
    for key, n in sorted(counts.items()):
        if n <= 0:
            continue
        if key.endswith("_kept"):
            out.append((key[:-5], "kept", n))
        else:
            out.append(("side" if key.startswith("extract_side_") else "image", key, n))
    return tuple(out)
