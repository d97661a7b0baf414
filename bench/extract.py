"""Benchmark: WARC -> image candidates, ours (FastWARC + selectolax/lexbor) against a
BeautifulSoup(html, "lxml") extraction of the same fields read with warcio.

Builds a gzipped WARC from the saved real pages (``<repo>/../shared/data/real_pages``) in a
temporary directory, then times both readers side by side, best of ``--reps`` runs each.
Prints a JSON object as its last line: pages_per_s, bs4_pages_per_s, ratio (wall time), and
cpu_ratio (process CPU time, steadier when the machine is busy).

    python bench/extract.py [--reps 3] [--copies 1]
"""
from __future__ import annotations

import argparse
import glob
import io
import json
import os
import sys
import tempfile
import time
from urllib.parse import urljoin

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from pipeline.core.stage import Drop  # noqa: E402
from pipeline.steps.extract import Extractor  # noqa: E402
from pipeline.steps.html_images import BLOCK_TAGS  # noqa: E402
from pipeline.steps.read import WarcReader  # noqa: E402

PAGES = os.path.join(REPO, "..", "shared", "data", "real_pages")


def build_warc(path: str, copies: int) -> int:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    files = sorted(glob.glob(os.path.join(PAGES, "*.html")))
    n = 0
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for copy in range(copies):
            for name in files:
                with open(name, "rb") as page:
                    body = page.read()
                url = f"https://example.com/{copy}/{os.path.basename(name)}"
                http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                        protocol="HTTP/1.1")
                writer.write_record(writer.create_warc_record(
                    url, "response", payload=io.BytesIO(body), http_headers=http))
                n += 1
    return n


def ours(path: str) -> tuple[int, int]:
    source, extractor = WarcReader([path]), Extractor()
    pages = cands = 0
    for ev in source.read(path):
        for page in getattr(ev, "outputs", ()):
            pages += 1
            out = extractor.process(page)
            cands += len(getattr(out, "outputs", out)) if not isinstance(out, Drop) else 0
    return pages, cands


def _bs4_page(html: bytes, url: str, limit: int = 300) -> list[tuple]:
    from bs4 import BeautifulSoup, NavigableString
    from bs4.element import Comment

    soup = BeautifulSoup(html, "lxml")
    base_tag = soup.find("base", href=True)
    base = urljoin(url, base_tag["href"]) if base_tag else url
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    lang = (soup.html.get("lang") or "").split("-")[0].lower() if soup.html else ""
    out = []
    for img in soup.find_all("img"):
        src = img.get("src") or img.get("data-src") or img.get("data-lazy-src") or ""
        if not src and img.get("srcset"):
            src = img["srcset"].split()[0]
        if not src or src.startswith(("data:", "javascript:")):
            continue
        img_url = urljoin(base, src.strip())
        fig = img.find_parent("figure")
        cap = fig.find("figcaption") if fig else None
        caption = cap.get_text(" ", strip=True) if cap else ""
        block = img.find_parent(list(BLOCK_TAGS)) or soup
        before, after, seen = [], [], False
        for node in block.descendants:
            if node is img:
                seen = True
            elif isinstance(node, NavigableString) and not isinstance(node, Comment) \
                    and node.parent.name not in ("script", "style"):
                (after if seen else before).append(str(node))
        before = " ".join("".join(before).split())[-limit:]
        after = " ".join("".join(after).split())[:limit]
        out.append((img_url, " ".join((img.get("alt") or "").split()),
                    " ".join((img.get("title") or "").split()), caption, before, after,
                    title, lang))
    return out


def bs4_warcio(path: str) -> tuple[int, int]:
    from warcio.archiveiterator import ArchiveIterator

    pages = cands = 0
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f):
            if rec.rec_type != "response":
                continue
            ctype = rec.http_headers.get_header("Content-Type") or ""
            if "html" not in ctype:
                continue
            pages += 1
            url = rec.rec_headers.get_header("WARC-Target-URI")
            cands += len(_bs4_page(rec.content_stream().read(), url))
    return pages, cands


def best_of(fn, path: str, reps: int) -> tuple[float, float, tuple]:
    """Best wall time, best process CPU time (steadier on a busy shared machine), result."""
    best, best_cpu, result = float("inf"), float("inf"), None
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        result = fn(path)
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best, best_cpu, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--copies", type=int, default=1, help="times each page is written")
    args = ap.parse_args()
    # bad arguments stop here with argparse's one-line error, not in a traceback mid-run
    for name in ("reps", "copies"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be at least 1: got {getattr(args, name)}")
    if not os.path.isdir(PAGES):
        sys.exit(f"no real pages at {PAGES}")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pages.warc.gz")
        n = build_warc(path, args.copies)
        t_ours, c_ours, (pages, cands) = best_of(ours, path, args.reps)
        t_bs4, c_bs4, (bs4_pages, bs4_imgs) = best_of(bs4_warcio, path, args.reps)
    result = {
        "warc_pages": n, "reps": args.reps,
        "pages": pages, "candidates": cands, "seconds": round(t_ours, 4),
        "bs4_pages": bs4_pages, "bs4_images": bs4_imgs, "bs4_seconds": round(t_bs4, 4),
        "pages_per_s": round(pages / t_ours, 1),
        "bs4_pages_per_s": round(bs4_pages / t_bs4, 1),
        "ratio": round((pages / t_ours) / (bs4_pages / t_bs4), 2),
        "cpu_seconds": round(c_ours, 4), "bs4_cpu_seconds": round(c_bs4, 4),
        "cpu_ratio": round((pages / c_ours) / (bs4_pages / c_bs4), 2),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
