"""Image names: what an image's URL and its own class / id say, before any fetch (issue 14).

The facts :mod:`pipeline.steps.image_roles` decides an image's role from: the words of its
URL's file name (role words, a spacer's name, a size written in it: ``generic-96x96.gif``),
the role its folders name (``/themes/``, ``/img/head/``, ``logos``, ``promo(s)``, ``icons``
and a name ending in "icon(s)" (``statusicon``, ``forum_icons``),
``buttons``, ``badges``, ``sprite(s)``, ``banner``, ``gravatar``, ``svg``, ``partner(s)``,
``sponsor(s)``), the hosts and paths of tracking pixels and ad servers, the width a URL asks
its server for, and the roles its class or id names.  File names, folders and class / id values are cached (logos and icons
repeat across the pages of a site).
"""
from __future__ import annotations

import re

from pipeline.steps.regions import CAMEL_RE, SPLIT_RE

_ROLE_TOKENS = {}
for _role, _words in {
    "tracker": "pixel pixels beacon tracking tracker atrk utm",
    "avatar": "avatar avatars gravatar headshot headshots userpic biopic mugshot authorpic "
              "profilepic",
    "icon": "icon icons ico icn sprite sprites arrow arrows btn button bullet chevron emoji "
            "smiley smilies stars rating caret spinner loader loading throbber bul",
    "logo": "logo logos wordmark masthead",
    "badge": "badge badges seal appstore playstore googleplay certified trustmark",
    "social": "facebook twitter pinterest linkedin instagram youtube rss digg reddit tumblr "
              "whatsapp email mail share fb",
    "ad": "ad ads advert banner300 adserver doubleclick",
}.items():
    for _w in _words.split():
        _ROLE_TOKENS[_w] = _role
# Hosts and paths of tracking pixels and ad servers (the file name says nothing there).
TRACKER_URL_RE = re.compile(
    r"quantserve|quantcount|scorecardresearch|doubleclick|/b/ss/|/__utm|facebook\.com/tr"
    r"|(?<=[\w-])/pixel(?:[/?]|\.(?:gif|png))|/beacon|/impression|/track[/?]|/ad/|/ads/|adserver|ord=\d|;sz=\d"
    r"|pixel\.wp\.com|/p-[\w-]{8,}\.gif|stats\.wp\.com|/count\?|/counter"
    # hit counters' hosts (sixth pass: dev, 2 junk on 2 sites, nothing else)
    r"|statcounter\.com", re.I)
# File names made of these words (and numbers) only: spacers ("1x1.trans.gif", "clear.gif").
_SPACER_WORDS = frozenset("spacer blank clear trans transparent 1x1 shim pixel dot empty "
                          "placeholder".split())
_NAMED_SIZE_RE = re.compile(r"^(\d{2,4})x(\d{2,4})$")
# A rating widget's star graphic ("star_half.gif", "star-gray.png", "star-on.svg"): "star" with
# only these words and numbers beside it (forty-fifth pass).  "star" alone is no icon word: a
# "star.jpg" can be a photograph of one.
_STAR_WORDS = frozenset("star half gray grey empty full on off blank filled outline yellow gold "
                        "small sm big lg rating rate active inactive".split())
_STAR_EXTS = (".gif", ".png", ".svg")


# The digits end the value: "?w=98c520fc" is a hash, no width (thirteenth pass).
_QUERY_WIDTH_RE = re.compile(r"[?&;,](?:w|width|resize)[=_](\d{2,4})(?![0-9A-Za-z])")


def query_width(url: str) -> int:
    """The width an image URL asks its server for (``?w=1920``, ``,w_800``), else 0."""
    # the gate: every match holds a "w" but "resize=" (no "w" in the URL: "x.jpg?resize=300")
    m = _QUERY_WIDTH_RE.search(url) if "w" in url or "resize" in url else None
    if m and "#" in url[:m.start()]:
        return 0  # in the fragment, which never reaches the server
    return int(m.group(1)) if m else 0


