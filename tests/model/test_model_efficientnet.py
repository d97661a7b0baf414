import os

import pytest
import torch
from PIL import Image

from filters.efficientnet import LITE_RESOLUTION, EfficientNetLite0, default_weights_path, imagenet_classes

SKLEARN_IMAGES = None
try:
    import sklearn
    SKLEARN_IMAGES = os.path.join(os.path.dirname(sklearn.__file__), "datasets", "images")
except ImportError:
    pass


@pytest.fixture(scope="module")
def net():
    return EfficientNetLite0.from_pretrained().eval()


def test_class_names():
    names = imagenet_classes()
    assert len(names) == 1000 and names[0] == "tench" and names[207] == "Golden Retriever"


def test_shapes_and_cell_classifier(net):
    x = torch.rand(2, 3, 320, 320)
    with torch.no_grad():
        fmap = net.forward_features(net.normalize(x))
        assert fmap.shape == (2, 1280, 10, 10)
        assert net.embed(net.normalize(x)).shape == (2, 1280)
        # The head is linear after pooling: the mean of the cells' logits is the image's logits.
        cells = net.classify_cells(fmap)
        assert cells.shape == (2, 100, 1000)
        torch.testing.assert_close(cells.mean(1), net.classify(fmap), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("variant,params", [("lite0", 4_652_008), ("lite1", 5_416_680), ("lite2", 6_092_072)])
def test_lite_variants_have_the_published_sizes(variant, params):
    """lite1 / lite2 (issue 15's fifteenth round compared them): the state-dict layout of their
    PyPI packages, built without weights; the sizes are the TF release's (4.7 M, 5.4 M, 6.1 M)."""
    m = EfficientNetLite0(variant=variant).eval()
    assert sum(p.numel() for p in m.parameters()) == params
    size = LITE_RESOLUTION[variant]
    with torch.no_grad():
        assert m.embed(m.normalize(torch.rand(1, 3, size, size))).shape == (1, 1280)


def test_unknown_variant_fails_at_once():
    with pytest.raises(ValueError, match="lite3"):
        EfficientNetLite0(variant="lite3")
    with pytest.raises(ValueError, match="lite3"):
        default_weights_path("lite3")


@pytest.mark.skipif(SKLEARN_IMAGES is None or not os.path.exists(os.path.join(SKLEARN_IMAGES or "", "china.jpg")),
                    reason="scikit-learn sample photos not installed")
def test_real_photos_get_sensible_labels(net):
    china = net.predict([Image.open(os.path.join(SKLEARN_IMAGES, "china.jpg"))], topk=5)[0]
    assert china[0][0] in {"palace", "bell tower", "pagoda", "stupa", "church", "castle", "monastery"}, china
    assert china[0][1] > 0.2
    flower = net.predict([Image.open(os.path.join(SKLEARN_IMAGES, "flower.jpg"))], topk=5)[0]
    assert "daisy" in [n for n, _ in flower], flower
