"""Pages of the sample web: what each holds (slots of image + texts), its HTML, and the
ground-truth rows it contributes.

A :class:`Slot` is one image on a page with the texts attached to it the way real pages do it
(``alt``, ``title``, ``<figcaption>``, text before and after it in a paragraph), in one of
several markups (plain ``<img>``, ``<figure>``, lazy ``data-src``, ``<picture>`` with
``srcset``, a thumbnail linking to the full picture). The HTML and the truth rows are both
derived from the slots, so they cannot disagree.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from .images import SiteImage
from .texts import CHROME, Text

NAV = [("Home", "index.html"), ("Articles", "articles/index.html"), ("Gallery", "gallery/index.html"),
       ("Shop", "shop/index.html"), ("Reports", "reports/index.html"), ("Team", "team/index.html"),
       ("Deutsch", "de/index.html"), ("Français", "fr/index.html"), ("Archive", "archive/index.html")]


@dataclass
class Slot:
    """One picture on a page with the texts a page attaches to it."""

    image: SiteImage
    alt: Text | None = None  # None: no alt attribute at all
    title: Text | None = None
    caption: Text | None = None  # <figcaption>, with style "figure"
    before: Text | None = None  # surrounding text in the same paragraph, with style "para"
    after: Text | None = None
    style: str = "img"  # img | figure | para | lazy | picture | thumb
    sources: list[SiteImage] = field(default_factory=list)  # <picture> sources / link target
    placeholder: SiteImage | None = None  # the src of a lazy image (its data-src is `image`)


@dataclass
class SitePage:
    """One HTML page: its URL path, language, content and how its markup is written."""

    path: str
    lang: str
    title: str
    blocks: list  # HTML strings (already escaped) and Slots, in page order
    sidebar: list = field(default_factory=list)
    url_style: str = "root"  # abs | root | rel: how image URLs are written
    base_href: str | None = None  # an images/ sub-folder set with <base href>
    broken: bool = False  # unclosed and stray tags, upper-case tags, cut off at the end
    encoding: str = "utf-8"
    chrome: list = field(default_factory=list)  # header/footer Slots (logo, icons, ads)
    links: list = field(default_factory=list)  # (text, path) links to other pages


def esc(s: str) -> str:
    return html.escape(s, quote=True)


class Renderer:
    """Writes a page's HTML and its truth rows for one ``base_url``."""

    def __init__(self, base_url: str):
        self.base = base_url.rstrip("/")

    def abs_url(self, img: SiteImage) -> str:
        return f"{self.base}/images/{img.path}"

    def src(self, img: SiteImage, page: SitePage) -> str:
        if page.base_href is not None:
            if img.path.startswith(page.base_href):
                return img.path[len(page.base_href):]  # resolved against <base href>
            return f"/images/{img.path}"
        if page.url_style == "abs":
            return self.abs_url(img)
        if page.url_style == "rel":
            return "../" * page.path.count("/") + f"images/{img.path}"
        return f"/images/{img.path}"

    def img_tag(self, slot: Slot, page: SitePage, img: SiteImage | None = None) -> str:
        img = img or slot.image
        attrs = [("src", self.src(img, page))]
        if slot.style == "lazy":
            attrs = [("class", "lazy"), ("src", self.src(slot.placeholder, page)),
                     ("data-src", self.src(img, page))]
        if slot.alt is not None:
            attrs.append(("alt", slot.alt.text))
        if slot.title is not None:
            attrs.append(("title", slot.title.text))
        attrs += [("width", str(img.width)), ("height", str(img.height))]
        if page.broken:
            # Upper-case tag and attribute names, unquoted one-word values: old hand-written HTML.
            parts = [f'{k.upper()}={v}' if v and " " not in v and "=" not in v and k != "alt"
                     else f'{k.upper()}="{esc(v)}"' for k, v in attrs]
            return "<IMG " + " ".join(parts) + ">"
        return "<img " + " ".join(f'{k}="{esc(v)}"' for k, v in attrs) + ">"

    def slot_html(self, slot: Slot, page: SitePage) -> str:
        tag = self.img_tag(slot, page)
        if slot.style == "figure":
            cap = f"<figcaption>{esc(slot.caption.text)}</figcaption>" if slot.caption else ""
            return f'<figure class="photo">{tag}{cap}</figure>'
        if slot.style == "para":
            b = esc(slot.before.text) + " " if slot.before else ""
            a = " " + esc(slot.after.text) if slot.after else ""
            return f"<p>{b}{tag}{a}</p>" if not page.broken else f"<p>{b}{tag}{a}"
        if slot.style == "picture":
            srcs = "".join(
                f'<source type="{s.mime}" srcset="{esc(self.src(s, page))} {s.width}w">'
                for s in slot.sources)
            return f"<picture>{srcs}{tag}</picture>"
        if slot.style == "thumb":
            target = slot.sources[0] if slot.sources else slot.image
            return f'<a class="thumb" href="{esc(self.src(target, page))}">{tag}</a>'
        return f'<div class="image">{tag}</div>'

    def page_html(self, page: SitePage) -> bytes:
        lang = page.lang
        charset = "windows-1252" if page.encoding == "cp1252" else "utf-8"
        meta = (f'<meta http-equiv="Content-Type" content="text/html; charset={charset}">'
                if page.encoding == "cp1252" else '<meta charset="utf-8">')
        base = f'<base href="{self.base}/images/{page.base_href}">' if page.base_href is not None else ""
        # Under <base href> relative links would resolve into images/: use root-relative ones.
        up = "/" if page.base_href is not None else "../" * page.path.count("/")
        nav = " ".join(f'<a href="{up}{href}">{esc(t)}</a>' for t, href in NAV)
        chrome = {s.image.path: self.slot_html(s, page) for s in page.chrome}
        header = chrome.get("ui/logo.png", "") + chrome.get("ui/icon_search.png", "")
        ads = chrome.get("ui/ad_leaderboard.jpg", "")
        footer = "".join(v for k, v in chrome.items()
                         if k not in ("ui/logo.png", "ui/icon_search.png", "ui/ad_leaderboard.jpg"))
        body = "\n".join(b if isinstance(b, str) else self.slot_html(b, page) for b in page.blocks)
        side = "\n".join(self.slot_html(s, page) for s in page.sidebar)
        links = "".join(f'<li><a href="{up}{p}">{esc(t)}</a></li>' for t, p in page.links)
        links = f"<ul class=\"links\">{links}</ul>" if links else ""
        doc = (f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n{meta}\n<title>{esc(page.title)}</title>\n'
               f'{base}\n<link rel="stylesheet" href="/static/site.css">\n</head>\n<body>\n'
               f'<header class="site">{header}<nav>{nav}</nav></header>\n<div class="ad">{ads}</div>\n'
               f'<main>\n<h1>{esc(page.title)}</h1>\n{body}\n{links}\n</main>\n'
               f'<aside>{side}</aside>\n<footer>{footer}<p>&copy; 2024 Northwind Media. '
               f'{esc(CHROME[lang][2])}</p></footer>\n</body>\n</html>\n')
        if page.broken:
            # Unclosed containers, a stray close tag, and a document cut off mid-tag. The cut
            # lands in the footer links, after every image, so the truth rows stay valid.
            doc = doc.replace("</main>", "</div></span>").replace("</aside>", "")
            doc = doc[: doc.index("<footer>")] + '<footer><div class="f"><a href="/ab'
        return doc.encode(page.encoding)

    def truth_rows(self, page: SitePage) -> list[dict]:
        """One row per (image URL, text, source) candidate the page holds."""
        rows = []
        slots = list(page.chrome) + [b for b in page.blocks if isinstance(b, Slot)] + list(page.sidebar)
        for slot in slots:
            texts = [("alt", slot.alt), ("title", slot.title), ("caption", slot.caption),
                     ("surrounding", slot.before), ("surrounding", slot.after)]
            images = [(slot.image, slot.style)]
            if slot.style == "picture":
                images += [(s, "picture_source") for s in slot.sources]
            if slot.style == "lazy":
                images.append((slot.placeholder, "lazy_placeholder"))
            if slot.style == "thumb" and slot.sources:
                # The thumbnail links to its full picture: a page that names a larger version
                # of a picture gives that version the thumbnail's texts (the extract step's
                # larger-version rescue), as a <picture>'s sources get the <img>'s.
                images.append((slot.sources[0], "thumb_link"))
            for img, markup in images:
                for source, t in texts:
                    if t is not None:
                        rows.append(self.row(page, img, source, t, markup))
        return rows

    def row(self, page: SitePage, img: SiteImage, source: str, t: Text, markup: str) -> dict:
        good = (img.kind == "natural" and t.kind == "descriptive" and t.lang == "en"
                and page.lang == "en")
        return {"page_url": f"{self.base}/{page.path}", "image_url": self.abs_url(img),
                "text_source": source, "text": t.text, "text_kind": t.kind, "text_lang": t.lang,
                "page_lang": page.lang, "image_kind": img.kind, "group": img.group,
                "variant": img.variant, "width": img.width, "height": img.height,
                "image_path": f"images/{img.path}", "markup": markup, "good": good}
