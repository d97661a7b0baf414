"""Benchmark: fetch + decode + resize + write N images served on 127.0.0.1, ours against
img2dataset, side by side in one run, whole commands including start-up.

* Images: N (default 2000) distinct real photos of 0.4 to 2.5 megapixels, cut from the 27
  photos in ``tools/sampleweb_assets/photos`` (scikit-image, scikit-learn, matplotlib and
  Debian mate-backgrounds originals, see its SOURCES.md): a random crop of each photo (at
  least half of each side), a random mirror, resized to a random size whose pixel count is
  uniform in [0.4, 2.5] MP, JPEG quality 80-92.  Made once into ``--cache`` and reused.
* Server: a threaded HTTP/1.1 (keep-alive) server in its own process, from memory.
* Ours: ``python -m bench.fetch_job`` (Spark ``local[2]``: 2 worker processes, each fetching
  with ``--threads`` threads; ImageFetcher -> ImageSize -> ImageDecode(512) -> ShardWriter,
  webdataset tar + parquet).
* img2dataset (PyPI, in its own venv, created if missing): the same URL list,
  ``--resize_mode keep_ratio_largest --image_size 512 --output_format webdataset
  --processes_count 2 --thread_count THREADS --encode_quality 90``.

Prints a JSON object as its LAST line: images_per_s, img2dataset_images_per_s, ratio.

    python bench/fetch.py [--n 2000] [--threads 32] [--rounds 1]
"""
from __future__ import annotations

import argparse
import glob
import http.server
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PHOTOS = os.path.join(REPO, "tools", "sampleweb_assets", "photos")
I2D_VERSION = "1.47.0"


def make_images(n: int, dest: str, seed: int = 0) -> list[str]:
    """N distinct photos of 0.4-2.5 MP in ``dest`` (kept between runs); their file names."""
    from PIL import Image, ImageOps

    stamp = os.path.join(dest, f".done-{n}-{seed}")
    names = [f"{i:05d}.jpg" for i in range(n)]
    if os.path.exists(stamp):
        return names
    os.makedirs(dest, exist_ok=True)
    sources = [Image.open(p).convert("RGB") for p in sorted(glob.glob(os.path.join(PHOTOS, "*.jpg")))]
    if not sources:
        raise SystemExit(f"no photos under {PHOTOS}")
    rng = random.Random(seed)
    for i, name in enumerate(names):
        src = sources[i % len(sources)]
        w, h = src.size
        cw, ch = rng.randint(w // 2, w), rng.randint(h // 2, h)
        x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
        im = src.crop((x, y, x + cw, y + ch))
        if rng.random() < 0.5:
            im = ImageOps.mirror(im)
        mp = rng.uniform(0.4, 2.5) * 1e6
        scale = (mp / (cw * ch)) ** 0.5
        im = im.resize((max(1, round(cw * scale)), max(1, round(ch * scale))), Image.Resampling.BICUBIC)
        im.save(os.path.join(dest, name), "JPEG", quality=rng.randint(80, 92))
    open(stamp, "w").close()
    return names


def _serve(root: str, port_q) -> None:
    files = {}
    for name in os.listdir(root):
        if name.endswith(".jpg"):
            with open(os.path.join(root, name), "rb") as f:
                files["/" + name] = f.read()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):  # noqa: N802
            data = files.get(self.path)
            if data is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "image/jpeg")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256

        def handle_error(self, *args):
            pass

    srv = Server(("127.0.0.1", 0), Handler)
    port_q.put(srv.server_address[1])
    srv.serve_forever()


def ensure_img2dataset(venv: str) -> str:
    exe = os.path.join(venv, "bin", "img2dataset")
    if not os.path.exists(exe):
        print(f"[bench] installing img2dataset=={I2D_VERSION} into {venv}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q",
                        f"img2dataset=={I2D_VERSION}"], check=True)
    return exe


def count_ours(out: str) -> int:
    n = 0
    for tar in glob.glob(os.path.join(out, "shards", "*.tar")):
        with tarfile.open(tar) as t:
            n += sum(1 for m in t.getmembers() if m.name.endswith(".jpg"))
    return n


