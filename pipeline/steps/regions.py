"""Page regions: which part of a page (menu, header, comments, ads, ...) an image sits in.

Text from a page's furniture is no caption: navigation, the site header and
footer, asides and sidebars, comments, related / share / social / ad / newsletter / cookie
boxes, author boxes.  An image's region is that of its innermost ancestor that names one, by
tag (``nav``, ``aside``, ``header``, ``footer``), ARIA role, or a token of its ``class`` /
``id`` (``comment-list`` -> ``comments``; tokens split at ``-``, ``_``, spaces and camelCase;
``table-header``, ``card__header`` are a component's head, no region).
A ``header`` / ``footer`` inside an ``article`` or ``main`` is the article's own (its title
and lead image), not the site's, so it names no region; a ``<header>`` / ``<footer>`` tag inside
a ``section``, ``aside`` or ``nav`` is that section's (HTML-AAM maps it to no banner there) and
one whose class names a component's head (``<header class="card-header">``) a component's: the
tag names no region, its class and id are read as a ``div``'s.  WordPress's taxonomy classes
(``category-social-issues``, ``tag-comments``, ``format-aside``) name none either, nor does
a layout wrapper's modifier saying where its sidebar sits (``wrap cb-sidebar-right``).  ``main``
ends any region above it (a page-wide wrapper such as ``<div class="has-sidebar">`` holds the
content too).  Only the
image's ancestors are read, each once per page (reading attributes is the costly part of a
walk over every element).

What an image is (spacer, tracker, logo, ...) is in ``pipeline/steps/image_roles.py``.
"""
from __future__ import annotations

import re

# class / id token -> region.  Tokens are whole parts of a class or id name.
_TOKEN_REGION = {}
for _region, _words in {
    "nav": "nav navbar navigation navmenu menu menubar megamenu breadcrumb breadcrumbs topbar "
           "toolbar pagination pager skiplink skip subnav dropdown",
    "header": "header masthead",
    "footer": "footer colophon",
    "aside": "sidebar aside rail siderail sidebox widget widgets",
    "comments": "comment comments commentlist respond disqus replies discussion",
    "related": "related recommended recommendations recirc trending popular mostread "
               "outbrain taboola teasers morestories revcontent rcjsload",
    "share": "share sharing sharebar social sociable follow addthis sharedaddy",
    "ad": "ad ads advert adverts advertisement advertising sponsor sponsored dfp adslot "
          "adunit gpt cpc",
    "newsletter": "newsletter subscribe subscription signup optin",
    "cookie": "cookie cookies consent gdpr",
    "author": "author authors byline avatar bio profile",
    "login": "login signin account",
}.items():
    for _w in _words.split():
        _TOKEN_REGION[_w] = _region

# Tokens that make a sidebar widget an "about me" box ("widget_dmc-widget-about", "about widget
# widget_text"): its picture is the site owner's portrait, as in an author box.
_ABOUT = frozenset(("about", "aboutme"))

_TAG_REGION = {"nav": "nav", "aside": "aside", "header": "header", "footer": "footer"}
_ROLE_REGION = {"navigation": "nav", "menu": "nav", "menubar": "nav", "search": "nav",
                "banner": "header", "contentinfo": "footer", "complementary": "aside",
                "dialog": "dialog", "alertdialog": "dialog"}
_CONTENT_TAGS = frozenset(("article", "main"))
# Elements whose attributes are not read (reading them is the costly part): the document,
# text-level and table-row elements, which wrap a link or a picture rather than a region.
_NO_REGION_TAGS = frozenset("body html a span p b i em strong small picture figure figcaption "
                            "h1 h2 h3 h4 h5 h6 td th tr tbody thead center font label "
                            "button".split())
# Class names that describe the page's state, not the element: "has-sidebar", "no-comments".
_STATE_PREFIXES = ("has-", "has_", "with-", "no-", "is-", "show-", "hide-", "js-")
# Class names WordPress's get_post_class() writes for a post's taxonomy terms and state
# (thirteenth pass): their slug words say what the post is about ("category-social-issues",
# "tag-comments", "format-aside"), not what the element is.  "post-" is none of them: WordPress
# writes "post-<ID>", themes "post-author", "post-share" for real boxes.
_TAXONOMY_PREFIXES = ("category-", "tag-", "format-", "type-", "status-", "product_cat-",
                      "product_tag-")
_SKIPPED_PREFIXES = _STATE_PREFIXES + _TAXONOMY_PREFIXES
# Class names with these words name a layout wrapper, whatever else they say.
_LAYOUT_WORDS = frozenset("wrap wrapper container layout content contents inner outer body "
                          "main page".split())
# Words of a content component: a "header" / "footer" token after one of them in the same class
# name is that component's head or foot ("table-header", "card__header", "entry-footer"), inside
# the content, not the site's (twelfth pass).  A header token first keeps its region:
# "header__list", "site-header__block" are parts of the site's header.  Generic containers are
# no such word: "section-footer", "block-footer-copyright", "mini-panel-header" and
# "single-col-footer" name the site's footer or header on dev pages; nor are a page's UI
# boxes (modal, form, tab: "modal-header", "newsletter-form-footer").
_COMPONENT_WORDS = frozenset("table card entry post article list item product recipe tile "
                             "teaser story slide slider gallery video player chart figure "
                             "accordion".split())
