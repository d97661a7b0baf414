"""A map stage that can also take a batch of records: one model call for many images.

The executor today feeds a map stage one record at a time (``process``), which is what a
batch of one gives.  ``events_batch`` yields the same per-record events for a list of records,
so a driver that buffers records (or a benchmark) runs the models batched; on one core with
one thread the gain is small, on a GPU or many threads it is large.
"""
from __future__ import annotations

from typing import Iterator

from filters.backbone import pixels_of, view_of
from pipeline.stage import Drop, Keep, MapStage


class BatchMapStage(MapStage):
    """Subclasses implement ``process_batch(items) -> list[list | Drop]`` (one per item)."""

    batch_size: int = 16

    def process(self, record):
        return self.process_batch([record])[0]

    def process_batch(self, records: list) -> list:
        raise NotImplementedError

    def events_batch(self, records: list) -> Iterator[Keep | Drop]:
        try:
            results = self.process_batch(records)
        except Exception:
            # A batch that fails as a whole is redone record by record, so one bad record
            # costs only itself and is counted under its own reason.
            for rec in records:
                yield from self.events(rec)
            return
        for res in results:
            yield res if isinstance(res, (Keep, Drop)) else Keep(tuple(res))

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
