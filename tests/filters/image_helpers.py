"""Helpers shared by the image-filter tests: real photos and graphics as decoded items."""
from __future__ import annotations

import io
import os

import pytest
from PIL import Image

from filters.image_decode import ImageDecode
from pipeline.core.records import ImageItem

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ASSETS = os.path.join(REPO, "tools", "sampleweb_assets")


def asset(*parts: str) -> str:
    """A committed real image (tools/sampleweb_assets: photos from scikit-image, scikit-learn,
    matplotlib and mate-backgrounds; openclipart clip art; see its SOURCES.md)."""
    path = os.path.join(ASSETS, *parts)
    assert os.path.isfile(path), path
    return path


def decoded_item(path_or_image, url: str = "") -> ImageItem:
    """An ImageItem as the decode stage leaves it (stored JPEG + pixels)."""
    if isinstance(path_or_image, Image.Image):
        buf = io.BytesIO()
        path_or_image.save(buf, format="PNG")
        data, url = buf.getvalue(), url or "http://x/rendered.png"
    else:
        with open(path_or_image, "rb") as f:
            data = f.read()
        url = url or "http://x/" + os.path.basename(path_or_image)
    item = ImageItem(image_url=url, data=data, candidates=[])
    (out,) = ImageDecode().process(item)
    return out


@pytest.fixture(scope="session")
def image_models():
    """The generated ONNX files (built once from the installed packages if missing)."""
    from tools.build_image_models import ensure_built

    ensure_built()
