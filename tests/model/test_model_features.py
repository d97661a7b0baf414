"""`lait features`: grid regions from EfficientNet-lite0, and a user's ONNX detector."""
import io
import os
import tarfile

import numpy as np
import pytest
from PIL import Image

import model_synth as synth
from model.features import GridExtractor, OnnxDetector, run_features


@pytest.fixture(scope="module")
def raw_dir(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("raw"))
    synth.write_shards(d, 12, per_shard=6, seed=1, with_regions=False, bad=1)
    with open(os.path.join(d, "shards", "00000.parquet"), "wb") as f:
        f.write(b"PAR1 placeholder")  # copied as is
    return d


def _members(path):
    with tarfile.open(path) as tf:
        return [(m.name, tf.extractfile(m).read()) for m in tf if m.isfile()]


def test_grid_features(raw_dir, tmp_path):
    ex = GridExtractor(grid=4, device="cpu")
    out = str(tmp_path / "feat")
    stats = run_features(raw_dir, out, ex, batch_size=4, progress=False)
    assert stats == {**stats, "shards": 2, "samples": 13, "with_regions": 12, "bad_image": 1}
    assert os.path.exists(os.path.join(out, "parquet", "00000.parquet"))
    assert not [f for f in os.listdir(os.path.join(out, "shards")) if f.endswith(".tmp")]
    src = _members(os.path.join(raw_dir, "shards", "00000.tar"))
    dst = _members(os.path.join(out, "shards", "00000.tar"))
    # Every original member is kept, byte for byte and in order (an old regions.npz is replaced).
    assert [m for m in dst if not m[0].endswith(".regions.npz")] == [m for m in src if not m[0].endswith(".regions.npz")]
    npz = [d for n, d in dst if n.endswith(".regions.npz")]
    assert len(npz) == 6
    z = np.load(io.BytesIO(npz[0]))
    assert z["features"].shape == (16, 1280) and z["features"].dtype == np.float16
    b = z["boxes"]
    assert b.shape == (16, 5) and b.min() >= 0 and b[:, 2:4].max() <= 1
    np.testing.assert_allclose(b[:, 4], (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]), rtol=1e-6)
    assert z["labels"].dtype == np.int64 and 0 <= z["labels"].min() and z["labels"].max() < 1000
    assert ((z["scores"] > 0) & (z["scores"] <= 1)).all()
    # A rerun skips finished shards; --regions keeps the most confident cells.
    assert run_features(raw_dir, out, ex, progress=False)["skipped_done"] == 2
    top = GridExtractor(grid=4, regions=5, device="cpu")([synth.draw("red", "circle", np.random.default_rng(0))])[0]
    assert top["features"].shape == (5, 1280) and len(top["boxes"]) == 5


def test_features_feed_the_trainer(raw_dir, tmp_path):
    """Shards from `lait features` load in the trainer's data pipeline."""
    from model_synth import tiny_raw
    from model.config import from_dict
    from model.data import read_samples, tokenizer_for
    out = str(tmp_path / "feat")
    run_features(raw_dir, out, GridExtractor(grid=3, device="cpu"), progress=False)
    raw = tiny_raw(str(tmp_path), out + "/shards")
    raw["model"].update(region_dim=1280, num_object_classes=1000)
    cfg = from_dict(raw)
    s = read_samples(out + "/shards", cfg, tokenizer_for(cfg))
    assert len(s) == 12 and s[0]["feats"].shape == (8, 1280)  # 9 cells, top 8 kept (max_regions)


