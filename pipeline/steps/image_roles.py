"""Image roles: what an image is, from the markup alone, before any fetch (issue 14).

Spacers, trackers, avatars, icons, logos, badges / seals and ad banners are
recognised from the declared size, the URL and the image's own attributes and region; such
an image is not fetched and none of its texts becomes a candidate (each role is its own drop
reason, ``extract_image_<role>``).  Every picture in an author box is an avatar, whatever its
size; an image whose alt is the site's name (``og:site_name`` or the host's name) is its logo,
one whose alt holds that name among a few capitalised words is ``branded`` (a tag string).
An image of the site's header, footer or menu is furniture unless declared, named or asked of
its server at 300 px or more (the image step's minimum) or its alt describes a picture in
sentence case ("A plate of spaghetti carbonara with bacon and Parmesan") or it is a photograph
declared at 120 px or more with a phrase for an alt ("Maxikleid mit Blumen": a mega menu's
picture, ``_menu_picture``); so is one in a theme folder
(``/themes/``) or a header folder (``/img/head/``, ``/header/``, ``site-header``), and
``logo(s)``, ``promo(s)``, ``icons``, ``buttons``, ``badges``, ``sprite(s)``, ``banner`` and
``gravatar`` folders name their roles (as does a file named as a banner, ``topbanner.gif``);
a Tableau Public viz's static picture (``.../static/images/.../1_rss.png``) is a chart, no
feed icon.
The image's region comes from ``pipeline/steps/regions.py``; what its file name, folders,
class and id say (and the tracker URLs) from ``pipeline/steps/image_names.py``.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from filters.text_rules import publisher_credit
from pipeline.steps.image_names import (TRACKER_URL_RE, about_link, ad_link, class_roles,
                                        folder_role, linked_logo,
                                        name_facts, query_width, tracker_hint)

_ALT_ROLE_RE = re.compile(r"^(?:\w+ )?(?:logo|icon|avatar|badge)$|^avatar\b|\blogo$"
                          r"|^(?:\w+ ){0,2}(?:logo|icon)\b", re.I)
# Standard ad banner sizes (IAB), declared or written in the file name.
_AD_SIZES = frozenset("300x250 728x90 160x600 300x600 468x60 320x50 970x250 970x90 120x600 "
                      "234x60 120x90 120x60 125x125 336x280 250x250 200x200 180x150 "
                      "300x50 300x100 320x100".split()) - {"200x200"}
_AD_BANNERS = frozenset(s for s in _AD_SIZES if s.split("x")[0] != s.split("x")[1])
_SMALL = 48  # a declared size at most this, both ways: an icon or an avatar, not a picture
_TINY = 2  # a declared size at most this, both ways: a tracking pixel or a spacer
# A declared size at most this, both ways: a thumbnail too small for the image step, which
# keeps images of 300 px and more (a display size of 100 px is at most 200 px on a 2x
# screen).  A size written in the file name ("generic-96x96.gif") counts as declared.
_THUMB = 100
# The regions whose images are the site's own furniture unless declared as large as a picture
# the image step keeps (its minimum side, 300 px).
_MASTHEAD_REGIONS = frozenset(("header", "footer", "nav"))
# Regions where a picture linking to the site's about page, or greeting ("Meet Cheryl"), is the
# site owner's portrait (rule B): outside the content, where an about page's own pictures and
# headlines ("Meet the Swede who tattooed ...") sit.
_OWNER_REGIONS = frozenset(("aside", "footer", "header", "nav", "related"))
_GREETING_RE = re.compile(r"(?:About|Meet) [A-Z][a-z]+(?: (?:&|and) [A-Z][a-z]+)?")


def _greets(attrs: dict) -> bool:
    """Whether an image's alt or title is an about box's greeting: "About Jenna", "Meet
    Cheryl", "Meet Kay & Luke" (a name or two, nothing else)."""
    for key in ("alt", "title"):
        value = attrs.get(key)
        if value and (value[0] == "A" or value[0] == "M" or value[:1].isspace()) \
                and _GREETING_RE.fullmatch(value.strip()):
            return True
    return False


# Letters of a word (digits and underscores apart), for matching an author name word by word.
_WORD_RE = re.compile(r"[^\W\d_]+")
# A portrait's label is short; a caption (8-20 words of what is visible) may show the author too.
_AUTHOR_LABEL_WORDS = 8


