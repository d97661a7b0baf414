"""Thirty-second pass (docs/captions.md): rule F (a folder whose name ends in "icon(s)" holds
icons: a forum index's status icons) and rule P (a file named as a placeholder is a spacer);
one rule per test, on tiny inline pages."""
from __future__ import annotations

import pytest

from pipeline.core.records import Page
from pipeline.core.stage import Keep
from pipeline.steps.extract import Extractor
from pipeline.steps.image_roles import image_role

URL = "https://forum.example.com/index.php"


def extracted(html: str) -> tuple[set, dict]:
    """(the page's (source, text) candidates, its counted image and side reasons)."""
    ev = next(Extractor().events(Page(url=URL, body=html.encode(), content_type="text/html")))
    got = {(c.text_source, c.text) for c in ev.outputs} if isinstance(ev, Keep) else set()
    return got, {reason: n for _, reason, n in ev.units}


@pytest.mark.parametrize("url", [
    # vBulletin's forum status icons, an SMF board's own icon folder, share buttons
    "http://www.bikeforums.net/images/statusicon/forum_old-48.png",
    "https://e.com/Forum_Icons/Questions%20About%20the%20Game.png",
    "https://e.com/pu_rnz/images/social-media-icons/sprechblase.jpg",
    "https://p.o0bc.com/img/social_icons/googleplus-256.png",
    "https://e.com/img/forumicons/board.gif",
])
def test_a_folder_named_for_its_icons_holds_icons(url):
    assert image_role(url, {}, None, None, "") == "icon"
    assert image_role(url, {"alt": "General Discussions"}, None, None, "content") == "icon"


@pytest.mark.parametrize("url", [
    # a storefront's product thumbnails live in a folder called exactly "icon"
    "https://e.com/images/product/icon/17431.jpg",
    # words that end in "icon" and name none
    "https://e.com/lexicon/entries/tree.jpg", "https://e.com/silicon-valley/campus.jpg",
    "https://e.com/uploads/iconic-buildings/chrysler.jpg",
    "https://e.com/icon-of-the-seas/ship.jpg",
])
def test_other_folders_holding_the_letters_name_no_icon(url):
    assert image_role(url, {}, 640, 400, "") == ""


def test_a_forum_index_gives_no_candidate_from_its_status_icons():
    # the board's title and blurb beside its status icon: dropped with the icon, counted
    icon = "http://www.bikeforums.net/images/statusicon/forum_old-48.png"
    html = ("<html><body><table><tr>"
            f'<td><img src="{icon}"></td><td><h2>General Cycling Discussion</h2>'
            "<p>Have a cycling related question or comment that does not fit in one of the "
            "other forums? Post it here.</p></td></tr></table>"
            '<p><img src="/uploads/2015/10/touring-bike-at-the-lake.jpg" width="640" height="400">'
            " A touring bike leaning on the railing at the lake shore in the morning sun.</p>"
            "</body></html>")
    got, counted = extracted(html)
    assert all("Cycling Discussion" not in text for _, text in got)
    assert counted["extract_image_icon"] == 1
    assert any("touring bike" in text for _, text in got)


@pytest.mark.parametrize("url", [
    "https://www.tnetnoc.com/static/28.124/image/global/placeholder-hotel-sm.png",
    "https://i4online.com/img/flashPlaceholder.jpg",
    "https://e.com/img/bg/moreon-placeholder.png",
    "https://e.com/img/placeholder.gif",  # spacer words alone, as before
])
def test_a_placeholder_graphic_is_a_spacer(url):
    assert image_role(url, {"alt": "Treasure Island-TI Las Vegas"}, None, None, "content") \
        == "spacer"


def test_a_placeholder_beside_a_hotel_listing_gives_no_candidate():
    html = ('<div class="listing"><img src="/image/global/placeholder-hotel-sm.png">'
            "<h3>Universal's Cabana Bay Beach Resort</h3><p>4.1 / 5 59 reviews Orlando, "
            "Florida</p></div>")
    got, counted = extracted(html)
    assert got == set()
    assert counted["extract_image_spacer"] == 1


@pytest.mark.parametrize("url", [
    "https://e.com/uploads/place-holder-dog.jpg",  # two words: not the token
    "https://e.com/uploads/placeholders-meeting-2015.jpg",
])
def test_a_file_named_otherwise_is_no_placeholder(url):
    assert image_role(url, {}, 640, 400, "") == ""


@pytest.mark.parametrize("url, role", [
    # forty-fifth pass (rule S): a rating widget's star graphics (snacktory's trails page,
    # a forum's reputation star) are icons, whatever product name sits beside them
    ("https://e.com/images/star_gray.gif", "icon"),
    ("https://e.com/images/star_half.gif", "icon"),
    ("http://www.bikeforums.net/star.gif", "icon"),
    ("https://e.com/img/star-on.png", "icon"),
    # "star" with other words, or a photograph's extension, is no rating widget
    ("https://e.com/uploads/star.jpg", ""),
    ("https://e.com/uploads/rock-star.png", ""),
    ("https://e.com/uploads/daily-star.png", ""),
])
def test_a_rating_stars_graphic_is_an_icon(url, role):
    assert (image_role(url, {"alt": "Nalgene Polyethylene Bottle"}, None, None, "") or "") == role