def _toy_detector(path: str, n: int = 30, dim: int = 8):
    """An ONNX 'detector' made with onnx.helper: fixed boxes/labels/scores, features that
    depend on the image (mean colour), so the test sees real data flowing through."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 300, (n, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(20, 200, (n, 2))], 1).astype(np.float32)
    scores = np.linspace(0.95, 0.05, n).astype(np.float32)
    labels = np.arange(n, dtype=np.int64) % 1600
    proj = rng.normal(size=(3, dim)).astype(np.float32)
    ones = np.ones((n, 1), np.float32)
    inits = [numpy_helper.from_array(a, name) for a, name in
             ((boxes, "B"), (scores, "S"), (labels, "L"), (proj, "P"), (ones, "O"))]
    nodes = [
        helper.make_node("Identity", ["B"], ["boxes"]),
        helper.make_node("Identity", ["S"], ["scores"]),
        helper.make_node("Identity", ["L"], ["labels"]),
        helper.make_node("ReduceMean", ["image"], ["m"], axes=[2, 3], keepdims=0),  # [1,3]
        helper.make_node("MatMul", ["m", "P"], ["f1"]),                             # [1,dim]
        helper.make_node("MatMul", ["O", "f1"], ["features"]),                      # [n,dim]
    ]
    g = helper.make_graph(nodes, "toy", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, None, None])],
                          [helper.make_tensor_value_info(k, t, None) for k, t in
                           (("boxes", TensorProto.FLOAT), ("labels", TensorProto.INT64),
                            ("scores", TensorProto.FLOAT), ("features", TensorProto.FLOAT))], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8  # readable by any recent onnxruntime
    onnx.save(m, path)


def test_onnx_detector(tmp_path, raw_dir):
    p = str(tmp_path / "det.onnx")
    _toy_detector(p)
    det = OnnxDetector(p, size=600, min_score=0.5, min_regions=10, max_regions=12)
    red = synth.draw("red", "circle", np.random.default_rng(0))
    blue = synth.draw("blue", "circle", np.random.default_rng(0))
    r_red, r_blue = det([red, blue])
    assert r_red["features"].shape == (12, 8)           # 14 score >= 0.5, capped at 12
    assert (np.diff(r_red["scores"]) <= 0).all() and r_red["scores"].min() >= 0.5
    assert r_red["boxes"].shape == (12, 5) and r_red["boxes"][:, :4].max() <= 1
    assert not np.allclose(r_red["features"], r_blue["features"])
    few = OnnxDetector(p, min_score=0.99, min_regions=10, max_regions=100)([red])[0]
    assert len(few["labels"]) == 10                       # at least min_regions (VL-BERT: 10)
    stats = run_features(raw_dir, str(tmp_path / "out"), det, progress=False, dtype=np.float32)
    assert stats["with_regions"] == 12


def _format_shard(d: str) -> dict:
    """A shard as other tools write it: one sample each as .png, .webp, .JPEG and .jpg (the
    pipeline's own), and one with no image member. Returns key -> the image's pixels."""
    os.makedirs(os.path.join(d, "shards"))
    rng = np.random.default_rng(3)
    pixels = {}
    with tarfile.open(os.path.join(d, "shards", "00000.tar"), "w") as tf:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for i, (ext, fmt, opts) in enumerate([("png", "PNG", {}), ("webp", "WEBP", {"lossless": True}),
                                              ("JPEG", "JPEG", {"quality": 95}), ("jpg", "JPEG", {"quality": 95})]):
            im = synth.draw(*synth.combo(i), rng)
            buf = io.BytesIO()
            im.save(buf, fmt, **opts)
            key = f"k{i}"
            pixels[key] = np.asarray(im.convert("RGB").resize((128, 128), Image.BILINEAR))
            add(f"{key}.{ext}", buf.getvalue())
            add(f"{key}.txt", " ".join(synth.combo(i)).encode())
        add("k9.txt", b"red circle")
        add("k9.json", b"{}")
    return pixels


def test_png_webp_jpeg_samples_decode_and_get_regions(tmp_path):
    """The trainer (pixels mode) and `lait features` read whichever image member a sample has,
    not only the pipeline's .jpg; a sample without one is a counted bad sample whose error
    names the members it has."""
    from model.config import from_dict
    from model.data import decode_sample, image_bytes, read_samples, tokenizer_for
    from model_synth import tiny_raw
    raw_dir = str(tmp_path / "raw")
    pixels = _format_shard(raw_dir)
    raw = tiny_raw(str(tmp_path), raw_dir + "/shards")
    raw["model"].update(visual="pixels", pixel_backbone="tiny", image_size=128, pixel_pool=1, pixel_sample=8)
    raw["pretrain"] = {"moc_weight": 0.0, "mrfr_weight": 0.0}
    cfg = from_dict(raw)
    got = {s["key"]: s["image"] for s in read_samples(raw_dir + "/shards", cfg, tokenizer_for(cfg))}
    assert sorted(got) == ["k0", "k1", "k2", "k3"]                   # k9 has no image: skipped
    for key in ("k0", "k1"):                                           # png, lossless webp: exact
        assert np.array_equal(got[key].transpose(1, 2, 0), pixels[key])
    for key in ("k2", "k3"):                                           # jpeg: close
        assert np.abs(got[key].transpose(1, 2, 0).astype(int) - pixels[key]).mean() < 8
    with pytest.raises(ValueError, match=r"no image member .*\.json, \.txt"):
        decode_sample({"__key__": "k9", "txt": b"red circle", "json": b"{}"}, cfg, tokenizer_for(cfg))
    assert image_bytes({"__key__": "x", "PNG": b"a", "jpg": b"b"}) == b"b"   # .jpg first, any case
    # lait features: regions for every image format, the imageless sample counted and copied.
    out = str(tmp_path / "feat")
    stats = run_features(raw_dir, out, GridExtractor(grid=2, device="cpu"), progress=False)
    assert stats == {**stats, "samples": 5, "with_regions": 4, "bad_image": 1}
    names = [n for n, _ in _members(os.path.join(out, "shards", "00000.tar"))]
    assert [n for n in names if n.endswith(".regions.npz")] == [f"k{i}.regions.npz" for i in range(4)]
    assert "k9.txt" in names and "k9.regions.npz" not in names
