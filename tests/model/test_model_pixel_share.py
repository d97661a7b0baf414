"""Pixel-BERT's CNN runs once per distinct image of a step (docs/trainer.md "Pixel-BERT: the CNN
once per image"): the losses, gradients and scores equal the per-row reference (each row's own
copy through the CNN, ITC's again: ``model.share_cnn = False``, the computation before)."""

import hashlib
import os

import pytest
import torch

from model_synth import tiny_raw
from model.config import from_dict
from model.data import PretrainCollator, read_samples, tokenizer_for
from model.pretrain import ImageBERT
from model.retrieval import RetrievalCollator
from model.train import train

BACKBONES = {"tiny": dict(pixel_backbone="tiny", image_size=128, pixel_pool=1, pixel_sample=8),
             # random init (no download); pool 1 at 128 px: 16 cells, 8 sampled
             "efficientnet": dict(pixel_backbone="efficientnet_lite0", image_size=128,
                                  pixel_pool=1, pixel_sample=8)}


def _cfg(tmp, shards, backbone="tiny", **model):
    raw = tiny_raw(str(tmp), shards)
    # dropout on: its random draws sit between the sampling's, so their order is checked too
    raw["model"].update(visual="pixels", dropout=0.1, **BACKBONES[backbone], **model)
    raw["pretrain"] = {"moc_weight": 0.0, "mrfr_weight": 0.0, "itc_weight": 1.0}
    return from_dict(raw)


def _batch(cfg, shards, n=4, collator=PretrainCollator):
    tok = tokenizer_for(cfg)
    samples = read_samples(shards, cfg, tok, limit=n)
    return collator(cfg, tok, seed=3)(samples)


def _step(model, batch, seed=11):
    """Losses and every parameter's gradient of one forward + backward from ``seed``."""
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    out = model(batch)
    out["loss"].backward()
    grads = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
    return {k: v.detach().clone() for k, v in out.items()}, grads


def _images_seen(model, fn):
    """The batch sizes the CNN's first layer sees while ``fn`` runs."""
    cnn = model.pixels.cnn
    first = cnn._conv_stem if hasattr(cnn, "_conv_stem") else cnn.net[0]
    seen = []
    h = first.register_forward_pre_hook(lambda mod, args: seen.append(args[0].shape[0]))
    try:
        fn()
    finally:
        h.remove()
    return seen


def _assert_same(new, ref):
    (lo, go), (lr, gr) = new, ref
    assert set(lo) == set(lr) and {"itm", "itc", "mlm"} <= set(lo)
    for k in lr:  # bit-identical where conv does not depend on its batch size; this bound everywhere
        torch.testing.assert_close(lo[k], lr[k], rtol=1e-5, atol=1e-7, msg=k)
    assert set(go) == set(gr)
    cnn = [k for k in gr if k.startswith("pixels.")]
    assert cnn, "the CNN got no gradient"
    for k in gr:
        # The CNN's map gradient sums its 4 uses before the conv backward: another float order.
        tol = 1e-4 * gr[k].abs() + 1e-5 * gr[k].abs().max()
        assert ((go[k] - gr[k]).abs() <= tol).all(), (k, float((go[k] - gr[k]).abs().max()))


@pytest.mark.parametrize("backbone", ["tiny", "efficientnet"])
def test_shared_cnn_matches_per_row_reference(data_dir, tmp_path, backbone):
    shards = data_dir + "/shards"
    cfg = _cfg(tmp_path, shards, backbone)
    torch.manual_seed(0)
    model = ImageBERT(cfg).train()
    batch = _batch(cfg, shards)
    B = len(batch["itc_group"])
    assert batch["images"].shape[0] == B and len(batch["image_rows"]) == 3 * B

    seen = _images_seen(model, lambda: _step(model, batch))
    new = _step(model, batch)
    model.share_cnn = False
    seen_ref = _images_seen(model, lambda: _step(model, batch))
    ref = _step(model, batch)
    assert seen == [B] and seen_ref == [3 * B, B]   # the CNN once an image, was 4 times
    _assert_same(new, ref)

    # A caller that still sends an image per row (no image_rows) gets the same step too.
    model.share_cnn = True
    per_row = {k: v for k, v in batch.items() if k != "image_rows"}
    per_row["images"] = batch["images"].index_select(0, batch["image_rows"])
    _assert_same(_step(model, per_row), ref)


def test_scoring_and_finetune_batches_match(data_dir, tmp_path):
    """Retrieval's batches (B x (1 + negatives) rows of B images) score alike in eval mode."""
    shards = data_dir + "/shards"
    cfg = _cfg(tmp_path, shards)
    torch.manual_seed(0)
    model = ImageBERT(cfg).eval()
    batch = _batch(cfg, shards, n=4, collator=RetrievalCollator)
    assert batch["images"].shape[0] == 4 and len(batch["image_rows"]) == 4 * (1 + cfg.retrieval.negatives)
    with torch.no_grad():
        s = model.score(batch)
        model.share_cnn = False
        s_ref = model.score(batch)
    torch.testing.assert_close(s, s_ref, rtol=1e-5, atol=1e-6)


def test_collator_sends_each_image_once(data_dir, tmp_path):
    shards = data_dir + "/shards"
    cfg = _cfg(tmp_path, shards)
    tok = tokenizer_for(cfg)
    samples = read_samples(shards, cfg, tok, limit=6)
    b = PretrainCollator(cfg, tok, seed=1)(samples)
    rows = b["image_rows"].tolist()
    assert rows[:6] == list(range(6)) and rows[6:12] == list(range(6))  # positives, other captions
    assert all(r != i for i, r in enumerate(rows[12:]))                   # another sample's image
    for r, i in enumerate(rows):  # each row's image is its sample's, as the per-row stack was
        want = torch.from_numpy(samples[i]["image"]).float().div_(255.0)
        assert torch.equal(b["images"][b["image_rows"][r]], want)


def test_same_seed_same_checkpoint_bytes(data_dir, tmp_path):
    def run(sub):
        os.makedirs(tmp_path / sub)
        raw = tiny_raw(str(tmp_path / sub), data_dir + "/shards")
        raw["model"].update(visual="pixels", dropout=0.1, **BACKBONES["tiny"])
        raw["pretrain"] = {"moc_weight": 0.0, "mrfr_weight": 0.0, "itc_weight": 1.0}
        raw["stages"][1].update(steps=3, batch_size=4, log_every=1)
        train(from_dict(raw), 1, progress=False)
        with open(os.path.join(raw["out_dir"], "stage1", "final", "model.safetensors"), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    assert run("a") == run("b")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_shared_cnn_matches_reference_on_cuda(data_dir, tmp_path):
    shards = data_dir + "/shards"
    cfg = _cfg(tmp_path, shards, "efficientnet")
    torch.manual_seed(0)
    model = ImageBERT(cfg).cuda().train()
    batch = {k: v.cuda() for k, v in _batch(cfg, shards).items()}
    new = _step(model, batch)
    model.share_cnn = False
    ref = _step(model, batch)
    (lo, go), (lr, gr) = new, ref
    for k in lr:  # cuDNN may pick other kernels per batch size; the gather's backward is atomic
        torch.testing.assert_close(lo[k], lr[k], rtol=1e-4, atol=1e-5, msg=k)
    for k in gr:
        tol = 1e-3 * gr[k].abs() + 1e-4 * gr[k].abs().max()
        assert ((go[k] - gr[k]).abs() <= tol).all(), k
