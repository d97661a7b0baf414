"""`python -m tools.train_scorer recipe` (docs/scoring.md: "runs this path on the sample web end
to end") writes its model into its work folder unless told otherwise: it had defaulted to
scoring/models/scorer.json, so trying the documented command replaced the shipped model (made
by tools.train_real on real photos) with a sample-web one."""
import os

from scoring.scorer_model import DEFAULT_MODEL
from tools import train_scorer


def _recipe_args(monkeypatch, argv):
    seen = {}

    def recipe(out, work, rounds=1):
        seen.update(out=out, work=work, rounds=rounds)
        return {}

    monkeypatch.setattr(train_scorer, "recipe", recipe)
    assert train_scorer.main(["recipe", *argv]) == 0
    return seen


def test_recipe_writes_into_its_work_folder_by_default(monkeypatch, tmp_path):
    seen = _recipe_args(monkeypatch, ["--work", str(tmp_path)])
    assert seen["out"] == os.path.join(str(tmp_path), "scorer.json")
    assert os.path.abspath(seen["out"]) != os.path.abspath(DEFAULT_MODEL)


def test_recipe_writes_where_out_says(monkeypatch, tmp_path):
    out = str(tmp_path / "m.json")
    assert _recipe_args(monkeypatch, ["--out", out])["out"] == out
