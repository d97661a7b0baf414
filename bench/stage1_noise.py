"""How much web noise can stage 1 carry? Rewrites the synthetic benchmark's stage-1 set with
less noise, without recomputing its region features.

Each replaced caption (another sample's, or junk) is kept with probability `--keep`; the others
are restored to a correct web-worded caption of the scene (from the objects every sample's
.json records). `--keep 0` gives the same images with correct web captions (no noise), `--keep
0.5` about half the original noise (25% of all captions wrong instead of 50%). Same input and
seed, same bytes out.

    python -m model.synth_retrieval out/synth
    python bench/stage1_noise.py out/synth/stage1_feat/shards out/synth/stage1_n25/shards --keep 0.5

docs/trainer.md ("Does multi-stage pay off?") gives what runs on these sets measured.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tarfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from model.synth_retrieval import caption  # noqa: E402


def rewrite(src: str, dst: str, keep: float, seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    os.makedirs(dst, exist_ok=True)
    counts = {"clean": 0, "restored": 0, "noisy": 0}
    for name in sorted(f for f in os.listdir(src) if f.endswith(".tar")):
        with tarfile.open(os.path.join(src, name)) as tin, \
                tarfile.open(os.path.join(dst, name), "w", format=tarfile.USTAR_FORMAT) as tout:
            members = tin.getmembers()
            data = {m.name: tin.extractfile(m).read() for m in members}
            for m in members:
                b = data[m.name]
                if m.name.endswith(".txt"):
                    meta = json.loads(data[m.name[:-4] + ".json"])
                    if meta["caption_kind"] == "clean":
                        counts["clean"] += 1
                    elif rng.random() < keep:
                        counts["noisy"] += 1
                    else:
                        b = caption([tuple(o) for o in meta["objects"]], rng, web=True).encode()
                        counts["restored"] += 1
                info = tarfile.TarInfo(m.name)
                info.size, info.mtime = len(b), 0     # fixed mtime: the same bytes every run
                tout.addfile(info, io.BytesIO(b))
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", help="the stage-1 shards folder (with .regions.npz)")
    ap.add_argument("dst", help="output shards folder")
    ap.add_argument("--keep", type=float, required=True, help="share of the replaced captions kept")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    if not 0.0 <= a.keep <= 1.0:
        ap.error("--keep must be in [0, 1]")
    # a missing or empty src would write nothing and still print counts; dst == src would
    # truncate each shard before it is read
    if not os.path.isdir(a.src) or not any(f.endswith(".tar") for f in os.listdir(a.src)):
        ap.error(f"no .tar shards in {a.src}")
    if os.path.realpath(a.src) == os.path.realpath(a.dst):
        ap.error("dst must differ from src (the shards are rewritten, not edited in place)")
    print(json.dumps(rewrite(a.src, a.dst, a.keep, a.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
