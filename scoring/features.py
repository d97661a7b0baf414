"""The weak semantic model's features: text-only, image-content and cross-modal, each named.

``FeatureExtractor.transform(pairs)`` gives a float32 matrix ``[len(pairs), len(names)]``;
missing facts are NaN (the model imputes them), so a pair from a corpus without NSFW scores
or embeddings still scores.  Sentence embeddings come from MiniLM (``scoring/minilm.py``) and
are cached per worker by text: the same text (a label name, a page title, a caption used on
many pages) is encoded once.  Each text is encoded on its own (no padding, no batch
neighbours), so a pair's features, and so its score, never depend on what else was in the
batch: both engines write the same bytes.

Cross-modal features compare the text with what the image shows, in three ways:

* the image's top ImageNet labels (``image_meta["labels"]``, from the labels step): MiniLM
  cosine to each label name and weighted by probability, and word overlap with the labels;
* the image's URL and file name, and the page title: word overlap and MiniLM cosine;
* a projection of the image embedding (EfficientNet-lite0, 1280-d) into MiniLM's space,
  learned on the corpus itself (``scoring/projection.py``): the cosine to the text, and how
  that cosine ranks among a bank of other images (a text that fits every image fits none);
* a memory of captioned training pictures (``scoring/memory.py``, ``mem_*``): only for a
  near-copy of one of them, the text's cosine to that picture's captions;
* the colour words of the text against the image's colour shares (``image_meta["colors"]``,
  ``filters/colors.py``; ``col_*``): ImageNet's labels do not tell a red flower from a yellow one;
* the scene words of the text against where the colours are (``image_meta["layout"]``,
  ``scoring/scene.py``; ``scn_*``): sky at the top, sea or grass below, snow, night, sunset;
* the full ImageNet class distribution (from the embedding) against WordNet's words for each
  class (``scoring/label_space.py``, the ``wn_*`` features): zero-shot, nothing fitted on
  captions, and the signal that holds on real photos (docs/scoring.md).
"""
from __future__ import annotations

import math
import re
from collections import OrderedDict
from urllib.parse import unquote, urlsplit

import numpy as np
from tqdm import tqdm
from wordfreq import zipf_frequency

from filters.colors import WORDS as COLOR_WORDS
from pipeline.core.records import TEXT_SOURCES, Pair, decode_embedding, label_pairs
from scoring import label_space, memory, scene
from scoring.minilm import MiniLM
from scoring.words import WORD_RE, lemma, lemmas, words  # noqa: F401 (part of this module's API)

YEAR_RE = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
URL_RE = re.compile(r"https?://|www\.|\.com\b|@\w+\.")
CAMERA_RE = re.compile(r"^(img|dsc|dscf|dscn|p\d|_mg|image|photo|pic|screenshot|untitled|\d)",
                       re.IGNORECASE)
PHOTO_WORDS = frozenset("photo photos image images picture pictures pic pics img jpg png "
                        "thumbnail banner logo icon click enlarge gallery".split())
PROMO_WORDS = frozenset("buy sale free off offer order shop discount coupon code price cheap "
                        "deal deals win save shipping now today only limited best".split())
# Soft lexicons: words that make a text unlikely to describe a photo but that the text
# filters cannot drop on sight (innocent senses exist); the model weighs them.
ADULT_SOFT = frozenset("sexy sex erotic nude naked xxx porn singles dating naughty busty babes "
                       "lingerie uncensored escort massage hot adult".split())
CLICKBAIT = frozenset("win won earn lose trick hate believe amazing wow must secret guaranteed "
                      "miss weight kg doctors week tonight near".split())
FIRST_PERSON = frozenset("i me my we us our ours mine".split())
FORMATS = ("jpeg", "png", "webp", "gif")
TOPK = 5
CACHE_SIZE = 20_000  # texts whose embeddings a worker keeps

