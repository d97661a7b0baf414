"""Images per second on ONE core for the whole image-filter chain, and each filter's share.

Usage: ``python bench/images.py [--passes N] [--quick | --only VARIANT,...]``.  Prints the CPU's
int8-relevant flags (avx2, avx512_vnni, avx_vnni) first and in the final JSON.  Pinned to one
CPU, one thread per native library and per onnxruntime session.  Images are the demo's
(``tools/sampleweb``'s image files, seed 0: photos, crops, near-duplicates, clip art, rendered
graphics, small images).

The headline (``default``) is the chain as a pipeline worker runs it: the steps of
``pipeline.jobs.image_steps`` from ``image_size`` to ``labels``, built from the default config,
in the plan's order, each fed through the executor's ``StepRunner`` (so batch stages get
``batch_size`` records at a time, as in a run).  Side variants run in the same process so
their ratios to the headline are fair: record by record, NSFW before naturalness, each model
in its other precision, the NSFW JPEG round trip toggled, the naturalness flat-graphic pre-check
toggled, the stored JPEG encoded at decode (for every decoded image) instead of after the
filters.  The first pass of each variant
warms caches and loads models and is not timed; the timed passes go round robin over the
variants, so that on a shared machine each sees the same mix of load.  The LAST line printed
is a JSON object; its ``ratio_to_default`` gives each variant's speed over the headline's.

Times are this process's CPU seconds (``time.process_time``), not wall time: the machine
this was written on is shared, and CPU time of a single-threaded, pinned process is what one
dedicated core would spend.  Wall seconds of the whole run are printed for reference.
``ms_per_image`` divides a stage's time by all images; ``ms_per_input`` by the images that
reached that stage (the smaller images are dropped before any decode, the graphics before NSFW).
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from PIL import Image  # noqa: E402

from pipeline.config import Config  # noqa: E402
from pipeline.core.executor import StepRunner  # noqa: E402
from pipeline.jobs import image_steps  # noqa: E402
from pipeline.core.records import ImageItem  # noqa: E402
from tools.build_image_models import ensure_built  # noqa: E402
from tools.sampleweb.images import build_images  # noqa: E402

CHAIN = ("image_size", "image_decode", "naturalness", "nsfw", "labels", "image_store")


def demo_images() -> list[tuple[str, bytes, int, int]]:
    out = []
    for path, im in sorted(build_images(random.Random(0)).items()):
        with Image.open(io.BytesIO(im.data)) as pil:
            w, h = pil.size
        out.append((path, im.data, w, h))
    return out


def fresh(images):
    return [ImageItem(image_url=p, data=d, candidates=[], orig_width=w, orig_height=h,
                      orig_bytes=len(d)) for p, d, w, h in images]


def chain_steps(cfg: Config, order=("naturalness", "nsfw"), store_at_decode=False) -> list:
    """The plan's image-filter steps for ``cfg`` (fetch and pairing left out), with the two
    model filters in ``order``; ``store_at_decode``: the stored JPEG encoded by the decode
    step for every decoded image (as before the store step existed; image_store then passes
    them on)."""
    steps = [s for s in image_steps(cfg) if s.name in CHAIN]
    assert [s.name for s in steps] == list(CHAIN), [s.name for s in steps]
    steps[1].stage.store = store_at_decode or steps[1].stage.store
    by_name = {s.name: s for s in steps}
    return steps[:2] + [by_name[n] for n in order] + steps[4:]


def run_chain(steps, items) -> tuple[dict, dict, Counter, float]:
    """Feeds items through fresh StepRunners, one step after the other (a batch sees the same
    records as when items stream through).  Returns seconds and inputs per step, drop counts,
    total seconds."""
    spent, n_in, drops = {}, {}, Counter()
    t_all = time.process_time()
    live = [("r", it) for it in items]
    for step in steps:
        runner = StepRunner(step)
        t = time.process_time()
        out = [o for it in live for o in runner.feed(it)]
        out += runner.flush()
        spent[step.name] = time.process_time() - t
        live = [o for o in out if o[0] == "r"]
        (stats,) = [o[1] for o in out if o[0] == "s"]
        n_in[step.name] = stats.n_in
        drops.update(stats.dropped)
    return spent, n_in, drops, time.process_time() - t_all


def variant_config(**kw) -> Config:
    cfg = Config()
    if "backbone" in kw:
        cfg.naturalness.backbone = kw["backbone"]
    if "nsfw" in kw:
        cfg.nsfw.precision = kw["nsfw"]
    if "nsfw_jpeg" in kw:
        cfg.nsfw.jpeg_reencode = kw["nsfw_jpeg"]
    if "flat_check" in kw:
        cfg.naturalness.flat_check = kw["flat_check"]
    if "second_opinion" in kw:
        cfg.naturalness.second_opinion = kw["second_opinion"]
    if "batch" in kw:
        cfg.naturalness.batch_size = cfg.nsfw.batch_size = cfg.labels.batch_size = kw["batch"]
    return cfg


def variants(quick: bool) -> dict:
    """name -> (config changes, model filter order); each side variant flips one choice of
    the default config."""
    from filters.backbone import resolve_precision

    d, other = Config(), {"float": "int8", "int8": "float"}
    plan_order = ("naturalness", "nsfw")
    out = {"default": (dict(), plan_order)}
    if quick:
        return out
    bb, nsfw = other[resolve_precision(d.naturalness.backbone)], other[d.nsfw.precision]
    out.update({
        "record_by_record": (dict(batch=1), plan_order),
        "nsfw_first": (dict(), ("nsfw", "naturalness")),
        f"{bb}_backbone": (dict(backbone=bb), plan_order),
        f"{nsfw}_nsfw": (dict(nsfw=nsfw), plan_order),
        "nsfw_jpeg_" + ("off" if d.nsfw.jpeg_reencode else "on"):
            (dict(nsfw_jpeg=not d.nsfw.jpeg_reencode), plan_order),
        "flat_check_" + ("off" if d.naturalness.flat_check else "on"):
            (dict(flat_check=not d.naturalness.flat_check), plan_order),
        "store_at_decode": (dict(store_at_decode=True), plan_order),
        # naturalness's head alone, no NSFW pass before the NSFW step (main before round 6)
        "second_opinion_off": (dict(second_opinion=0.0), plan_order),
        # both of round 2's chain changes undone (docs/images.md, Speed)
        "no_precheck_store_at_decode": (dict(flat_check=False, store_at_decode=True), plan_order),
    })
    return out


def cpu_flags() -> dict:
    """The CPU features that decide onnxruntime's int8 kernels (and torch's, libjpeg-turbo's
    vector paths): AVX2 without VNNI runs U8S8 through vpmaddubsw, VNNI through vpdpbusd."""
    flags, model = set(), ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key.strip() == "flags" and not flags:
                    flags = set(val.split())
                elif key.strip() == "model name" and not model:
                    model = val.strip()
    except OSError:
        pass
    return {"model": model, **{k: k in flags for k in ("avx2", "avx512f", "avx512_vnni", "avx_vnni")}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the default chain only")
    ap.add_argument("--only", default="", help="comma-separated variants to run (default: all)")
    args = ap.parse_args()
    # bad arguments stop here with argparse's one-line error, before the models load
    if args.passes < 1:
        ap.error(f"--passes must be at least 1 (the warm-up pass is not timed): got {args.passes}")
    if args.quick and args.only:  # --quick runs the default chain alone: --only would be ignored
        ap.error("--quick runs the default chain only: give --quick or --only, not both")
    known = set(variants(quick=False))
    unknown = sorted(set(filter(None, args.only.split(","))) - known)
    if unknown:
        ap.error(f"--only: no variant {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    ensure_built()
    images = demo_images()
    print("cpu", json.dumps(cpu_flags()), flush=True)
    wall0 = time.perf_counter()
    only = set(filter(None, args.only.split(","))) | {"default"}
    chains = {name: chain_steps(variant_config(**kw), order, kw.get("store_at_decode", False))
              for name, (kw, order) in variants(args.quick).items()
              if not args.only or name in only}
    for steps in chains.values():
        run_chain(steps, fresh(images))  # warm-up pass: loads the models
    spent = {name: defaultdict(float) for name in chains}
    total = dict.fromkeys(chains, 0.0)
    counts = {}  # per variant: (inputs per step, drops) of a pass: the same every pass
    for _ in range(args.passes):
        # Round robin: on a shared machine each variant sees the same mix of load.
        for name, steps in chains.items():
            s, n_in, drops, t = run_chain(steps, fresh(images))
            counts[name] = n_in, drops
            for k, v in s.items():
                spent[name][k] += v
            total[name] += t
    n = len(images) * args.passes
    results = {}
    for name in chains:
        sp, (n_in, drops) = spent[name], counts[name]
        results[name] = {
            "images_per_s_per_core": round(n / total[name], 1),
            "ms_per_image": {k: round(1000 * v / n, 2) for k, v in sp.items()},
            "ms_per_input": {k: round(1000 * v / max(1, n_in[k] * args.passes), 2)
                             for k, v in sp.items()},
            "share": {k: round(v / sum(sp.values()), 3) for k, v in sp.items()},
            "inputs": n_in,
            "drops": dict(sorted(drops.items())),
        }
        print(name, json.dumps(results[name]), flush=True)
    from filters.backbone import resolve_precision

    cfg, d = Config(), results["default"]
    print(json.dumps({
        "cpu": cpu_flags(), "images": len(images), "passes": args.passes, "chain": list(CHAIN),
        "config": {"backbone": resolve_precision(cfg.naturalness.backbone),
                   "nsfw": cfg.nsfw.precision, "nsfw_jpeg_reencode": cfg.nsfw.jpeg_reencode,
                   "batch_size": cfg.naturalness.batch_size,
                   "flat_check": cfg.naturalness.flat_check},
        "images_per_s_per_core": d["images_per_s_per_core"], "share": d["share"],
        "ms_per_input": d["ms_per_input"],
        "variants": {k: v["images_per_s_per_core"] for k, v in results.items()},
        # each variant's speed over the headline's, timed round robin in this one run
        "ratio_to_default": {k: round(v["images_per_s_per_core"] / d["images_per_s_per_core"], 3)
                             for k, v in results.items()},
        "drops": d["drops"], "clock": "process_time", "load": os.getloadavg()[0],
        "wall_s": round(time.perf_counter() - wall0, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