def author_names(names) -> tuple:
    """The page's author names (``PageImages.authors``: ``<meta name="author">``, JSON-LD) that
    are a person's name, as tuples of lower-case words: 2-4 words, each capitalised, one of 2
    letters or more ("Libby Jenkinson", "Beth M"; not "admin", "Staff" nor "M")."""
    out = []
    for name in names:
        words = name.split()
        if 2 <= len(words) <= 4 and all(w[:1].isupper() for w in words) \
                and any(len(w) >= 2 for w in words):
            out.append(tuple(w.lower() for w in _WORD_RE.findall(name)))
    return tuple(out)


def _names_author(text: str, authors: tuple, sites: frozenset, outside: bool) -> bool:
    """Whether an alt or title names the page's author (thirty-sixth pass, rule N2): outside the
    content a text of at most 8 words holding the name as whole words ("Libby Jenkinson in her
    garden" in a sidebar; a longer one describes a scene: "Kelly Senyei holding a stack of
    homemade tortillas in a blue napkin"); in it, the name alone or with the site's name
    ("Sylvia Fountaine, Feasting at Home Blog")."""
    if outside and len(text.split()) > _AUTHOR_LABEL_WORDS:
        return False
    words = [w.lower() for w in _WORD_RE.findall(text)]
    for name in authors:
        n = len(name)
        for i in range(len(words) - n + 1):
            if tuple(words[i:i + n]) == name:
                if outside:
                    return True
                rest = "".join(words[:i] + words[i + n:]).removesuffix("blog")
                if not rest or rest.removeprefix("the") in sites:
                    return True
    return False


_PICTURE = PICTURE_PX = 300


def _picture_size(width: int | None, height: int | None, url: str) -> bool:
    """Declared (or named, or asked of the server) at 300 px or more one way and at 150 px or
    more the other (300 on a 2x screen): a picture the image step may keep, not a wide logo
    ("Brit + Co", 300x144)."""
    if max(width or 0, height or 0) < _PICTURE and query_width(url) < _PICTURE:
        return False
    return min(width or _PICTURE, height or _PICTURE) >= _PICTURE // 2


_FUNCTION_WORDS = frozenset("a an the of with on in at and from by for to over under into "
                            "near beside holding".split())


def _describes(alt: str) -> bool:
    """Whether an alt reads like a description of a picture ("A plate of spaghetti carbonara
    with bacon and Parmesan"), not a label or a headline (a site's, a brand's, a menu's:
    "Brit + Co", "The Navy's New Robot Looks and Swims Just Like a Shark"): five words or
    more in sentence case (two lower-case words or more besides function words, and one of
    those), no "Site - tagline" separator."""
    words = alt.split()
    if len(words) < 5 or " - " in alt or " | " in alt:
        return False
    lower = [w for w in words[1:] if w[:1].islower()]
    n_function = sum(w in _FUNCTION_WORDS for w in lower)
    return n_function >= 1 and len(lower) - n_function >= 2


def in_ad_slot(region: str, alt: str, caption: str) -> bool:
    """Whether a picture is an ad by the slot it sits in (fifty-second pass, C54): in a region
    the region step reads as an ad, unless its alt describes a picture (:func:`_describes`,
    as a header's or menu's photograph: a stock photo of a recirculation box read as an ad)
    or it has a caption element of its own (an editor's caption belongs to the article).
    Its alt, title and side go with it: banners' and promos' alts ("Property Tax Campaign",
    a sponsored webinar's speakers) were kept in any region before."""
    return region == "ad" and not caption and not (alt and _describes(alt))


# A photograph's file (a logo, a badge or a promo graphic is mostly a PNG, GIF or SVG).
_PHOTO_FILE_RE = re.compile(r"\.(?:jpe?g|webp)$")
# The least side of a menu's photograph declared under the image step's size (eighth pass).
_MENU_PICTURE = 120


def _menu_picture(alt: str, width: int | None, height: int | None, low: str) -> bool:
    """Whether a header, footer or menu image is a photograph with a caption for an alt: a
    photograph's file declared (or named) at 120 px or more both ways, its alt of two words or
    more with a lower-case word after the first that is no English function word (a phrase,
    "Maxikleid mit Blumen", "Christmas dinner table"; not a brand's or a headline's title
    case, "Scientific American Magazine", "Subscribe to GQ") and no "Site - tagline"
    separator.  Eighth pass: the pictures of a mega menu
    or a recipe site's header menu, declared 150-200 px, which the image step may still keep
    once fetched at their full size."""
    if width is None or height is None or min(width, height) < _MENU_PICTURE:
        return False
    if not _PHOTO_FILE_RE.search(low.split("?", 1)[0].split("#", 1)[0]):
        return False
    words = alt.split()
    # English title case writes its function words in lower case ("Subscribe to GQ", "How to
    # Date Felicity Jones"): one of the others is what shows a phrase.
    return len(words) >= 2 and " - " not in alt and " | " not in alt \
        and any(w[:1].islower() and w not in _FUNCTION_WORDS for w in words[1:])


