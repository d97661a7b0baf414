"""Images per second on ONE core for the whole image-filter chain, and each filter's share.

Usage: ``python bench/images.py [--passes N]``.  Pinned to one CPU, one thread per native
library and per onnxruntime session.  Images are the demo's (``tools/sampleweb``'s image files,
seed 0: photos, crops, near-duplicates, clip art, rendered graphics, small images).  Each
image runs the chain as a worker does, record by record: ``image_size`` (header), then
``image_decode`` (draft-mode decode, resize, re-encode), ``natural`` (EfficientNet-lite0 +
head), ``nsfw`` (open_nsfw), ``labels`` (reusing the backbone pass; phash, embedding).  The
default chain is timed next to variants (NSFW first, float NSFW, int8 backbone, batches of
16) in the same run.  The first pass warms caches and is not timed.  The LAST line printed is
a JSON object.

Times are this process's CPU seconds (``time.process_time``), not wall time: the machine
this was written on is shared, and CPU time of a single-threaded, pinned process is what one
dedicated core would spend.  Wall seconds of the whole run are printed for reference.
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

from filters.image import ImageDecode, ImageSize  # noqa: E402
from filters.labels import ImageLabeler  # noqa: E402
from filters.naturalness import NaturalnessConfig, NaturalnessFilter  # noqa: E402
from filters.nsfw import NsfwConfig, NsfwFilter  # noqa: E402
from pipeline.records import ImageItem  # noqa: E402
from pipeline.stage import Drop  # noqa: E402
from tools.build_image_models import ensure_built  # noqa: E402
from tools.sampleweb.images import build_images  # noqa: E402


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


def run_chain(stages, items, batch: int) -> tuple[dict, Counter, float]:
    """Feeds items through the stages; returns seconds per stage, drop counts, total seconds."""
    spent, drops = defaultdict(float), Counter()
    t_all = time.process_time()
    for i in range(0, len(items), batch):
        live = items[i:i + batch]
        for st in stages:
            t = time.process_time()
            if batch > 1 and hasattr(st, "events_batch"):
                events = list(st.events_batch(live))
            else:
                events = [ev for it in live for ev in st.events(it)]
            spent[st.name] += time.process_time() - t
            live = [o for ev in events if not isinstance(ev, Drop) for o in ev.outputs]
            drops.update(ev.reason for ev in events if isinstance(ev, Drop))
    return dict(spent), drops, time.process_time() - t_all


def chain(order=("natural", "nsfw"), nsfw="int8", backbone="float"):
    named = {"natural": NaturalnessFilter(NaturalnessConfig(backbone=backbone)),
             "nsfw": NsfwFilter(NsfwConfig(precision=nsfw))}
    stages = [ImageSize(), ImageDecode()] + [named[n] for n in order] + [ImageLabeler(backbone=backbone)]
    for st in stages:
        st.setup()
    return stages


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=2)
    args = ap.parse_args()
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    ensure_built()
    images = demo_images()
    variants = {
        "default": (dict(), 1),
        "nsfw_first": (dict(order=("nsfw", "natural")), 1),
        "float_nsfw": (dict(nsfw="float"), 1),
        "int8_backbone": (dict(backbone="int8"), 1),
        "batch16": (dict(), 16),
    }
    results = {}
    wall0 = time.perf_counter()
    for name, (kw, batch) in variants.items():
        stages = chain(**kw)
        run_chain(stages, fresh(images), batch)  # warm-up pass
        spent, drops, total = defaultdict(float), Counter(), 0.0
        for _ in range(args.passes):
            s, d, t = run_chain(stages, fresh(images), batch)
            for k, v in s.items():
                spent[k] += v
            drops, total = d, total + t
        n = len(images) * args.passes
        results[name] = {
            "images_per_s_per_core": round(n / total, 1),
            "ms_per_image": {k: round(1000 * v / n, 2) for k, v in spent.items()},
            "share": {k: round(v / sum(spent.values()), 3) for k, v in spent.items()},
            "drops": dict(sorted(drops.items())),
        }
        print(name, json.dumps(results[name]), flush=True)
    d = results["default"]
    print(json.dumps({"images": len(images), "passes": args.passes,
                      "chain": ["image_size", "image_decode", "natural", "nsfw", "labels"],
                      "images_per_s_per_core": d["images_per_s_per_core"], "share": d["share"],
                      "variants": {k: v["images_per_s_per_core"] for k, v in results.items()},
                      "drops": d["drops"], "clock": "process_time",
                      "wall_s": round(time.perf_counter() - wall0, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
