import os

import pytest

from model.config import ConfigError, from_dict, load_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_shipped_configs_load():
    big = load_config(os.path.join(ROOT, "configs/imagebert.yaml"))
    assert (big.model.hidden, big.model.layers, big.model.heads, big.model.intermediate) == (768, 12, 12, 3072)
    assert big.data.max_len == 144 and big.num_visual_tokens() == 100 and big.text_len() == 44
    assert set(big.stages) == {1, 2} and big.stage(1).shards != big.stage(2).shards
    tiny = load_config(os.path.join(ROOT, "configs/imagebert_tiny.yaml"))
    assert tiny.model.hidden < 256 and set(tiny.stages) == {1, 2}
    synth = load_config(os.path.join(ROOT, "configs/imagebert_synth.yaml"))
    assert (synth.model.layers, synth.model.hidden, synth.stage(1).batch_size) == (3, 128, 32)
    assert synth.stage(1).val_shards and synth.stage(1).shards != synth.stage(2).shards
    # the contrastive term that gets ITM off its prior is on in every shipped config
    assert all(c.pretrain.itc_weight > 0 for c in (big, tiny, synth))


def test_unknown_key_fails_with_dotted_name():
    with pytest.raises(ConfigError, match=r"model\.hiden"):
        from_dict({"model": {"hiden": 64}})
    with pytest.raises(ConfigError, match=r"stages\.2\.stepz"):
        from_dict({"stages": {2: {"stepz": 3}}})


@pytest.mark.parametrize("raw, msg", [
    ({"model": {"hidden": 100, "heads": 3}}, "divisible"),
    ({"model": {"layers": "12"}}, "integer"),
    ({"model": {"visual": "pixels"}}, "moc_weight"),
    ({"pretrain": {"mlm_prob": 1.5}}, r"\[0, 1\]"),
    ({"data": {"max_len": 100, "max_regions": 100}}, "text tokens"),
    ({"retrieval": {"loss": "hinge"}}, "bce, ce or triplet"),
    ({"stages": {1: {"decay": "step"}}}, "decay"),
    # the shared typed loader (pipeline/core/typed_config.py): what the pipeline's config checks
    ({"stages": {"one": {"steps": 3}}}, "integer keys"),
    ({"stages": [1, 2]}, "stages: expected a mapping"),
    ({"stages": {1: {"lr": float("nan")}}}, "stages.1.lr: expected a finite"),
    ({"stages": {1: {"betas": 0.9}}}, "stages.1.betas: expected a list"),
    ({"data": {"vocab": 3}}, "data.vocab: expected a string"),
    # out of range: torch raised a traceback, or the run trained silently on nonsense (a
    # negative grad_clip flips the gradient, log_every 0 was a ZeroDivisionError at step 1)
    ({"stages": {1: {"lr": -1e-3}}}, r"stages\.1\.lr must be >= 0 \(got -0\.001"),
    ({"stages": {1: {"min_lr": -1}}}, r"stages\.1\.min_lr must be >= 0"),
    ({"stages": {1: {"cnn_lr": -1}}}, r"stages\.1\.cnn_lr must be >= 0"),
    ({"stages": {1: {"betas": [0.9, 1.5]}}}, r"stages\.1\.betas must be two numbers in \[0, 1\)"),
    ({"stages": {1: {"weight_decay": -1}}}, r"stages\.1\.weight_decay must be >= 0"),
    ({"stages": {1: {"grad_clip": -1}}}, r"stages\.1\.grad_clip must be >= 0 \(0: off\)"),
    ({"stages": {1: {"warmup_steps": -5}}}, r"stages\.1\.warmup_steps must be >= 0"),
    ({"stages": {1: {"log_every": 0}}}, r"stages\.1\.log_every must be > 0"),
    ({"stages": {1: {"ckpt_every": 0}}}, r"stages\.1\.ckpt_every must be > 0"),
    ({"retrieval": {"lr": -1}}, r"retrieval\.lr must be >= 0"),
    ({"retrieval": {"batch_size": 0}}, r"retrieval\.batch_size must be > 0"),
    ({"retrieval": {"ckpt_every": 0}}, r"retrieval\.ckpt_every must be > 0"),
    ({"retrieval": {"negatives": 0}}, r"retrieval\.negatives must be > 0"),
    ({"data": {"max_regions": 0}}, r"data\.max_regions must be > 0"),
])
def test_bad_values_fail_fast(raw, msg):
    with pytest.raises(ConfigError, match=msg):
        from_dict(raw)


def test_overrides(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("stages:\n  1:\n    steps: 5\n")
    cfg = load_config(str(p), ["stages.1.steps=9", "model.hidden=64", "model.heads=4"])
    assert cfg.stage(1).steps == 9 and cfg.model.hidden == 64
    with pytest.raises(ConfigError, match="stage 3"):
        cfg.stage(3)


def test_an_exponent_without_a_dot_is_a_number(tmp_path):
    # PyYAML (YAML 1.1) loads `5e-4` as a string; a user who writes it means the number, in the
    # file and in --set alike.  Other strings stay errors.
    p = tmp_path / "c.yaml"
    p.write_text("stages:\n  1:\n    lr: 1e-3\n")
    cfg = load_config(str(p), ["stages.2.lr=5e-4"])
    assert cfg.stage(1).lr == 1e-3 and cfg.stage(2).lr == 5e-4
    for bad in ("5e", "e-4", "fast", "0x10"):
        with pytest.raises(ConfigError, match="stages.1.lr: expected a number"):
            from_dict({"stages": {1: {"lr": bad}}})


def test_a_yaml_syntax_error_is_a_configuration_error(tmp_path):
    # it was yaml's ScannerError traceback out of `lait train`, exit 1
    p = tmp_path / "c.yaml"
    p.write_text("stages:\n  1: {steps: 5\n")
    with pytest.raises(ConfigError, match=f"config {p} is not valid YAML: line 3, column 1") as err:
        load_config(str(p))
    assert "\n" not in str(err.value)
