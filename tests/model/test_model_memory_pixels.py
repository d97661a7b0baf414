"""The memory pre-flight check in Pixel-BERT mode (model/memory.py, docs/trainer.md "Pixel-BERT's
CNN in the memory check"): the CNN's activations, counted off the network on the meta device,
grow with the batch and the image size and are what refuses a config that cannot fit; region
configs' estimates are what they were before the CNN term.  Nothing here depends on this
machine's memory: what the check reads is patched."""
import pytest
import torch

import model_synth as synth
from model import memory
from model.config import from_dict
from model.embeddings import PixelEncoder

# memory.estimate(cfg, 1, workers=2, cuda=, process_bytes=0.0, task=) of main before qa16
# (commit 1aa19e9): region configs must keep these to the byte.
REGIONS_BEFORE = [
    ("imagebert.yaml", [], "train", False, 36899306884.608),
    ("imagebert.yaml", [], "train", True, 10627936506.624),
    ("imagebert.yaml", [], "finetune", False, 21958939286.016),
    ("imagebert.yaml", [], "eval", True, 2121255711.36),
    ("imagebert.yaml", ["model.global_image_token=true", "model.dropout=0.0"], "train", False, 23667214618.752),
    ("imagebert_tiny.yaml", [], "train", False, 871544429.952),
    ("imagebert_tiny.yaml", [], "eval", False, 303308247.68),
]


@pytest.mark.parametrize("name,sets,task,cuda,total", REGIONS_BEFORE)
def test_region_estimates_are_unchanged(name, sets, task, cuda, total):
    import os

    from model.config import load_config
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    cfg = load_config(os.path.join(root, "configs", name), ["model.init_from=null"] + sets)
    est = memory.estimate(cfg, 1, workers=2, cuda=cuda, process_bytes=0.0, task=task)
    assert est.total == total
    assert "CNN activations" not in est.parts


def _pixels(backbone="efficientnet_lite0", size=224, batch=4, **pretrain):
    return from_dict({"model": {"init_from": None, "visual": "pixels", "pixel_backbone": backbone,
                                "image_size": size, "hidden": 128, "layers": 2, "heads": 2,
                                "intermediate": 512},
                      "pretrain": {"moc_weight": 0, "mrfr_weight": 0, **pretrain},
                      "stages": {1: {"shards": "/nowhere", "batch_size": batch}}})


@pytest.mark.parametrize("backbone", ["efficientnet_lite0", "tiny"])
def test_the_cnn_term_grows_with_the_batch_and_the_image_size(backbone):
    cnn = lambda **kw: memory.estimate(_pixels(backbone, **kw), 1).parts["CNN activations"]  # noqa: E731
    assert cnn(batch=8) == pytest.approx(2 * cnn(batch=4))    # per image, times the images
    assert cnn(size=320) > 1.5 * cnn(size=224)                # ~ the pixels: (320/224)^2 = 2.04
    assert memory.estimate(_pixels(backbone, batch=8), 1).total > memory.estimate(_pixels(backbone), 1).total


def test_the_cnn_term_counts_the_images_each_pass_runs(monkeypatch):
    """The CNN runs once per distinct image (speed3): B images a step, however many rows use
    them; each use, the joint pass's rows (3B with both ITM negatives) and ITC's image-only
    pass (B), gathers its tokens; finetune: B images, B x (1 + negatives) rows; the estimate
    is the CNN-free one plus that term."""
    px = memory.pixel_path(_pixels().model)
    one, row = px.per_image("train"), px.per_row("train")
    assert px.saved > 0 and px.widest > 0 and one > px.saved
    assert 0 < row < 0.01 * one    # a row's tokens are a sliver of the CNN's activations
    for pretrain, uses in [({"itc_weight": 1.0}, 4 * 4), ({"itc_weight": 0.0}, 3 * 4),
                           ({"itc_weight": 0.0, "neg_image": False}, 2 * 4), ({"itm": False, "itc_weight": 1.0}, 4 + 4)]:
        cfg = _pixels(**pretrain)
        est = memory.estimate(cfg, 1, process_bytes=0.0)
        assert est.parts["CNN activations"] == pytest.approx(4 * one + uses * row)
        monkeypatch.setattr(memory, "CNN_SCALE", 0.0)
        free = memory.estimate(cfg, 1, process_bytes=0.0)
        monkeypatch.undo()
        assert est.total > free.total
        rest = lambda e: {k: v for k, v in e.parts.items()  # noqa: E731
                          if k not in ("CNN activations", "checkpoint copies")}
        assert rest(est) == rest(free)
    cfg = _pixels()
    cfg.retrieval.batch_size = 5
    ft = memory.estimate(cfg, 1, task="finetune").parts["CNN activations"]
    assert ft == pytest.approx(5 * one + 5 * (1 + cfg.retrieval.negatives) * row)
    # the batch holds each image once (and an int64 image index a row)
    assert memory.batch_bytes(cfg, 4) == 4 * 3 * 224 ** 2 * 4 + 8 * 3 * 4


