"""The `lait` subcommands end to end: features -> stage 1 -> stage 2 -> finetune -> eval."""
import argparse
import json
import os

import pytest

import model_synth as synth
from model.commands import main, register

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = os.path.join(ROOT, "configs", "imagebert_tiny.yaml")


def test_register_adds_subcommands():
    ap = argparse.ArgumentParser()
    register(ap.add_subparsers(dest="cmd"))
    for argv in (["features", "a", "b"], ["train", "--config", "c", "--stage", "1"],
                 ["eval", "--config", "c"], ["finetune", "--config", "c"]):
        args = ap.parse_args(argv)
        assert callable(args.func)


def test_cli_end_to_end(tmp_path, capsys):
    raw = str(tmp_path / "raw")
    synth.write_shards(raw, 24, per_shard=12, seed=3, with_regions=False)
    feat = str(tmp_path / "feat")
    assert main(["features", raw, feat, "--grid", "3", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["with_regions"] == 24
    sets = ["--set", f"out_dir={tmp_path}/run", "--set", "stages.1.steps=3", "--set", "stages.2.steps=2",
            "--set", "retrieval.steps=2", "--set", "retrieval.eval_size=8", "--quiet"]
    for k in ("stages.1.shards", "stages.2.shards", "retrieval.shards", "retrieval.eval_shards"):
        sets += ["--set", f"{k}={feat}/shards"]
    assert main(["train", "--config", TINY, "--stage", "1", *sets]) == 0
    assert main(["train", "--config", TINY, "--stage", "2", *sets]) == 0
    assert os.path.exists(tmp_path / "run" / "stage2" / "final" / "model.safetensors")
    assert main(["eval", "--config", TINY, *sets]) == 0  # zero-shot, from stage 2
    zs = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert zs["n"] == 8 and all(0 <= zs[f"{d}_R@{k}"] <= 1 for d in ("i2t", "t2i") for k in (1, 5, 10))
    assert main(["finetune", "--config", TINY, *sets]) == 0
    ck = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["checkpoint"]
    assert main(["eval", "--config", TINY, "--checkpoint", ck, *sets]) == 0


def test_bad_config_exits_2(tmp_path, capsys):
    assert main(["train", "--config", TINY, "--stage", "1", "--set", "model.hiddn=3"]) == 2
    assert "model.hiddn" in capsys.readouterr().err


def write_foreign_webdataset(folder, n=16, per_shard=8, seed=5):
    """Shards as img2dataset writes them (``--output_format webdataset``): a flat folder of
    NNNNN.tar with <key>.jpg, <key>.txt and img2dataset's <key>.json (url, caption, status)."""
    import io
    import tarfile

    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    words = ["a red boat on a lake", "two dogs in the snow", "a bowl of soup", "city lights at night"]
    for s in range(0, n, per_shard):
        with tarfile.open(os.path.join(folder, f"{s // per_shard:05d}.tar"), "w") as tar:
            for i in range(s, min(n, s + per_shard)):
                key = f"{s // per_shard:05d}{i:04d}"
                buf = io.BytesIO()
                Image.fromarray(rng.integers(0, 255, (96, 128, 3), dtype=np.uint8)).save(buf, "JPEG")
                cap = f"{words[i % len(words)]} number {i}"
                meta = {"url": f"http://example.com/{i}.jpg", "caption": cap, "key": key, "status": "success"}
                for ext, data in (("jpg", buf.getvalue()), ("txt", cap.encode()), ("json", json.dumps(meta).encode())):
                    info = tarfile.TarInfo(f"{key}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))


def test_stage_2_and_eval_on_any_webdataset(tmp_path, capsys):
    """README "Pre-training ImageBERT on the shards": stage 2 and evaluation shards made from
    any jpg + txt webdataset (e.g. img2dataset's output of CC3M, SBU or COCO) by `lait
    features`, stage 2 starting from stage 1's weights."""
    raw, foreign = str(tmp_path / "lait"), str(tmp_path / "cc3m")
    synth.write_shards(raw, 16, per_shard=8, seed=3, with_regions=False)
    write_foreign_webdataset(foreign)
    for src, dst in ((raw, "lait-feat"), (foreign, "cc3m-feat")):
        assert main(["features", src, str(tmp_path / dst), "--grid", "3", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["with_regions"] == 16
    sets = ["--set", f"out_dir={tmp_path}/run", "--set", "stages.1.steps=2", "--set", "stages.2.steps=2",
            "--set", "retrieval.eval_size=8", "--quiet",
            "--set", f"stages.1.shards={tmp_path}/lait-feat/shards",
            "--set", f"stages.2.shards={tmp_path}/cc3m-feat/shards",
            "--set", f"retrieval.eval_shards={tmp_path}/cc3m-feat/shards"]
    assert main(["train", "--config", TINY, "--stage", "1", *sets]) == 0
    assert main(["train", "--config", TINY, "--stage", "2", *sets]) == 0
    assert os.path.exists(tmp_path / "run" / "stage2" / "final" / "model.safetensors")
    capsys.readouterr()
    assert main(["eval", "--config", TINY, *sets]) == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert res["n"] == 8


@pytest.mark.parametrize("workers", [0, 1])
def test_train_on_shards_without_regions_fails_naming_lait_features(tmp_path, workers):
    """The build's own shards (no <key>.regions.npz: `lait features` not run) used to be
    skipped sample by sample for ever: the run hung after 20 warnings.  Now the first pass
    that yields no usable sample ends the run, exit 2, naming the missing step.  (A
    subprocess, so that a regression fails the test at its timeout instead of hanging the
    suite.)  With DataLoader workers the error is the same one line: torch re-raises a
    worker's exception with the worker's traceback folded into its message, which `lait`
    printed whole."""
    import subprocess
    import sys

    raw = str(tmp_path / "raw")
    synth.write_shards(raw, 12, per_shard=6, seed=3, with_regions=False)
    cmd = [sys.executable, "-m", "tools.cli", "train", "--config", TINY, "--stage", "1",
           "--set", f"out_dir={tmp_path}/run", "--set", f"stages.1.shards={raw}/shards", "--set", f"data.num_workers={workers}"]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert res.returncode == 2
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("lait: ")]
    assert len(errors) == 1 and "no usable sample" in errors[0] and "lait features" in errors[0]
    assert errors[0].endswith("training reads the shards `lait features` writes")
    assert "Traceback" not in res.stderr and "DataLoader worker" not in res.stderr
    assert not os.path.exists(tmp_path / "run" / "stage1" / "final")


def test_eval_on_shards_without_regions_fails_naming_lait_features(tmp_path, capsys):
    """`lait eval` on shards `lait features` has not seen read no usable sample and ended in a
    ValueError traceback (exit 1); now one line, exit 2, naming the shards and the step."""
    raw = str(tmp_path / "raw")
    synth.write_shards(raw, 12, per_shard=6, seed=3, with_regions=False)
    feat = str(tmp_path / "feat")
    assert main(["features", raw, feat, "--grid", "3", "--quiet"]) == 0
    sets = ["--set", f"out_dir={tmp_path}/run", "--set", "stages.1.steps=1", "--quiet",
            "--set", f"stages.1.shards={feat}/shards"]
    assert main(["train", "--config", TINY, "--stage", "1", *sets]) == 0
    capsys.readouterr()
    assert main(["eval", "--config", TINY, *sets,
                 "--set", f"retrieval.eval_shards={raw}/shards"]) == 2
    err = capsys.readouterr().err.strip()
    assert "usable" in err and "lait features" in err and f"{raw}/shards" in err
