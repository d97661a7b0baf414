"""The image filters compute the same on every x86-64 CPU (issue 15).

Three properties, each checked on whatever machine runs the tests:

- no int8 model can saturate onnxruntime's AVX2 U8S8 kernels: a bound read from the graph's
  quantised weights, so it fails on a VNNI machine too, where nothing saturates;
- the optimised sessions (fused QLinear kernels, this CPU's MLAS code path) agree with the
  same QDQ graphs run unfused (ORT_DISABLE_ALL: every Conv / Gemm in float between its
  DequantizeLinear and QuantizeLinear), the reference that no vector unit changes;
- the pixel path (JPEG decode and encode, the decode stage's resize, the 224-px view) gives
  the same bytes with its SIMD code switched off (libjpeg-turbo's ``JSIMD_FORCENONE``, torch's
  ``ATEN_CPU_CAPABILITY=default``) as with this CPU's best;
- the int8 models give the same bytes on an AVX2 CPU without VNNI, emulated with QEMU
  (``qemu-x86_64 -cpu Haswell``, Debian ``qemu-user``), as on the CPU running the tests, while
  a model quantised the old way (8-bit U8S8 weights) departs there: the emulation runs MLAS's
  saturating AVX2 kernels, whatever the host has.
"""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from filters.backbone import BACKBONE_FILES, NSFW_INT8_FILE, model_path, square_view
from tests.filters.image_helpers import ASSETS, REPO, decoded_item, image_models  # noqa: F401

INT8_MODELS = [BACKBONE_FILES["int8"], NSFW_INT8_FILE]
INT16_MAX = 32767


