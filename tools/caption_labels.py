"""Caption quality on real pages, measured against labels written by eye.

The labelled items live in ``tests/data/real_pages_en_labels.jsonl``, one JSON object a line:
``page`` (file name in ``../shared/data/real_pages_en``), ``image_url``, ``source`` (alt /
caption / title / surrounding), ``text`` (the text as extracted; for a surrounding text the
sentence next to the image that the text step cleans, see ``filters/sentences.py``),
``label`` (``good`` caption / ``junk`` / ``vague``), ``split`` (``dev`` or ``check``, by page:
each page of the set is a different site), for images the extractor of the time missed,
``missed: true``, and for a later sample its number (``sample: 2``: 220 more items of the
check pages, drawn at random from every item the extractor finds with page roles off, and
labelled after the rules they measure were written; ``sample: 4``: 360 more items of the dev
pages, drawn by ``draw`` with seed 20261128; ``sample: 5, stratified: "region"``: 240 more
dev items, a stratified sample of the items of images in the site's menu (``nav``, 120),
header (60) and footer (60), ``region`` saying which, drawn by ``draw --regions`` with seed
20261129 (before they were labelled) and reported only on its own, never in the split's
figures; ``sample: 6``: 200 more check items drawn by ``draw --split check`` with seed
20261130, labelled before anything was measured on them; ``sample: 7``: 250 more dev items
drawn by ``draw`` with seed 20261131, labelled before anything was measured on them; ``sample:
8``: 250 more dev items drawn by ``draw`` with seed 20261132, likewise).
``tests/data/real_pages_labels.jsonl`` holds 400 items of the 110 mostly German
``../shared/data/real_pages`` drawn the same way (samples 2 and 3), held out until the seventh
pass, which split those pages by site (:func:`de_split_of`) into ``dev`` (de-dev) and ``check``
(de-check), and labelled 170 more de-dev items (``sample: 9``, ``draw --pages de --seed
20261134 --n 170``) before anything was measured on them.  Ninth pass, both files:
``sample: 10, stratified: "region"``: 140 dev items of images in the site's menu (``nav``),
at most 2 a site (``draw --regions nav=400 --per-site 2 --seed 20261135``, ``--pages en`` and
``--pages de``); ``sample: 11, stratified: "stratum", stratum: "larger"``: 75 dev items of
thumbnails with no role declared under 300 px both ways whose page names a larger version
(:func:`larger_thumbnails`; ``draw --regions larger=60 --per-site 3 --seed 20261136``); both
labelled before anything was measured on them, reported only on their own; ``sample: 12,
stratified: "region"``: 118 dev items of header images, one a site (``draw --regions
header=200 --per-site 1 --seed 20261137``), drawn after the ninth pass's rules were frozen.
Tenth pass: ``sample: 13, stratified: "stratum", stratum: "resize"``: 26 English dev items of
thumbnails a resizing CDN serves under 300 px (``draw --regions resize=60 --per-site 4 --seed
20261138``, :func:`tools.caption_draw.resized_thumbnails`), labelled before measuring.
Fifteenth pass: ``sample: 14, stratified: "stratum", stratum: "capped"``: 130 English dev items
drawn at random as sample 6 was on the check pages, at most 3 a site (``draw --seed 20261139
--n 130 --per-site 3``), labelled before anything was measured on them and reported on their
own (``dev-s14``): the dev pages' items nobody had mined, a fresh estimate.
Labels are keyed on page, image URL, source and raw text, so they outlive
code changes: an item the current code no longer extracts counts as ``not extracted``.

``measure()`` runs extraction and the text step over the labelled pages and reports, per split
and per source: the share of junk items kept, the share of good items dropped or not extracted,
and the precision of what is kept (good / labelled kept).  Beside good lost, never instead of
it, the table's ``lost >100`` column gives good lost without the good items of pictures declared,
named or asked of their server at 100 px or less both ways (:func:`thumbnails`): the image step
keeps pictures of 300 px and more, so no caption of theirs can become a pair.  The
``pair junk`` / ``pair lost`` columns (ninth pass) count a text kept for an image served
under 300 px both ways (its file name's size, else the declared one, else the one asked of its
server: :func:`pair_below`) as not kept: the image step drops that picture once fetched, so
the text reaches no pair.

    python -m tools.caption_labels measure [--show --split dev] [--pages de]
    python -m tools.caption_labels dump OUT.jsonl [--pages de | --folder DIR]  # all decisions
    python -m tools.caption_labels draw OUT.jsonl --seed 20261128 --n 360   # a new sample
    python -m tools.caption_labels draw OUT.jsonl --seed 20261129 \
        --regions nav=120,header=60,footer=60                              # sample 5

    python -m tools.caption_labels draw OUT.jsonl --folder DIR --seed 20261153 --n 130 \
        --per-site 3                         # the new-site sample (tools/caption_newsite.py)
    python -m tools.caption_labels measure --folder DIR --labels tests/data/newsite_labels.jsonl

``draw`` is how sample 4 was drawn: every item the extractor finds on the dev pages with page
roles off (kept and dropped alike, furniture included), minus those already labelled, N drawn
at random with the seed; each with its region, declared size and the image's own texts, to
label by eye.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict

from filters.language import PageLanguage, PageLanguageConfig
from filters.text import TextCleaner, TextCleanerConfig
from pipeline.core.records import Page
from pipeline.core.stage import Keep
from pipeline.steps.extract import Extractor
from pipeline.steps.image_roles import PICTURE_PX, name_facts
from tools.caption_draw import draw, draw_regions, larger_thumbnails, unlabelled  # noqa: F401
# The pages, their labels and splits (tools/caption_pages.py), re-exported: the tests and the
# command lines of docs/captions.md name them here.
from tools.caption_pages import (HERE, LABELS, LABELS_DE, PAGES_DE, PAGES_EN,  # noqa: F401
                                 TARGETS_DE, de_split_of, page_url, pages_of, read_labels,
                                 read_page, site_of, split_of)


def items_of_page(name: str, extract, cleaner, folder: str = PAGES_EN, language=None
                  ) -> list[dict]:
    """Every text item of one page with the decision the current code takes on it.
    ``language``: the build's language step, run first as a build runs it (sixteenth pass):
    it gives the page the language the text step's rules read where ``<html lang>`` is
    missing, and a page it drops gives no item."""
    page = Page(url=page_url(name), body=read_page(name, folder), content_type="text/html")
    if language is not None and not isinstance(language.process(page), list):
        return []
    ev = next(extract.events(page))
    if not isinstance(ev, Keep):
        return []
    out = []
    for cand in ev.outputs:
        for side, piece in cleaner._pieces(cand):
            text, reason, meta, _ = cleaner.clean(piece, cand.page_lang or "",
                                                  cleaner.own_text(cand),
                                                  cand.meta.get("file_name", ""),
                                                  cand.meta.get("image_text", ""),
                                                  cand.meta.get("img_width"),
                                                  cand.meta.get("img_height"),
                                                  cand.text_source == "surrounding",
                                                  cand.meta.get("credit_line", False))
            # Labels name the image the page shows: a thumbnail whose larger version became
            # the candidate (meta "shown_url", extract.SIZE_ROLES) is found under its own URL.
            out.append({"page": name, "image_url": cand.meta.get("shown_url", cand.image_url),
                        "fetch_url": cand.image_url, "source": cand.text_source,
                        "text": piece, "side": side, "kept": text is not None,
                        # the image fetched is declared (or named) under the image step's
                        # 300 px both ways: its text reaches no pair (measure's "pair" figures)
                        "below": pair_below(cand.image_url, cand.meta.get("img_width"),
                                            cand.meta.get("img_height")),
                        "reason": reason, "clean": text or "", "edits": meta["text_edits"],
                        "region": cand.meta.get("region", ""), "img_index": cand.img_index})
    return out


def all_items(pages: list[str], folder: str = PAGES_EN, targets: list[str] | None = None
              ) -> list[dict]:
    extract = Extractor()
    cleaner = TextCleaner(TextCleanerConfig(targets=targets) if targets else None)
    cleaner.setup()
    # The build's language step first (sixteenth pass): without it a page with no
    # <html lang> gave the text step no page language, and a short name list ("Square,
    # Google Wallet, Venmo.") that fastText reads as Italian lost the vocabulary test a
    # build gives it.
    language = PageLanguage(PageLanguageConfig(targets=list(cleaner.config.targets)))
    language.setup()
    out = []
    for name in pages:
        out.extend(items_of_page(name, extract, cleaner, folder, language))
    return out


# A picture declared (``width`` / ``height``), named ("-96x72.jpg") or asked of its server
# (``?w=48&h=48``) at this size or less both ways can never become a pair: the image step keeps
# images of 300 px and more both ways (docs/captions.md, "Decisions").
THUMB_PX = 100
# (not a hash that starts with digits: Drupal's "?h=98c520fc", tenth pass)
_ASKED_RE = re.compile(r"[?&;,](w|width|h|height)[=_](\d{1,4})(?![0-9A-Za-z])")
# a size anywhere in the file name ("MakeWith100x100BettyCrockerCakeMix.jpeg")
_NAMED_RE = re.compile(r"(?<!\d)(\d{2,4})x(\d{2,4})(?!\d)")


def _named_size(url: str) -> tuple | None:
    """The size an image's file name says ("-96x72.jpg", "...100x100..."), or None: the name
    read without its query and fragment, as ``name_facts`` reads it."""
    size = name_facts(url)[1]
    if size is None:
        m = _NAMED_RE.search(url.split("#", 1)[0].split("?", 1)[0].rsplit("/", 1)[-1])
        size = (int(m.group(1)), int(m.group(2))) if m else None
    return size


def served_size(url: str, width: int | None, height: int | None) -> tuple:
    """``(width, height)`` an image is declared, named or asked at (None where unknown).  A
    size after the URL's ``#`` is none: the fragment never reaches the server (as
    ``image_names.query_width`` reads it)."""
    if width is None and height is None:
        size = _named_size(url)
        if size is not None:
            width, height = size
    for key, value in _ASKED_RE.findall(url.split("#", 1)[0]):
        if key[0] == "w" and width is None:
            width = int(value)
        elif key[0] == "h" and height is None:
            height = int(value)
    return width, height


def pair_below(url: str, width: int | None, height: int | None) -> bool:
    """Whether the image fetched is served under the image step's 300 px both ways (the
    sides known): the size its file name says ("-150x150.jpg", the file's own), else the
    declared one, else the one asked of its server (``?w=200``).  Its texts reach no pair."""
    size = _named_size(url)
    w, h = served_size(url, *(size or (width, height)))
    known = [v for v in (w, h) if v is not None]
    return bool(known) and max(known) < PICTURE_PX


def thumbnails(pages: list[str], folder: str = PAGES_EN) -> set:
    """``{(page, image_url)}`` of the images (page roles off: every one the extractor finds)
    declared, named or asked at THUMB_PX or less both ways (one unknown side: the known one)."""
    extract = Extractor(page_roles=False)
    out = set()
    for name in pages:
        page = Page(url=page_url(name), body=read_page(name, folder), content_type="text/html")
        ev = next(extract.events(page))
        if not isinstance(ev, Keep):
            continue
        for cand in ev.outputs:
            w, h = served_size(cand.image_url, cand.meta.get("img_width"),
                               cand.meta.get("img_height"))
            known = [v for v in (w, h) if v is not None]
            if known and max(known) <= THUMB_PX:
                out.add((name, cand.image_url))
    return out


def _index(items: list[dict]) -> tuple[dict, dict]:
    """``(by_key, by_image)`` of :func:`_find`.  An item is also found under the URL it
    fetches when that is not the URL the page shows (thirty-third pass, M): a picture shown
    twice, as a thumbnail naming the larger file and as that file, is one candidate keyed
    under the thumbnail, and a label may name the larger file (drawn with page roles off)."""
    by_key, by_image = {}, defaultdict(list)
    for it in items:
        by_key.setdefault((it["page"], it["image_url"], it["source"], it["text"]), it)
        by_image[(it["page"], it["image_url"], it["source"])].append(it)
    for it in items:
        fetched = it.get("fetch_url", it["image_url"])
        if fetched != it["image_url"]:
            by_key.setdefault((it["page"], fetched, it["source"], it["text"]), it)
    return by_key, by_image


def _find(label: dict, by_key: dict, by_image: dict) -> dict | None:
    """The current item for a label: same page, image (shown, or else fetched), source and
    text; else (the text changed a little, e.g. a window boundary moved) one whose text
    holds it or is held.  A surrounding label is looked for as a caption too: a caption
    element the extractor read as a side before the thirty-eighth pass (a WordPress
    "p.wp-caption-text", MediaWiki's "div.thumbcaption") is read as the picture's caption
    since, the text the labeller saw on that picture under its right source."""
    sources = (label["source"], "caption") if label["source"] == "surrounding" \
        else (label["source"],)
    for source in sources:
        where = (label["page"], label["image_url"], source)
        hit = by_key.get(where + (label["text"],))
        if hit is not None:
            return hit
        for item in by_image.get(where, ()):
            if len(item["text"]) >= 12 and len(label["text"]) >= 12 and (
                    label["text"] in item["text"] or item["text"] in label["text"]):
                return item
    return None


def measure(labels: list[dict], items: list[dict], thumbs: set = frozenset()) -> dict:
    """``{split: {source or "all": {n_good, n_junk, n_vague, junk_kept, good_lost, ...}}}``.
    ``thumbs`` (:func:`thumbnails`): the images no caption of which can become a pair;
    ``good_lost_reachable`` is good lost without their good items (``n_good_thumb``), beside
    the headline ``good_lost`` over all good items."""
    by_key, by_image = _index(items)
    counts: dict = defaultdict(lambda: defaultdict(Counter))
    for lab in labels:
        item = _find(lab, by_key, by_image)
        state = "missing" if item is None else ("kept" if item["kept"] else "dropped")
        # pair level (ninth pass): a text kept for an image declared under 300 px both ways
        # reaches no pair, since the image step drops the picture once fetched
        below = item is not None and item["kept"] and item.get("below", False)
        # A later sample is also reported on its own ("check-s2": drawn and labelled after
        # the rules it measures were written).  A stratified sample (sample 5: items of
        # header, footer and menu images) is reported only on its own and per stratum
        # ("dev-s5", "dev-s5-nav"): it is no random draw, so it stays out of the split's
        # headline figures.
        if lab.get("stratified"):
            base = f"{lab['split']}-s{lab['sample']}"
            groups = (base, f"{base}-{lab[lab['stratified']]}")
        else:
            groups = (lab["split"], "all") + ((f"{lab['split']}-s{lab['sample']}",)
                                              if lab.get("sample") else ())
        thumb = (lab["page"], lab["image_url"]) in thumbs
        for split in groups:
            for src in (lab["source"], "all"):
                counts[split][src][(lab["label"], state)] += 1
                if thumb and lab["label"] == "good":
                    counts[split][src][("thumb", state)] += 1
                if below:
                    counts[split][src][("below", lab["label"])] += 1
    out = {}
    for split, per_src in counts.items():
        out[split] = {}
        for src, c in per_src.items():
            n = {lab: sum(v for (l2, _), v in c.items() if l2 == lab)
                 for lab in ("good", "junk", "vague")}
            kept = sum(v for (lab, s), v in c.items()
                       if s == "kept" and lab in ("good", "junk", "vague"))
            n_thumb = sum(v for (lab, _), v in c.items() if lab == "thumb")
            lost = c["good", "dropped"] + c["good", "missing"]
            lost_thumb = c["thumb", "dropped"] + c["thumb", "missing"]
            out[split][src] = {
                "n_good": n["good"], "n_junk": n["junk"], "n_vague": n["vague"],
                "junk_kept": round(c["junk", "kept"] / n["junk"], 4) if n["junk"] else 0.0,
                "good_lost": round((c["good", "dropped"] + c["good", "missing"]) / n["good"], 4)
                if n["good"] else 0.0,
                "good_not_extracted": c["good", "missing"],
                "n_good_thumb": n_thumb,
                "good_lost_reachable": round((lost - lost_thumb) / (n["good"] - n_thumb), 4)
                if n["good"] > n_thumb else 0.0,
                "precision": round(c["good", "kept"] / kept, 4) if kept else 0.0,
                "kept": kept,
                # pair level: what is kept less the texts of images declared under 300 px
                # both ways (``below``), which the image step drops once they are fetched
                "junk_kept_pair": round((c["junk", "kept"] - c["below", "junk"]) / n["junk"], 4)
                if n["junk"] else 0.0,
                "good_lost_pair": round((lost + c["below", "good"]) / n["good"], 4)
                if n["good"] else 0.0}
    return out


def lost_and_leaked(labels: list[dict], items: list[dict]) -> tuple[list, list]:
    """(good items lost with their state, junk items kept), for reading what goes wrong."""
    by_key, by_image = _index(items)
    lost, leaked = [], []
    for lab in labels:
        item = _find(lab, by_key, by_image)
        if lab["label"] == "good" and (item is None or not item["kept"]):
            lost.append((lab, item["reason"] if item else "not_extracted"))
        elif lab["label"] == "junk" and item is not None and item["kept"]:
            leaked.append((lab, item))
    return lost, leaked


def format_table(result: dict, only: str = "") -> str:
    """The table of :func:`measure`'s figures; ``only``: that split's rows alone ("dev": its
    samples too, "dev-s10"), so that a dev pass prints no held-out figure (eleventh pass)."""
    if only:
        result = {k: v for k, v in result.items() if k.split("-")[0] == only}
    lines = [f"{'split':13} {'source':12} {'good':>5} {'junk':>5} {'vague':>5} "
             f"{'junk kept':>9} {'good lost':>9} {'lost >100':>9} {'precision':>9} "
             f"{'pair junk':>9} {'pair lost':>9}"]
    for split in sorted(result, key=lambda k: (k == "all", k)):
        for src in ("alt", "caption", "title", "surrounding", "all"):
            r = result[split].get(src)
            if r:
                lines.append(f"{split:13} {src:12} {r['n_good']:>5} {r['n_junk']:>5} "
                             f"{r['n_vague']:>5} {r['junk_kept']:>9.3f} {r['good_lost']:>9.3f} "
                             f"{r['good_lost_reachable']:>9.3f} {r['precision']:>9.3f} "
                             f"{r['junk_kept_pair']:>9.3f} {r['good_lost_pair']:>9.3f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--pages", choices=("en", "de"), default="en",
                   help="en: ../shared/data/real_pages_en; de: ../shared/data/real_pages "
                        f"(text targets {TARGETS_DE})")
    m.add_argument("--labels", default="", help="labels file (default: the set's own)")
    m.add_argument("--folder", default="",
                   help="pages of this folder (the new-site sample), with --labels")
    m.add_argument("--show", action="store_true", help="list lost good and kept junk items")
    m.add_argument("--split", default="", help="only this split (dev / check): its rows and, "
                                               "with --show, its items")
    d = sub.add_parser("dump")
    d.add_argument("out")
    d.add_argument("--pages", choices=("en", "de"), default="en",
                   help=f"en: the 400 English pages; de: the 110 German ones "
                        f"(targets {TARGETS_DE})")
    d.add_argument("--folder", default="", help="pages of this folder instead (a new-site sample)")
    dr = sub.add_parser("draw")
    dr.add_argument("out")
    dr.add_argument("--seed", type=int, required=True)
    dr.add_argument("--n", type=int, default=360)
    dr.add_argument("--split", choices=("dev", "check"), default="dev",
                    help="the pages to draw from (sample 6: check)")
    dr.add_argument("--pages", choices=("en", "de"), default="en",
                    help="de: ../shared/data/real_pages, split by site (sample 9)")
    dr.add_argument("--folder", default="",
                    help="draw from this folder of pages instead (one page a site, no split: "
                         "the new-site sample, tools/caption_newsite.py)")
    dr.add_argument("--regions", default="",
                    help="a stratified draw instead: region=N,... (nav=120,header=60,footer=60)")
    dr.add_argument("--per-site", type=int, default=0,
                    help="at most this many items of one site (with --regions: a region; "
                         "sample 10: 2; sample 14, a plain draw: 3)")
    args = ap.parse_args(argv)
    if args.cmd == "draw":
        quotas = {r: int(n) for r, n in (q.split("=") for q in args.regions.split(",") if q)}
        pages = args.folder or args.pages
        drawn = draw_regions(args.seed, quotas, args.split, pages, args.per_site) \
            if quotas else \
            draw(args.seed, args.n, args.split, pages, args.per_site)
        with open(args.out, "w", encoding="utf-8") as f:
            for it in drawn:
                f.write(json.dumps(it, ensure_ascii=False) + "\n")
        return 0
    if args.cmd == "dump":
        # every item's decision, to diff two trees' (the 400 English pages, the German 110
        # with their targets, or a new-site folder)
        folder, targets = (args.folder, None) if args.folder else \
            (PAGES_EN, None) if args.pages == "en" else (PAGES_DE, TARGETS_DE)
        with open(args.out, "w", encoding="utf-8") as f:
            for it in all_items(pages_of(folder), folder, targets):
                f.write(json.dumps(it, ensure_ascii=False) + "\n")
        return 0
    folder, path, targets = (PAGES_EN, LABELS, None) if args.pages == "en" else \
        (PAGES_DE, LABELS_DE, TARGETS_DE)
    if args.folder:
        if not args.labels:
            ap.error("--folder needs --labels (the folder's own labels file)")
        folder, path, targets = args.folder, args.labels, None
    labels = read_labels(args.labels or path)
    pages = sorted({lab["page"] for lab in labels})
    items = all_items(pages, folder, targets)
    result = measure(labels, items, thumbnails(pages, folder))
    print(format_table(result, args.split))
    if args.show:
        shown = [lab for lab in labels if not args.split or lab["split"] == args.split]
        lost, leaked = lost_and_leaked(shown, items)
        for lab, why in lost:
            print(f"LOST  [{lab['source']}] {why:24} {lab['text'][:110]!r}  {lab['page'][:40]}")
        for lab, item in leaked:
            print(f"LEAK  [{lab['source']}] {lab['text'][:120]!r}  {lab['page'][:40]}")
    # a labels file of stratified samples only (--labels) has no headline group
    if (args.split or "all") in result:
        print(json.dumps(result[args.split or "all"]["all"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
