"""tools/compare_backbones.py (issue 15's fifteenth round): the view geometry at other input sizes,
and compare()'s select arithmetic on a small made-up feature file."""
import json

import numpy as np

from filters.backbone import square_view
from filters.image_stats import DIM as STATS_DIM
from tools.compare_backbones import compare, native_view


def test_native_view_is_the_shared_view_at_224_and_its_geometry_at_260():
    px = np.random.default_rng(0).integers(0, 256, (300, 420, 3), dtype=np.uint8)
    assert np.array_equal(native_view(px, 224), square_view(px))
    v = native_view(px, 260)
    assert v.shape == (260, 260, 3) and v.dtype == np.uint8 and v.flags.c_contiguous


def test_compare_chooses_c_and_threshold_on_val_and_counts_the_precheck(tmp_path):
    rng = np.random.default_rng(1)

    def part(n, shift):
        y = (np.arange(n) % 2).astype(int)
        emb = rng.normal(size=(n, 8)).astype(np.float32) + shift * y[:, None]
        return y, emb, rng.normal(size=(n, STATS_DIM)).astype(np.float32)

    y, emb, stats = part(200, 2.0)
    vy, vemb, vstats = part(60, 2.0)
    flat = np.zeros(60, bool)
    flat[1] = True  # a photo the pre-check drops counts as a photo lost
    np.savez(tmp_path / "features.npz", y=y, src=np.array([f"s{i % 4}" for i in range(200)]),
             paths=np.array([f"p{i}" for i in range(200)]), stats=stats, emb_lite0=emb,
             v_y=vy, v_src=np.array(["a"] * 60), v_paths=np.array([f"v{i}.jpg" for i in range(60)]),
             v_part=np.array(["val"] * 40 + ["val8"] * 20), v_stats=vstats, v_flat=flat, v_emb_lite0=vemb)
    (row,) = compare(str(tmp_path))
    assert row["backbone"] == "lite0" and 0.30 <= row["threshold"] <= 0.70
    bal, photos, others = row["widened"]
    assert row["of"] == [30, 30] and photos <= 29 and bal > 0.8
    assert ("a", "v1.jpg") in {(s, p) for s, p, _ in row["errors"]}
    json.dumps(row)  # the report is plain JSON
