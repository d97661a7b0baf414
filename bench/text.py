"""Texts per second on ONE core for the ``text`` step (sentence selection, cleaning rules,
fastText language id, wordfreq OOV ratio) over the candidates extracted from
``../shared/data/real_pages``.

Usage: ``python bench/text.py [--passes N]``.  Pinned to one CPU with one thread per native
library.  Candidates come from the real pipeline's first steps (``PageLanguage`` off, so every
page's texts count, and ``Extractor``); the timed loop is ``TextCleaner.events`` per candidate,
exactly what a worker runs.  The first pass (cold wordfreq cache) and the later passes
(steady state, as on a worker after its first thousands of texts) are reported separately, with
fastText alone on the same texts for scale.  The LAST line printed is a JSON object.
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from filters.language import PageLanguage  # noqa: E402
from filters.text import TextCleaner  # noqa: E402
from pipeline.extract import Extractor  # noqa: E402
from pipeline.records import Page  # noqa: E402
from pipeline.stage import Keep  # noqa: E402

PAGES = os.path.join(ROOT, "..", "shared", "data", "real_pages")


def candidates(english_only: bool):
    lang, ext = PageLanguage(), Extractor()
    out = []
    for name in sorted(os.listdir(PAGES)):
        if not name.endswith(".html"):
            continue
        with open(os.path.join(PAGES, name), "rb") as f:
            page = Page(url=f"https://{name[:-5]}/", body=f.read(), content_type="text/html")
        if english_only and not isinstance(next(lang.events(page)), Keep):
            continue
        ev = next(ext.events(page))
        out.extend(ev.outputs if isinstance(ev, Keep) else ())
    return out


def timed(stage, cands) -> tuple[float, Counter]:
    reasons = Counter()
    t0 = time.perf_counter()
    for c in cands:
        for ev in stage.events(c):
            reasons["kept" if isinstance(ev, Keep) else ev.reason] += 1
    return time.perf_counter() - t0, reasons


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=5)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    # A fixed pure-Python loop, so figures from busy or different machines can be compared.
    t0 = time.perf_counter()
    sum(range(10_000_000))
    result = {"cores": 1, "reference_loop_s": round(time.perf_counter() - t0, 3)}
    for label, english_only in (("english_pages", True), ("all_pages", False)):
        cands = candidates(english_only)
        stage = TextCleaner()
        stage.setup()
        cold, reasons = timed(stage, cands)
        warm = min(timed(stage, cands)[0] for _ in range(max(1, args.passes - 1)))
        texts = [c.text[: stage.config.lang_max_chars].lower() for c in cands]
        t0 = time.perf_counter()
        for t in texts:
            stage._lid.fasttext(t)
        ft = time.perf_counter() - t0
        result[label] = {
            "candidates": len(cands),
            "by_source": dict(sorted(Counter(c.text_source for c in cands).items())),
            "kept": reasons["kept"], "dropped": sum(reasons.values()) - reasons["kept"],
            "texts_per_s_cold": round(len(cands) / cold),
            "texts_per_s_warm": round(len(cands) / warm),
            "fasttext_only_texts_per_s": round(len(texts) / ft),
        }
        print(label, json.dumps(result[label]), file=sys.stderr)
    # The headline: steady state over every page's candidates (the larger sample).
    result["texts_per_s_per_core"] = result["all_pages"]["texts_per_s_warm"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
