"""What a user meets between the shards and a trained model: bad training samples, a run killed
mid-stage and started again, a device the machine does not have (found walking the docs)."""
import io
import json
import math
import os

import numpy as np
import pytest
import torch
import webdataset as wds
from safetensors.torch import load_file

import model_synth as synth
import model.train as train_mod
from model.config import from_dict
from model.data import decode_sample, tokenizer_for
from model.train import train
from model_synth import tiny_raw


def _with_regions(sample: dict, **changes) -> dict:
    z = dict(np.load(io.BytesIO(sample["regions.npz"])))
    for k, fn in changes.items():
        z[k] = fn(z[k].copy())
    buf = io.BytesIO()
    np.savez(buf, **z)
    return {**sample, "regions.npz": buf.getvalue()}


def _nan(a):
    a[0, 0] = np.nan
    return a


def _inf(a):
    a[0, 1] = np.inf
    return a


def _negative_label(a):
    a[:] = -5  # (labels past num_object_classes are ignored by MOC on purpose: model/pretrain.py)
    return a


BROKEN = {"nan_features": {"features": _nan}, "inf_boxes": {"boxes": _inf},
          "negative_label": {"labels": _negative_label}}


@pytest.fixture(scope="module")
def broken_dir(tmp_path_factory):
    """16 good samples and, in a second shard, one sample per kind of broken regions.npz."""
    d = str(tmp_path_factory.mktemp("broken"))
    synth.write_shards(d, 16, per_shard=16, seed=11)
    good = next(iter(wds.WebDataset(os.path.join(d, "shards", "00000.tar"), shardshuffle=False,
                                    empty_check=False)))
    good = {k: v for k, v in good.items() if k in ("__key__", "jpg", "txt", "regions.npz")}
    with wds.TarWriter(os.path.join(d, "shards", "00001.tar")) as w:
        for name, changes in BROKEN.items():
            w.write({**_with_regions(good, **changes), "__key__": name})
    return d


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_regions_that_would_poison_training_are_a_bad_sample(broken_dir, tmp_path, name):
    """A NaN or infinite feature or box made every weight NaN after one step (the run went on
    and wrote NaN checkpoints, exit 0); a negative label crashed the run in MOC's
    cross-entropy.  Each is now a bad sample, skipped and counted."""
    cfg = from_dict(tiny_raw(str(tmp_path), broken_dir + "/shards"))
    tok = tokenizer_for(cfg)
    bad = {s["__key__"]: s for s in wds.WebDataset(os.path.join(broken_dir, "shards", "00001.tar"),
                                                     shardshuffle=False, empty_check=False)}
    with pytest.raises(ValueError, match="regions.npz"):
        decode_sample(bad[name], cfg, tok)


def test_training_on_shards_with_broken_regions_stays_finite(broken_dir, tmp_path):
    raw = tiny_raw(str(tmp_path), broken_dir + "/shards")
    raw["stages"][1].update(steps=4, batch_size=8, log_every=1)
    cfg = from_dict(raw)
    train(cfg, 1, progress=False)  # 4 x 8 samples: every sample of the 19 is read at least once
    weights = load_file(os.path.join(cfg.out_dir, "stage1", "final", "model.safetensors"))
    assert all(torch.isfinite(v).all() for v in weights.values())
    with open(os.path.join(cfg.out_dir, "stage1", "metrics.jsonl")) as f:
        assert all(math.isfinite(json.loads(line)["loss"]) for line in f)


# --- a device the machine does not have -------------------------------------------------------

@pytest.mark.parametrize("command", ["eval", "features"])
@pytest.mark.parametrize("device", ["cuda", "cuda:7", "gpu"])
def test_a_device_the_machine_lacks_is_one_line_exit_2(tmp_path, capsys, monkeypatch, command, device):
    """`--device cuda` on a machine without CUDA was torch's AssertionError with a traceback
    (exit 1); `--device gpu` a RuntimeError listing torch's device types."""
    from tools.cli import main
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    shards = str(tmp_path / "data")
    synth.write_shards(shards, 4, per_shard=4, seed=1)
    if command == "eval":
        argv = ["eval", "--config", synth_config(tmp_path, shards), "--device", device,
                "--checkpoint", str(tmp_path / "nowhere")]
    else:
        argv = ["features", shards, str(tmp_path / "feat"), "--grid", "2", "--device", device]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lait: ") and f"--device {device}" in err[0], err
    assert not os.path.exists(tmp_path / "feat")