def tracker_hint(low: str) -> bool:
    """What every TRACKER_URL_RE match holds, as a chain of ``in`` tests (several times
    cheaper than the pattern, or any() over a tuple): most URLs hold none of it."""
    return ("pixel" in low or "track" in low or "/ad" in low or "quant" in low
            or "count" in low or "beacon" in low or "/p-" in low or "ord=" in low
            or "sz=" in low or "doubleclick" in low or "scorecard" in low or "__utm" in low
            or "/b/ss/" in low or "facebook.com/tr" in low or "impression" in low
            or "stats.wp" in low)


_BIO_WITH = frozenset("img image photo pic picture author".split())
_NAME_CACHE: dict[str, tuple] = {}
_CLASS_ROLE_CACHE: dict[str, frozenset] = {}


def name_facts(url: str) -> tuple:
    """``(tokens, named size or None)`` of a URL's file name, cached by name (logos and
    icons repeat across the pages of a site)."""
    path = url.split("?", 1)[0].split("#", 1)[0]
    name = path[path.rfind("/") + 1:]
    hit = _NAME_CACHE.get(name)
    if hit is not None:
        return hit
    stem = name.rsplit(".", 1)[0]
    if not stem.islower():
        stem = CAMEL_RE.sub(r"\1 \2", stem).lower()
    tokens = [t for t in SPLIT_RE.split(stem) if t]
    size = None
    for t in tokens:
        m = _NAMED_SIZE_RE.match(t)
        if m:
            size = (int(m.group(1)), int(m.group(2)))
    # "bul2" -> "bul", "icon18" -> "icon"; "windowsicon", "sitelogo" end in a role word.
    extra = [t.rstrip("0123456789") for t in tokens if t[-1:].isdigit()]
    extra += ["icon" for t in tokens if t.endswith("icon") and t not in ("silicon", "lexicon")]
    extra += ["logo" for t in tokens if t.endswith("logo") and len(t) > 4]
    # "poobanner2", "topbanner": a banner named as one (fifth pass)
    extra += ["ad" for t in tokens
              if len(t) > 6 and t.rstrip("0123456789").endswith("banner")]
    # A role word split in two: "profile-pic", "author_pic", "user-pic", "head-shot".
    extra += [a + b for a, b in zip(tokens, tokens[1:])]
    spacer = bool(tokens) and all(t in _SPACER_WORDS or t.isdigit() for t in tokens) \
        and not all(t.isdigit() for t in tokens)
    if not spacer and "placeholder" in tokens:
        # a placeholder graphic named for what it stands in for ("placeholder-hotel-sm.png",
        # "flashPlaceholder.jpg"): the file fetched is the placeholder, whatever the text
        # beside it names (thirty-second pass, rule P)
        spacer = True
    roles = {_ROLE_TOKENS[t] for t in tokens + extra if t in _ROLE_TOKENS}
    if "star" in tokens and name.lower().endswith(_STAR_EXTS) \
            and all(t in _STAR_WORDS or t.isdigit() for t in tokens):
        roles.add("icon")
    if "bio" in tokens and not _BIO_WITH.isdisjoint(tokens):
        # a bio picture, the person's own ("...-Alex-Bozarjian-BIO-IMG.png",
        # "cookie-and-kate-bio-photo.jpg"), as "biopic" is (eighteenth pass)
        roles.add("avatar")
    # A social network's name among many words is a picture's subject or a Pinterest version
    # ("salisbury-steak-recipe-pinterest-blog-150x150.jpg"), not a share button.
    if "social" in roles and sum(t.isalpha() and len(t) > 2 for t in tokens) > 3:
        roles.discard("social")
    roles = frozenset(roles)
    hit = (frozenset(tokens), size, spacer, roles)
    if len(_NAME_CACHE) > 50000:
        _NAME_CACHE.clear()
    _NAME_CACHE[name] = hit
    return hit


