"""The scorer: JSON regressions (plain and product), the projection, and the ``score`` stage's drops."""
import os

import numpy as np
import pytest

from pipeline.core.errors import ConfigError
from pipeline.core.stage import Drop, Keep
from scoring.score import Scorer, ScorerConfig
from scoring.scorer_model import DEFAULT_MODEL, ScorerModel
from scoring.projection import Projection
from tests.scoring.test_features import pair


def test_model_round_trips_through_json(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X[::7, 1] = np.nan  # missing values are imputed
    y = (np.nan_to_num(X[:, 0]) + 0.5 * rng.normal(size=200) > 0).astype(int)
    m = ScorerModel.fit(X, y, ["a", "b", "c"])
    m.save(str(tmp_path / "m.json"))
    back = ScorerModel.load(str(tmp_path / "m.json"))
    np.testing.assert_allclose(back.predict(X), m.predict(X), atol=1e-5)
    assert m.top_weights(1)[0][0] == "a"
    p = m.predict(X)
    assert ((p > 0.5) == y).mean() > 0.8


def test_projection_learns_a_linear_map_and_round_trips(tmp_path):
    rng = np.random.default_rng(1)
    A = rng.normal(size=(40, 16))
    img = rng.normal(size=(120, 40)).astype(np.float32)
    txt = img @ A
    txt /= np.linalg.norm(txt, axis=1, keepdims=True)
    proj = Projection.fit(img, txt, dims=40, alpha=0.01)
    cos = proj.image_vectors(img) @ txt.T
    assert (cos.argmax(1) == np.arange(120)).mean() > 0.9  # each image finds its own text
    proj.save(str(tmp_path / "p.npz"))
    back = Projection.load(str(tmp_path / "p.npz"))
    np.testing.assert_allclose(back.image_vector(img[0]), proj.image_vector(img[0]), atol=1e-2)
    f = back.features(img[0], txt[0])
    assert f["proj_cos"] > 0.9 and f["proj_rank"] > 0.9


def test_config_is_checked():
    with pytest.raises(ConfigError, match="score.threshold"):
        ScorerConfig(threshold=1.5).check()
    with pytest.raises(ConfigError, match="score.model"):
        ScorerConfig(model="/no/such/model.json").check()
    assert ScorerConfig().model_path == DEFAULT_MODEL and os.path.isfile(DEFAULT_MODEL)


def test_the_default_threshold_is_the_models_own(tmp_path):
    """score.threshold left out: the operating point the model was shipped with (chosen on
    validation: tools/train_real.py), resolved once by check() so the stored config names it;
    a model without one (the self-supervised path's) keeps 0.5; a given value wins."""
    import json

    shipped = json.load(open(DEFAULT_MODEL))
    assert 0.0 < shipped["threshold"] < 1.0
    assert ScorerConfig().check().threshold == shipped["threshold"]
    assert ScorerConfig(threshold=0.7).check().threshold == 0.7
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({k: v for k, v in shipped.items() if k != "threshold"}))
    assert ScorerConfig(model=str(plain)).check().threshold == 0.5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**shipped, "threshold": 2}))
    with pytest.raises(ConfigError, match="threshold"):
        ScorerConfig(model=str(bad)).check()
    assert ScorerConfig(enabled=False, model=str(bad)).check().threshold == 0.5


@pytest.fixture(scope="module")
def cat_photo():
    """scikit-image's photo of a tabby cat through the pipeline's image stages."""
    import skimage

    from tools.eval_relevance import neutral_url
    from tools.train_scorer import ImageAnalyser

    with open(os.path.join(os.path.dirname(skimage.__file__), "data", "chelsea.png"), "rb") as f:
        data = f.read()
    return ImageAnalyser().item(data, neutral_url("ab" * 32))


def test_stage_scores_keeps_and_drops_with_reasons(cat_photo):
    from tools.eval_relevance import make_pair

    stage = Scorer(ScorerConfig(threshold=0.5))
    good = make_pair(cat_photo, "Close-up of a tabby cat with bright green eyes looking at the camera")
    other = make_pair(cat_photo, "A red motorcycle parked in a garage in front of shelves of boxes")
    bad = make_pair(cat_photo, "Buy now! 50% off all prints today only")
    (g,) = stage.events(good)
    assert isinstance(g, Keep) and 0.5 <= g.outputs[0].score <= 1.0
    for p in (other, bad):
        assert list(stage.events(p)) == [Drop("score_irrelevant")] and p.score < good.score
    assert list(stage.events(make_pair(cat_photo, "   "))) == [Drop("score_empty_text")]


def test_scores_without_an_embedding_are_still_probabilities():
    """A corpus whose labels step kept no embedding: the wn_* and mem_* features are missing
    (imputed), and the score is still a probability."""
    stage = Scorer(ScorerConfig(threshold=0.5))
    p = pair("Close-up of a tabby cat with bright green eyes", [["tabby cat", 0.8], ["Egyptian Mau", 0.1]])
    stage.setup()
    (s,) = stage.score([p])
    assert 0.0 <= s <= 1.0


def test_stage_pickles_without_its_models():
    import pickle

    stage = Scorer()
    stage.setup()
    clone = pickle.loads(pickle.dumps(stage))
    assert clone._model is None and clone.config == stage.config