TEXT_FEATURES = [
    "log_chars", "n_words", "mean_word_len", "max_word_len", "frac_upper", "frac_digit",
    "frac_punct", "frac_space", "n_sentences", "stopword_ratio", "oov_ratio_wordfreq",
    "mean_zipf", "min_zipf", "frac_title_words", "unique_word_ratio", "has_digit",
    "starts_upper", "ends_period", "n_commas", "n_exclaim", "frac_alpha_words",
    "photo_words", "promo_words", "adult_soft_words", "clickbait_words", "first_person_words", "has_year", "has_url",
    "is_all_caps", "frac_long_words", "has_currency", "has_percent",
    *[f"source_{s}" for s in TEXT_SOURCES],
    "lang_conf", "lang_is_en", "oov_ratio_cleaner", "n_text_edits", "clean_raw_ratio",
    "in_figure", "in_link", "log_page_images", "img_index_rel", "surround_distance",
    "surround_side_after", "page_lang_en", "declared_width", "declared_height",
]
IMAGE_FEATURES = [
    "width", "height", "log_area", "log_aspect", "orig_width", "orig_height", "log_orig_pixels",
    "log_orig_bytes", "orig_bytes_per_pixel", "was_resized", *[f"format_{f}" for f in FORMATS],
    "format_other", "nsfw", "natural", "label_entropy", *[f"label_p{i + 1}" for i in range(TOPK)],
    "label_margin", "label_top_sum", "embedding_norm", "declared_to_orig_ratio",
]
CROSS_FEATURES = [
    *[f"cos_label{i + 1}" for i in range(TOPK)], "cos_label_weighted", "cos_label_max",
    "cos_label_max_weighted", "cos_label1_x_p1", "label_word_overlap", "label_word_jaccard",
    "label_overlap_prob", "cos_filename", "filename_overlap", "filename_jaccard",
    "filename_is_camera", "url_path_overlap", "cos_title", "title_overlap", "title_jaccard",
    "text_in_title", "proj_cos", "proj_z", "proj_rank", "proj_bank_mean", "proj_text_z",
    "proj_cos_label", "proj_x_natural", "cos_label_z", *label_space.FEATURES, *memory.FEATURES,
    *memory.NEIGHBOUR_FEATURES, "col_any", "col_mean", "col_min", *scene.FEATURES,
]
FEATURE_NAMES = TEXT_FEATURES + IMAGE_FEATURES + CROSS_FEATURES
TEXT_ONLY = [n for n in FEATURE_NAMES if n in TEXT_FEATURES]
# Text features that come from the page or the text step rather than the text itself: a
# labelled set of bare (image, caption) pairs cannot teach them.
CONTEXT_FEATURES = frozenset([*[f"source_{s}" for s in TEXT_SOURCES], "lang_conf", "lang_is_en",
                              "oov_ratio_cleaner", "n_text_edits", "clean_raw_ratio", "in_figure",
                              "in_link", "log_page_images", "img_index_rel", "surround_distance",
                              "surround_side_after", "page_lang_en", "declared_width",
                              "declared_height"])
TEXT_INTRINSIC = [n for n in TEXT_FEATURES if n not in CONTEXT_FEATURES]


def url_words(url: str) -> tuple[str, str]:
    """(file-name words, directory words) of an image URL: ``/photos/red_tulip-2.jpg`` ->
    ("red tulip", "photos")."""
    path = unquote(urlsplit(url or "").path)
    parts = [p for p in path.split("/") if p]
    name = re.sub(r"\.[A-Za-z0-9]{2,5}$", "", parts[-1]) if parts else ""
    split = lambda s: " ".join(re.findall(r"[A-Za-z]{2,}", s.replace("_", " ")))  # noqa: E731
    return split(name), split(" ".join(parts[:-1]))


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _cos(a, b) -> float:
    return float(np.dot(a, b)) if a is not None and b is not None else math.nan


