"""Thirtieth pass (docs/captions.md): rule L' (a picture behind an ad's click redirect is an ad)
and rule B (a sidebar picture linking to the site's about page, or greeting "About X" / "Meet
X", is the site owner's portrait); one rule per test, on tiny inline pages."""
from __future__ import annotations

import pytest

from pipeline.core.records import Page
from pipeline.core.stage import Keep
from pipeline.steps.extract import Extractor
from pipeline.steps.image_names import about_link, ad_link
from pipeline.steps.image_roles import image_role

URL = "https://example.com/blog/post.html"
PROSE = "<p>The harbour at dusk, with the fishing boats coming back in after a long day.</p>"


def texts(html: str) -> set:
    ev = next(Extractor().events(Page(url=URL, body=html.encode(), content_type="text/html")))
    if not isinstance(ev, Keep):
        return set()
    return {(c.text_source, c.text) for c in ev.outputs}


def units(html: str) -> dict:
    """The extract step's counted image reasons for a page that yields nothing."""
    ev = next(Extractor().events(Page(url=URL, body=html.encode(), content_type="text/html")))
    assert not isinstance(ev, Keep)
    return {reason: n for _, reason, n in ev.units}


class _Link:
    """A parser node's stand-in: what ad_link / about_link read of an <a>."""

    def __init__(self, **attrs):
        self.attributes = attrs
        self.parent = None


@pytest.mark.parametrize("href", [
    "https://www.breakingbelizenews.com/linkout/41977",
    "http://ad.doubleclick.net/jump/espn.us.com.espn/commentary;sz=300x100",
    "http://pubads.g.doubleclick.net/gampad/jump?iu=%2F4624%2Fcities",
    "https://www.googleadservices.com/pagead/aclk?sa=L&ai=abc",
    "/aclk?sa=l&ai=abc",
    "http://www.adobe.com/go/getflashplayer",
    "/go/failsafe",
])
def test_an_ad_click_redirect_is_an_ad_link(href):
    assert ad_link(_Link(href=href))


@pytest.mark.parametrize("attrs", [
    # an affiliate's product card: its picture is the product it names (L's rel clause
    # dropped "OXO Large cookie scoop" on dev, so L' reads no rel)
    {"href": "https://amzn.to/2FBmOkY", "rel": "noopener sponsored nofollow noreferrer"},
    {"href": "https://example.com/2014/12/linkout-the-story-of-a-word/"},  # a word, no segment
    {"href": "/go"},  # "/go" alone is a page, not a redirect
    {"href": "/gone-fishing/"},
    {"href": "https://notdoubleclick.net/story"},  # a host ending in the name is not it
    {"href": "https://example.com/about/"},
    {},
])
def test_other_links_are_no_ad_links(attrs):
    assert not ad_link(_Link(**attrs))


@pytest.mark.parametrize("href,about", [
    ("http://eatliverun.com/about", True),
    ("https://thepostpartumparty.com/about-me/", True),
    ("/about-us/?ref=sidebar#top", True),
    ("https://example.com/who-we-are", True),
    ("https://example.com/2019/05/about-time-a-review/", False),
    ("https://example.com/about/press-kit/", False),
    ("https://www.laweekly.com/meet-cultural-cultivation-artist-alexandria-douziech/", False),
    ("", False),
])
def test_about_link(href, about):
    assert about_link(_Link(href=href)) is about


def test_a_banner_behind_a_linkout_is_no_candidate():
    html = ("<html><body><main>" + PROSE + "</main><aside><ul><li>"
            '<a href="https://www.breakingbelizenews.com/linkout/41977" target="_blank">'
            '<img src="/u/2018/11/400x400_latest.jpg" alt="larry waight" width="400" '
            'height="400"></a></li></ul></aside></body></html>')
    assert units(html) == {"extract_image_ad": 1}  # an existing, counted drop reason


def test_the_same_banner_with_a_plain_link_is_kept():
    html = ("<html><body><main>" + PROSE + "</main><aside><ul><li>"
            '<a href="https://example.com/2018/11/larry-waight/">'
            '<img src="/u/2018/11/400x400_latest.jpg" alt="larry waight" width="400" '
            'height="400"></a></li></ul></aside></body></html>')
    assert ("alt", "larry waight") in texts(html)


def test_a_sidebar_portrait_linking_to_the_about_page_is_an_avatar():
    html = ("<html><body><main>" + PROSE + '</main><aside id="sidebar"><div class="about-img">'
            '<a href="http://example.com/about"><img src="/u/JB_Feb_2017-73_300x.jpg" '
            'alt="Our family at the beach in Zante"></a></div></aside></body></html>')
    assert ("alt", "Our family at the beach in Zante") not in texts(html)
    role = image_role("https://example.com/u/JB.jpg", {"alt": "Family photo"}, 300, 200,
                      "aside", frozenset(), _Link(href="https://example.com/about-me/"))
    assert role == "avatar"


def test_a_sidebar_greeting_is_an_avatar_without_a_link():
    html = ("<html><body><main>" + PROSE + '</main><aside class="widget widget_media_image">'
            '<img width="600" height="600" src="/u/Image-Cheryl-600X600_circle.png" alt="" '
            'title="Meet Cheryl"></aside></body></html>')
    assert units(html) == {"extract_image_avatar": 1}
    for alt in ("About Jenna", "Meet Kay & Luke", "About Me"):
        assert image_role("https://example.com/u/p.jpg", {"alt": alt}, 300, 300, "aside",
                          frozenset(), None) == "avatar"


def test_the_content_keeps_about_links_and_headlines_that_greet():
    # an about page's own pictures, and a story's headline, in the content stay candidates
    html = ("<html><body><main>" + PROSE +
            '<a href="/about/"><img src="/u/team-at-the-harbour.jpg" width="800" height="600" '
            'alt="The team at the harbour on our first day"></a>'
            '<img src="/u/tattoo.jpg" width="800" height="600" '
            "alt=\"Meet the Swede who tattooed a state epidemiologist's face on his arm\">"
            "</main></body></html>")
    got = texts(html)
    assert ("alt", "The team at the harbour on our first day") in got
    assert ("alt", "Meet the Swede who tattooed a state epidemiologist's face on his arm") in got


@pytest.mark.parametrize("alt", [
    "Meet the Swede who tattooed a state epidemiologist's face on his arm",
    "Meet Cultural Cultivation Artist Alexandria Douziech 44",
    "About Schmidt poster at the cinema",
    "about jenna",  # not a greeting's form: no capitalised name
])
def test_only_a_bare_greeting_is_one(alt):
    assert image_role("https://example.com/u/p.jpg", {"alt": alt}, 300, 300, "aside",
                      frozenset(), None) != "avatar"
