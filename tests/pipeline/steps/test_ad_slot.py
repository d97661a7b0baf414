"""Fifty-second pass (docs/captions.md), rule C54: a picture in a region the region step reads
as an ad is an ad (``extract_image_ad``), unless its alt describes a picture or it has a caption
element of its own; one rule per test, on tiny inline pages."""
from __future__ import annotations

import pytest

from pipeline.core.records import Page
from pipeline.core.stage import Keep
from pipeline.steps.extract import Extractor
from pipeline.steps.image_roles import in_ad_slot

URL = "https://example.com/news/story.html"
PROSE = ("<p>The council met on Tuesday to discuss the harbour works, which are due to finish "
         "before the summer season begins.</p>")
PICTURE = '<img src="/media/2022/04/{name}.jpg" alt="{alt}" width="600" height="400">'


def page(region: str, alt: str, caption: str = "") -> str:
    img = PICTURE.format(name="picture", alt=alt)
    if caption:
        img = f"<figure>{img}<figcaption>{caption}</figcaption></figure>"
    return (f"<html><body><article>{PROSE}"
            f'<div class="{region}">{img}</div>{PROSE}</article></body></html>')


def extracted(html: str) -> tuple[set, dict]:
    ev = next(Extractor().events(Page(url=URL, body=html.encode(), content_type="text/html")))
    texts = {(c.text_source, c.text) for c in ev.outputs} if isinstance(ev, Keep) else set()
    return texts, {reason: n for _, reason, n in ev.units}


def test_a_banner_in_an_ad_slot_is_an_ad():
    texts, units = extracted(page("sponsored-box", "Property Tax Campaign"))
    assert ("alt", "Property Tax Campaign") not in texts
    assert units.get("extract_image_ad") == 1


def test_the_same_banner_in_the_content_is_kept():
    texts, units = extracted(page("story-body", "Property Tax Campaign"))
    assert ("alt", "Property Tax Campaign") in texts
    assert not units.get("extract_image_ad")


def test_an_alt_that_describes_a_picture_is_kept_in_an_ad_slot():
    alt = "Father multi-tasking with young son at kitchen table"
    texts, _ = extracted(page("sponsored-box", alt))
    assert ("alt", alt) in texts


def test_a_picture_with_its_own_caption_is_kept_in_an_ad_slot():
    texts, _ = extracted(page("sponsored-box", "Harbour works",
                              "Der Toast-Test zeigt, wo die Hitze am größten ist."))
    assert ("caption", "Der Toast-Test zeigt, wo die Hitze am größten ist.") in texts


@pytest.mark.parametrize("region,alt,caption,ad", [
    ("ad", "Michael Blicker, Mathieu Cardianal", "", True),
    ("ad", "", "", True),  # a title alone, or no text: the slot decides
    ("ad", "Close up of businesswoman reading financial stock market analysis", "", False),
    ("ad", "Ananda Alert", "A caption the editor wrote", False),
    ("content", "Ananda Alert", "", False),
    ("aside", "Ananda Alert", "", False),
])
def test_in_ad_slot(region, alt, caption, ad):
    assert in_ad_slot(region, alt, caption) is ad