def _letters(text: str) -> str:
    # filter() with str.isalpha runs in C: a generator cost a Python step per character, for
    # every image's alt.
    return "".join(filter(str.isalpha, text.lower()))


def site_credit(text: str, sites: frozenset) -> bool:
    """Whether a picture's own text is a credit line "<the site> / <photographer>" (thirty-fourth
    pass, rule C'): the shape of :func:`filters.text_rules.publisher_credit` whose first part is
    one of the page's site names (:func:`site_names`: "The Spruce Eats / Anita Schecter" on
    thespruceeats.com or under og:site_name "The Spruce Eats")."""
    return bool(sites) and publisher_credit(text) and \
        _letters(text.split(" / ", 1)[0]).removeprefix("the") in sites


def _branded(alt: str, sites: frozenset) -> bool:
    """Whether an alt holds the site's name as one of three words or more, with at most one
    lower-case word after the first: a tag string, not a sentence ("Montauk Long Island USA
    BeFifty" on befifty.com, "Subscribe to Glamour", "Grafik: Stadt Stuttgart").  Such an
    image's texts are the site's own branding: its logo, a promo, an SEO-tagged picture
    (seventh pass; on the labelled dev pages of both sets, 19 alts of 10 sites had this
    form: 18 junk, 1 vague, no good caption)."""
    words = alt.split()
    if len(words) < 3:
        return False
    lower = False
    for w in words[1:]:  # a loop that stops at the second lower-case word: most long alts
        if w[:1].islower():  # are sentences, decided within their first few words
            if lower:
                return False
            lower = True
    return any(_letters(w) in sites for w in words)


def site_names(page_url: str, site_name: str = "") -> frozenset:
    """The letters of a page's site names: its ``og:site_name`` ("Poppy Cooks" ->
    "poppycooks") and its host's label before the public suffix (``www.poppycooks.com`` ->
    "poppycooks", ``bbc.co.uk`` -> "bbc"); names shorter than 4 letters are left out."""
    try:
        host = urlsplit(page_url).hostname or ""
    except ValueError:
        host = ""
    labels = host.split(".")
    if len(labels) >= 3 and len(labels[-1]) == 2 and len(labels[-2]) <= 3:
        labels = labels[:-1]  # bbc.co.uk, abc.net.au
    names = {_letters(labels[-2]) if len(labels) >= 2 else "", _letters(site_name)}
    return frozenset(n.removeprefix("the") for n in names if len(n) >= 4)


# Tableau Public's embed code shows a viz's static picture, ".../static/images/{xx}/{workbook}/
# {sheet}/1_rss.png" (or "1.png"), with the viz's title as its alt, the same on every site that
# embeds one: a chart, whose file name names no feed icon (fourteenth pass).
_TABLEAU_STATIC = ("//public.tableau.com/static/images/",
                   "//public.tableausoftware.com/static/images/")


