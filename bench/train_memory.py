"""Peak memory of `lait train` on the CPU against the pre-flight estimate (model/memory.py).

    nice -n 10 env OMP_NUM_THREADS=1 python bench/train_memory.py --work /tmp/trainmem

Writes synthetic feature shards (100 regions x 1280 float16 features, captions long enough to
fill the text length), then runs `python -m model.commands train` on each calibration config
(configs/imagebert.yaml with the sizes overridden, a few steps, one torch thread) in a process
of its own and reads its peak resident memory (``ru_maxrss`` from ``wait4``; with DataLoader
workers, the sampled sum over the process tree) beside the estimate the run logged. Prints one
row per config and, last, a JSON object with every row and the smallest and largest ratio
measured / estimate (the check's ``LOW`` is the smallest).

    python bench/train_memory.py --work /tmp/trainmem --fit ROWS.txt

    nice -n 10 env OMP_NUM_THREADS=1 python bench/train_memory.py --work /tmp/trainmem \
        --loader --baseline /work/main

measures the data loader alone (no model): a process of its own per checkout imports that
checkout's model/, builds the training stream of configs/imagebert.yaml (the shipped
``data.shuffle_buffer`` 5000, 100 x 1280 regions, batch 48) on synthetic shards of
``--loader-samples`` samples (more than the buffer, so it fills), pulls ``--loader-batches``
batches and reports its peak RSS (``ru_maxrss``), its RSS before the first batch (imports and
tokenizer), and the ratio this checkout / ``--baseline`` of both the peak and the growth.

    python bench/train_memory.py --work /tmp/trainmem --fit ROWS.txt

reads the last line of an earlier run's output instead of running anything and fits, once,
``RUNTIME``, ``SCALE`` and the bytes per attention score (least squares of log(measured /
estimate), with the code's max(activations, checkpoint copies)), then prints the shipped
code's estimate of each row (the process size each run logged) and the ratios.

    nice -n 19 env OMP_NUM_THREADS=1 python bench/train_memory.py --work /tmp/trainmem --pixels

measures Pixel-BERT (``model.visual: pixels``, PIXELS: `lait train`, `lait finetune`, `lait
eval`) on synthetic shards of 256 x 256 JPEG images; ``--only`` picks rows as above (the
held-out row is run only when named).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)  # this checkout's model/, as the runs (cwd=REPO) import it
WORDS = ("a red car parked on the street next to an old stone building with tall windows and "
         "people walking past a small shop selling fresh bread in the morning light").split()

# (name, overrides): BERT-shaped, small enough for a 24 GB machine shared by several people.
CONFIGS = [
    ("h128x2 b4", dict(hidden=128, layers=2, heads=2, intermediate=512, batch=4)),
    ("h128x2 b16", dict(hidden=128, layers=2, heads=2, intermediate=512, batch=16)),
    ("h256x4 b8", dict(hidden=256, layers=4, heads=4, intermediate=1024, batch=8)),
    ("h256x4 b16", dict(hidden=256, layers=4, heads=4, intermediate=1024, batch=16)),
    ("h256x4 b16 nodrop", dict(hidden=256, layers=4, heads=4, intermediate=1024, batch=16, dropout=0.0)),
    ("h384x6 b8", dict(hidden=384, layers=6, heads=6, intermediate=1536, batch=8)),
    ("h384x6 h12 b8", dict(hidden=384, layers=6, heads=12, intermediate=1536, batch=8)),
    ("h384x6 b16", dict(hidden=384, layers=6, heads=6, intermediate=1536, batch=16)),
    ("base b2", dict(hidden=768, layers=12, heads=12, intermediate=3072, batch=2)),
    ("base b4", dict(hidden=768, layers=12, heads=12, intermediate=3072, batch=4)),
    ("h256x4 b8 1 worker", dict(hidden=256, layers=4, heads=4, intermediate=1024, batch=8, workers=1)),
]
# Held out of the fit: checked once the constants were set.
HELD_OUT = [
    ("base b8", dict(hidden=768, layers=12, heads=12, intermediate=3072, batch=8)),
]


def write_shards(out: str, n: int = 256, per_shard: int = 64, seed: int = 0, images: bool = False) -> str:
    """Synthetic shards of 60-word captions with 100 x 1280 float16 regions, or (``images``,
    Pixel-BERT) 256 x 256 JPEG images of smooth random colour fields."""
    import webdataset as wds
    from PIL import Image
    rng = np.random.default_rng(seed)
    os.makedirs(out, exist_ok=True)
    for sh in range((n + per_shard - 1) // per_shard):
        path = os.path.join(out, f"{sh:05d}.tar")
        if os.path.exists(path):
            continue
        with wds.TarWriter(path + ".tmp") as w:
            for i in range(sh * per_shard, min(n, (sh + 1) * per_shard)):
                z = io.BytesIO()
                if images:
                    small = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
                    Image.fromarray(small).resize((256, 256), Image.BILINEAR).save(z, "JPEG", quality=90)
                    member = {"jpg": z.getvalue()}
                caption = " ".join(rng.choice(WORDS, 60))
                if not images:
                    boxes = np.zeros((100, 5), np.float32)
                    boxes[:, 2:4], boxes[:, 4] = 0.1, 0.01
                    np.savez(z, features=rng.random((100, 1280)).astype(np.float16), boxes=boxes,
                             labels=rng.integers(0, 1000, 100), scores=np.ones(100, np.float32))
                    member = {"regions.npz": z.getvalue()}
                w.write({"__key__": f"{i:06d}", "txt": caption.encode(), **member})
        os.replace(path + ".tmp", path)
    return out


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants now."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            pass
    return total


def run(name: str, o: dict, shards: str, work: str, steps: int) -> dict:
    out_dir = os.path.join(work, "runs", re.sub(r"\W+", "_", name))
    sets = [f"model.hidden={o['hidden']}", f"model.layers={o['layers']}", f"model.heads={o['heads']}",
            f"model.intermediate={o['intermediate']}", f"model.dropout={o.get('dropout', 0.1)}",
            "model.init_from=null", f"data.num_workers={o.get('workers', 0)}",
            "data.shuffle_buffer=256", f"stages.1.shards={shards}", f"stages.1.steps={steps}",
            f"stages.1.batch_size={o['batch']}", "stages.1.warmup_steps=1", "stages.1.log_every=1",
            f"stages.1.ckpt_every={steps}", f"out_dir={out_dir}"] + o.get("sets", [])
    cmd = [sys.executable, "-m", "model.commands", "train", "--config", "configs/imagebert.yaml",
           "--stage", "1", "--quiet"] + [a for s in sets for a in ("--set", s)]
    return measure(name, o, cmd, out_dir)


def measure(name: str, o: dict, cmd: list[str], out_dir: str) -> dict:
    """Run ``cmd`` (one torch thread) and read its peak RSS beside the estimate it logged."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    t0 = time.time()
    shutil.rmtree(out_dir, ignore_errors=True)  # else "stage 1 already done" is measured
    os.makedirs(out_dir, exist_ok=True)
    log = open(os.path.join(out_dir, "stderr.txt"), "w+")
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log)
    peak_tree, done = [0], threading.Event()

    def sample():
        while not done.is_set():
            peak_tree[0] = max(peak_tree[0], tree_rss(proc.pid))
            time.sleep(0.1)
    threading.Thread(target=sample, daemon=True).start()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak resident set
    done.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    maxrss = usage.ru_maxrss * 1024
    log.seek(0)
    stderr = log.read()
    m = re.search(r"needs about ([\d.]+) GB more \((.*?) GB; ", stderr)
    if proc.returncode or not m:
        raise SystemExit(f"{name}: exit {proc.returncode}\n{stderr[-3000:]}")
    parts = dict((k.strip(), float(v)) for k, v in re.findall(r"([a-zA-Z ]+) ([\d.]+)", m.group(2)))
    estimate = sum(parts.values())
    measured = max(maxrss, peak_tree[0]) if o.get("workers") else maxrss
    return {"config": name, **o, "estimate_gb": round(estimate, 3), "measured_gb": round(measured / 1e9, 3),
            "ratio": round(measured / 1e9 / estimate, 3), "parts_gb": parts, "seconds": round(time.time() - t0, 1)}


