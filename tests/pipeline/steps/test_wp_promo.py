"""The thirty-fifth pass's limit of rule W (a WordPress thumbnail's original upload), rule P: a
promotion (a file named a banner or a sponsor's, or a picture behind a campaign-tagged link)
gives no original."""
from __future__ import annotations

import pytest

from pipeline.core.records import Page
from pipeline.core.stage import Drop
from pipeline.steps.extract import Extractor

UP = "https://x.example.com/wp-content/uploads/2015/12/"
URL = "https://x.example.com/buttercream/"


def outputs(body: str):
    (ev,) = list(Extractor().events(Page(url=URL, body=body.encode(), content_type="text/html")))
    return ev


BELIZE = (f"<aside class='widget'><ul><li><a href='/2022/04/20/belize-weather/'><img width='80' "
          f"height='80' src='{UP}Weather-Banner_JAN2022-7-80x80.jpg' "
          "alt='Belize Weather Banner - Travellers Liquor'></a></li></ul></aside>")


@pytest.mark.parametrize("html", [
    BELIZE,
    f"<div><img width='80' height='80' src='{UP}acme-travel-sponsor-80x80.jpg' "
    "alt='Our partner Acme Travel Insurance'></div>",
    f"<div><img width='60' height='60' src='{UP}weekend-sponsored-post-60x60.jpg' "
    "alt='A weekend in the mountains with Acme'></div>",
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
