"""Where each good caption of the dev split is lost (docs/captions.md, "Eleventh pass").

``python -m tools.caption_labels measure --show`` says ``not_extracted`` for a good item the
extractor gives no candidate; this says why: the role its image is given (``avatar``,
``small``, ``furniture``, ...) with the image's region, or, for a surrounding text, the reason
each side of it is discarded (``extract_side_region``, ``extract_side_links``).  A text the
extractor gives and the text step drops is listed with the text step's reason, as ``measure``
does.  Only the dev split is listed: the held-out items are never read one by one.

    python -m tools.caption_why [--pages de] [--sample N]
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter

from pipeline.core.records import Page
from pipeline.steps.extract import Extractor
from pipeline.steps.html_images import find_images
from pipeline.steps.image_roles import author_names, image_role, site_names
from pipeline.steps.image_urls import html_dim
from pipeline.web.html import parsed
from tools.caption_labels import all_items, lost_and_leaked
from tools.caption_pages import (LABELS, LABELS_DE, PAGES_DE, PAGES_EN, TARGETS_DE, page_url,
                                 read_labels, read_page)


def why_image(page: Page, image_url: str, extract: Extractor | None = None) -> list[str]:
    """One line for each image of ``page`` at ``image_url`` (a page may show one picture
    twice): ``"role <role> in <region>"`` where the image has a role that drops it (the raw
    role: a thumbnail whose page names a larger version is given that version, and then the
    extractor keeps it under its shown URL), else the reasons its sides are discarded
    (``"sides extract_side_region"``, as the extractor counts them) or ``"sides kept"``."""
    extract = extract or Extractor()
    doc = parsed(page)
    found = find_images(doc.html, page.url, extract.surrounding_chars, extract.max_text_chars,
                        texts=False, tree=doc.tree())
    sites = site_names(page.url, found.site_name)
    authors = author_names(found.authors)
    out = []
    for img in found.images:
        if img.url != image_url:
            continue
        region = img.region or "content"
        width, height = html_dim(img.attrs.get("width")), html_dim(img.attrs.get("height"))
        role = image_role(img.url, img.attrs, width, height, img.region, sites, img.link,
                          authors)
        if role and role != "branded":  # a branded alt drops an image only when alone
            out.append(f"role {role} in {region}")
            continue
        found.fill(img)
        units: Counter = Counter()
        extract._sides(found, img, units)  # the extractor's own decision, counted
        dropped = sorted(k for k, n in units.items() if n > 0 and k != "side_kept")
        out.append(f"sides {' '.join(dropped) or 'kept'} in {region}")
    return out


def lost_dev_items(pages: str = "en", sample: int | None = None) -> list[tuple[dict, str]]:
    """``[(label, why)]`` of the good dev items lost: the random samples (the split's
    figures), or with ``sample`` that sample alone (a stratified one included)."""
    folder, path, targets = (PAGES_EN, LABELS, None) if pages == "en" else \
        (PAGES_DE, LABELS_DE, TARGETS_DE)
    labels = [lab for lab in read_labels(path) if lab["split"] == "dev" and (
        lab.get("sample", 1) == sample if sample is not None else not lab.get("stratified"))]
    items = all_items(sorted({lab["page"] for lab in labels}), folder, targets)
    extract = Extractor()
    out = []
    for lab, reason in lost_and_leaked(labels, items)[0]:
        if reason == "not_extracted":
            page = Page(url=page_url(lab["page"]), body=read_page(lab["page"], folder),
                        content_type="text/html")
            # one picture's URL may be many images' (a placeholder shared by a page's cards)
            seen = Counter(why_image(page, lab["image_url"], extract))
            reason = "; ".join(w + (f" (x{n})" if n > 1 else "") for w, n in seen.items()) \
                or "image not found"
        out.append((lab, reason))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", choices=("en", "de"), default="en")
    ap.add_argument("--sample", type=int, default=None,
                    help="one sample only (default: the dev split's random samples)")
    args = ap.parse_args(argv)
    for lab, why in lost_dev_items(args.pages, args.sample):
        print(f"s{lab.get('sample', 1):<2} [{lab['source']}] {why[:70]:70} "
              f"{lab['text'][:70]!r}  {lab['page'][:40]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
