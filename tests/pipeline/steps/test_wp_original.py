"""A WordPress thumbnail's original upload (thirty-fourth pass, rule W): where a thumbnail is
small for its size only and its page names no larger version, the file it was made from,
stored beside it without the "-<W>x<H>" suffix (pipeline/steps/image_resize.wp_original)."""
from __future__ import annotations

import pytest

from pipeline.core.records import Page
from pipeline.core.stage import Drop
from pipeline.steps.extract import Extractor
from pipeline.steps.image_resize import wp_original

UP = "https://x.example.com/wp-content/uploads/2015/01/"


@pytest.mark.parametrize("url,expected", [
    (UP + "afghan_norinj_pilaw-63x53.jpg", UP + "afghan_norinj_pilaw.jpg"),
    # query and fragment dropped: the original as uploaded
    (UP + "kimchi-150x150.JPG?v=3#top", UP + "kimchi.JPG"),
    # an edit in WordPress's image editor: the edited full size, not the unedited upload
    (UP + "stew-e1421234567890-150x150.jpg", UP + "stew-e1421234567890.jpg"),
    # 5.3+'s scaled full size stays named as it is
    (UP + "pie-scaled-300x200.webp", UP + "pie-scaled.webp"),
    # a multisite's uploads
    ("https://x.example.com/wp-content/uploads/sites/3/2020/05/a-1-96x96.png",
     "https://x.example.com/wp-content/uploads/sites/3/2020/05/a-1.png"),
])
def test_the_original_is_the_name_without_its_size_suffix(url, expected):
    assert wp_original(url) == expected


@pytest.mark.parametrize("url", [
    UP + "pilaw.jpg",                      # no size suffix: the original already
    UP + "150x150.jpg",                    # nothing before the suffix
    "https://x.example.com/uploads/2015/01/pilaw-63x53.jpg",  # not a WordPress upload
    UP + "pilaw-63x53.jpg.webp",           # a plugin's converted copy: not WordPress's name
    UP + "pilaw-63x53.svg",
    "https://x.example.com/img.php?f=/wp-content/uploads/a-63x53.jpg",  # in a query only
])
def test_other_urls_give_none(url):
    assert wp_original(url) == ""


URL = "https://x.example.com/recipes/"


def outputs(body: str, **kw):
    (ev,) = list(Extractor(**kw).events(Page(url=URL, body=body.encode(),
                                             content_type="text/html")))
    return ev


THUMB = UP + "afghan_norinj_pilaw-63x53.jpg"


def test_a_small_wordpress_thumbnail_gives_its_original():
    (cand,) = outputs(f"<div class='entry'><img width='63' height='53' src='{THUMB}' "
                      "alt='Afghan Norinj Pilaw'></div>").outputs
    assert cand.image_url == UP + "afghan_norinj_pilaw.jpg"
    assert cand.meta["url_attr"] == "wp original" and cand.meta["shown_url"] == THUMB
    assert "img_width" not in cand.meta  # the original's size is not known


def test_a_larger_version_the_page_names_comes_first():
    big = UP + "afghan_norinj_pilaw-768x512.jpg"
    (cand,) = outputs(f"<div><img width='63' height='53' src='{THUMB}' srcset='{THUMB} 63w, "
                      f"{big} 768w' alt='Afghan Norinj Pilaw'></div>").outputs
    assert cand.image_url == big and cand.meta["url_attr"] == "srcset 768w"


def test_a_file_named_at_the_picture_size_is_fetched_as_it_is():
    url = UP + "afghan_norinj_pilaw-600x400.jpg"
    (cand,) = outputs(f"<div><img width='250' height='167' src='{url}' "
                      "alt='Afghan Norinj Pilaw'></div>").outputs
    assert cand.image_url == url and "shown_url" not in cand.meta


@pytest.mark.parametrize("html", [
    # menu furniture stays furniture (ninth and tenth passes)
    f"<nav><a href='/pilaw'><img src='{THUMB}' width='63' height='53' alt='Pilaw'></a></nav>",
    # a role other than size: an author box's portrait
    f"<div class='author-box'><img src='{UP}beth-120x120.jpg' width='120' height='120' "
    "alt='Beth M'></div>",
    # a logo by its name stays a logo
    f"<p><img src='{UP}site-logo-80x40.png' width='80' height='40' alt='Pilaw Kitchen'></p>",
])
def test_roles_other_than_size_still_drop_the_image(html):
    assert isinstance(outputs(html), Drop)


def test_only_with_page_roles():
    (cand,) = outputs(f"<div><img width='63' height='53' src='{THUMB}' "
                      "alt='Afghan Norinj Pilaw'></div>", page_roles=False).outputs
    assert cand.image_url == THUMB and "shown_url" not in cand.meta
