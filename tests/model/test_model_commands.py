"""The `lait` subcommands end to end: features -> stage 1 -> stage 2 -> finetune -> eval."""
import argparse
import json
import os


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
