"""A picture's own text that is its site's credit line, "The Spruce Eats / Anita Schecter"
(thirty-fourth pass, rule C'): the extract step marks it (meta["credit_line"]) where the first
part is the page's site, and the text step drops it as text_credit on either path."""
from __future__ import annotations

import pytest

from filters.text import TextCleaner, TextCleanerConfig
from filters.text_rules import publisher_credit
from pipeline.core.records import Page
from pipeline.core.stage import Drop
from pipeline.steps.extract import Extractor
from pipeline.steps.image_roles import site_credit, site_names


@pytest.mark.parametrize("text,shape", [
    ("The Spruce Eats / Anita Schecter", True), ("Food & Wine / Greg DuPree", True),
    ("Serious Eats / J. Kenji López-Alt", True),
    ("Thai Pandan Chicken / Gai Haw Bai Toey", False),  # a name of 4 words
    ("Chicken curry / kari ayam", False), ("Before / After", False),
    ("The Spruce Eats/Anita Schecter", False),  # no space: bare_credit's "Name/Agency" form
])
def test_the_shape(text, shape):
    assert publisher_credit(text) is shape


def test_the_publisher_must_be_the_site():
    spruce = site_names("https://www.thespruceeats.com/doner-kebab/")
    assert site_credit("The Spruce Eats / Anita Schecter", spruce)
    assert site_credit("The Spruce Eats / Anita Schecter",
                       site_names("https://x.example/a/", "The Spruce Eats"))  # og:site_name
    assert not site_credit("Cauliflower Cake / Jonathan Lovekin",
                           site_names("https://www.epicurious.com/recipes/"))
    assert not site_credit("The Spruce Eats / Anita Schecter",
                           site_names("https://www.epicurious.com/recipes/"))


def page(url: str, head: str = "") -> str:
    return (f"<html><head>{head}</head><body><figure><img src='https://img.example/kebab.jpg' "
            "width='800' height='600' alt='Cauliflower Cake / Jonathan Lovekin'>"
            "<figcaption>The Spruce Eats / Anita Schecter</figcaption></figure></body></html>")


def candidates(url: str, head: str = ""):
    (ev,) = list(Extractor().events(Page(url=url, body=page(url, head).encode(),
                                         content_type="text/html")))
    return {c.text_source: c for c in ev.outputs}


@pytest.fixture(scope="module")
def cleaner():
    c = TextCleaner()
    c.setup()
    return c


@pytest.mark.parametrize("url,head", [("https://www.thespruceeats.com/doner/", ""),
                                      ("https://x.example/a/",
                                       "<meta property='og:site_name' content='The Spruce Eats'>")])
def test_the_sites_credit_line_is_dropped_on_both_paths(cleaner, url, head):
    cands = candidates(url, head)
    assert cands["caption"].meta["credit_line"] is True
    assert "credit_line" not in cands["alt"].meta  # a dish and its photographer: not the site
    caption, alt = cleaner.process_batch([cands["caption"], cands["alt"]])
    assert isinstance(caption, Drop) and caption.reason == "text_credit"
    assert [c.text for c in alt] == ["Cauliflower Cake / Jonathan Lovekin"]
    assert cleaner.clean("The Spruce Eats / Anita Schecter", "en", True, credit_line=True)[:2] \
        == (None, "text_credit")


def test_another_sites_line_is_kept_and_the_rule_follows_the_credit_rule(cleaner):
    cands = candidates("https://www.epicurious.com/r/")
    assert "credit_line" not in cands["caption"].meta
    (kept,) = cleaner.process_batch([cands["caption"]])[0]
    assert kept.text == "The Spruce Eats / Anita Schecter"
    # with the credit rule disabled the mark drops nothing
    off = TextCleaner(TextCleanerConfig(disabled_rules=["credit"]))
    off.setup()
    assert off.clean("The Spruce Eats / Anita Schecter", "en", True, credit_line=True)[0] \
        == "The Spruce Eats / Anita Schecter"
