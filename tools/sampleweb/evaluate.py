"""Scoring a pipeline's output against the sample web's ground truth, and the labelled pairs
it holds for training a relevance scorer.

Matching is by image *group* (near-duplicate files of one picture share one) and by the raw
text, normalised (Unicode NFKC, case-folded, whitespace collapsed, trailing punctuation
dropped), since cleaning may edit the caption but not ``raw_text``. A raw text that is not a
truth text itself (an extractor may take a longer stretch of surrounding text) still matches
when it contains one, or lies inside one and has at least ``MIN_PARTIAL_WORDS`` words.
"""
from __future__ import annotations

import glob
import json
import os
import re
import unicodedata
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.steps.write import parquet_files

MIN_PARTIAL_WORDS = 5


def norm(text: str) -> str:
    t = unicodedata.normalize("NFKC", text or "").casefold()
    return re.sub(r"\s+", " ", t).strip().rstrip(".!?,;: ")


def read_truth(truth_path) -> list[dict]:
    with open(truth_path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _url_info(truth: list[dict], truth_path) -> dict[str, tuple[str, str]]:
    """image URL -> (group, image kind)."""
    info = {r["image_url"]: (r["group"], r.get("image_kind", "natural")) for r in truth}
    site = Path(truth_path).with_name("site.json")
    if site.exists():  # also knows image files that no truth row names
        for url, i in json.loads(site.read_text(encoding="utf-8"))["images"].items():
            info.setdefault(url, (i["group"], i["kind"]))
    return info


def read_output(shards_dir) -> list[dict]:
    """Rows of every parquet file in ``shards_dir``, or of a run's parquet files when it is a
    run's OUT (or its OUT/shards: the parquet files sit in OUT/parquet/ beside it)."""
    d = str(shards_dir).rstrip(os.sep)
    # A run's own files first: OUT/ also holds rejects.parquet, which is no sample.
    files = (parquet_files(d) or sorted(glob.glob(os.path.join(glob.escape(d), "*.parquet")))
             or (parquet_files(os.path.dirname(d)) if os.path.basename(d) == "shards" else []))
    rows = []
    for f in files:
        rows += pq.read_table(f).to_pylist()
    return rows


def _matches(text: str, good_texts: set[str]) -> bool:
    if text in good_texts:
        return True
    for g in good_texts:
        if g and g in text:
            return True
        if text and text in g and len(text.split()) >= MIN_PARTIAL_WORDS:
            return True
    return False


def evaluate(shards_dir, truth_path) -> dict:
    """Precision and recall of the samples in ``shards_dir`` against ``truth_path``.

    precision: fraction of output samples whose (image, text) is good: the image URL is a
    natural photo >= 300 px (any near-duplicate of the picture) and the text a good one for it;
    recall: fraction of distinct good pictures (groups) that appear in the output with a good
    text. Parquet rows need ``image_url`` and ``raw_text`` (``caption`` is used when
    ``raw_text`` is missing).
    """
    truth = read_truth(truth_path)
    urls = _url_info(truth, truth_path)
    good: dict[str, set[str]] = {}
    for r in truth:
        if r["good"]:
            good.setdefault(r["group"], set()).add(norm(r["text"]))
    output = read_output(shards_dir)
    n_good, found = 0, set()
    for row in output:
        # A near-duplicate file counts as its picture, but only if it is itself a large
        # natural photo (a thumbnail with a good caption is still not a good sample).
        group, kind = urls.get(row.get("image_url"), (None, None))
        raw = row.get("raw_text")
        text = norm(raw if raw is not None else row.get("caption", ""))
        if kind == "natural" and group in good and _matches(text, good[group]):
            n_good += 1
            found.add(group)
    return {
        "precision": n_good / len(output) if output else 0.0,
        "recall": len(found) / len(good) if good else 0.0,
        "n_output": len(output),
        "n_truth_images": len(good),
        "n_good_output": n_good,
        "n_found_images": len(found),
    }


def labelled_pairs(truth_path) -> list[dict]:
    """Every distinct (picture file, English text) pair on natural photos >= 300 px, labelled.

    ``label`` is 1 for a text that describes the picture and 0 otherwise (another photo's
    caption, file names, boilerplate, spam, ...): training data for the relevance scorer.
    ``image_path`` is the file under the generated folder.
    """
    root = Path(truth_path).resolve().parent
    seen, out = set(), []
    for r in read_truth(truth_path):
        if r["image_kind"] != "natural" or not r["text"].strip() or r["text_lang"] != "en":
            continue
        key = (r["image_url"], r["text"])
        if key in seen:
            continue
        seen.add(key)
        out.append({"image_url": r["image_url"], "image_path": str(root / r["image_path"]),
                    "text": r["text"], "group": r["group"], "text_kind": r["text_kind"],
                    "label": int(r["good"])})
    out.sort(key=lambda d: (d["image_url"], d["text"]))
    return out


def good_pairs(truth_path) -> list[dict]:
    """The distinct good (image, text) pairs: the positives of :func:`labelled_pairs`."""
    return [p for p in labelled_pairs(truth_path) if p["label"] == 1]