# Folders of a site's own design files: a theme's images (logos, backgrounds, buttons; a
# site's pictures live under uploads / media), logo, promo, icon and badge folders, Gravatar
# copies.  A folder's token is its whole name, or its end for "logo" ("foollogo").
_DIR_ROLES = {"themes": "furniture", "theme": "furniture", "logo": "logo", "logos": "logo",
              "promo": "ad", "promos": "ad", "gravatar": "avatar", "icons": "icon",
              "buttons": "icon", "badges": "badge",
              # fifth pass: a site's header graphics ("img/head/special-report-slide.png",
              # "global/header/us/hdr-politics.gif"), sprite sheets, banner folders
              "head": "furniture", "header": "furniture", "headers": "furniture",
              "sprite": "icon", "sprites": "icon", "banner": "ad",
              # seventh pass: SVG files served without the extension (MediaWiki's formulas,
              # "media/math/render/svg/<hash>"; "assets/svg/arrow"): drawings, no photograph
              "svg": "vector", "svgs": "vector",
              # seventeenth pass: a partner's or sponsor's logos and promos ("graphics/partners/
              # kaango/pets/kaango_classifieds.gif", "image/sponsors/dodge/presented-by-
              # charger.png"); image_role makes "partner" an "ad" unless the picture is
              # declared at the image step's size both ways
              "partner": "partner", "partners": "partner", "sponsor": "partner",
              "sponsors": "partner",
              # thirty-first pass, rule C: cost-per-click tiles ("aoldotcom-releases/cpc/
              # boredom-therapy.png"), a partner's paid link
              "cpc": "ad"}
# A word of a folder's name that names its role ("site-header", "oth_banner"); the other roles
# take the whole name only ("theme-park" is no theme).
_DIR_WORD_ROLES = {"header": "furniture", "banner": "ad"}
_DIR_HINTS = ("theme", "logo", "promo", "gravatar", "icon", "buttons", "badges", "/head",
              "header", "sprite", "banner", "/svg", "partner", "sponsor", "/cpc")
_DIR_SPLIT_RE = re.compile(r"[_-]")
# Words ending in "icon" that name no icon.
_NOT_ICON = ("lexicon", "silicon")


def _icon_folder(folder: str) -> bool:
    """Whether a (lowercased) folder name says it holds icons (thirty-second pass, rule F): its
    last word ("_" / "-") is "icon" or "icons" ("forum_icons", "social-media-icons"), or ends in
    one after more letters ("statusicon", vBulletin's forum status icons; "forumicons").  A
    folder called exactly "icon" is not: a storefront's product thumbnails live there
    ("images/product/icon/17431.jpg"); one called "icons" is a _DIR_ROLES name."""
    if folder == "icon":
        return False
    word = _DIR_SPLIT_RE.split(folder)[-1]
    stem = word[:-1] if word.endswith("icons") else word
    if not stem.endswith("icon"):
        return False
    return stem == "icon" and word != folder or (len(stem) > 4 and not stem.endswith(_NOT_ICON))
_DIR_CACHE: dict[str, str] = {}
# Drupal core's image-style derivatives: ".../files/styles/<style>/<scheme>/<path>"
# (ImageStyle::buildUri), <scheme> a stream wrapper of core.
_DRUPAL_SCHEMES = frozenset(("public", "private"))


def _drupal_style(folders: list[str], i: int) -> bool:
    """Whether ``folders[i]`` is the style name of a Drupal image-style URL: the site's name
    for a derivative size and slot ("desktop_banner": the slot of a page's hero picture), whose
    "banner" word names no ad folder (forty-seventh pass, rule D)."""
    return 0 < i < len(folders) - 1 and folders[i - 1] == "styles" \
        and folders[i + 1] in _DRUPAL_SCHEMES


