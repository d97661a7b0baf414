"""The thirty-sixth pass's rule N: a picture whose alt or title names the page's author
(``<meta name="author">``, a JSON-LD author's name) is the author's portrait (an avatar)
outside the content, or in it when the text is the name alone or with the site's name."""
from __future__ import annotations

import pytest

from pipeline.core.records import Page
from pipeline.core.stage import Drop
from pipeline.steps.extract import Extractor
from pipeline.steps.image_roles import author_names

URL = "https://www.feastingathome.com/wild-mushroom-risotto/"
META = "<head><meta name='author' content='Libby Jenkinson'></head>"
LD = ("<head><meta property='og:site_name' content='Feasting at Home'><script "
      "type='application/ld+json'>{\"@type\":\"Recipe\",\"author\":{\"@type\":\"Person\","
      "\"name\":\"Sylvia Fountaine\"}}</script></head>")
PIC = "https://www.feastingathome.com/wp-content/uploads/2020/08/"


def texts(html: str) -> list[str]:
    page = Page(url=URL, body=html.encode(), content_type="text/html")
    (ev,) = list(Extractor().events(page))
    return [] if isinstance(ev, Drop) else [c.text for c in ev.outputs]


@pytest.mark.parametrize("html", [
    # a sidebar widget with no author class: the name among other words
    f"{META}<body><article><p>Keto bread.</p></article><aside class='sidebar'><figure>"
    f"<img width='600' height='600' src='{PIC}3.png' alt='Libby Jenkinson in her garden'>"
    "</figure></aside></body>",
    # a popup box read as content: the name and the site's name, nothing else
    f"{LD}<body><div class='cp-popup-content'><img width='400' height='400' "
    f"src='{PIC}Facetune.jpg' alt='Sylvia Fountaine, Feasting at Home Blog'></div></body>",
    f"{LD}<body><p><img width='400' height='400' src='{PIC}me.jpg' "
    "alt='Sylvia Fountaine'></p></body>",
])
def test_a_portrait_naming_the_author_is_no_caption(html):
    assert texts(html) == []


@pytest.mark.parametrize("html", [
    # in the article, a picture that names the author among other words is still a caption
    f"{LD}<body><p><img width='600' height='400' src='{PIC}risotto.jpg' "
    "alt='Sylvia Fountaine stirring a pot of wild mushroom risotto'></p></body>",
    # outside the content, a scene described (more than 8 words) even where the author is in it
    f"{META}<body><aside class='sidebar'><img width='600' height='600' src='{PIC}3.png' "
    "alt='Libby Jenkinson holding a stack of homemade tortillas in a blue napkin'></aside>"
    "</body>",
    # a page whose author is named by no meta nor JSON-LD: nothing to match
    "<body><aside class='sidebar'><img width='600' height='600' "
    f"src='{PIC}3.png' alt='Libby Jenkinson in her garden'></aside></body>",
])
def test_other_pictures_keep_their_text(html):
    assert texts(html)


def test_author_names_are_person_names():
    assert author_names(("Libby Jenkinson", "admin", "M", "Beth M", "Staff Writer")) == \
        (("libby", "jenkinson"), ("beth", "m"), ("staff", "writer"))
    assert author_names(("the editors",)) == ()