def _int8_products(path: str):
    """(node, activation dtype, weight array, depthwise) for every Conv / Gemm / MatMul of a
    QDQ graph whose inputs both come from DequantizeLinear."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}
    out, unquantised = [], []
    for node in model.graph.node:
        if node.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        act, wgt = (producer.get(node.input[k]) for k in (0, 1))
        if not (act and wgt and act.op_type == wgt.op_type == "DequantizeLinear"
                and wgt.input[0] in inits):
            unquantised.append(node.name)
            continue
        act_zero_point = inits[act.input[2]] if len(act.input) > 2 else np.uint8(0)
        w = inits[wgt.input[0]]
        group = next((a.i for a in node.attribute if a.name == "group"), 1)
        depthwise = node.op_type == "Conv" and group > 1 and w.shape[1] == 1 and group == w.shape[0]
        out.append((node.name, act_zero_point.dtype, w, depthwise))
    return out, unquantised


@pytest.mark.parametrize("name", INT8_MODELS)
def test_no_int8_pair_sum_can_saturate_int16(image_models, name):
    """On AVX2 without VNNI, MLAS's U8S8 kernels add two adjacent uint8 x int8 products into a
    saturating int16 (vpmaddubsw).  With every weight of such a product within +-64, a pair
    sum is at most 2 x 255 x 64 = 32,640.  Depthwise convolutions (operands widened before one
    product each) and uint8 weights (U8U8: operands widened to int16, vpmaddwd into int32) have
    no byte-pair sum to bound."""
    products, unquantised = _int8_products(model_path(name))
    assert not unquantised, f"{name}: float Conv/Gemm left in the int8 graph: {unquantised}"
    assert len(products) >= 20
    risky = []
    for node, act_type, w, depthwise in products:
        assert act_type == np.uint8, f"{name}/{node}: activations {act_type}, only uint8 analysed"
        if w.dtype == np.uint8 or depthwise:
            continue
        assert w.dtype == np.int8, (node, w.dtype)
        worst = 2 * 255 * int(np.abs(w.astype(np.int32)).max())
        if worst > INT16_MAX:
            risky.append((node, worst))
    assert not risky, f"{name}: pair sums that saturate int16 on AVX2 (vpmaddubsw): {risky[:5]}"


def _session(path: str, optimised: bool):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimised
                                     else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module")
def real_views():
    """224-px views of the committed real photos and clip art (tools/sampleweb_assets)."""
    paths = sorted(glob.glob(f"{ASSETS}/photos/*.jpg"))
    paths += sorted(glob.glob(f"{ASSETS}/clipart/*.png"))
    assert len(paths) >= 50
    return [square_view(decoded_item(p).pixels) for p in paths]


def test_nsfw_int8_session_matches_its_qdq_reference(image_models, real_views):
    from filters.nsfw import int8_graph_with_pool, nsfw_prepare

    graph = int8_graph_with_pool()  # as the filter runs it: the pooled features an output too
    x = nsfw_prepare(real_views, jpeg_reencode=False)
    (fused, fpool), (ref, rpool) = (_session(graph, o).run(None, {"input:0": x}) for o in (True, False))
    fused, ref = fused[:, 1], ref[:, 1]
    diff = np.abs(fused - ref)
    cos = _cosines(fpool, rpool)
    print(f"\nNSFW int8 fused vs unfused QDQ: max |diff| {diff.max():.4f}, mean {diff.mean():.4f}; "
          f"pooled features cosine min {cos.min():.5f}")
    # Integer vs float accumulation rounds a few activations one step apart; the output is a
    # uint8-quantised softmax (steps of 1/255).  Saturation moves whole layers, far more.
    assert diff.max() <= 0.05 and diff.mean() <= 0.005
    assert ((fused >= 0.5) == (ref >= 0.5)).all()
    assert cos.min() >= 0.995  # the second opinion's features, the backbone's bound


def test_backbone_int8_session_matches_its_qdq_reference(image_models, real_views):
    from filters.backbone import Backbone

    path = model_path(BACKBONE_FILES["int8"])
    x = Backbone.prepare(real_views)
    (ef, lf), (er, lr) = (_session(path, o).run(None, {"image": x}) for o in (True, False))
    cos = (ef * er).sum(1) / np.linalg.norm(ef, axis=1) / np.linalg.norm(er, axis=1)
    print(f"\nbackbone int8 fused vs unfused QDQ: embedding cosine min {cos.min():.5f}, "
          f"top-1 agreement {(lf.argmax(1) == lr.argmax(1)).mean():.3f}")
    assert cos.min() >= 0.995
    assert (lf.argmax(1) == lr.argmax(1)).mean() >= 0.95


_PIXEL_SCRIPT = """
import glob, hashlib, io, sys
sys.path.insert(0, {repo!r})
import numpy as np
from PIL import Image
from filters.backbone import square_view
from filters.image_stats import image_stats
from filters.resample import resize
from tests.filters.image_helpers import decoded_item
h = hashlib.sha256()
for p in sorted(glob.glob({assets!r} + "/*/*.*")):
    if p.endswith((".jpg", ".png")):
        px = np.asarray(decoded_item(p).pixels)
        view = square_view(px)
        for a in (px, view, resize(px, (301, 207), "bicubic"), image_stats(view)):
            h.update(a.tobytes())
        buf = io.BytesIO()  # the stored JPEG (image_store's encode)
        Image.fromarray(px).save(buf, format="JPEG", quality=90)
        h.update(buf.getvalue())
print(h.hexdigest())
"""


def test_pixel_path_is_the_same_without_simd():
    """Decode and the stored JPEG's encode (libjpeg-turbo's SIMD DCTs, resampling and colour
    conversion), the decode stage's resize and the view (torch's uint8 antialiased kernels,
    dispatched per CPU), and the view's pixel statistics (numpy integer sums and counts) give
    the same bytes with their vector code off.  The libraries promise
    it (integer fixed-point arithmetic in every code path); this checks it on the machine that
    runs it."""
    script = _PIXEL_SCRIPT.format(repo=REPO, assets=ASSETS)

    def digest(extra_env: dict) -> str:
        env = {**os.environ, **extra_env}
        return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, check=True, cwd=REPO).stdout.strip()

    best = digest({})
    # numpy's vector dispatch off too (its baseline only): the naturalness head's pixel
    # statistics (filters/image_stats.py) must not depend on which SIMD kernels ran.
    from numpy._core import _multiarray_umath as npu  # numpy >= 2

    scalar = digest({"JSIMD_FORCENONE": "1", "ATEN_CPU_CAPABILITY": "default",
                     "NPY_DISABLE_CPU_FEATURES": " ".join(npu.__cpu_dispatch__)})
    assert len(best) == 64 and best == scalar


# Run by the emulated CPU: onnxruntime and numpy only (inputs prepared natively), so the
# emulation costs seconds, not the minutes torch's import would take under QEMU.
_ORT_SCRIPT = """
import sys
import numpy as np
import onnxruntime as ort
out, runs = sys.argv[1], sys.argv[2:]
res = {}
for i in range(0, len(runs), 2):
    model, inputs = runs[i], runs[i + 1]
    o = ort.SessionOptions()
    o.intra_op_num_threads = 1
    s = ort.InferenceSession(model, o, providers=["CPUExecutionProvider"])
    for k, a in enumerate(s.run(None, {s.get_inputs()[0].name: np.load(inputs)})):
        res[f"{i // 2}_{k}"] = a
