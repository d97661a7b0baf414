"""Options from Pixel-BERT and VL-BERT, the global image token, and BERT initialisation."""

import numpy as np
import pytest
import torch

from model_synth import tiny_raw
from model.config import from_dict
from model.data import tokenizer_for
from model.stream import make_loader
from model.pretrain import ImageBERT
from model.train import build_optimizers, train


def test_pixel_bert_mode(data_dir, tmp_path):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["model"].update(visual="pixels", pixel_backbone="tiny", image_size=128, pixel_pool=1, pixel_sample=8)
    raw["pretrain"] = {"moc_weight": 0.0, "mrfr_weight": 0.0}
    raw["stages"][1].update(steps=3, batch_size=4, log_every=1)
    cfg = from_dict(raw)
    model = ImageBERT(cfg)
    opts = build_optimizers(model, cfg.stage(1))
    assert [type(o).__name__ for o, _ in opts] == ["AdamW", "SGD"]  # the CNN has its own optimiser
    assert opts[1][1] == cfg.stage(1).cnn_lr
    batch = next(iter(make_loader(cfg, data_dir + "/shards", 2, tokenizer_for(cfg))))
    # Each of the 2 images once; the 6 rows (positives + both ITM negatives) index them.
    assert batch["images"].shape == (2, 3, 128, 128)
    assert batch["image_rows"].tolist()[:2] == [0, 1] and len(batch["image_rows"]) == 6
    feats, _ = model.pixels(batch["images"], batch["image_rows"])
    assert feats.shape[:2] == (6, 8)    # random sampling in pre-training, per row
    model.eval()
    feats, boxes = model.pixels(batch["images"], batch["image_rows"])
    assert feats.shape[1] == 16 and boxes.shape == (6, 16, 5)  # every feature pixel at eval
    rec = train(cfg, 1, progress=False)
    assert np.isfinite(rec["loss"]) and "moc" not in rec


def test_text_only_batches_mixed_in(data_dir, tmp_path):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["pretrain"] = {"text_only_ratio": 0.5, "itm": False}
    cfg = from_dict(raw)
    it = iter(make_loader(cfg, data_dir + "/shards", 4, tokenizer_for(cfg), seed=3))
    kinds = ["feats" in next(it) for _ in range(40)]
    assert 8 <= kinds.count(False) <= 32
    model = ImageBERT(cfg)
    b = next(b for b in it if "feats" not in b)
    out = model(b)
    assert set(out) == {"mlm", "mlm_acc", "loss"}
    raw["stages"][1].update(steps=4, batch_size=4, log_every=2)
    rec = train(from_dict(raw), 1, progress=False)
    assert np.isfinite(rec["loss"]) and "itm" not in rec


def test_global_image_token(data_dir, tmp_path):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["model"]["global_image_token"] = True
    cfg = from_dict(raw)
    model = ImageBERT(cfg)
    b = next(iter(make_loader(cfg, data_dir + "/shards", 2, tokenizer_for(cfg))))
    h, vs = model.encode(b)
    assert h.shape[1] == b["input_ids"].shape[1] + 1 + b["feats"].shape[1]
    out = model(b)
    assert all(torch.isfinite(out[k]) for k in ("mlm", "moc", "mrfr", "itm"))


def test_minilm_init_matches_transformers(tmp_path):
    """Our encoder, loaded from the MiniLM package, gives Hugging Face BertModel's outputs."""
    from model.encoder import minilm_dir
    transformers = pytest.importorskip("transformers")
    cfg = from_dict({"model": dict(hidden=384, layers=6, heads=12, intermediate=1536, dropout=0.0,
                                   init_from="minilm")})
    model = ImageBERT(cfg).eval()
    missing = model.init_pretrained()
    assert any(k.startswith("visual.") for k in missing) and not any(k.startswith("encoder.") for k in missing)
    tok = tokenizer_for(cfg)
    ids = torch.tensor([tok.encode("a red circle on a grey background", 32)])
    ref = transformers.BertModel.from_pretrained(minilm_dir(), local_files_only=True).eval()
    with torch.no_grad():
        ours, _ = model.encode({"input_ids": ids, "text_mask": torch.ones_like(ids, dtype=torch.bool)})
        theirs = ref(input_ids=ids, token_type_ids=torch.zeros_like(ids)).last_hidden_state
    torch.testing.assert_close(ours, theirs, atol=2e-4, rtol=1e-4)


def test_init_size_mismatch_fails_fast():
    from model.config import ConfigError
    cfg = from_dict({"model": dict(hidden=64, layers=2, heads=2, intermediate=128, init_from="minilm")})
    with pytest.raises(ConfigError, match="model.hidden=64 but checkpoint has 384"):
        ImageBERT(cfg).init_pretrained()


@pytest.mark.parametrize("global_token", [False, True])
def test_bf16_autocast_forward_backward(data_dir, tmp_path, global_token):
    """The GPU path's mixed precision, exercised with CPU autocast."""
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["model"]["global_image_token"] = global_token
    cfg = from_dict(raw)
    model = ImageBERT(cfg)
    b = next(iter(make_loader(cfg, data_dir + "/shards", 4, tokenizer_for(cfg))))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(b)
        score = model.score(b)
    out["loss"].backward()
    assert all(torch.isfinite(out[k]) and out[k].dtype == torch.float32 for k in ("mlm", "moc", "mrfr", "itm"))
    assert score.shape == (b["input_ids"].shape[0],)
    assert all(p.grad is None or torch.isfinite(p.grad).all() for p in model.parameters())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_train_steps_on_gpu(data_dir, tmp_path):
    raw = tiny_raw(str(tmp_path), data_dir + "/shards")
    raw["precision"] = "bf16"
    raw["stages"][1].update(steps=3, batch_size=4, log_every=1)
    rec = train(from_dict(raw), 1, progress=False)
    assert np.isfinite(rec["loss"])