def test_eval_and_cuda_scale_the_cnn_term():
    """Eval: no_grad, so the larger of the CNN stage (one layer's input + output and the
    normalised image per distinct image of a scoring pass) and the Transformer stage (its
    layer and each row's gathered tokens); under CUDA's bf16 the float parts halve, integer
    ones do not."""
    cfg = _pixels()
    px = memory.pixel_path(cfg.model)
    for size in (224, 448):  # the Transformer's stage is the larger at 224, the CNN's at 448
        cfg = _pixels(size=size)
        px = memory.pixel_path(cfg.model)
        est = memory.estimate(cfg, 1, task="eval", samples=16).parts
        # 256 pairs of 16 x 16: all 16 images in one pass
        cnn_stage = 16 * (px.widest + px.normalised)
        trans_stage = memory.EVAL_ROWS * px.eval_row + est["activations"]
        assert est["CNN activations"] + est["activations"] == pytest.approx(max(cnn_stage, trans_stage))
        assert est["CNN activations"] >= memory.EVAL_ROWS * px.eval_row
        assert (trans_stage > cnn_stage) == (size == 224)
    cfg = _pixels()
    px = memory.pixel_path(cfg.model)
    # image-major pairs: a pass of 256 rows spans at most 256 / n + 1 images
    assert [memory.eval_images(n, 256) for n in (1, 2, 16, 17, 100, 256, 1000)] == [1, 2, 16, 17, 4, 2, 2]
    cpu = memory.estimate(cfg, 1).parts["CNN activations"]
    gpu = memory.estimate(cfg, 1, cuda=True).parts["CNN activations"]
    assert gpu == pytest.approx(4 * (0.5 * (px.saved + px.widest) + px.saved_int)
                                + 3 * 4 * (0.5 * px.row + px.row_int))  # ITC off
    assert 0.5 * cpu < gpu < cpu


def test_the_cnn_is_counted_from_the_network():
    """The parameters (count_parameters builds the whole model, CNN included) and the visual
    tokens are the network's: a 128 image through the stride-32 tiny CNN without pooling has
    16 cells, 8 sampled in training, all 16 in eval."""
    eff, tiny = _pixels(), _pixels("tiny")
    with torch.device("meta"):
        cnn = {c.model.pixel_backbone: sum(p.numel() for p in PixelEncoder(c.model).parameters())
               for c in (eff, tiny)}
    proj = (1280 - 128) * eff.model.hidden  # the visual projection's input width follows the CNN
    assert (memory.count_parameters(eff)[0] - memory.count_parameters(tiny)[0]
            == cnn["efficientnet_lite0"] - cnn["tiny"] + proj)
    m = _pixels("tiny", size=128).model
    m.pixel_pool, m.pixel_sample = 1, 8
    px = memory.pixel_path(m)
    assert (px.tokens, px.eval_tokens) == (8, 16)


def test_buffered_images_are_counted_decoded(data_dir):
    """A JPEG decodes to far more than its bytes: pixel mode bounds the buffers by the
    samples the shards hold times a decoded image, region mode by the shards' bytes."""
    cfg = _pixels()
    spec = f"{data_dir}/shards"
    assert memory.decoded_bytes(cfg, spec, 10) == 10 * memory.sample_bytes(cfg) > 10 * 3 * 224 ** 2
    assert memory.decoded_bytes(cfg, spec, None) is None
    regions = from_dict({"model": {"init_from": None}, "stages": {1: {"shards": spec}}})
    assert memory.decoded_bytes(regions, spec, 10) == memory.shards_bytes(spec)


def test_a_pixel_config_that_cannot_fit_is_refused(monkeypatch):
    """With memory free (patched) between the CNN-free estimate and the real one, the check
    passes without the CNN term and refuses with it, naming a batch that fits."""
    cfg = _pixels(batch=8)
    monkeypatch.setattr(memory, "process_rss", lambda: 0.0)
    need = memory.estimate(cfg, 1, process_bytes=0.0).total
    monkeypatch.setattr(memory, "CNN_SCALE", 0.0)
    free = memory.estimate(cfg, 1, process_bytes=0.0).total
    assert need > 2 * free  # the CNN dominates Pixel-BERT's activations
    monkeypatch.setattr(memory, "mem_available", lambda: memory.LOW * (free + need) / 2)
    assert memory.check_memory(cfg, 1, torch.device("cpu")) is not None  # as before qa16
    monkeypatch.setattr(memory, "CNN_SCALE", 1.0)
    with pytest.raises(memory.ConfigError) as e:
        memory.check_memory(cfg, 1, torch.device("cpu"))
    msg = str(e.value)
    assert "stages.1.batch_size=8" in msg and "--set memory_check=false" in msg
    assert "CNN activations" in msg
    fits = int(msg.split("try --set stages.1.batch_size=")[1].split()[0])
    assert 1 <= fits < 8


def test_a_pixel_config_is_refused_in_one_line_by_the_cli(tmp_path, data_dir):
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    out = tmp_path / "run"
    line = synth.refused_in_one_line(
        ["train", "--config", os.path.join(root, "configs", "imagebert_tiny.yaml"), "--stage", "1",
         "--set", f"out_dir={out}", "--set", f"stages.1.shards={data_dir}/shards",
         "--set", "model.visual=pixels", "--set", "model.pixel_backbone=tiny",
         "--set", "model.pixel_sample=16", "--set", "pretrain.moc_weight=0",
         "--set", "pretrain.mrfr_weight=0",
         "--set", "stages.1.batch_size=100000"], root)
    assert "stages.1.batch_size=100000" in line and "CNN activations" in line
    assert not os.path.exists(out / "stage1")