class FeatureExtractor:
    """Pairs -> named feature matrix.  ``projection`` (a :class:`scoring.projection.Projection`)
    is optional: without it the projection features are NaN."""

    names = FEATURE_NAMES

    def __init__(self, projection=None, encoder=None, label_space=None, memory=None, scene=None):
        self.projection = projection
        self.memory = memory  # a scoring.memory.CaptionMemory, or None (mem_* features NaN)
        self.scene = scene  # a scoring.scene.SceneModel, or None (scn_mean / scn_min NaN)
        self.encoder = encoder or MiniLM()
        self._labels = label_space  # loaded on first use (scoring/models/label_vectors.npz)
        self._cache: OrderedDict = OrderedDict()

    def __getstate__(self):
        return {**self.__dict__, "_cache": OrderedDict(), "_labels": None}

    @property
    def label_space(self):
        if self._labels is None:
            self._labels = label_space.LabelSpace.load()
        return self._labels

    def embed(self, text: str) -> np.ndarray:
        got = self._cache.get(text)
        if got is None:
            got = self.encoder.encode([text])[0]
            self._cache[text] = got
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return got

    def transform(self, pairs: list[Pair], progress: bool = False) -> np.ndarray:
        it = pairs
        if progress:
            it = tqdm(pairs, desc="features", unit="pair", mininterval=1.0)
        rows = [self.pair_features(p) for p in it]
        out = np.array([[r.get(n, math.nan) for n in self.names] for r in rows], np.float32)
        return out.reshape(len(pairs), len(self.names))

    def pair_features(self, pair: Pair) -> dict[str, float]:
        f: dict[str, float] = {}
        text = pair.candidate.text or ""
        f.update(text_features(text, pair))
        f.update(image_features(pair))
        f.update(self.cross_features(text, pair))
        return f

    def cross_features(self, text: str, pair: Pair) -> dict[str, float]:
        c, meta = pair.candidate, pair.image.meta or {}
        f: dict[str, float] = {}
        t = self.embed(text)
        labels = label_pairs(meta)[:TOPK]
        if labels:
            cos = np.array([float(np.dot(t, self.embed(n))) for n, _ in labels])
            probs = np.array([p for _, p in labels])
            for i, v in enumerate(cos):
                f[f"cos_label{i + 1}"] = v
            f["cos_label_weighted"] = float((cos * probs).sum() / max(probs.sum(), 1e-6))
            f["cos_label_max"] = float(cos.max())
            f["cos_label_max_weighted"] = float((cos * probs).max())
            f["cos_label1_x_p1"] = float(cos[0] * probs[0])
            lw = {lemma(w) for n, _ in labels for w in words(n)}
            tw = lemmas(text)
            f["label_word_overlap"] = len(tw & lw)
            f["label_word_jaccard"] = jaccard(tw, lw)
            f["label_overlap_prob"] = sum(p for n, p in labels if {lemma(w) for w in words(n)} & tw)
        tw = lemmas(text)
        fname, dirs = url_words(pair.image.image_url)
        fw = lemmas(fname)
        f["cos_filename"] = _cos(t, self.embed(fname)) if fname else math.nan
        f["filename_overlap"] = len(tw & fw)
        f["filename_jaccard"] = jaccard(tw, fw)
        base = urlsplit(pair.image.image_url or "").path.rsplit("/", 1)[-1]
        f["filename_is_camera"] = float(bool(CAMERA_RE.match(base)))
        f["url_path_overlap"] = len(tw & lemmas(dirs))
        title = c.page_title or ""
        f["cos_title"] = _cos(t, self.embed(title)) if title.strip() else math.nan
        ttw = lemmas(title)
        f["title_overlap"] = len(tw & ttw)
        f["title_jaccard"] = jaccard(tw, ttw)
        f["text_in_title"] = float(bool(text.strip()) and text.strip().lower() in title.lower())
        emb = decode_embedding(meta.get("embedding"))
        if self.projection is not None and emb is not None:
            f.update(self.projection.features(emb, t))
            if labels:
                lv = sum(p * self.embed(n) for n, p in labels)
                f["proj_cos_label"] = _cos(self.projection.image_vector(emb), lv / (np.linalg.norm(lv) or 1))
            if pair.image.natural is not None:
                f["proj_x_natural"] = f["proj_cos"] * pair.image.natural
        f.update(color_features(text, meta.get("colors")))
        f.update(scene.scene_features(text, meta.get("layout"), self.scene))
        if emb is not None and emb.shape == (1280,):
            f.update(self.label_space.features(emb, t, tw))
            if self.memory is not None:
                f.update(self.memory.features(emb, t))
        if labels and self.projection is not None and self.projection.label_bank is not None:
            # How the text's fit to these labels compares with its fit to typical labels.
            bank = self.projection.label_bank @ t
            f["cos_label_z"] = (f["cos_label_weighted"] - bank.mean()) / (bank.std() + 1e-3)
        return f