def synth_config(tmp_path, shards) -> str:
    import yaml
    path = str(tmp_path / "tiny.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(tiny_raw(str(tmp_path), shards + "/shards"), f)
    return path


# --- a run killed mid-stage, then the same command again ------------------------------------

class Killed(Exception):
    """Stands for kill -9: the loop stops between two steps, nothing is cleaned up."""


def _kill_after(monkeypatch, n_batches: int | None, module=train_mod, drawn: list | None = None):
    """The loop stops (Killed) when it asks for batch ``n_batches``; ``drawn`` counts the
    batches each loader gave."""
    real = module.make_loader

    def make_loader(*args, **kw):
        loader = real(*args, **kw)
        if drawn is not None:
            drawn.append(0)

        def batches():
            for i, b in enumerate(loader):
                if i == n_batches:
                    raise Killed
                if drawn is not None:
                    drawn[-1] += 1
                yield b
        return batches()
    monkeypatch.setattr(module, "make_loader", make_loader)


def _steps(cfg, stage=1):
    with open(os.path.join(cfg.out_dir, f"stage{stage}", "metrics.jsonl")) as f:
        return [json.loads(line)["step"] for line in f]


def _raw(data_dir, tmp_path):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["stages"][1].update(steps=6, batch_size=4, log_every=1, ckpt_every=2)
    return raw


def test_resumed_stage_has_one_metrics_record_per_step(data_dir, tmp_path, monkeypatch):
    """Killed at step 5 with its last checkpoint at step 4, the rerun redoes step 5: the killed
    run's record of step 5 was left in metrics.jsonl beside the new one (two losses for one
    step in every plot; a half-written line got the next record glued to it).  The rerun keeps
    only the whole records up to the step it resumes from."""
    cfg = from_dict(_raw(data_dir, tmp_path))
    _kill_after(monkeypatch, 5)
    with pytest.raises(Killed):
        train(cfg, 1, progress=False)
    assert _steps(cfg) == [1, 2, 3, 4, 5]
    with open(os.path.join(cfg.out_dir, "stage1", "metrics.jsonl"), "a") as f:
        f.write('{"stage": 1, "step": 6, "lr"')  # a kill in the middle of a write
    monkeypatch.undo()
    train(cfg, 1, progress=False)
    assert _steps(cfg) == [1, 2, 3, 4, 5, 6]  # every line parses


def test_ctrl_c_in_lait_train_says_the_same_command_resumes(data_dir, tmp_path, monkeypatch, capsys):
    """Ctrl-C during `lait train` printed "lait: train: interrupted" and nothing else: a user
    could not tell the checkpoints were kept (a build's line says so).  The line now says the
    same command resumes from the last checkpoint, and it does."""
    import yaml

    from tools.cli import main

    cfg_path = str(tmp_path / "tiny.yaml")
    with open(cfg_path, "w") as f:
        yaml.safe_dump(_raw(data_dir, tmp_path), f)
    real = train_mod.make_loader

    def interrupted_loader(*args, **kw):
        def batches():
            for i, b in enumerate(real(*args, **kw)):
                if i == 5:
                    raise KeyboardInterrupt  # what SIGINT raises in the main thread
                yield b
        return batches()

    monkeypatch.setattr(train_mod, "make_loader", interrupted_loader)
    argv = ["train", "--config", cfg_path, "--stage", "1", "--quiet"]
    assert main(argv) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lait: train: interrupted"), err
    assert "same command" in err[0] and "resume" in err[0] and "checkpoint" in err[0], err
    monkeypatch.setattr(train_mod, "make_loader", real)
    assert main(argv) == 0
    assert _steps(from_dict(_raw(data_dir, tmp_path))) == [1, 2, 3, 4, 5, 6]


def test_a_stage_checkpointed_past_its_steps_is_refused(data_dir, tmp_path):
    """A finished 6-step stage run again with `--set stages.1.steps=3` said `{"step": 6}`,
    exit 0: the user asked for 3 steps and got the 6-step model without a word (and stage 2
    started from it).  A checkpoint past the stage's steps is now a configuration error."""
    from model.config import ConfigError

    raw = _raw(data_dir, tmp_path)
    train(from_dict(raw), 1, progress=False)
    raw["stages"][1]["steps"] = 3
    with pytest.raises(ConfigError, match=r"stage1/last is at step 6, past stages\.1\.steps \(3\)"):
        train(from_dict(raw), 1, progress=False)


def test_finetune_before_pretraining_names_its_own_option(data_dir, tmp_path, capsys):
    """`lait finetune` with no pre-trained stage said "... or pass --checkpoint", an option
    finetune does not have (argparse then refused it): its option is --init."""
    import yaml

    from tools.cli import main

    cfg_path = str(tmp_path / "tiny.yaml")
    with open(cfg_path, "w") as f:
        yaml.safe_dump(_raw(data_dir, tmp_path), f)
    assert main(["finetune", "--config", cfg_path, "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no pre-training checkpoint" in err[0], err
    assert "pass --init" in err[0] and "--checkpoint" not in err[0], err


def test_killed_between_last_and_final_the_rerun_writes_final(data_dir, tmp_path):
    """A kill after `last/` was written at the stage's final step but before `final/`: the rerun
    said 'already done' and wrote nothing, and stage 2 then refused to start ('run the earlier
    stage first': the user just had)."""
    raw = _raw(data_dir, tmp_path)
    cfg = from_dict(raw)
    train(cfg, 1, progress=False)
    sdir = os.path.join(cfg.out_dir, "stage1")
    expected = load_file(os.path.join(sdir, "final", "model.safetensors"))
    import shutil
    shutil.rmtree(os.path.join(sdir, "final"))
    train(cfg, 1, progress=False)
    got = load_file(os.path.join(sdir, "final", "model.safetensors"))
    assert got.keys() == expected.keys() and all(torch.equal(got[k], expected[k]) for k in got)
    assert json.load(open(os.path.join(sdir, "final", "state.json")))["step"] == 6
    train(cfg, 2, progress=False)  # stage 2 starts from it
    assert os.path.exists(os.path.join(cfg.out_dir, "stage2", "final", "model.safetensors"))


def test_killed_while_swapping_checkpoints_the_rerun_resumes(data_dir, tmp_path, monkeypatch):
    """save_checkpoint moves `last/` aside to `last.old/` before putting the new one in place; a
    kill between the two renames left no `last/`, and the rerun started the stage again from
    step 0 (stage 1: from scratch).  It now takes `last.old/` back and resumes."""
    cfg = from_dict(_raw(data_dir, tmp_path))
    _kill_after(monkeypatch, 3)
    with pytest.raises(Killed):
        train(cfg, 1, progress=False)
    monkeypatch.undo()
    sdir = os.path.join(cfg.out_dir, "stage1")
    os.replace(os.path.join(sdir, "last"), os.path.join(sdir, "last.old"))
    train(cfg, 1, progress=False)
    assert _steps(cfg) == [1, 2, 3, 4, 5, 6]
    assert not os.path.exists(os.path.join(sdir, "last.old"))


def test_a_second_run_of_a_stage_in_training_fails_at_once(data_dir, tmp_path):
    """kill -9 of torchrun leaves its workers training (they are not in its process group's
    reach once orphaned): the same command started again ran beside them, both writing
    last/ and metrics.jsonl.  A stage being trained is locked; a second run says so."""
    import subprocess
    import sys

    from pipeline.core.errors import UsageError

    cfg = from_dict(_raw(data_dir, tmp_path))
    sdir = os.path.join(cfg.out_dir, "stage1")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from model.train import stage_lock\n"
         f"with stage_lock({sdir!r}):\n    print('locked', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(UsageError, match=f"pid {holder.pid}"):
            train(cfg, 1, progress=False)
        assert not os.path.exists(os.path.join(sdir, "last"))
    finally:
        holder.kill()
        holder.wait()
    train(cfg, 1, progress=False)  # the lock went with its process
    assert _steps(cfg) == [1, 2, 3, 4, 5, 6]


# --- lait finetune ----------------------------------------------------------------------------

FINETUNE_RANK = """
import sys, torch, torch.distributed as dist
import model.retrieval as retrieval
from model.config import load_config
made = []
class Capture(retrieval.ImageBERT):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        made.append(self)
retrieval.ImageBERT = Capture
retrieval.finetune(load_config(sys.argv[1]), sys.argv[2], progress=False)
torch.save(made[0].state_dict(), f"{sys.argv[3]}/rank{dist.get_rank()}.pt")
"""


def test_finetune_under_torchrun_trains_one_model(data_dir, tmp_path):
    """`torchrun ... finetune` ran each rank's fine-tuning alone (no gradient exchange): the
    ranks ended with different weights and rank 0 saved the one that saw half the data.  Data
    parallel ranks must end with the same weights."""
    import subprocess
    import sys

    import yaml

    raw = _raw(data_dir, tmp_path)
    raw["stages"][1].update(steps=2)
    raw["retrieval"].update(steps=3, batch_size=4)
    cfg = from_dict(raw)
    train(cfg, 1, progress=False)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(raw))
    script = tmp_path / "rank.py"
    script.write_text(FINETUNE_RANK)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    res = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                          "--master_port", str(synth_free_port()), str(script), str(config),
                          os.path.join(cfg.out_dir, "stage1", "final"), str(tmp_path)],
                         capture_output=True, text=True, cwd=root, timeout=300,
                         env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": root})
    assert res.returncode == 0, res.stderr[-3000:]
    a, b = (torch.load(tmp_path / f"rank{r}.pt") for r in (0, 1))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_finetune_metrics_are_the_last_runs(data_dir, tmp_path):
    """A second `lait finetune` (another loss, say) overwrites retrieval/final but appended its
    records to the first run's metrics.jsonl: two 'step 10' lines, one of them not the model's."""
    from model.retrieval import finetune

    raw = _raw(data_dir, tmp_path)
    raw["stages"][1].update(steps=2)
    raw["retrieval"].update(steps=10, batch_size=4)
    cfg = from_dict(raw)
    train(cfg, 1, progress=False)
    for _ in range(2):
        finetune(cfg, os.path.join(cfg.out_dir, "stage1", "final"), progress=False)
    with open(os.path.join(cfg.out_dir, "retrieval", "metrics.jsonl")) as f:
        assert [json.loads(line)["step"] for line in f] == [10]


def test_finetune_killed_resumes_from_its_last_checkpoint(data_dir, tmp_path, monkeypatch):
    """`lait finetune` had no checkpoint but its final one: a fine-tuning run killed after
    hours started again from step 0.  It now writes retrieval/last/ every ckpt_every steps and
    the same command resumes there; another run (another loss) does not resume it."""
    import model.retrieval as retrieval

    raw = _raw(data_dir, tmp_path)
    raw["stages"][1].update(steps=2)
    raw["retrieval"].update(steps=20, batch_size=4, ckpt_every=10)
    cfg = from_dict(raw)
    train(cfg, 1, progress=False)
    init = os.path.join(cfg.out_dir, "stage1", "final")
    rdir = os.path.join(cfg.out_dir, "retrieval")
    _kill_after(monkeypatch, 15, retrieval)
    with pytest.raises(Killed):
        retrieval.finetune(cfg, init, progress=False)
    assert json.load(open(os.path.join(rdir, "last", "state.json")))["step"] == 10
    assert not os.path.exists(os.path.join(rdir, "final"))
    monkeypatch.undo()
    drawn: list = []
    _kill_after(monkeypatch, None, retrieval, drawn)
    path = retrieval.finetune(cfg, init, progress=False)
    assert drawn == [10]  # the steps after the checkpoint, not all 20
    with open(os.path.join(rdir, "metrics.jsonl")) as f:
        assert [json.loads(line)["step"] for line in f] == [10, 20]
    assert json.load(open(os.path.join(path, "state.json")))["step"] == 20
    retrieval.finetune(cfg, init, progress=False)  # done: nothing is redone
    assert drawn == [10]
    raw["retrieval"].update(loss="ce")  # another run: from step 0, replacing last/ and final/
    retrieval.finetune(from_dict(raw), init, progress=False)
    assert drawn == [10, 20]
    assert json.load(open(os.path.join(path, "state.json")))["loss_kind"] == "ce"


def synth_free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- lait features on damaged shards -----------------------------------------------------------

def _fake_regions(imgs):
    return [{"features": np.ones((2, 4)), "boxes": np.zeros((2, 5)), "labels": np.zeros(2),
             "scores": np.ones(2)} for _ in imgs]


@pytest.mark.parametrize("damage", ["truncated", "not_a_tar"])
def test_features_on_a_damaged_shard_counts_it_and_goes_on(tmp_path, damage):
    """A tar cut short (a copy that stopped, a full disk) stopped `lait features` with
    tarfile's ReadError and a traceback, exit 1, leaving NNNNN.tar.tmp; the shards after it
    were never done.  The damaged shard's whole samples before the damage are copied, the
    shard is counted in `bad_shards`, the other shards are done."""
    from model.features import run_features

    raw = str(tmp_path / "raw")
    synth.write_shards(raw, 12, per_shard=6, seed=2, with_regions=False)
    bad = os.path.join(raw, "shards", "00000.tar")
    data = open(bad, "rb").read()
    open(bad, "wb").write(data[: len(data) * 2 // 3] if damage == "truncated" else b"not a tar" * 100)
    out = str(tmp_path / "feat")
    stats = run_features(raw, out, _fake_regions, progress=False)
    assert stats["bad_shards"] == 1 and stats["shards"] == 2
    good = list(wds.WebDataset(os.path.join(out, "shards", "00001.tar"), shardshuffle=False, empty_check=False))
    assert len(good) == 6 and all("regions.npz" in s for s in good)
    cut = list(wds.WebDataset(os.path.join(out, "shards", "00000.tar"), shardshuffle=False, empty_check=False))
    assert len(cut) == (stats["samples"] - 6) and (0 < len(cut) < 6 if damage == "truncated" else not cut)
    assert all({"jpg", "txt", "regions.npz"} <= set(s) for s in cut)
    assert not [f for f in os.listdir(os.path.join(out, "shards")) if f.endswith(".tmp")]


# --- a checkpoint of another model ------------------------------------------------------------

def test_a_checkpoint_of_another_model_is_one_line_naming_the_keys(data_dir, tmp_path, capsys):
    """Stage 2 (or eval, finetune) with a config whose model differs from the checkpoint's,
    e.g. `lait eval --config configs/imagebert.yaml` on the tiny demo's checkpoint, was torch's
    RuntimeError: a traceback and a page of 'size mismatch for ...' lines, exit 1."""
    from model.config import ConfigError
    from tools.cli import main

    raw = _raw(data_dir, tmp_path)
    raw["stages"][1].update(steps=2)
    train(from_dict(raw), 1, progress=False)
    other = {**raw, "model": {**raw["model"], "hidden": 64, "heads": 2}}
    with pytest.raises(ConfigError, match=r"model\.hidden: 128 there, 64 here"):
        train(from_dict(other), 2, progress=False)
    path = tmp_path / "other.yaml"
    import yaml
    path.write_text(yaml.safe_dump({**raw, "model": {**raw["model"], "layers": 3}}))
    assert main(["eval", "--config", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model.layers: 2 there, 3 here" in err[0], err


def test_features_into_its_own_input_is_refused(tmp_path, capsys):
    """`lait features OUT OUT` found every output shard 'done' (they are the input's) and
    exited 0 having added nothing; training then said the shards lacked regions."""
    from tools.cli import main

    raw = str(tmp_path / "raw")
    synth.write_shards(raw, 4, per_shard=4, seed=2, with_regions=False)
    before = open(os.path.join(raw, "shards", "00000.tar"), "rb").read()
    assert main(["features", raw, raw + "/", "--grid", "2", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "another folder" in err[0], err
    assert open(os.path.join(raw, "shards", "00000.tar"), "rb").read() == before


def test_shards_without_regions_are_one_warning_not_twenty(tmp_path, caplog):
    """Training on the build's shards before `lait features` printed 20 "skipping bad sample
    <key>: no regions.npz" lines (one per sample, up to the cap) above the one error line that
    says the same.  A bad sample is now named once per distinct error."""
    from model.config import ConfigError

    raw_dir = str(tmp_path / "raw")
    synth.write_shards(raw_dir, 24, per_shard=12, seed=3, with_regions=False)
    raw = tiny_raw(str(tmp_path), raw_dir + "/shards")
    raw["stages"][1].update(steps=2, batch_size=4)
    with caplog.at_level("WARNING", logger="model.data"), pytest.raises(ConfigError, match="no usable sample"):
        train(from_dict(raw), 1, progress=False)
    lines = [r.getMessage() for r in caplog.records if "skipping bad sample" in r.getMessage()]
    assert len(lines) == 1 and "no regions.npz" in lines[0], lines


def test_skipped_samples_are_counted_in_metrics(tmp_path):
    """Bad samples were skipped with a warning (at most 20 distinct) and counted in a counter
    nobody read: metrics.jsonl now says how many were skipped so far (every pass over the
    shards counts again)."""
    d = str(tmp_path / "data")
    synth.write_shards(d, 16, per_shard=16, seed=4, bad=2)  # + 2 broken samples in shard 0
    raw = tiny_raw(str(tmp_path), d + "/shards")
    raw["stages"][1].update(steps=6, batch_size=8, log_every=1)
    cfg = from_dict(raw)
    train(cfg, 1, progress=False)
    with open(os.path.join(cfg.out_dir, "stage1", "metrics.jsonl")) as f:
        counts = [json.loads(line)["bad_samples"] for line in f]
    # 6 x 8 = 48 samples drawn from 16 good ones: at least two passes, each skipping both
    assert counts == sorted(counts) and counts[-1] >= 4 and counts[-1] % 2 == 0


@pytest.mark.parametrize("option", [["--grid", "0"], ["--grid", "-3"], ["--batch-size", "0"],
                                    ["--regions", "0"], ["--onnx-size", "0"],
                                    ["--min-regions", "-1"], ["--min-score", "2"]])
def test_features_options_out_of_range_are_usage_errors(tmp_path, capsys, option):
    """`--grid 0` was a ZeroDivisionError traceback, `--grid -3` a numpy ValueError; a batch of
    0 or `--regions 0` (read as "the default") ran as if the option were not there."""
    from tools.cli import main

    raw = str(tmp_path / "raw")
    synth.write_shards(raw, 4, per_shard=4, seed=2, with_regions=False)
    with pytest.raises(SystemExit) as exit_:
        main(["features", raw, str(tmp_path / "feat"), "--quiet", *option])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("lait features: error: argument " + option[0]), err
    assert not os.path.exists(tmp_path / "feat")


@pytest.mark.parametrize("command,option", [
    ("eval", ["--n", "0"]), ("eval", ["--n", "-5"]), ("eval", ["--n", "1"]),
    ("ablate", ["--n", "0"]), ("ablate", ["--steps", "0"]), ("ablate", ["--stage1-steps", "0"]),
    ("ablate", ["--jobs", "0"])])
def test_trainer_counts_out_of_range_are_usage_errors(tmp_path, capsys, command, option):
    """`lait eval --n 0` (and ablate's `--n 0`, `--steps 0`, `--stage1-steps 0`) ran as if the
    option were not given; `--n -5` said the *shards* held fewer than 2 usable samples, and
    `--jobs 0` ran one job.  Each is now argparse's one-line error, before any work."""
    from tools.cli import main

    extra = {"eval": [], "ablate": ["--stage1", "x", "--stage2", "x", "--test", "x",
                                    "--out", str(tmp_path / "abl")]}[command]
    with pytest.raises(SystemExit) as exit_:
        main([command, "--config", "configs/imagebert_tiny.yaml", *extra, *option])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"lait {command}: error: argument " + option[0]), err
    assert not os.path.exists(tmp_path / "abl")


@pytest.mark.parametrize("where", ["input", "output", "stage"])
def test_shards_on_an_object_store_are_named_as_local_only(data_dir, tmp_path, capsys, monkeypatch, where):
    """`lait build --out s3://bucket/run` is supported; `lait features s3://bucket/run OUT`
    then said "no .tar shards in s3://bucket/run" (they are there), and an output URL became
    a local folder named `s3:`.  The trainer reads and writes local files: it says so."""
    import yaml

    from tools.cli import main

    monkeypatch.chdir(tmp_path)
    if where == "stage":
        raw = _raw(data_dir, tmp_path)
        raw["stages"][1]["shards"] = "s3://bucket/run/shards"
        cfg_path = str(tmp_path / "tiny.yaml")
        with open(cfg_path, "w") as f:
            yaml.safe_dump(raw, f)
        argv = ["train", "--config", cfg_path, "--stage", "1", "--quiet"]
    else:
        argv = ["features", "s3://bucket/run" if where == "input" else data_dir,
                "s3://bucket/feat" if where == "output" else str(tmp_path / "feat"), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "s3://bucket/" in err[0] and "local" in err[0] and "copy" in err[0], err
    assert not (tmp_path / "s3:").exists()


def test_features_with_a_missing_detector_is_one_line(data_dir, tmp_path, capsys):
    """`lait features --onnx PATH` with no file there was onnxruntime's NoSuchFile traceback."""
    from tools.cli import main
    assert main(["features", data_dir, str(tmp_path / "feat"), "--onnx", str(tmp_path / "no.onnx"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--onnx" in err[0] and "no.onnx" in err[0], err
