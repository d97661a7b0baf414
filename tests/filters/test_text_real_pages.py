"""The text step on the English pages of ../shared/data/real_pages: language -> extract -> text.

Prints how many alt / title / caption / surrounding texts survive each rule, with a sample of
kept texts, and checks that no kept text is a file name, a URL or boilerplate (with patterns
written here, independent of the rules).
"""
import os
import re
from collections import Counter, defaultdict

import pytest

from filters.file_names import named_by_image, names_in_one_word
from filters.language import PageLanguage
from filters.text import ONE_WORD_PX, TextCleaner
from filters.text_rules import RULES
from pipeline.steps.extract import Extractor
from pipeline.core.records import TEXT_SOURCES, Page
from pipeline.core.stage import Keep
from pipeline.core.stats import StepStats

PAGES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "real_pages")

FILE_LIKE = re.compile(r"\.(?:jpe?g|png|gif|webp|svg)\b|^(?:IMG|DSC)[_-]?\d+$|^\S+_\S+$", re.I)
URL_LIKE = re.compile(r"https?://|www\.|\b[\w-]+\.(?:com|org|net|de)\b", re.I)
BOILERPLATE = {"logo", "image", "photo", "picture", "click here", "photo of", "image of", "icon",
               "read more", "facebook", "twitter", "youtube", "search", "menu", "home"}


@pytest.fixture(scope="module")
def candidates():
    if not os.path.isdir(PAGES):
        pytest.skip("../shared/data/real_pages is absent")
    language, extract = PageLanguage(), Extractor()
    out = []
    for name in sorted(os.listdir(PAGES)):
        if not name.endswith(".html"):
            continue
        with open(os.path.join(PAGES, name), "rb") as f:
            page = Page(url=f"https://{name[:-5]}/", body=f.read(), content_type="text/html")
        if isinstance(next(language.events(page)), Keep):
            ev = next(extract.events(page))
            out.extend(ev.outputs if isinstance(ev, Keep) else ())
    return out


def test_text_step_on_english_real_pages(candidates):
    cleaner = TextCleaner()
    stats = StepStats(cleaner.name)
    # Where each candidate stopped: index of the rule whose reason dropped it (len = kept).
    stop_at = {"text_empty": -1}
    for i, rule in enumerate(RULES):
        for reason in rule.drop_reasons:
            stop_at[reason] = i
    # a candidate rule's drop (first_person) is reported where the exclamation rule stands
    # (filters/text.py, TextCleaner._first_person_at): card titles (fortieth pass) brought the
    # first one to these pages
    stop_at["text_first_person"] = [r.name for r in RULES].index("exclamation")
    stopped = defaultdict(Counter)
    kept = []
    for cand in candidates:
        (ev,) = list(cleaner.events(cand))
        stats.add_event(ev)
        if isinstance(ev, Keep):
            stopped[cand.text_source][len(RULES)] += 1
            kept.extend(ev.outputs)
        else:
            stopped[cand.text_source][stop_at[ev.reason]] += 1
    assert stats.balanced() and stats.n_in == len(candidates)

    n_in = Counter(c.text_source for c in candidates)
    lines = [f"{'survivors after':18}" + "".join(f"{s:>13}" for s in TEXT_SOURCES),
             f"{'(extracted)':18}" + "".join(f"{n_in[s]:>13}" for s in TEXT_SOURCES)]
    for i, name in [(-1, "empty")] + list(enumerate(r.name for r in RULES)):
        alive = [n_in[s] - sum(v for k, v in stopped[s].items() if k <= i) for s in TEXT_SOURCES]
        lines.append(f"{name:18}" + "".join(f"{a:>13}" for a in alive))
    print("\n" + "\n".join(lines))
    print(f"kept {stats.kept} of {stats.n_in} candidates ({stats.out} texts); dropped: "
          f"{dict(stats.dropped.most_common())}")
    print("sample of kept texts:")
    for c in kept[:: max(1, len(kept) // 25)]:
        print(f"  [{c.text_source}] {c.text}")

    assert set(n_in) == set(TEXT_SOURCES)  # every source occurs on these pages
    assert len(kept) >= 100
    assert all(stopped[s][len(RULES)] > 0 for s in TEXT_SOURCES)  # some of each survive
    bad = [c.text for c in kept if FILE_LIKE.search(c.text) or URL_LIKE.search(c.text)
           or c.text.lower().strip(" .!") in BOILERPLATE]
    assert bad == []
    cfg = cleaner.config

    def one_word_name(c):  # nineteenth pass: one word naming its declared picture's file
        return c.meta["n_words"] == 1 and TextCleaner.own_text(c) \
            and names_in_one_word(c.text, c.meta["file_name"]) \
            and min(c.meta.get("img_width") or 0, c.meta.get("img_height") or 0) >= ONE_WORD_PX

    for c in kept:
        assert cfg.min_words <= c.meta["n_words"] <= cfg.max_words or (
            cfg.min_words_own <= c.meta["n_words"] and (
                TextCleaner.own_text(c) or named_by_image(c.text, c.meta.get("image_text", "")))) \
            or one_word_name(c)
        # Over the bound only through an exemption the oov rule records (names, a picture's name).
        assert c.meta["oov_ratio"] <= cfg.max_oov_ratio or (
            c.meta.get("oov_by") in {"image_name", "name", "title_case"}), c.text
        if one_word_name(c) and c.meta["oov_ratio"] > cfg.max_oov_ratio:
            assert c.meta["oov_by"] == "image_name"
        assert (c.meta["lang"] == "en" or c.meta["lang_conf"] < cfg.lang_min_conf
                or (c.meta.get("lang_by") == "vocabulary" and c.meta["n_words"] <= 12))
        assert c.raw_text == next(x.raw_text for x in candidates
                                  if x.image_url == c.image_url and x.text_source == c.text_source
                                  and x.page_url == c.page_url and x.img_index == c.img_index)