def image_role(url: str, attrs: dict, width: int | None, height: int | None,
               region: str, sites: frozenset = frozenset(), link=None,
               authors: tuple = ()) -> str:
    """The role of an image that is no picture worth a caption, or "" (see the docstring).
    ``sites``: the letters of the page's site names (:func:`site_names`); an image whose alt
    says just that is the site's logo ("Poppy Cooks" on poppycooks.com).  ``link``: the
    image's innermost enclosing ``<a>`` (``ImageRef.link``), whose class or id, or its
    parent's, may name a logo (:func:`image_names.linked_logo`, fifteenth pass).
    ``authors``: the page's author names (:func:`author_names`); an image whose alt or title
    names one is the author's portrait (:func:`_names_author`, thirty-sixth pass)."""
    if width is not None and height is not None:
        if width <= _TINY and height <= _TINY:
            return "tracker"
    low = url.lower()
    if tracker_hint(low) and TRACKER_URL_RE.search(url):
        return "tracker"
    if "revcontent." in low or "outbrainimg." in low or "taboola." in low \
            or ".3lift.com" in low:
        # content-recommendation and native-ad networks' image hosts (thirteenth pass;
        # TripleLift's img. / images. / ib.3lift.com, fifteenth pass)
        return "ad"
    if link is not None and ad_link(link):
        # an ad's click redirect: the picture is the advertiser's at any size (thirtieth pass,
        # rule L': a banner slider's "/linkout/41977", an ad server's click URL)
        return "ad"
    if region in _OWNER_REGIONS and (about_link(link) or _greets(attrs)):
        # the site owner's portrait beside the content (thirtieth pass, rule B): a sidebar
        # picture linking to the about page ("About Jenna", "Family photo"), or one whose
        # alt or title greets ("Meet Cheryl"), is an author box's picture by another name
        return "avatar"
    if authors:
        outside = region in _OWNER_REGIONS
        for key in ("alt", "title"):
            value = attrs.get(key)
            if value and _names_author(value, authors, sites, outside):
                return "avatar"  # the page's author named by their portrait (rule N)
    if "gravatar." in low or "/avatar" in low:
        return "avatar"  # gravatar.com/avatar/<hash>, /avatars/<user>.jpg: the name says nothing
    if low.endswith(".svg") or ".svg?" in low:
        return "vector"  # logos, icons and drawings: no photograph, and no raster to decode
    # A square is no banner: 250x250 and 125x125 are also the sizes of recipe thumbnails.
    if width is not None and height is not None and width != height \
            and f"{width}x{height}" in _AD_SIZES:
        return "ad"
    tokens, size, spacer, url_roles = name_facts(url)
    if "tableau" in low and (_TABLEAU_STATIC[0] in low or _TABLEAU_STATIC[1] in low):
        url_roles = ()  # a Tableau viz's static picture: "1_rss.png" is no feed icon
    dir_role = folder_role(low)
    if dir_role == "partner":
        # a partner's or sponsor's folder (seventeenth pass): its logos and promos are ads; a
        # picture declared at the image step's size both ways there is still a picture
        dir_role = "" if min(width or 0, height or 0) >= _PICTURE else "ad"
    # A theme folder's picture declared at the image step's size is content kept there by a
    # CMS of its own ("themes/Bluemonkey/images/how-it-works.jpg", width 985).
    if dir_role and not (dir_role == "furniture" and max(width or 0, height or 0) >= _PICTURE):
        return dir_role
    if not _AD_BANNERS.isdisjoint(tokens):
        return "ad"
    if spacer:
        return "spacer"
    if width is None and height is None and size is not None:
        width, height = size
    roles = set(url_roles)
    for key in ("class", "id"):
        value = attrs.get(key)
        if value:
            roles |= class_roles(value)
    alt = attrs.get("alt")
    if alt:
        la = alt.lower()
        if sites:
            # The letters are taken only of a short alt (a logo's); a longer one goes to
            # _branded's word test, which is cheaper than them and finds the name itself.
            if len(la) <= 60:
                letters = _letters(la)
                if letters.removeprefix("the") in sites:
                    roles.add("logo")
                else:
                    for name in sites:  # one or two names: a loop, not any() over a generator
                        if name in letters:
                            if _branded(alt, sites):
                                roles.add("branded")
                            break
            elif _branded(alt, sites):
                roles.add("branded")
        if "logo" in la or "icon" in la or "avatar" in la or "badge" in la:
            m = _ALT_ROLE_RE.search(alt.strip())
            if m:
                roles.add(m.group(0).split()[-1].lower())
    # A picture declared large is no icon whatever its name says ("arrow-up-price.jpg").
    large = (width or 0) > 150 or (height or 0) > 150
    for role in ("tracker", "avatar", "logo", "badge", "ad", "icon", "social"):
        if role in roles and not (large and role in ("icon", "social")):
            return "icon" if role == "social" else role
    if width is not None and height is not None and width <= _SMALL and height <= _SMALL:
        return "avatar" if region in ("comments", "author") else "icon"
    if region in _MASTHEAD_REGIONS and not _picture_size(width, height, url) \
            and not (alt and (_describes(alt) or _menu_picture(alt, width, height, low))):
        # The site's header, footer or menu: logos, press and partner logos, promos ("Brit +
        # Co", "Government of Jamaica", "Subscribe to GQ"); a picture there declared (or
        # named) at the image step's size or more is a menu's feature picture, kept.
        return "furniture"
    if region == "author" or (region == "comments" and width is not None and width <= 100):
        # The picture beside a commenter's name, or in an author box at any size (on the
        # labelled English pages every picture of an author box is its author's).
        return "avatar"
    if width is not None and height is not None and width <= _THUMB and height <= _THUMB:
        return "small"
    if link is not None and not ((width or 0) >= _PICTURE and (height or 0) >= _PICTURE) \
            and linked_logo(link):
        # A site's logo link, or the block around it, says "logo" where the image's own
        # class and file name do not (fifteenth pass); a picture declared at the image
        # step's size both ways is still a picture
        return "logo"
    # last: the extract step drops a branded image only when its alt is all it has
    return "branded" if "branded" in roles else ""
