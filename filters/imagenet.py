"""The ImageNet-1k class names, shared by the labeler (``filters/labels.py``) and the
EfficientNet-lite0 graph (``filters/efficientnet.py``, which the trainer in ``model/`` uses).

Kept apart from the graph so that reading the names never imports torch."""
from __future__ import annotations

import os
from functools import lru_cache

NUM_CLASSES = 1000


@lru_cache(maxsize=1)
def imagenet_classes() -> list[str]:
    """The 1000 ImageNet-1k class names, index-aligned with the classifier output
    (imagenet_classes.txt: the readable names of the MIT-licensed `imagenet-classes` package)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "imagenet_classes.txt")
    with open(path, encoding="utf-8") as f:
        names = [line.rstrip("\n") for line in f]
    if len(names) != NUM_CLASSES:
        raise ValueError(f"{path}: expected {NUM_CLASSES} names, got {len(names)}")
    return names
