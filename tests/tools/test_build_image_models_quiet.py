"""`make setup` exports the backbone with torch's TorchScript ONNX exporter on purpose (no
onnxscript, a stable plain-op graph): its deprecation notices are not shown (issue 18.6)."""
import warnings

import onnx

from tools.build_image_models import export_backbone


def test_backbone_export_shows_no_deprecation_warning(tmp_path):
    dst = str(tmp_path / "backbone.onnx")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        export_backbone(dst)
    assert not [w for w in caught if issubclass(w.category, DeprecationWarning)], \
        [str(w.message)[:120] for w in caught]
    assert [o.name for o in onnx.load(dst).graph.output] == ["embedding", "logits"]