np.savez(out, **res)
"""
# An AVX2 CPU without AVX-512 or any VNNI (QEMU's TCG emulates AVX2 since 7.2).
EMULATED_CPU = "Haswell"


def _run_models(runs: list[tuple[str, str]], out: str, emulated: bool) -> list[list[np.ndarray]]:
    """Every output of each (model, input) run, in the graph's order."""
    cmd = [sys.executable, "-c", _ORT_SCRIPT, out, *[a for run in runs for a in run]]
    if emulated:
        cmd = [shutil.which("qemu-x86_64"), "-cpu", EMULATED_CPU, *cmd]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr[-3000:]
    with np.load(out) as z:
        return [[z[f"{i}_{k}"] for k in range(len(z.files)) if f"{i}_{k}" in z.files]
                for i in range(len(runs))]


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_int8_models_give_the_same_bytes_on_an_avx2_cpu_without_vnni(image_models, real_views,
                                                                      tmp_path):
    """The property the bound above promises, run: the shipped int8 models on an emulated
    Haswell (MLAS's AVX2 U8S8 kernels, vpmaddubsw into saturating int16) give exactly the
    outputs this CPU gives (AVX2, AVX-512 or VNNI kernels).  The control is the fault the
    bound removed: the backbone quantised with 8-bit weights (the models before issue 15)
    departs from its unfused QDQ reference on the emulated CPU, so the emulation does run the
    saturating kernels (were it silently taking another path, the first check would prove
    nothing)."""
    qemu = shutil.which("qemu-x86_64")
    assert qemu, "qemu-x86_64 not found: `make setup` installs Debian's qemu-user"
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from filters.backbone import Backbone
    from filters.nsfw import int8_graph_with_pool, nsfw_prepare
    from tools.build_image_models import _Reader, calibration_views

    views = real_views[:8]  # photos: the saturation shows on rich activations
    bx, nx = tmp_path / "backbone_in.npy", tmp_path / "nsfw_in.npy"
    np.save(bx, Backbone.prepare(views))
    np.save(nx, nsfw_prepare(views, jpeg_reencode=False))
    old = str(tmp_path / "backbone_8bit_u8s8.onnx")
    pre = str(tmp_path / "pre.onnx")
    quant_pre_process(model_path(BACKBONE_FILES["float"]), pre)
    quantize_static(pre, old, _Reader("image", list(Backbone.prepare(calibration_views()[:16]))),
                    quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    reduce_range=False)
    pooled = tmp_path / "open_nsfw_int8_pooled.onnx"  # as the filter runs it (two outputs)
    pooled.write_bytes(int8_graph_with_pool())
    shipped = [(model_path(BACKBONE_FILES["int8"]), str(bx)), (str(pooled), str(nx))]
    runs = shipped + [(old, str(bx))]
    here = _run_models(runs, str(tmp_path / "here.npz"), emulated=False)
    haswell = _run_models(runs, str(tmp_path / "haswell.npz"), emulated=True)
    assert [len(h) for h in here[:2]] == [2, 2]  # embedding, logits; NSFW score, pooled
    for (model, _), outs_here, outs_haswell in zip(shipped, here, haswell):
        for a, b in zip(outs_here, outs_haswell, strict=True):
            assert a.shape == b.shape and np.array_equal(a, b), (
                f"{os.path.basename(model)}: emulated AVX2 output differs from this CPU's "
                f"(max |diff| {np.abs(a - b).max()})")
    reference = _session(old, optimised=False).run(None, {"image": np.load(bx)})[0]
    cos = _cosines(haswell[2][0], reference)
    print(f"\n8-bit U8S8 backbone on emulated {EMULATED_CPU} vs its QDQ reference: embedding "
          f"cosine min {cos.min():.3f}; shipped models: identical bytes to this CPU")
    assert cos.min() < 0.98, "the emulated CPU did not saturate: is it running AVX2 kernels?"