def folder_role(low: str) -> str:
    """The role the folders of a (lowercased) image URL name, or ""."""
    # A chain of ``in`` tests first (as tracker_hint): most URLs hold none of the hints.
    if not ("theme" in low or "logo" in low or "promo" in low or "gravatar" in low
            or "icon" in low or "buttons" in low or "badges" in low or "/head" in low
            or "header" in low or "sprite" in low or "banner" in low or "/svg" in low
            or "partner" in low or "sponsor" in low or "/cpc/" in low):
        return ""
    path = low.split("?", 1)[0].split("#", 1)[0]
    start = path.find("//")
    path = path[path.find("/", start + 2 if start >= 0 else 0):path.rfind("/")]
    if not any(h in path for h in _DIR_HINTS):
        return ""
    hit = _DIR_CACHE.get(path)
    if hit is None:
        hit = ""
        folders = path.split("/")
        for i, folder in enumerate(folders):
            role = _DIR_ROLES.get(folder) or ("logo" if folder.endswith("logo") else "")
            if not role and ("_" in folder or "-" in folder):
                role = next((_DIR_WORD_ROLES[w] for w in _DIR_SPLIT_RE.split(folder)
                             if w in _DIR_WORD_ROLES), "")
            if role == "ad" and "banner" in folder and _drupal_style(folders, i):
                role = ""
            if not role and "icon" in folder and _icon_folder(folder):
                role = "icon"
            if role:
                hit = role
                break
        if len(_DIR_CACHE) > 50000:
            _DIR_CACHE.clear()
        _DIR_CACHE[path] = hit
    return hit


_LOGO_NAME_CACHE: dict[str, bool] = {}
_LOGO_WORDS = frozenset(("logo", "logos", "wordmark"))


def names_logo(value: str) -> bool:
    """Whether a class or id value names a logo: a name whose tokens hold "logo", "logos" or
    "wordmark" ("logo-link", "td-main-logo", "siteLogo"), or a token of 5+ letters ending in
    "logo" ("jetwicklogo"; fifteenth pass: the block around a site's logo link), but not in
    "alogo" (Spanish and Italian "catalogo", "dialogo", "analogo")."""
    hit = _LOGO_NAME_CACHE.get(value)
    if hit is None:
        hit = False
        if "logo" in value.lower() or "wordmark" in value.lower():
            for name in value.split():
                for tok in SPLIT_RE.split(CAMEL_RE.sub(r"\1 \2", name).lower()):
                    if tok in _LOGO_WORDS or (len(tok) > 4 and tok.endswith("logo")
                                              and not tok.endswith("alogo")):
                        hit = True
        if len(_LOGO_NAME_CACHE) > 50000:
            _LOGO_NAME_CACHE.clear()
        _LOGO_NAME_CACHE[value] = hit
    return hit


# Thirtieth pass, rule L': an ad's click redirect.  Ad servers' click hosts, and path segments
# ad plugins and networks count clicks under ("/linkout/41977": a WordPress ad plugin's banner
# slider; "/aclk", "/adclick"); "/go/..." is an affiliate or promo redirect (Conde Nast's
# "/go/failsafe" subscribe promos, Adobe's "/go/getflashplayer").
_AD_CLICK_HOSTS = ("doubleclick.net", "googleadservices.com")
_AD_CLICK_SEGMENTS = frozenset(("linkout", "aclk", "adclick"))
# What an ad's click redirect's lower-cased href holds, whichever test finds it: a host, a
# segment, "go/" of a "/go/..." path.
_AD_CLICK_WORDS = _AD_CLICK_HOSTS + tuple(_AD_CLICK_SEGMENTS) + ("go/",)
# Rule B: the site's about page, which a sidebar's portrait of the site's owner links to.
_ABOUT_SEGMENTS = frozenset(("about", "about-me", "about-us", "aboutus", "who-we-are"))


def _href_parts(href: str) -> tuple[str, list[str]]:
    """An href's lower-case host and its non-empty path segments (query and fragment cut)."""
    low = href.strip().lower()
    for mark in ("#", "?"):
        cut = low.find(mark)
        if cut >= 0:
            low = low[:cut]
    host = ""
    if "//" in low:
        rest = low.split("//", 1)[1]
        host, _, path = rest.partition("/")
    else:
        path = low
    return host, [seg for seg in path.split("/") if seg]