def count_i2d(out: str) -> int:
    n = 0
    for tar in glob.glob(os.path.join(out, "*.tar")):
        with tarfile.open(tar) as t:
            n += sum(1 for m in t.getmembers() if m.name.endswith(".jpg"))
    return n


def timed(cmd: list[str], env: dict, log: str) -> float:
    t0 = time.perf_counter()
    with open(log, "w") as f:
        res = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT, cwd=REPO)
    elapsed = time.perf_counter() - t0
    if res.returncode != 0:
        with open(log) as f:
            sys.stderr.write(f.read()[-4000:])
        raise SystemExit(f"command failed ({res.returncode}): {' '.join(cmd)}")
    return elapsed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=32)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1, help="alternate the two commands this often")
    ap.add_argument("--cache", default=os.path.join("/tmp", "lait-bench-fetch"))
    ap.add_argument("--i2d-venv", default=os.path.join("/tmp", "i2d"))
    args = ap.parse_args(argv)
    # bad arguments stop here with argparse's one-line error, before images are made or a
    # venv is installed
    for name in ("n", "threads", "processes", "rounds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be at least 1: got {getattr(args, name)}")

    img_dir = os.path.join(args.cache, "images")
    t0 = time.perf_counter()
    names = make_images(args.n, img_dir)
    print(f"[bench] {len(names)} images ready in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    i2d = ensure_img2dataset(args.i2d_venv)

    q = multiprocessing.get_context("spawn").Queue()
    server = multiprocessing.get_context("spawn").Process(target=_serve, args=(img_dir, q), daemon=True)
    server.start()
    port = q.get(timeout=120)
    urls = os.path.join(args.cache, "urls.txt")
    with open(urls, "w") as f:
        f.write("".join(f"http://127.0.0.1:{port}/{n}\n" for n in names))

    env = {k: v for k, v in os.environ.items()}
    env.update(PYTHONPATH=REPO, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable)
    i2d_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    ours_t, theirs_t, ours_n, theirs_n = [], [], 0, 0
    try:
        for r in range(args.rounds):
            out = os.path.join(args.cache, "out-ours")
            shutil.rmtree(out, ignore_errors=True)
            ours_t.append(timed([sys.executable, "-m", "bench.fetch_job", "--urls", urls,
                                 "--out", out, "--processes", str(args.processes),
                                 "--threads", str(args.threads)], env,
                                os.path.join(args.cache, "ours.log")))
            ours_n = count_ours(out)
            out = os.path.join(args.cache, "out-i2d")
            shutil.rmtree(out, ignore_errors=True)
            theirs_t.append(timed([i2d, "--url_list", urls, "--input_format", "txt",
                                   "--output_format", "webdataset", "--output_folder", out,
                                   "--processes_count", str(args.processes),
                                   "--thread_count", str(args.threads), "--image_size", "512",
                                   "--resize_mode", "keep_ratio_largest", "--encode_quality", "90",
                                   "--distributor", "multiprocessing", "--timeout", "10",
                                   "--retries", "0", "--enable_wandb", "False"], i2d_env,
                                  os.path.join(args.cache, "img2dataset.log")))
            theirs_n = count_i2d(out)
            print(f"[bench] round {r}: ours {ours_n} in {ours_t[-1]:.1f}s, img2dataset "
                  f"{theirs_n} in {theirs_t[-1]:.1f}s", file=sys.stderr)
    finally:
        server.terminate()
    ours_s, theirs_s = min(ours_t), min(theirs_t)
    result = {
        "n": args.n, "processes": args.processes, "threads": args.threads, "rounds": args.rounds,
        "ours_written": ours_n, "img2dataset_written": theirs_n,
        "ours_s": round(ours_s, 2), "img2dataset_s": round(theirs_s, 2),
        "images_per_s": round(ours_n / ours_s, 1),
        "img2dataset_images_per_s": round(theirs_n / theirs_s, 1),
    }
    result["ratio"] = round(result["images_per_s"] / result["img2dataset_images_per_s"], 3)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
