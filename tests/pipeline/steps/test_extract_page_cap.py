"""The per-page image cap (extract.max_images_per_page, docs/captions.md "A per-page image
cap"): the first N usable images in document order are judged, every later one is a counted
drop (extract_image_over_page_cap) that reaches the funnel and the report; bad values fail at
load; the default is far above any real page."""
from __future__ import annotations

import json
import os

import pytest

from pipeline import config
from pipeline.config import ConfigError, ExtractConfig
from pipeline.core.records import Page
from pipeline.core.stage import Drop, Keep
from pipeline.core.stats import StepStats, format_funnel
from pipeline.steps.extract import MAX_IMAGES_PER_PAGE, Extractor
from tests.pipeline.steps.hostile_pages import FAMILIES
from tools.caption_pages import PAGES_DE, PAGES_EN, page_url, pages_of, read_page
from tools.report_reasons import explain

URL = "https://example.com/blog/post.html"
CAP = "extract_image_over_page_cap"


def event(body, **kw):
    body = body.encode() if isinstance(body, str) else body
    (ev,) = list(Extractor(**kw).events(Page(url=URL, body=body, content_type="text/html")))
    return ev


def units(ev) -> dict:
    return {(u, outcome): n for u, outcome, n in ev.units}


def pictures(n: int) -> str:
    return "".join(f"<p><img src='/p/photo-{i}.jpg' alt='A red boat number {i} on the lake'></p>"
                   for i in range(n))


def test_the_first_n_in_document_order_are_kept_and_the_rest_counted():
    ev = event(f"<article>{pictures(7)}</article>", max_images_per_page=3)
    assert isinstance(ev, Keep)
    assert [c.image_url for c in ev.outputs] == [f"https://example.com/p/photo-{i}.jpg"
                                                  for i in range(3)]
    assert units(ev) == {("image", "kept"): 3, ("image", CAP): 4}
    # n_images stays the page's count of usable images (scoring reads img_index / n_images)
    assert {c.meta["n_images"] for c in ev.outputs} == {7}
    # the same page twice gives the same event
    assert ev == event(f"<article>{pictures(7)}</article>", max_images_per_page=3)


def test_the_cap_counts_usable_images_whatever_their_role_and_not_urlless_ones():
    # a data: URI is no usable URL (extract_image_no_url) and takes no place under the cap;
    # an icon inside the first N takes its place (judged, then dropped for its role)
    body = ("<article><img src='data:image/gif;base64,R0lGOD' alt='d'>"
            "<img src='/static/icons/arrow.png' alt='Arrow'>" + pictures(4) + "</article>")
    ev = event(body, max_images_per_page=2)
    assert units(ev) == {("image", "extract_image_no_url"): 1, ("image", "extract_image_icon"): 1,
                         ("image", "kept"): 1, ("image", CAP): 3}
    assert [c.image_url for c in ev.outputs] == ["https://example.com/p/photo-0.jpg"]


def test_a_page_whose_judged_images_have_no_text_is_dropped_with_the_cap_counted():
    body = "<article>" + "<img src='/p/x.jpg'>" + pictures(2) + "</article>"
    ev = event(body, max_images_per_page=1)
    assert isinstance(ev, Drop) and ev.reason == "extract_no_text"
    assert units(ev) == {("image", "extract_image_no_text"): 1, ("image", CAP): 2}


def test_a_hostile_page_is_capped_at_the_default():
    ev = event(FAMILIES["images_distinct"](1_000_000))
    found = sum(n for (u, _), n in units(ev).items() if u == "image")
    assert found > MAX_IMAGES_PER_PAGE
    assert units(ev)[("image", CAP)] == found - MAX_IMAGES_PER_PAGE - \
        units(ev).get(("image", "extract_image_no_url"), 0)
    assert len({c.image_url for c in ev.outputs}) <= MAX_IMAGES_PER_PAGE


def test_the_reason_reaches_funnel_and_report(tmp_path):
    from tools.report import render

    stats = StepStats("extract")
    stats.add_event(event(f"<article>{pictures(5)}</article>", max_images_per_page=2))
    d = stats.to_dict()
    assert d["units"]["image"] == {"in": 5, "kept": 2, "dropped": {CAP: 3}}  # in = kept + dropped
    assert f"{CAP}: 3" in format_funnel({"steps": [d]})
    assert explain(CAP) and "max_images_per_page" in explain(CAP)
    (tmp_path / "stats.json").write_text(json.dumps({"steps": [d]}))
    html = render(str(tmp_path))
    assert CAP in html and "never judged nor fetched" in html


@pytest.mark.parametrize("value", [0, -1, 2.5, "100", True, None])
def test_bad_values_fail_at_load_naming_the_key(value):
    with pytest.raises(ConfigError, match="extract.max_images_per_page"):
        config.from_dict({"input": {"warc": ["a.warc.gz"]},
                          "extract": {"max_images_per_page": value}})
    with pytest.raises(ConfigError, match="max_images_per_page"):
        Extractor(max_images_per_page=value)


def test_config_reaches_the_step_and_the_default():
    assert Extractor.from_config(ExtractConfig(max_images_per_page=7)).max_images_per_page == 7
    cfg = config.from_dict({"input": {"warc": ["a.warc.gz"]}})
    assert cfg.extract.max_images_per_page == MAX_IMAGES_PER_PAGE == Extractor().max_images_per_page


@pytest.mark.skipif(not os.path.isdir(PAGES_EN) or not os.path.isdir(PAGES_DE),
                    reason="../shared/data absent")
def test_the_default_is_at_least_ten_times_any_real_page():
    # the 510 real pages: none reaches the cap, so their output is that of no cap
    # (the largest, dailymail.co.uk's food page, has 795 usable images)
    ex = Extractor()
    most = 0
    for folder in (PAGES_DE, PAGES_EN):
        for name in pages_of(folder):
            page = Page(url=page_url(name), body=read_page(name, folder), content_type="text/html")
            u = units(next(ex.events(page)))
            assert ("image", CAP) not in u, name
            most = max(most, sum(n for (w, r), n in u.items()
                                 if w == "image" and r != "extract_image_no_url"))
    assert 0 < most and MAX_IMAGES_PER_PAGE >= 10 * most
