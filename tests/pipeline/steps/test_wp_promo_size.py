"""The thirty-fifth pass's limits of rule W (a WordPress thumbnail's original upload): S, the
thumbnail's size is a lower bound of its original's, read by the text step's size-gated rules;
P, a promotion (a file named a banner, a sponsor's or an ad's, or a campaign-tagged link)
gives no original."""
from __future__ import annotations

from dataclasses import replace

import pytest

from filters.text import TextCleaner, rule_size
from pipeline.core.records import Page
from pipeline.core.stage import Drop
from pipeline.steps.extract import Extractor

UP = "https://x.example.com/wp-content/uploads/2015/12/"
URL = "https://x.example.com/buttercream/"


def outputs(body: str):
    (ev,) = list(Extractor().events(Page(url=URL, body=body.encode(), content_type="text/html")))
    return ev


@pytest.fixture(scope="module")
def cleaner():
    c = TextCleaner()
    c.setup()
    return c


EGGNOG = (f"<div class='related'><a href='/eggnog/'><img width='203' height='250' "
          f"src='{UP}Eggnog-t-center-bottom-203x250.jpg' alt='Eggnog'></a></div>")


def test_the_thumbnails_size_is_the_originals_lower_bound():
    (cand,) = outputs(EGGNOG).outputs
    assert cand.image_url == UP + "Eggnog-t-center-bottom.jpg"
    assert (cand.meta["min_width"], cand.meta["min_height"]) == (203, 250)
    assert "img_width" not in cand.meta  # not a served size: the pair figures do not read it
    assert rule_size(cand.meta) == (203, 250)


def test_an_undeclared_thumbnail_gives_its_named_size():
    (cand,) = outputs(f"<div class='related'><img src='{UP}Eggnog-t-center-bottom-203x250.jpg' "
                      "alt='Eggnog'></div>").outputs
    assert (cand.meta["min_width"], cand.meta["min_height"]) == (203, 250)


def test_a_declared_size_comes_before_the_bound():
    assert rule_size({"img_width": 640, "min_width": 203, "min_height": 250}) == (640, 250)
    assert rule_size({}) == (None, None)


def test_the_one_word_name_keeps_the_originals_text(cleaner):
    (cand,) = outputs(EGGNOG).outputs
    ev = cleaner.process_batch([cand])[0]
    assert not isinstance(ev, Drop) and [c.text for c in ev] == ["Eggnog"]
    meta = dict(cand.meta)
    del meta["min_width"], meta["min_height"]  # without the bound: too short, as before
    ev = cleaner.process_batch([replace(cand, meta=meta)])[0]
    assert isinstance(ev, Drop) and ev.reason == "text_too_short"


BELIZE = (f"<aside class='widget'><ul><li><a href='/2022/04/20/belize-weather/'><img width='80' "
          f"height='80' src='{UP}Weather-Banner_JAN2022-7-80x80.jpg' "
          "alt='Belize Weather Banner - Travellers Liquor'></a></li></ul></aside>")


@pytest.mark.parametrize("html", [
    BELIZE,
    f"<div><img width='80' height='80' src='{UP}acme-sponsor-logo-block-80x80.jpg' "
    "alt='Our partner Acme Travel Insurance'></div>",
    f"<div><img width='60' height='60' src='{UP}summer-ads_728x90-60x60.jpg' "
    "alt='Summer sale on every dress'></div>",
    # a campaign-tagged link: the site promoting its own event
    "<div><a href='https://events.x.example.com/event/debbie-gibson?utm_source=x&amp;"
    f"utm_medium=site&amp;utm_campaign=ros'><img width='50' height='50' "
    f"src='{UP}live-Debbie-Gibson-150x150.png' alt='Debbie Gibson: Out of the Blue concert "
    "8/22 7 PM ET'></a></div>",
])
def test_a_promotion_gives_no_original(html):
    ev = outputs(html)
    assert isinstance(ev, Drop) or all("shown_url" not in c.meta for c in ev.outputs)


@pytest.mark.parametrize("html", [
    # "adobo" and "headline" hold "ad" only inside a word; utm_source alone is no campaign tag
    f"<div><img width='80' height='80' src='{UP}chicken-adobo-80x80.jpg' "
    "alt='Chicken adobo in a clay pot'></div>",
    f"<div><a href='/adobo/?utm_source=feed'><img width='80' height='80' "
    f"src='{UP}chicken-adobo-80x80.jpg' alt='Chicken adobo in a clay pot'></a></div>",
])
def test_other_thumbnails_still_give_their_original(html):
    (cand,) = outputs(html).outputs
    assert cand.image_url == UP + "chicken-adobo.jpg"
