"""New samples of the labelled real pages to label by eye (docs/captions.md, "The labelled
sets"): every item the extractor finds with page roles off, minus those already labelled,
drawn at random with a seed (``draw``) or by stratum (``draw_regions``: images of a region,
or the thumbnails of :func:`larger_thumbnails` / :func:`resized_thumbnails`), optionally at most N items a site.
``python -m tools.caption_labels draw ...`` runs them."""
from __future__ import annotations

import random
from collections import Counter, defaultdict

from filters.text import TextCleaner
from pipeline.core.records import Page
from pipeline.core.stage import Keep
from pipeline.steps.extract import Extractor, below_picture
from pipeline.steps.html_images import find_images
from pipeline.steps.image_roles import PICTURE_PX, image_role, site_names
from pipeline.steps.image_urls import html_dim, larger_url
from pipeline.web.html import parsed
from tools.caption_pages import (LABELS, LABELS_DE, PAGES_DE, PAGES_EN, de_split_of, page_url,
                                 pages_of, read_labels, read_page, site_of, split_of)


def draw(seed: int, n: int, split: str = "dev", pages: str = "en", per_site: int = 0
         ) -> list[dict]:
    """N unlabelled items of the ``split`` pages, drawn at random from every item the extractor
    finds with page roles off (see the module docstring).  ``per_site`` > 0 (sample 14) caps
    the items of one site: the items are shuffled with the seed and taken in that order, a
    site's past its cap passed over, so that no page with hundreds of items fills the sample
    (an English page is its own site)."""
    items = unlabelled(split, pages)
    if not per_site:
        return random.Random(seed).sample(items, min(n, len(items)))
    return _capped(random.Random(seed), items, n, per_site, pages)


def _capped(rng: random.Random, pool: list[dict], n: int, per_site: int, pages: str
            ) -> list[dict]:
    """At most ``n`` items of ``pool`` in the seed's shuffled order, ``per_site`` a site."""
    site = site_of if pages == "de" else (lambda name: name)  # one English page, one site
    pool = list(pool)
    rng.shuffle(pool)
    taken: Counter = Counter()
    out = []
    for it in pool:
        if len(out) >= n:
            break
        if taken[site(it["page"])] < per_site:
            taken[site(it["page"])] += 1
            out.append(it)
    return out


def draw_regions(seed: int, quotas: dict, split: str = "dev", pages: str = "en",
                 per_site: int = 0) -> list[dict]:
    """A stratified sample (how samples 5 and 10 were drawn): for each region of ``quotas``
    (``{"nav": 120, "header": 60, "footer": 60}``), that many unlabelled items of images in
    that region (all of them if fewer), drawn at random with the seed, region by region in the
    order given, from every item the extractor finds with page roles off.  ``per_site`` > 0
    caps the items of one site in a region (sample 10: 2), so that no site's menu dominates:
    the region's items are shuffled with the seed and taken in that order, a site's past its
    cap passed over."""
    rng = random.Random(seed)
    items = unlabelled(split, pages)
    folder = PAGES_EN if pages == "en" else PAGES_DE
    names = sorted({it["page"] for it in items})
    larger = larger_thumbnails(names, folder) if "larger" in quotas else set()
    resized = resized_thumbnails(names, folder) if "resize" in quotas else set()
    out = []
    for region, n in quotas.items():
        # "larger" (sample 11) is no region: the items of images with no role declared under
        # 300 px both ways whose page names a larger version (larger_thumbnails)
        # "resize" (sample 13): those of thumbnails a resizing CDN is asked for at 300 px
        pick = larger if region == "larger" else resized if region == "resize" else None
        pool = [it for it in items if (it["page"], it["image_url"]) in pick] \
            if pick is not None else [it for it in items if it["region"] == region]
        if not per_site:
            out.extend(rng.sample(pool, min(n, len(pool))))
            continue
        out.extend(_capped(rng, pool, n, per_site, pages))
    return out


