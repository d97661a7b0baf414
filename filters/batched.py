"""The base of the model-based image filters: batches of images that share one 224-px view.

Batching itself is the stage contract's (:class:`pipeline.core.stage.BatchMapStage`: the executor
buffers ``batch_size`` records per worker); this adds what every image model needs first.
"""
from __future__ import annotations

from filters.backbone import pixels_of, view_of
from pipeline.core.stage import BatchMapStage


class ImageBatchStage(BatchMapStage):
    """A batch stage on :class:`pipeline.core.records.ImageItem` records."""

    def split_viewable(self, items: list) -> tuple[list[int], list]:
        """Indices of the items whose pixels give a 224-px view, and a result list that holds
        a ``<name>_undecodable`` drop for every other one (an item that reached this stage
        without pixels and whose bytes do not decode)."""
        ok, results = [], [None] * len(items)
        for i, it in enumerate(items):
            try:
                pixels_of(it)
                view_of(it)
                ok.append(i)
            except Exception:
                results[i] = self.drop("undecodable")
        return ok, results
