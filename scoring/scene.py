"""Scene words of a caption against where the picture's colours are (``scn_*``).

ImageNet's labels and the EfficientNet embedding see a beach, a gravel desert and a playing
field alike as "outdoors, sky, ground"; their captions do not: "waves on a sandy beach", "a
gravel plain under a pale sky", "a green football pitch".  The labels step stores the colour
shares of the picture's top, middle and bottom thirds (``image_meta["layout"]``,
``filters/colors.py``, 33 numbers).  A caption's scene words fall in groups (``GROUPS``: sky,
water, sand, snow, night, sunset, green, city, rock, indoors), and :class:`SceneModel` holds,
per group, a logistic regression fitted on the training photos: does a photo's caption name
the group, given the photo's layout (sky: blue and white at the top; sea: blue below; snow:
white below; night: dark everywhere)?

Features (as the colour words', ``col_*``): ``scn_any`` (the text names a group), ``scn_mean``
/ ``scn_min``: the mean and the worst, over the named groups, of the model's log odds for the
picture minus the log odds of the group's share among the training photos (how much more
likely this picture's caption names the group than a caption does).  No group named: 0
(neutral); no layout stored (a corpus built before the step stored it) or no model: NaN
(imputed).  A group with fewer than ``MIN_POSITIVES`` training captions has no regression
and counts 0.  The log odds are a ``math.fsum`` over Python floats: the same on every CPU.
"""
from __future__ import annotations

import math
import re

from filters.colors import BANDS, COLORS

FEATURES = ["scn_any", "scn_mean", "scn_min"]
N_LAYOUT = BANDS * len(COLORS)
MIN_POSITIVES = 5
C = 0.3  # regularisation of the per-group regressions (few positives per group)
LOGIT_CAP = math.log((1 - 1e-4) / 1e-4)  # log odds clipped to +-9.2: one group cannot decide alone

GROUPS = {
    "sky": "sky skies cloud clouds cloudy",
    "water": "sea seas ocean water waters lake lakes river rivers stream pond wave waves bay harbour "
             "harbor canal waterfall underwater reef coast shore surf lagoon",
    "sand": "beach beaches sand sandy desert dune dunes",
    "snow": "snow snowy ice icy frozen winter glacier igloo",
    "night": "night nighttime evening starry stars",
    "sunset": "sunset sunsets sunrise dawn dusk twilight",
    "green": "forest forests trees jungle leaves foliage grass grassy lawn meadow meadows field fields "
             "park garden hedge hedges moss mossy weed seagrass",
    "city": "street streets city town buildings building road roads skyline houses concrete pavement "
            "sidewalk",
    "rock": "rock rocks rocky cliff cliffs canyon mountain mountains hill hills stone stones gravel valley",
    "indoor": "room indoors indoor kitchen interior hall ceiling bedroom office shelf",
}
WORDS = {w: g for g, ws in GROUPS.items() for w in ws.split()}


def groups_named(text: str) -> list[str]:
    return sorted({WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in WORDS})


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


class SceneModel:
    """Per group: the layout's mean and scale, coefficients, intercept (or None: too few
    positives), and the group's share of the training captions."""

    def __init__(self, groups: dict):
        self.groups = groups  # name -> {"mean", "scale", "coef", "intercept", "prior"}

    @classmethod
    def fit(cls, layouts, captions, c: float = C) -> "SceneModel":
        import numpy as np
        from sklearn.linear_model import LogisticRegression

        X = np.asarray(layouts, np.float64)
        mean, scale = X.mean(0), X.std(0) + 1e-6
        Z = (X - mean) / scale
        named = [set(groups_named(t)) for t in captions]
        out = {}
        for g in GROUPS:
            y = np.array([g in n for n in named])
            entry = {"prior": round(float(y.mean()), 6), "mean": None, "scale": None, "coef": None,
                     "intercept": None}
            if MIN_POSITIVES <= y.sum() < len(y):
                m = LogisticRegression(C=c, max_iter=2000).fit(Z, y)
                entry.update(mean=[float(v) for v in mean], scale=[float(v) for v in scale],
                             coef=[float(v) for v in m.coef_[0]], intercept=float(m.intercept_[0]))
            out[g] = entry
        return cls(out)

    def lift(self, group: str, layout) -> float:
        """The picture's log odds of ``group`` minus the training captions' (0: no regression)."""
        e = self.groups.get(group)
        if not e or e["coef"] is None:
            return 0.0
        z = math.fsum([c * (float(x) - m) / s for c, x, m, s in zip(e["coef"], layout, e["mean"], e["scale"])])
        z = min(max(z + e["intercept"], -LOGIT_CAP), LOGIT_CAP)
        return z - _logit(e["prior"])

    def to_dict(self) -> dict:
        return {"groups": self.groups}

    @classmethod
    def from_dict(cls, d: dict) -> "SceneModel":
        return cls(d["groups"])


def scene_features(text: str, layout, model: SceneModel | None) -> dict[str, float]:
    named = groups_named(text)
    if not named:
        return {"scn_any": 0.0, "scn_mean": 0.0, "scn_min": 0.0}
    if model is None or not layout or len(layout) != N_LAYOUT:
        return {"scn_any": 1.0, "scn_mean": math.nan, "scn_min": math.nan}
    v = [model.lift(g, layout) for g in named]
    return {"scn_any": 1.0, "scn_mean": math.fsum(v) / len(v), "scn_min": min(v)}
