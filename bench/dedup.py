"""CPU time per image of the near-duplicate grouping (``filters/dedup.py``) at 1k and 10k
images, side by side with all pairs (the quadratic reference), in one run.

Usage: ``python bench/dedup.py [--sizes 1000,10000] [--distance 6] [--repeats 2]``.

The hashes are the scaling test's kind (``tests/filters/test_dedup.py``): random 64-bit
pHashes, a tenth of them copies of another one moved by 1..distance bits.  ``passes`` are run
as the local engine runs them (group each pass by its key, reduce every bucket in key order),
so the figure includes the per-pair work of the passes, not only the Hamming comparisons.
``all_pairs`` is the brute-force reference: every pair's popcount with numpy (vectorised, so
it is fast per comparison; its time per image still grows with n).  Sizes are run in
alternation, ``--repeats`` times, and the best CPU time of each is reported: the machine is
shared.  The LAST line printed is a JSON object with ``growth`` (time per image at the largest
size over the smallest) for both.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The scaling test's hashes and its local-engine run of the passes: one definition of each.
from tests.filters.test_dedup import pair, run_passes, synthetic  # noqa: E402


def all_pairs(hashes: list[int], d: int) -> int:
    """Close pairs by brute force: every pair's Hamming distance."""
    a = np.array(hashes, dtype=np.uint64)
    close = 0
    for i in range(0, len(a), 1000):
        x = a[i:i + 1000, None] ^ a[None, :]
        bits = np.unpackbits(x.view(np.uint8), axis=-1).reshape(x.shape[0], x.shape[1], 64).sum(-1)
        close += int((bits <= d).sum())
    return close


def cpu(fn, *args) -> float:
    t = time.process_time()
    fn(*args)
    return time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--distance", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    # bad arguments stop here with argparse's one-line error, not in a traceback mid-run
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes takes comma-separated image counts, e.g. 1000,10000: got {args.sizes!r}")
    if min(sizes) < 1:
        ap.error(f"--sizes must be at least 1 image each: got {args.sizes!r}")
    if args.repeats < 1:
        ap.error(f"--repeats must be at least 1: got {args.repeats}")
    if not 0 <= args.distance <= 64:
        ap.error(f"--distance is in bits of a 64-bit pHash, 0..64: got {args.distance}")
    data = {n: [int(p.image.meta["phash"], 16) for p in synthetic(n, args.distance)]
            for n in sizes}
    best: dict = {"passes": {}, "all_pairs": {}}
    for _ in range(args.repeats):
        for n in sizes:  # alternating sizes: a busy spell hits both
            pairs = [pair(f"{i:064x}", h) for i, h in enumerate(data[n])]
            t_pass = cpu(run_passes, pairs, args.distance)
            t_all = cpu(all_pairs, data[n], args.distance)
            for name, t in (("passes", t_pass), ("all_pairs", t_all)):
                best[name][n] = min(best[name].get(n, t), t)
    result = {"cpu": os.popen("grep -m1 'model name' /proc/cpuinfo").read().split(":")[-1].strip(),
              "distance": args.distance}
    lo, hi = sizes[0], sizes[-1]
    for name, t in best.items():
        per = {n: t[n] / n * 1e6 for n in sizes}
        for n in sizes:
            print(f"{name:9s} n={n:6d}  {per[n]:8.1f} us CPU per image")
        result[name] = {str(n): round(per[n], 2) for n in sizes}
        result[name]["growth"] = round(per[hi] / per[lo], 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
