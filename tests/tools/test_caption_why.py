"""tools/caption_why.py: where a good caption the extractor gives no candidate is lost."""
from pipeline.core.records import Page
from tools.caption_why import why_image

PROSE = "The old harbour of the town seen from the hill at dawn, with fishing boats moored."
HTML = f"""<html><head><title>t</title></head><body>
<nav><ul><li><a href="/"><img src="/menu/home.png" alt="Home"></a></li></ul></nav>
<article><p>{PROSE} <img src="/pics/harbour.jpg" width="800" height="600"> {PROSE}</p>
<p><img src="/pixel.gif" width="1" height="1"></p></article>
<aside class="sidebar"><div><img src="/pics/side.jpg" width="800" height="600">
<p>{PROSE}</p></div></aside>
</body></html>"""


def _page():
    return Page(url="https://example.org/story", body=HTML.encode(), content_type="text/html")


def test_an_image_with_a_role_says_its_role_and_region():
    assert why_image(_page(), "https://example.org/menu/home.png") == ["role furniture in nav"]
    (line,) = why_image(_page(), "https://example.org/pixel.gif")
    assert line.startswith("role ") and line.endswith(" in content")
    assert line.split()[1] in ("spacer", "tracker")


def test_a_surrounding_text_says_why_its_sides_are_discarded():
    assert why_image(_page(), "https://example.org/pics/side.jpg") == \
        ["sides extract_side_region in aside"]
    assert why_image(_page(), "https://example.org/pics/harbour.jpg") == ["sides kept in content"]


def test_an_image_not_on_the_page_gives_nothing():
    assert why_image(_page(), "https://example.org/pics/none.jpg") == []
