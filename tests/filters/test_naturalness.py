"""Naturalness: photos kept, graphics dropped, held-out accuracy, the CLI and the trainer."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from filters.naturalness import Naturalness, NaturalnessConfig, NaturalnessFilter
from pipeline.errors import ConfigError
from pipeline.stage import Drop
from tests.filters.image_helpers import REPO, asset, decoded_item, image_models  # noqa: F401
from tools.render_graphics import render


def test_photos_are_kept_and_scored(image_models):
    stage = NaturalnessFilter()
    stage.setup()
    items = [decoded_item(asset("photos", p)) for p in ("cat.jpg", "pagoda.jpg", "meadow.jpg")]
    for item, res in zip(items, stage.process_batch(items)):
        assert res == [item], (item.image_url, item.natural)
        assert item.natural >= 0.5


@pytest.mark.parametrize("kind", ["clipart", "chart", "text", "ui", "flat"])
def test_graphics_are_dropped(image_models, kind):
    if kind == "clipart":
        item = decoded_item(asset("clipart", "calculator.png"))
    else:  # seeds far from the training images' (0..149)
        item = decoded_item(render(kind, 987_654))
    assert NaturalnessFilter().process(item) == Drop("natural_not_natural")
    assert item.natural < 0.5


def test_threshold_zero_keeps_everything(image_models):
    item = decoded_item(render("chart", 987_655))
    assert NaturalnessFilter(NaturalnessConfig(threshold=0.0)).process(item) == [item]


def test_accuracy_on_held_out_sources(image_models):
    from PIL import Image

    from tools.naturalness_eval import evaluate

    Image.MAX_IMAGE_PIXELS = None  # one clip-art file claims 623 M pixels; it is skipped by size
    report = evaluate()
    print("\nnaturalness on held-out sources:", json.dumps(report))
    assert report["n_natural"] >= 30 and report["n_other"] >= 200
    assert report["accuracy"] >= 0.95
    assert report["natural_accuracy"] >= 0.85 and report["other_accuracy"] >= 0.95


def test_cli_prints_one_json_line_per_file(image_models, tmp_path):
    chart = tmp_path / "chart.png"
    render("chart", 987_656).save(chart)
    bad = tmp_path / "notes.txt"
    bad.write_text("not an image")
    proc = subprocess.run([sys.executable, "-m", "filters.naturalness", asset("photos", "cat.jpg"),
                           str(chart), str(bad)], cwd=REPO, capture_output=True, text=True)
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [x["path"] for x in lines] == [asset("photos", "cat.jpg"), str(chart), str(bad)]
    assert lines[0]["natural"] >= 0.5 and lines[1]["natural"] < 0.5
    assert lines[2]["natural"] is None and "error" in lines[2]
    assert proc.returncode == 1  # one file could not be read


def test_trainer_learns_from_folders(image_models, tmp_path):
    from tools.train_naturalness import train

    nat, other = tmp_path / "natural", tmp_path / "other"
    nat.mkdir()
    other.mkdir()
    for p in ("cat.jpg", "coffee.jpg", "rocket.jpg", "storm.jpg", "pagoda.jpg"):
        os.symlink(asset("photos", p), nat / p)
    for p in ("calculator.png", "envelope_01.png", "scissors.png", "house.png", "gift01.png"):
        os.symlink(asset("clipart", p), other / p)
    head = str(tmp_path / "head.onnx")
    report = train([str(nat)], [str(other)], head)
    assert report["natural"] == 5 and report["other"] == 5
    assert os.path.getsize(head) < 25_000_000
    model = Naturalness(head=head)
    probs = model.score_files([asset("photos", "cat.jpg"), asset("clipart", "calculator.png")])
    assert probs[0] > 0.5 > probs[1]


def test_bad_config_fails_fast():
    with pytest.raises(ConfigError, match="naturalness.threshold"):
        NaturalnessConfig(threshold=1.5).check()
    with pytest.raises(ConfigError, match="naturalness.backbone"):
        NaturalnessConfig(backbone="fp16").check()
