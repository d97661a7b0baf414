"""Sixteenth pass (docs/captions.md): a lightbox link's caption, a short side its picture's
own texts name; one rule per test, on tiny inline pages."""
from __future__ import annotations

import pytest

from filters.file_names import named_by_image
from pipeline.core.records import Page
from pipeline.core.stage import Keep
from pipeline.steps.extract import Extractor
from pipeline.steps.image_texts import lightbox_title

URL = "https://example.com/blog/post.html"


def texts(html: str) -> dict:
    ev = next(Extractor().events(Page(url=URL, body=html.encode(), content_type="text/html")))
    assert isinstance(ev, Keep)
    return {(c.text_source, c.text) for c in ev.outputs}


@pytest.mark.parametrize("attrs,title", [
    # sciencemag's lightbox: the full caption, with its markup, in the link's title
    ({"href": "/assets/sn-olfactory.jpg", "class": "lightbox",
      "title": "<p>Odor detectors. As dinosaurs evolved into birds, their brains' olfactory "
               "bulbs increased in size.</p><p>Credit: Witmer Lab</p>"},
     "Odor detectors. As dinosaurs evolved into birds, their brains' olfactory bulbs "
     "increased in size. Credit: Witmer Lab"),
    # Lightbox2's data-title and fancybox's data-caption come before a plain title
    ({"href": "/u/photo.JPG?v=2", "data-title": "A harbour at dusk", "title": "Open"},
     "A harbour at dusk"),
    ({"href": "/u/photo.webp", "data-caption": "A harbour at dusk"}, "A harbour at dusk"),
    # a link to a page (a teaser, an article) holds no caption of the picture
    ({"href": "/2014/12/22/climate-change-christmas-carols", "title": "Read the story"}, ""),
    ({"href": "/u/photo.jpg", "title": "   "}, ""),
    ({"title": "A harbour at dusk"}, ""),
])
def test_lightbox_title(attrs, title):
    assert lightbox_title(attrs) == title


def test_a_lightbox_links_title_is_its_pictures_title():
    html = ("<html><body><p>Some prose of the page about birds and their sense of smell.</p>"
            "<a class='lightbox' href='/a/olfactory-autox600.jpg' title='&lt;p&gt;Odor "
            "detectors. Brains of birds and dinosaurs.&lt;/p&gt;'><img "
            "src='/a/olfactory-200xauto.jpg' alt='sn-olfactory.jpg'></a></body></html>")
    got = texts(html)
    assert ("title", "Odor detectors. Brains of birds and dinosaurs.") in got
    assert ("alt", "sn-olfactory.jpg") in got


def test_the_images_own_title_wins_and_a_page_links_title_is_not_read():
    own = ("<html><body><a href='/u/big.jpg' title='The link says this'><img src='/u/t.jpg' "
           "title='A harbour at dusk' alt='Harbour'></a></body></html>")
    assert ("title", "A harbour at dusk") in texts(own)
    assert not any(t == "The link says this" for _, t in texts(own))
    page = ("<html><body><a href='/story.html' title='Read the story'><img src='/u/t.jpg' "
            "alt='A harbour at dusk'></a></body></html>")
    assert {s for s, _ in texts(page)} == {"alt"}


@pytest.mark.parametrize("text,image_text,named", [
    ("Lentil Patties", "Lentil patties served on a big platter.", True),
    ("Odor detectors.", "Odor detectors. As dinosaurs evolved into birds.", True),
    ("O'Malley speaks", "Maryland gov. Martin O'Malley speaks in Annapolis", True),
    ("Zuppa Toscana", "Zuppa-Toscana", True),
    # one word, a word missing, a word only inside another word
    ("Pierogi", "Pierogi", False), ("Lentil Soup", "Lentil patties on a platter", False),
    ("Pat Ties", "Lentil patties on a platter", False), ("Lentil Patties", "", False),
])
def test_named_by_image(text, image_text, named):
    assert named_by_image(text, image_text) is named


def test_a_surrounding_candidate_carries_its_pictures_own_texts():
    html = ("<html><body><div class='item'><a href='/lentil-patties/'><img src='/u/DSC04272"
            "-258x344.jpg' width='258' height='344' alt='Lentil patties on a big platter.'>"
            "<h3>Lentil Patties</h3></a></div><p><img src='/u/x.jpg'>A bare picture "
            "beside some prose of the page.</p></body></html>")
    ev = next(Extractor().events(Page(url=URL, body=html.encode(), content_type="text/html")))
    sides = {c.text: c.meta for c in ev.outputs if c.text_source == "surrounding"}
    assert sides["Lentil Patties"]["image_text"] == "Lentil patties on a big platter."
    assert "image_text" not in sides["A bare picture beside some prose of the page."]
