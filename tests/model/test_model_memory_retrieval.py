"""The memory pre-flight check of `lait finetune` and `lait eval` (model/memory.py, tasks
"finetune" and "eval"): a run that cannot fit is refused at once, in one line naming the config
key to lower and the override, before anything is written or read; the tests' configs pass it.
Nothing here depends on this machine's memory: the refused batch is absurd on any machine,
the rest patches what the check reads."""
import os

import pytest
import torch

import model_synth as synth
from model import memory
from model.config import from_dict, load_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
TINY = os.path.join(ROOT, "configs", "imagebert_tiny.yaml")


def test_finetune_refuses_an_absurd_batch_in_one_line_before_anything_is_written(tmp_path, data_dir):
    out = tmp_path / "run"
    line = synth.refused_in_one_line(
        ["finetune", "--config", TINY, "--init", str(tmp_path / "never-read"), "--set", f"out_dir={out}",
         "--set", f"retrieval.shards={data_dir}/shards", "--set", "retrieval.batch_size=100000000"], ROOT)
    assert "fine-tuning needs about" in line and "retrieval.batch_size=100000000" in line
    assert "--set memory_check=false" in line and "killed for memory" in line
    assert not os.path.exists(out / "retrieval")  # refused before its folder is made


def test_eval_refuses_too_many_test_pairs_naming_n_and_a_fitting_one(tmp_path, data_dir, monkeypatch, capsys):
    """With little memory free (patched), `lait eval` is refused before the checkpoint or the
    samples are read: one line, exit 2, naming --n / retrieval.eval_size, an n that fits and
    the override; ``--set memory_check=false`` skips the check."""
    from tools.cli import main
    cfg = load_config(TINY, [f"retrieval.eval_shards={data_dir}/shards"])
    monkeypatch.setattr(memory, "process_rss", lambda: 0.0)
    need = memory.estimate(cfg, task="eval", data_bytes=memory.shards_bytes(f"{data_dir}/shards"),
                           samples=256, **{"process_bytes": 0.0}).total
    monkeypatch.setattr(memory, "mem_available", lambda: 0.999 * need * memory.LOW)
    sets = ["--set", f"retrieval.eval_shards={data_dir}/shards", "--set", f"out_dir={tmp_path}"]
    rc = main(["eval", "--config", TINY, "--checkpoint", str(tmp_path / "never-read"),
               "--device", "cpu", "--n", "256", *sets])
    err = capsys.readouterr().err
    assert rc == 2, err[-2000:]
    errors = [ln for ln in err.splitlines() if ln.startswith("lait: ")]
    assert len(errors) == 1 and "Traceback" not in err, err[-2000:]
    assert "evaluation needs about" in errors[0] and "retrieval.eval_size=256" in errors[0]
    assert "--set memory_check=false" in errors[0] and "killed for memory" in errors[0]
    fits = int(errors[0].split("try --n ")[1].split()[0].rstrip(","))
    assert 2 <= fits < 256
    cfg.memory_check = False
    assert memory.check_memory(cfg, 0, torch.device("cpu"), task="eval", n=256) is None


def test_the_test_configs_pass_the_check(tmp_path, data_dir):
    """The shipped tiny config and the tests' tiny config fit anywhere these tests run, for
    both commands; each estimate has its parts."""
    tiny = load_config(TINY, [f"retrieval.shards={data_dir}/shards",
                              f"retrieval.eval_shards={data_dir}/shards"])
    tests = from_dict(synth.tiny_raw(str(tmp_path), f"{data_dir}/shards"))
    for cfg in (tiny, tests):
        ft = memory.check_memory(cfg, 0, torch.device("cpu"), task="finetune")
        assert ft is not None and {"process", "model and AdamW", "activations", "data loader"} <= set(ft.parts)
        ev = memory.check_memory(cfg, 0, torch.device("cpu"), task="eval")
        assert ev is not None and {"process", "model", "activations", "samples", "ranking"} <= set(ev.parts)
        assert "model and AdamW" not in ev.parts  # inference: no gradients, no optimizer state


def test_inference_keeps_no_gradients_and_ranking_grows_with_the_pairs(data_dir):
    """Eval counts the weights once (4 bytes a parameter, not training's 16) and one layer's
    working set (it does not grow with the layers, fine-tuning's does); its n x n ranking
    grows with n squared, capped by the samples the shards hold."""
    raw = synth.tiny_raw("/tmp", f"{data_dir}/shards")
    raw["data"].pop("vocab")
    cfg = from_dict(raw)
    n_all, n_train = memory.count_parameters(cfg)
    ev, ft = memory.estimate(cfg, task="eval"), memory.estimate(cfg, task="finetune")
    assert ev.parts["model"] == 4.0 * n_all
    assert ft.parts["model and AdamW"] == 4.0 * n_all + 12.0 * n_train
    deep = from_dict({**raw, "model": {**raw["model"], "layers": 8}})
    assert memory.estimate(deep, task="eval").parts["activations"] == ev.parts["activations"]
    assert memory.estimate(deep, task="finetune").parts["activations"] > 3 * ft.parts["activations"]
    cfg.retrieval.eval_size = 1000
    small = memory.estimate(cfg, task="eval").parts["ranking"]
    cfg.retrieval.eval_size = 4000
    assert memory.estimate(cfg, task="eval").parts["ranking"] == pytest.approx(16 * small)
    assert memory.estimate(cfg, task="eval", samples=1000).parts["ranking"] == pytest.approx(small)
    # 256 good samples and 2 bad ones (the fixture's): counted from the tar headers, the bad
    # ones too, so the cap is never below the samples eval can read
    assert memory.count_samples(f"{data_dir}/shards") == 258
    with pytest.raises(ValueError):
        memory.estimate(cfg, task="pretrain")
