"""Worst-case time per page of the ``extract`` step on hostile pages (docs/captions.md,
"Worst-case cost of hostile input").

Usage: ``python bench/extract_worst.py [--sizes 500000,5000000] [--reps 1] [--family SUB]
[--against GIT_REF]``.  One core.

Every family of ``tests/pipeline/steps/hostile_pages.py`` (a megabyte attribute, 100,000
images, nesting up to and past ``MAX_DEPTH``, ...) is made at each size and run through the
real ``Extractor`` (parse included), CPU time, best of ``--reps``.  Printed per family: the
time at each size, the growth per byte from the smallest size to the largest (1.0 is
linear), the event (kept candidates or drop reason) and the longest candidate URL.  With
``--against REF`` git revision REF's ``pipeline/`` runs the same pages in a subprocess and the
times are printed side by side (REF / this tree).  The LAST line printed is a JSON object.
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from _compare import HERE, check_ref, one_core, positive_ints, run_at  # noqa: E402


def families() -> dict:
    """THIS tree's hostile page families, loaded by path (REF may not have them)."""
    path = os.path.join(HERE, "tests", "pipeline", "steps", "hostile_pages.py")
    spec = importlib.util.spec_from_file_location("hostile_pages", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.FAMILIES


def measure(sizes, reps: int, only: str = "") -> dict:
    from pipeline.core.records import Page
    from pipeline.steps.extract import Extractor

    ex = Extractor()
    out = {}
    for fam, make in families().items():
        if only and only not in fam:
            continue
        row = {"s": [], "event": "", "url": 0}
        for size in sizes:
            body = make(size)
            best = float("inf")
            for _ in range(reps):
                page = Page(url="https://example.com/p.html", body=body, content_type="text/html")
                t0 = time.process_time()
                (ev,) = list(ex.events(page))
                best = min(best, time.process_time() - t0)
            row["s"].append(round(best, 4))
            outs = getattr(ev, "outputs", ())
            row["event"] = getattr(ev, "reason", "") or f"kept {len(outs)}"
            row["url"] = max((len(c.image_url) for c in outs), default=0)
        out[fam] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="500000,5000000")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--family", default="")
    ap.add_argument("--against", default="")
    ap.add_argument("--_child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.reps < 1:
        ap.error("--reps must be >= 1")
    sizes = positive_ints(ap, "--sizes", args.sizes)
    check_ref(ap, args.against)
    one_core()
    if args._child:
        sys.path.insert(0, args._child)
        print(json.dumps(measure(sizes, args.reps, args.family)))
        return
    sys.path.insert(0, HERE)
    here = measure(sizes, args.reps, args.family)
    other = {}
    if args.against:
        other = run_at(args.against, __file__, ["--sizes", args.sizes, "--reps", str(args.reps),
                                                 "--family", args.family])
    width = max(len(f) for f in here)
    head = "  ".join(f"{s / 1e6:.1f}MB s" for s in sizes)
    print(f"{'family':<{width}}  {head}  growth  event / longest URL"
          + ("  | REF s (largest)  ratio  REF event / URL" if other else ""))
    for fam, row in here.items():
        growth = (row["s"][-1] / sizes[-1]) / max(row["s"][0] / sizes[0], 1e-12)
        line = (f"{fam:<{width}}  " + "  ".join(f"{t:8.3f}" for t in row["s"])
                + f"  {growth:6.2f}  {row['event']} / {row['url']}")
        if fam in other:
            o = other[fam]
            line += (f"  | {o['s'][-1]:8.3f}  {o['s'][-1] / max(row['s'][-1], 1e-6):5.2f}x"
                     f"  {o['event']} / {o['url']}")
        print(line)
    worst = max((r["s"][-1], f) for f, r in here.items())
    result = {"sizes": sizes, "worst_s": worst[0], "worst_family": worst[1],
              "max_growth": round(max((r["s"][-1] / sizes[-1]) / max(r["s"][0] / sizes[0], 1e-12)
                                      for r in here.values()), 2)}
    if other:
        result["against"] = args.against
        result["ref_worst_s"] = max(r["s"][-1] for r in other.values())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