_HEAD_FOOT = frozenset(("header", "footer"))
# Token splitting shared with image_names.py: class / id / file names split at non-alphanumerics
# and camelCase ("commentList" -> comment, list).
SPLIT_RE = re.compile(r"[^a-z0-9]+")
CAMEL_RE = re.compile(r"([a-z0-9])([A-Z])")
_CLASS_CACHE: dict[str, str] = {}
_HEAD_CACHE: dict[str, bool] = {}
# Sectioning elements and roles: a <header> / <footer> inside one is that section's own, not
# the page's banner / contentinfo (HTML-AAM; thirteenth pass).  article / main are content.
_SECTION_TAGS = frozenset(("section", "aside", "nav"))
_SECTION_ROLES = frozenset(("complementary", "navigation", "region"))


def _tokens(name: str) -> list[str]:
    """One class / id name's lower-case tokens ("commentList-header" -> comment, list, header)."""
    return SPLIT_RE.split(CAMEL_RE.sub(r"\1 \2", name).lower())


def _after_component(toks: list[str], i: int) -> bool:
    """Whether token ``i`` (a header / footer word) follows a content component's word: a
    table's or a card's head ("table-header", "card__footer") is content, not the page's."""
    return i > 0 and not _COMPONENT_WORDS.isdisjoint(toks[:i])


def class_region(value: str) -> str:
    """The region a ``class`` or ``id`` value names, or ""."""
    hit = _CLASS_CACHE.get(value)
    if hit is not None:
        return hit
    region = ""
    names = [_tokens(name) for name in value.split() if not name.lower().startswith(_SKIPPED_PREFIXES)]
    wrapper = any(not _LAYOUT_WORDS.isdisjoint(toks) for toks in names)
    for toks in names:
        if not _LAYOUT_WORDS.isdisjoint(toks):
            continue  # "content-sidebar-wrap" wraps the content as well as the sidebar
        if "push" in toks and "footer" in toks:
            # the CSS sticky footer's wrapper ("footerPush", "footer-push"), which holds the
            # whole page above the footer (qa22: a shop page's products were all "footer")
            continue
        if wrapper and "sidebar" in toks and ("left" in toks or "right" in toks):
            # a layout wrapper's modifier saying where its sidebar sits ("wrap cb-sidebar-
            # right"): the element wraps the content too (fourteenth pass)
            continue
        for i, tok in enumerate(toks):
            region = _TOKEN_REGION.get(tok, "")
            if region and tok in _HEAD_FOOT and _after_component(toks, i):
                region = ""  # a table's or a card's head ("table-header"): content
            if region:
                break
        if region:
            break
    if region == "aside" and any(not _ABOUT.isdisjoint(toks) for toks in names):
        region = "author"  # an about-me widget: the site owner's portrait (thirty-fourth pass)
    if len(_CLASS_CACHE) > 50000:
        _CLASS_CACHE.clear()
    _CLASS_CACHE[value] = region
    return region


def _component_head(value: str) -> bool:
    """Whether a ``class`` / ``id`` value names a content component's head or foot
    ("card-header", "entry-footer": a component word before the header / footer token)."""
    hit = _HEAD_CACHE.get(value)
    if hit is None:
        hit = any(tok in _HEAD_FOOT and _after_component(toks, i)
                  for toks in map(_tokens, value.split()) for i, tok in enumerate(toks))
        if len(_HEAD_CACHE) > 50000:
            _HEAD_CACHE.clear()
        _HEAD_CACHE[value] = hit
    return hit


def element_region(tag: str, attrs: dict) -> tuple[str, bool]:
    """``(region or "", is content)`` of one element (content: ``article``/``main``)."""
    role = (attrs.get("role") or "").strip().lower()
    if tag in _CONTENT_TAGS or role in ("main", "article"):
        return "", True
    region = _TAG_REGION.get(tag) or _ROLE_REGION.get(role, "")
    if region and tag in _HEAD_FOOT and not role:
        # <header class="card-header">: a component's head, not the site's (thirteenth pass)
        if any(_component_head(attrs.get(k) or "") for k in ("class", "id")):
            region = ""
    if not region:
        for key in ("class", "id"):
            value = attrs.get(key)
            if value:
                region = class_region(value)
                if region:
                    break
    return region, False


def region_of(ancestors: list, memo: dict) -> str:
    """The region of an element whose ancestors (outermost first) are ``ancestors``, as
    ``(node, anything)`` pairs (the walk's stack).

    ``memo`` maps an ancestor's ``mem_id`` (its address in the parsed tree: Python's wrapper
    objects come and go) to the state after it, ``(region, in content, in a section)``, for
    the page being walked: an image looks up its nearest ancestor already seen and reads only
    the elements below it (pictures sit side by side, in the same few containers)."""
    i, todo = len(ancestors) - 1, []
    state = ("", False, False)
    while i >= 0:
        key = ancestors[i][0].mem_id
        got = memo.get(key)
        if got is not None:
            state = got
            break
        todo.append((ancestors[i][0], key))
        i -= 1
    region, in_content, in_section = state
    for node, key in reversed(todo):
        tag = node.tag
        if tag not in _NO_REGION_TAGS:
            attrs = node.attributes
            if in_section and tag in _HEAD_FOOT:
                tag = "div"  # a section's own header: its class, id and role are read
            r, content = element_region(tag, attrs)
            if content:
                in_content = True
                if tag == "main":
                    region = ""  # the main content starts here, whatever wraps it
            elif r and not (in_content and r in ("header", "footer")):
                region = r
            if not in_section and (tag in _SECTION_TAGS or content or (
                    (role := attrs.get("role")) and role.strip().lower() in _SECTION_ROLES)):
                in_section = True
        memo[key] = (region, in_content, in_section)
    return region
