"""``generate()``: write the whole sample web (pages, WARC, images, ground truth) to a folder."""
from __future__ import annotations

import collections
import json
import random
import shutil
from pathlib import Path
from urllib.parse import urlsplit

from .images import build_images, load_assets
from .layout import Layout
from .pages import Renderer
from .warc import Response, write_warc

DEFAULT_BASE_URL = "http://127.0.0.1:8642"
# What a generation owns inside out_dir (removed before a new generation writes there).
OWNED = ["images", "static", "downloads", "articles", "gallery", "shop", "reports", "team", "de",
         "fr", "promo", "archive", "index.html", "pages.warc.gz", "truth.jsonl", "site.json"]
PDF = (b"%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n"
       b"2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n")
CSS = b"body{font-family:sans-serif;max-width:60em;margin:auto}img{max-width:100%;height:auto}\n"


def _check_base_url(base_url: str) -> str:
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/") \
            or parts.query or parts.fragment:
        raise ValueError(f"base_url must be like http://host:port with no path (got {base_url!r})")
    return base_url.rstrip("/")


def _prepare(out: Path) -> None:
    if out.exists() and any(out.iterdir()):
        if not (out / "site.json").exists():
            raise FileExistsError(f"{out} is not empty and holds no sample web (no site.json); "
                                  "give an empty or new folder")
        for name in OWNED:
            p = out / name
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def generate(out_dir, seed: int = 0, base_url: str = DEFAULT_BASE_URL) -> dict:
    """Write the sample web to ``out_dir`` and return its summary (also in ``site.json``).

    ``out_dir/pages.warc.gz``: the pages as a crawl; ``out_dir/images/``: the image files the
    pages point at (serve ``out_dir`` at ``base_url``, see :func:`serve`); the pages themselves
    as files too (a crawler can start at ``base_url/index.html``); ``out_dir/truth.jsonl``: one
    row per (image URL, text, text source, page) candidate, with its kinds and ``good``;
    ``out_dir/site.json``: counts and every image file with its near-duplicate group.
    Same seed and base_url give byte-identical files.
    """
    base = _check_base_url(base_url)
    out = Path(out_dir)
    _prepare(out)
    rng = random.Random(seed)
    images = build_images(rng)
    _, captions = load_assets()
    pages = Layout(images, captions, rng).build()
    renderer = Renderer(base)

    for path in sorted(images):
        _write(out / "images" / path, images[path].data)
    _write(out / "static" / "site.css", CSS)
    _write(out / "downloads" / "brochure.pdf", PDF)

    responses, truth = [], []
    for page in pages:
        body = renderer.page_html(page)
        _write(out / page.path, body)
        # The cp1252 page declares its charset only in a <meta> tag, like many old pages.
        ctype = "text/html" if page.encoding != "utf-8" else "text/html; charset=utf-8"
        responses.append(Response(f"{base}/{page.path}", body, ctype))
        truth += renderer.truth_rows(page)
    n_html = len(responses)
    responses.append(Response(f"{base}/downloads/brochure.pdf", PDF, "application/pdf"))
    responses.append(Response(f"{base}/old/photo-of-the-day.html", b"", "text/html", 301,
                              [("Location", f"{base}/articles/0001.html")]))
    responses.append(Response(f"{base}/articles/missing.html",
                              b"<html><body><h1>404 Not Found</h1></body></html>", "text/html", 404))
    write_warc(out / "pages.warc.gz", responses, seed)

    with open(out / "truth.jsonl", "w", encoding="utf-8") as fh:
        for row in truth:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")

    site = summary(images, pages, truth, seed, base, n_html, len(responses))
    (out / "site.json").write_text(json.dumps(site, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return site


def summary(images, pages, truth, seed, base, n_html, n_responses) -> dict:
    good_groups = {r["group"] for r in truth if r["good"]}
    return {
        "seed": seed,
        "base_url": base,
        "pages": n_html,
        "warc_responses": n_responses,
        "non_html_responses": 1,
        "page_langs": dict(sorted(collections.Counter(p.lang for p in pages).items())),
        "image_files": len(images),
        "distinct_images": len({i.sha256 for i in images.values()}),
        "image_kinds": dict(sorted(collections.Counter(i.kind for i in images.values()).items())),
        "image_variants": dict(sorted(collections.Counter(i.variant for i in images.values()).items())),
        "truth_rows": len(truth),
        "good_rows": sum(r["good"] for r in truth),
        "good_images": len(good_groups),
        "text_kinds": dict(sorted(collections.Counter(r["text_kind"] for r in truth).items())),
        "text_sources": dict(sorted(collections.Counter(r["text_source"] for r in truth).items())),
        "markups": dict(sorted(collections.Counter(r["markup"] for r in truth).items())),
        "images": {f"{base}/images/{p}": {"group": i.group, "kind": i.kind, "content": i.content,
                                          "variant": i.variant, "width": i.width, "height": i.height,
                                          "mime": i.mime, "sha256": i.sha256, "bytes": len(i.data)}
                   for p, i in sorted(images.items())},
    }