def larger_thumbnails(pages: list[str], folder: str = PAGES_EN) -> set:
    """``{(page, image_url)}`` of the images with no role (page roles on) declared or named
    under the image step's 300 px both ways (``extract.below_picture``) whose page names a
    larger version of the picture that has no role either (``image_urls.larger_url``): the
    thumbnails the ninth pass's rescue concerns, with or without it."""
    out = set()
    for name in pages:
        page = Page(url=page_url(name), body=read_page(name, folder), content_type="text/html")
        doc = parsed(page)
        found = find_images(doc.html, page.url, texts=False, tree=doc.tree())
        sites = site_names(page.url, found.site_name)
        for img in found.images:
            if not img.url:
                continue
            shown = img.url
            w, h = html_dim(img.attrs.get("width")), html_dim(img.attrs.get("height"))
            if image_role(shown, img.attrs, w, h, img.region, sites, img.link) \
                    or not below_picture(w, h, shown):
                continue
            big, _, big_w = larger_url(img, found.base, PICTURE_PX)
            if big and not image_role(big, img.attrs, big_w, None, img.region, sites, img.link):
                out.add((name, shown))
    return out


def resized_thumbnails(pages: list[str], folder: str = PAGES_EN) -> set:
    """``{(page, image_url)}`` of the thumbnails (page roles on) whose candidate is the same
    URL asking its resizing CDN for the picture at the image step's size
    (``image_resize.resized_url``, ``url_attr`` "resize ..."): the tenth pass's rule."""
    extract = Extractor()
    out = set()
    for name in pages:
        page = Page(url=page_url(name), body=read_page(name, folder), content_type="text/html")
        ev = next(extract.events(page))
        if isinstance(ev, Keep):
            out.update((name, c.meta["shown_url"]) for c in ev.outputs
                       if c.meta["url_attr"].startswith("resize "))
    return out


def unlabelled(split: str = "dev", pages: str = "en") -> list[dict]:
    """Every item the extractor finds with page roles off on the ``split`` pages (kept and
    dropped alike, furniture included), minus those already labelled, in page order.
    ``pages``: "en" (PAGES_EN, split by page) or "de" (PAGES_DE, split by site), else a
    folder of pages with no split and no labels yet, one page a site (the new-site sample,
    ``tools/caption_newsite.py``): every page is drawn from, whatever ``split``."""
    if pages in ("en", "de"):
        folder, path, split_fn = (PAGES_EN, LABELS, split_of) if pages == "en" else \
            (PAGES_DE, LABELS_DE, de_split_of)
    else:
        folder, path, split_fn = pages, "", (lambda name: split)
    extract = Extractor(page_roles=False)
    cleaner = TextCleaner()
    cleaner.setup()
    labelled = {(lab["page"], lab["image_url"], lab["source"], lab["text"])
                for lab in (read_labels(path) if path else [])}
    items, seen = [], set()
    for name in pages_of(folder):
        if split_fn(name) != split:
            continue
        page = Page(url=page_url(name), body=read_page(name, folder), content_type="text/html")
        ev = next(extract.events(page))
        if not isinstance(ev, Keep):
            continue
        own: dict = defaultdict(dict)
        for cand in ev.outputs:
            if cand.text_source != "surrounding":
                own[cand.image_url][cand.text_source] = cand.raw_text
        for cand in ev.outputs:
            for _, piece in cleaner._pieces(cand):
                key = (name, cand.image_url, cand.text_source, piece)
                if key in labelled or key in seen:
                    continue
                seen.add(key)
                items.append({"page": name, "image_url": cand.image_url,
                              "source": cand.text_source, "text": piece,
                              "region": cand.meta.get("region"),
                              "w": cand.meta.get("img_width"), "h": cand.meta.get("img_height"),
                              "own": own[cand.image_url], "title": cand.page_title[:80]})
    return items

