"""How hard is the sample web? Generation time, and the precision/recall of oracle filter
chains applied to its ground-truth candidates, side by side (each step adds one perfect
filter: size, naturalness + English page, text cleaning, then aggregation).

    python bench/sampleweb_baselines.py [--seed 0]

Prints a JSON object as its last line.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools.sampleweb import evaluate, generate  # noqa: E402
from tools.sampleweb.evaluate import read_truth  # noqa: E402

CLEAN_KINDS = {"descriptive", "other_photo", "shared_generic"}  # what rule-based cleaning can't tell apart


def score(rows, tmp: Path, name: str, truth_path: Path) -> dict:
    d = tmp / name
    d.mkdir()
    table = pa.Table.from_pylist([{"image_url": r["image_url"], "caption": r["text"], "raw_text": r["text"]}
                                  for r in rows] or [{"image_url": "", "caption": "", "raw_text": ""}])
    pq.write_table(table if rows else table.slice(0, 0), d / "00000.parquet")
    res = evaluate(d, truth_path)
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in res.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        site = generate(tmp / "web", seed=args.seed)
        gen_s = time.perf_counter() - t0
        truth_path = tmp / "web" / "truth.jsonl"
        rows = [r for r in read_truth(truth_path) if r["text"].strip()]
        steps = {"all_nonempty_texts": rows}
        rows = [r for r in rows if r["image_kind"] != "small"]
        steps["+size"] = rows
        rows = [r for r in rows if r["image_kind"] == "natural" and r["page_lang"] == "en"]
        steps["+natural+english"] = rows
        rows = [r for r in rows if r["text_kind"] in CLEAN_KINDS]
        steps["+text_cleaning"] = rows
        # Aggregation: drop texts on > 10 pictures, then one text per picture file.
        per_text = {}
        for r in rows:
            per_text.setdefault(r["text"], set()).add(r["group"])
        rows = [r for r in rows if len(per_text[r["text"]]) <= 10]
        best = {}
        for r in rows:
            best.setdefault(r["image_url"], r)
        steps["+aggregation(first_text)"] = list(best.values())
        result = {"seed": args.seed, "generate_s": round(gen_s, 2), "pages": site["pages"],
                  "distinct_images": site["distinct_images"], "good_images": site["good_images"],
                  "steps": {k: score(v, tmp, f"s{i}", truth_path) for i, (k, v) in enumerate(steps.items())}}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