# Mean colour shares (filters/colors.py order) of the relevance training photos: a colour
# word counts by how much more of its colour the picture has than pictures usually do.
COLOR_PRIOR = (0.296, 0.065, 0.225, 0.021, 0.077, 0.067, 0.054, 0.087, 0.006, 0.009, 0.093)


def color_features(text: str, shares) -> dict[str, float]:
    """``col_any`` (the text names a colour), ``col_mean`` / ``col_min``: the mean and the
    worst log ratio of the picture's share of each named colour to ``COLOR_PRIOR``.  No
    colour named: 0 (neutral); no shares stored: NaN (imputed)."""
    named = sorted({COLOR_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in COLOR_WORDS})
    if not named:
        return {"col_any": 0.0, "col_mean": 0.0, "col_min": 0.0}
    if not shares or len(shares) != len(COLOR_PRIOR):
        return {"col_any": 1.0, "col_mean": math.nan, "col_min": math.nan}
    v = [math.log((float(shares[c]) + 0.01) / (COLOR_PRIOR[c] + 0.01)) for c in named]
    return {"col_any": 1.0, "col_mean": sum(v) / len(v), "col_min": min(v)}


def text_features(text: str, pair: Pair) -> dict[str, float]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # on use, as in lemmas()

    c, m = pair.candidate, pair.candidate.meta or {}
    ws = words(text)
    toks = text.split()
    n_chars = max(len(text), 1)
    letters = [ch for ch in text if ch.isalpha()]
    zipf = [zipf_frequency(w, "en") for w in ws]
    f = {
        "log_chars": math.log1p(len(text)), "n_words": len(toks),
        "mean_word_len": float(np.mean([len(w) for w in ws])) if ws else 0.0,
        "max_word_len": max((len(w) for w in ws), default=0),
        "frac_upper": sum(ch.isupper() for ch in letters) / max(len(letters), 1),
        "frac_digit": sum(ch.isdigit() for ch in text) / n_chars,
        "frac_punct": sum((not ch.isalnum()) and not ch.isspace() for ch in text) / n_chars,
        "frac_space": sum(ch.isspace() for ch in text) / n_chars,
        "n_sentences": max(1, len(re.findall(r"[.!?]+(\s|$)", text))),
        "stopword_ratio": sum(w in ENGLISH_STOP_WORDS for w in ws) / max(len(ws), 1),
        "oov_ratio_wordfreq": sum(z < 3.0 for z in zipf) / max(len(zipf), 1),
        "mean_zipf": float(np.mean(zipf)) if zipf else 0.0,
        "min_zipf": min(zipf, default=0.0),
        "frac_title_words": sum(t[:1].isupper() for t in toks) / max(len(toks), 1),
        "unique_word_ratio": len(set(ws)) / max(len(ws), 1),
        "has_digit": float(any(ch.isdigit() for ch in text)),
        "starts_upper": float(text[:1].isupper()), "ends_period": float(text.rstrip().endswith(".")),
        "n_commas": text.count(","), "n_exclaim": text.count("!"),
        "frac_alpha_words": sum(t.isalpha() for t in toks) / max(len(toks), 1),
        "photo_words": sum(w in PHOTO_WORDS for w in ws),
        "promo_words": sum(w in PROMO_WORDS for w in ws),
        "adult_soft_words": sum(w in ADULT_SOFT for w in ws),
        "clickbait_words": sum(w in CLICKBAIT for w in ws),
        "first_person_words": sum(w in FIRST_PERSON for w in ws),
        "has_year": float(bool(YEAR_RE.search(text))), "has_url": float(bool(URL_RE.search(text))),
        "is_all_caps": float(len(letters) > 3 and all(ch.isupper() for ch in letters)),
        "frac_long_words": sum(len(w) >= 7 for w in ws) / max(len(ws), 1),
        "has_currency": float(bool(re.search(r"[$€£¥]", text))), "has_percent": float("%" in text),
    }
    for s in TEXT_SOURCES:
        f[f"source_{s}"] = float(c.text_source == s)
    f["lang_conf"] = _num(m.get("lang_conf"))
    f["lang_is_en"] = float(m["lang"] == "en") if "lang" in m else math.nan
    f["oov_ratio_cleaner"] = _num(m.get("oov_ratio"))
    f["n_text_edits"] = len(m.get("text_edits") or [])
    f["clean_raw_ratio"] = len(text) / max(len(c.raw_text or text), 1)
    f["in_figure"] = _num(m.get("in_figure"))
    f["in_link"] = _num(m.get("in_link"))
    n_images = m.get("n_images")
    f["log_page_images"] = math.log1p(n_images) if isinstance(n_images, (int, float)) else math.nan
    f["img_index_rel"] = c.img_index / n_images if n_images else math.nan
    f["surround_distance"], f["surround_side_after"] = _distance(text, m)
    f["page_lang_en"] = float(c.page_lang == "en") if c.page_lang else math.nan
    f["declared_width"] = _num(m.get("img_width"))
    f["declared_height"] = _num(m.get("img_height"))
    return f