LOADER_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import torch
torch.set_num_threads(1)
from model.config import load_config
from model.data import tokenizer_for
from model.stream import PretrainStream
cfg = load_config(sys.argv[1] + "/configs/imagebert.yaml", ["model.init_from=null"])
tok = tokenizer_for(cfg)
with open("/proc/self/statm") as f:
    base = int(f.read().split()[1]) * resource.getpagesize()
t0 = time.time()
it = iter(PretrainStream(cfg, sys.argv[2], cfg.stage(1).batch_size, tok, seed=0))
for _ in range(int(sys.argv[3])):  # one batch alive at a time, as in the training loop
    batch = next(it)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"base_rss": base, "peak_rss": peak, "seconds": round(time.time() - t0, 1),
                  "shuffle_buffer": cfg.data.shuffle_buffer, "batch": cfg.stage(1).batch_size,
                  "feats_dtype": str(batch["feats"].dtype)}))
"""


def loader(repo: str, shards: str, batches: int) -> dict:
    """Peak RSS of the stream of ``repo``'s model/ alone (a process of its own, one thread)."""
    out = subprocess.run([sys.executable, "-c", LOADER_CHILD, repo, shards, str(batches)], cwd=repo,
                         env=dict(os.environ, OMP_NUM_THREADS="1"), capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"loader run in {repo}: exit {out.returncode}\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r.update(repo=repo, growth=r["peak_rss"] - r["base_rss"])
    print(f"{repo:28s} peak RSS {r['peak_rss'] / 1e9:6.3f} GB  before the first batch "
          f"{r['base_rss'] / 1e9:6.3f} GB  growth {r['growth'] / 1e9:6.3f} GB  ({r['seconds']} s)",
          flush=True)
    return r


# `lait finetune` and `lait eval` (model/memory.py's tasks "finetune" and "eval"): the shipped
# tiny config the tests use, and configs/imagebert.yaml at 256 x 4, from a random checkpoint.
RETRIEVAL = [
    ("tiny finetune b8", dict(config="configs/imagebert_tiny.yaml", task="finetune", batch=8)),
    ("tiny finetune b32", dict(config="configs/imagebert_tiny.yaml", task="finetune", batch=32)),
    ("tiny eval n64", dict(config="configs/imagebert_tiny.yaml", task="eval", n=64)),
    ("tiny eval n256", dict(config="configs/imagebert_tiny.yaml", task="eval", n=256)),
    ("h256x4 finetune b8", dict(config="configs/imagebert.yaml", task="finetune", batch=8,
                                hidden=256, layers=4, heads=4, intermediate=1024)),
    ("h256x4 eval n48", dict(config="configs/imagebert.yaml", task="eval", n=48,
                             hidden=256, layers=4, heads=4, intermediate=1024)),
]
INIT_CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
from model.checkpoints import save_checkpoint
from model.config import load_config
from model.pretrain import ImageBERT
cfg = load_config(sys.argv[2], sys.argv[4:])
save_checkpoint(sys.argv[3], ImageBERT(cfg), (), {"step": 0})
"""


def run_retrieval(name: str, o: dict, shards: str, work: str, steps: int) -> dict:
    """Peak RSS of `lait finetune` (``steps`` steps) or `lait eval` (``n`` test pairs) against
    the estimate it logged, from a random checkpoint of the config's sizes."""
    out_dir = os.path.join(work, "retrieval", re.sub(r"\W+", "_", name))
    sets = ["model.init_from=null", "data.shuffle_buffer=256", "data.num_workers=0",
            f"retrieval.shards={shards}",
            f"retrieval.eval_shards={shards}", f"retrieval.steps={steps}", "retrieval.warmup_steps=1",
            f"retrieval.ckpt_every={steps}", f"retrieval.batch_size={o.get('batch', 8)}",
            f"out_dir={out_dir}"]
    sets += [f"model.{k}={o[k]}" for k in ("hidden", "layers", "heads", "intermediate") if k in o]
    sets += o.get("sets", [])
    init = os.path.join(work, "retrieval", re.sub(r"\W+", "_", name) + "-init")
    subprocess.run([sys.executable, "-c", INIT_CHILD, REPO, o["config"], init] + sets, cwd=REPO,
                   check=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if o["task"] == "finetune":
        cmd = ["finetune", "--init", init]
    else:
        cmd = ["eval", "--checkpoint", init, "--n", str(o["n"]), "--device", "cpu"]
    cmd = [sys.executable, "-m", "model.commands"] + cmd + ["--config", o["config"], "--quiet"]
    return measure(name, o, cmd + [a for s in sets for a in ("--set", s)], out_dir)


# Pixel-BERT (qa16): configs/imagebert.yaml with model.visual=pixels (no MOC / MRFR) at 128 x 2;
# the CNN's activations dominate.  "sets" are passed as --set after the row's sizes.
PIXEL_SETS = ["model.visual=pixels", "pretrain.moc_weight=0", "pretrain.mrfr_weight=0"]
PIX = dict(hidden=128, layers=2, heads=2, intermediate=512)
PIXELS = [
    ("pix b2", dict(PIX, batch=2, sets=PIXEL_SETS + ["model.image_size=224"])),
    ("pix b4", dict(PIX, batch=4, sets=PIXEL_SETS + ["model.image_size=224"])),
    ("pix b8", dict(PIX, batch=8, sets=PIXEL_SETS + ["model.image_size=224"])),
    ("pix tiny b16", dict(PIX, batch=16, sets=PIXEL_SETS + ["model.image_size=224",
                                                            "model.pixel_backbone=tiny"])),
    ("pix finetune b2", dict(PIX, config="configs/imagebert.yaml", task="finetune", batch=2,
                             sets=PIXEL_SETS + ["model.image_size=224"])),
    ("pix eval n16", dict(PIX, config="configs/imagebert.yaml", task="eval", n=16,
                          sets=PIXEL_SETS + ["model.image_size=224"])),
]
PIXELS_HELD_OUT = [("pix 320 b4", dict(PIX, batch=4, sets=PIXEL_SETS + ["model.image_size=320"])),
                   # speed3's eval rule v2 (the CNN once per image): run once each, named
                   ("pix eval n32", dict(PIX, config="configs/imagebert.yaml", task="eval", n=32,
                                         sets=PIXEL_SETS + ["model.image_size=224"])),
                   ("pix eval 320 n16", dict(PIX, config="configs/imagebert.yaml", task="eval", n=16,
                                             sets=PIXEL_SETS + ["model.image_size=320"]))]


def _config(r: dict):
    from model.config import load_config
    sets = [f"model.hidden={r['hidden']}", f"model.layers={r['layers']}", f"model.heads={r['heads']}",
            f"model.intermediate={r['intermediate']}", f"model.dropout={r.get('dropout', 0.1)}",
            "model.init_from=null", f"data.num_workers={r.get('workers', 0)}", "data.shuffle_buffer=256",
            f"stages.1.batch_size={r['batch']}"]
    return load_config(os.path.join(REPO, "configs", "imagebert.yaml"), sets)


def fit(rows: list[dict], shards: str, logged_runtime: float) -> None:
    """Fit RUNTIME, SCALE and the attention bytes on ``rows``; print the shipped estimates."""
    from scipy.optimize import minimize

    from model import memory
    data = memory.shards_bytes(shards)
    feats = []
    for r in rows:
        cfg = _config(r)
        rss = r["parts_gb"]["process"] * 1e9 - logged_runtime  # the process at the check
        est = memory.estimate(cfg, 1, workers=r.get("workers", 0), process_bytes=rss, data_bytes=data)
        p = est.parts
        fixed = est.total - p["activations"] - p.get("checkpoint copies", 0.0) - memory.RUNTIME
        n_all, n_train = memory.count_parameters(cfg)
        ckpt = 4.0 * n_all + 8.0 * n_train
        saved = memory.SCALE, memory.ACT_ATTN
        try:  # the activations' two terms, unscaled
            memory.SCALE, memory.ACT_ATTN = 1.0, 0.0
            hidden = memory.activation_bytes(cfg, r["batch"])["activations"]
            memory.ACT_ATTN = 1.0
            attn = memory.activation_bytes(cfg, r["batch"])["activations"] - hidden
        finally:
            memory.SCALE, memory.ACT_ATTN = saved
        feats.append((fixed / 1e9, hidden / 1e9, attn / 1e9, ckpt / 1e9, r["measured_gb"]))
    f = np.array(feats)

    def pred(c):
        return f[:, 0] + c[0] + np.maximum(c[1] * f[:, 1] + c[2] * f[:, 2], f[:, 3])
    res = minimize(lambda c: np.sum((np.log(pred(c)) - np.log(f[:, 4])) ** 2), [0.1, 1.0, 10.0],
                   method="Nelder-Mead", options={"maxiter": 5000, "xatol": 1e-4, "fatol": 1e-10})
    print("fit: RUNTIME %.3f GB, SCALE %.3f, %.2f bytes per attention score" % tuple(res.x))
    shipped = np.array([memory.RUNTIME / 1e9, memory.SCALE, memory.SCALE * memory.ACT_ATTN])
    ratios = f[:, 4] / pred(shipped)
    for r, e, q in zip(rows, pred(shipped), ratios):
        print(f"{r['config']:22s} shipped estimate {e:6.2f} GB  measured {r['measured_gb']:6.2f} GB  ratio {q:.2f}")
    print(json.dumps({"fit": [round(x, 4) for x in res.x], "min_ratio": round(float(ratios.min()), 3),
                      "max_ratio": round(float(ratios.max()), 3)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True, help="scratch folder (shards, runs)")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--only", default="", help="comma list of config names to run (default: the fit's)")
    ap.add_argument("--fit", default=None, metavar="ROWS.txt", help="fit the constants on the rows "
                    "an earlier run printed (its last line) instead of running")
    ap.add_argument("--logged-runtime", type=float, default=0.3e9, help="RUNTIME of the code "
                    "that logged those rows (bytes; the calibration ran with 0.3e9)")
    ap.add_argument("--loader", action="store_true", help="measure the data loader alone "
                    "(configs/imagebert.yaml's shuffle buffer) instead of training runs")
    ap.add_argument("--baseline", default=None, metavar="CHECKOUT", help="with --loader: another "
                    "checkout (e.g. main's) measured alike, for the ratio")
    ap.add_argument("--loader-samples", type=int, default=5600, help="with --loader: synthetic "
                    "samples (more than the shuffle buffer)")
    ap.add_argument("--loader-batches", type=int, default=12)
    ap.add_argument("--pixels", action="store_true", help="measure Pixel-BERT configs (PIXELS) "
                    "instead of region ones")
    ap.add_argument("--retrieval", action="store_true", help="measure `lait finetune` and `lait "
                    "eval` (RETRIEVAL) instead of training runs")
    args = ap.parse_args()
    # Bad arguments fail before any work (tests/bench/test_bench_args.py).
    if args.steps < 1:
        ap.error(f"--steps must be >= 1, got {args.steps}")
    known = {name for name, _ in CONFIGS + HELD_OUT + RETRIEVAL + PIXELS + PIXELS_HELD_OUT}
    unknown = [n for n in args.only.split(",") if n and n not in known] if args.only else []
    if unknown:
        ap.error(f"--only: no config named {unknown[0]!r} (have: {', '.join(sorted(known))})")
    if args.fit and not os.path.isfile(args.fit):
        ap.error(f"--fit {args.fit}: no such file")
    if args.loader_samples < 1 or args.loader_batches < 1:
        ap.error(f"--loader-samples and --loader-batches must be >= 1, got {args.loader_samples} "
                 f"and {args.loader_batches}")
    if args.baseline and not os.path.isfile(os.path.join(args.baseline, "model", "stream.py")):
        ap.error(f"--baseline {args.baseline}: not a checkout (no model/stream.py)")
    if args.loader:
        big = write_shards(os.path.join(args.work, f"shards-{args.loader_samples}"), args.loader_samples)
        rows = [loader(REPO, big, args.loader_batches)]
        if args.baseline:
            rows.append(loader(os.path.abspath(args.baseline), big, args.loader_batches))
            new, old = rows
            print(f"this checkout / baseline: peak {new['peak_rss'] / old['peak_rss']:.3f}, "
                  f"growth {new['growth'] / old['growth']:.3f}")
        print(json.dumps({"loader": rows}))
        return
    if args.pixels:
        measure_all(PIXELS, PIXELS_HELD_OUT, write_shards(os.path.join(args.work, "image-shards"),
                                                          images=True), args)
        return
    shards = write_shards(os.path.join(args.work, "shards"))
    if args.fit:
        with open(args.fit) as f:
            fit(json.loads(f.read().strip().splitlines()[-1])["rows"], shards, args.logged_runtime)
        return
    if args.retrieval:
        measure_all(RETRIEVAL, [], shards, args)
        return
    measure_all(CONFIGS, HELD_OUT, shards, args)


def measure_all(table: list, held_out: list, shards: str, args) -> None:
    """Run the rows of ``table`` + ``held_out`` that --only names (default: ``table``'s), each
    in a process of its own; print one line per row and, last, the JSON summary."""
    rows = []
    for name, o in table + held_out:
        if (name not in args.only.split(",")) if args.only else (name, o) in held_out:
            continue
        r = (run_retrieval if "task" in o else run)(name, o, shards, args.work, args.steps)
        rows.append(r)
        print(f"{name:22s} estimate {r['estimate_gb']:6.2f} GB  measured {r['measured_gb']:6.2f} GB  "
              f"ratio {r['ratio']:.2f}  ({r['seconds']} s)", flush=True)
    ratios = [r["ratio"] for r in rows]
    print(json.dumps({"rows": rows, "min_ratio": min(ratios), "max_ratio": max(ratios)}))


if __name__ == "__main__":
    main()
