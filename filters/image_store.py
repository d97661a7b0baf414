"""The ``image_store`` step: the stored JPEG of the decoded image, encoded after the model
filters so that the images they drop never pay for it."""
from __future__ import annotations

from filters.image_decode import store_jpeg
from pipeline.core.records import ImageItem
from pipeline.core.stage import MapStage


class ImageStore(MapStage):
    """Encodes the stored JPEG of the decoded image (``item.pixels``), after the model filters.

    An item the decode stage already stored (``sha256`` set) passes as it is.  One whose
    pixels are gone (they never leave a fused bundle) is dropped as ``image_store_no_pixels``
    rather than stored from bytes that are not the stored image."""

    name = "image_store"

    def __init__(self, jpeg_quality: int = 90):
        self.jpeg_quality = jpeg_quality

    def process(self, item: ImageItem):
        if not item.sha256:
            if item.pixels is None:
                return self.drop("no_pixels")
            store_jpeg(item, self.jpeg_quality)
        return [item]