def _distance(text: str, m: dict) -> tuple[float, float]:
    """Characters between a surrounding sentence and the image, and which side it is on."""
    side, sentence = m.get("side"), m.get("sentence") or text
    if side == "before":
        before = m.get("before") or ""
        at = before.rfind(sentence)
        return (float(len(before) - at - len(sentence)) if at >= 0 else math.nan), 0.0
    if side == "after":
        at = (m.get("after") or "").find(sentence)
        return (float(at) if at >= 0 else math.nan), 1.0
    return math.nan, math.nan


def image_features(pair: Pair) -> dict[str, float]:
    meta = pair.image.meta or {}
    w, h = pair.image.width or 0, pair.image.height or 0
    ow, oh = pair.image.orig_width or w, pair.image.orig_height or h
    fmt = (pair.image.orig_format or "").lower().replace("jpg", "jpeg")
    f = {
        "width": w, "height": h, "log_area": math.log1p(w * h),
        "log_aspect": math.log(w / h) if w and h else math.nan, "orig_width": ow, "orig_height": oh,
        "log_orig_pixels": math.log1p(ow * oh), "log_orig_bytes": math.log1p(pair.image.orig_bytes or 0),
        "orig_bytes_per_pixel": (pair.image.orig_bytes or 0) / max(ow * oh, 1),
        "was_resized": float(ow * oh > w * h),
        "format_other": float(fmt not in FORMATS),
        "nsfw": _num(pair.image.nsfw), "natural": _num(pair.image.natural),
        "label_entropy": _num(meta.get("label_entropy")),
    }
    for x in FORMATS:
        f[f"format_{x}"] = float(fmt == x)
    probs = [p for _, p in label_pairs(meta)[:TOPK]]
    for i in range(TOPK):
        f[f"label_p{i + 1}"] = probs[i] if i < len(probs) else math.nan
    if probs:
        f["label_margin"] = probs[0] - (probs[1] if len(probs) > 1 else 0.0)
        f["label_top_sum"] = sum(probs)
    emb = decode_embedding(meta.get("embedding"))
    f["embedding_norm"] = float(np.linalg.norm(emb)) if emb is not None else math.nan
    dw = (pair.candidate.meta or {}).get("img_width")
    f["declared_to_orig_ratio"] = float(dw) / ow if isinstance(dw, (int, float)) and ow else math.nan
    return f


def _num(v) -> float:
    if isinstance(v, bool):
        return float(v)
    return float(v) if isinstance(v, (int, float)) else math.nan