def ad_link(link) -> bool:
    """Whether an image's innermost enclosing ``<a>`` (``ImageRef.link``) is an ad's click
    redirect: an ad server's click host, an ad plugin's "/linkout/" (rule L', thirtieth pass)."""
    if link is None:
        return False
    # Not rel="sponsored": WordPress's affiliate plugins write it on a recipe's equipment cards
    # ("OXO Large cookie scoop" linking to amzn.to), whose pictures are the products they name.
    href = link.attributes.get("href")
    if not href:
        return False
    low = href.lower()
    for word in _AD_CLICK_WORDS:  # a loop: any() over a generator costs more than the tests
        if word in low:
            break
    else:
        # no test below can hold (a substring of each is missing): most images with a link
        # (1,513 per pass over the bench's pages) end here, without splitting the href
        return False
    host, segs = _href_parts(href)
    host = host.rpartition("@")[2].partition(":")[0]  # no userinfo, no port
    if host and any(host == h or host.endswith("." + h) for h in _AD_CLICK_HOSTS):
        return True
    if segs and segs[0] == "go" and len(segs) > 1:
        return True
    return not _AD_CLICK_SEGMENTS.isdisjoint(segs)


# Thirty-fifth pass, rule P: a link tagged for a campaign's analytics (Google Analytics' UTM
# parameters) is a promotion of the site's own or a partner's, not a post's teaser:
# broadwayworld's event promo "events.broadwayworld.com/event/...?utm_source=broadwayworld&
# utm_medium=site&utm_campaign=ros" ("run of site").
_CAMPAIGN_KEYS = ("utm_campaign=", "utm_medium=")


def campaign_link(link) -> bool:
    """Whether an image's innermost enclosing ``<a>`` carries a campaign tag (a query parameter
    ``utm_campaign`` or ``utm_medium``; rule P, thirty-fifth pass)."""
    if link is None:
        return False
    href = link.attributes.get("href")
    if not href or "utm_" not in href:
        return False
    query = href.partition("?")[2].partition("#")[0].lower()
    return any(part.startswith(_CAMPAIGN_KEYS) for part in query.split("&"))


def about_link(link) -> bool:
    """Whether an image's innermost enclosing ``<a>`` points at a site's about page (its
    href's last path segment: "/about", "/about-me/"; rule B, thirtieth pass)."""
    if link is None:
        return False
    href = link.attributes.get("href")
    if not href or "about" not in href.lower() and "who-we-are" not in href.lower():
        return False
    segs = _href_parts(href)[1]
    return bool(segs) and segs[-1] in _ABOUT_SEGMENTS


def linked_logo(link) -> bool:
    """Whether an image's innermost enclosing ``<a>`` (``ImageRef.link``, a parser node), or
    the element around that link, names a logo by its class or id (:func:`names_logo`): a
    site's logo link (``a.logo-link``) or its wrapper (``div.jetwicklogo > a > img``)."""
    node = link
    for _ in range(2):
        if node is None:
            return False
        attrs = node.attributes
        for key in ("class", "id"):
            value = attrs.get(key)
            if value and names_logo(value):
                return True
        node = node.parent
    return False


def class_roles(value: str) -> frozenset:
    """The roles (avatar, icon, logo, badge) an image's own class or id names."""
    hit = _CLASS_ROLE_CACHE.get(value)
    if hit is None:
        roles = set()
        for name in value.split():
            for tok in SPLIT_RE.split(CAMEL_RE.sub(r"\1 \2", name).lower()):
                r = _ROLE_TOKENS.get(tok)
                if r in ("avatar", "icon", "logo", "badge"):
                    roles.add(r)
        hit = frozenset(roles)
        if len(_CLASS_ROLE_CACHE) > 50000:
            _CLASS_ROLE_CACHE.clear()
        _CLASS_ROLE_CACHE[value] = hit
    return hit
