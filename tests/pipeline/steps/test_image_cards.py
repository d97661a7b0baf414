"""Fortieth pass (docs/captions.md): a card's title in a block beside the picture's own is the
picture's surrounding text (pipeline/steps/image_cards.py); in a related / aside region only a
link going where the picture's goes (forty-fourth pass, R); tiny inline pages."""
from __future__ import annotations

from pipeline.core.records import Page
from pipeline.core.stage import Keep
from pipeline.steps.extract import Extractor

URL = "https://shop.example.net/lighting/"


def extracted(html: str) -> dict:
    """{image URL: {(source, text): meta}} of the page's candidates."""
    ev = next(Extractor().events(Page(url=URL, body=html.encode(), content_type="text/html")))
    out: dict = {}
    if isinstance(ev, Keep):
        for c in ev.outputs:
            out.setdefault(c.image_url.rsplit("/", 1)[1], {})[(c.text_source, c.text)] = c.meta
    return out


def page(body: str) -> str:
    return f"<html><body><main>{body}</main></body></html>"


def test_a_product_cards_title_link_beside_the_pictures_link_is_its_text():
    # 1000bulbs.com: the picture's link and the title's link go to the same product page,
    # each in a block of its own; price and cart form beside them
    card = ('<div class="product-box"><div class="row"><div class="product-image">'
            '<a href="/product/154564/led-a19.html"><img src="/files/{n}.jpg" width="400" '
            'height="400"></a></div></div><div class="detail-section"><div class="row">'
            '<a class="product-title" href="/product/154564/led-a19.html">{t}</a>'
            '<div class="muted">Brand: Curtis Mathes</div></div><div class="row">$2.99 '
            '<a href="/product/154564/led-a19.html#reviews">(7)</a></div></div></div>')
    got = extracted(page(card.format(n="bulb", t="LED Filament Bulb in Warm White Glass")))
    meta = got["bulb.jpg"][("surrounding", "LED Filament Bulb in Warm White Glass")]
    assert meta["card_title"] is True
    assert meta["after"] == "LED Filament Bulb in Warm White Glass" and meta["before"] == ""


def test_a_teaser_links_heading_after_its_figure_and_a_recipe_cards_heading():
    # arstechnica.com: <a><figure><img></figure><h1>headline</h1></a>; a recipe plugin's
    # card (Tasty Recipes): the picture alone in its block, the recipe's name in an <h2>
    # beside it, no link; a heading before its picture is the before side
    html = page(
        '<a href="/science/2014/12/orion-launch-scrubbed/"><figure class="overlay">'
        '<img src="/up/orionscrub-300x150.jpg" width="300" height="150"></figure>'
        '<h1 class="heading"><span>Orion</span> launch scrubbed by a valve on the pad</h1></a>'
        '<header class="tasty-recipes-entry-header"><div class="tasty-recipes-image">'
        '<img src="/up/gingerbread-3.jpeg" width="500" height="500" alt=""></div>'
        '<div class="tasty-recipes-header-content"><h2>Paleo Gingerbread with Molasses</h2>'
        '<div class="rating">5 from 4 reviews</div><p>Prep Time: 10 minutes</p></div></header>'
        '<div class="item"><h3>A Penguin Shaped Egg Cooker</h3><p><img src="/up/9-5.png" '
        'width="700" height="436"></p></div>')
    got = extracted(html)
    assert ("surrounding", "Orion launch scrubbed by a valve on the pad") in got[
        "orionscrub-300x150.jpg"]
    assert ("surrounding", "Paleo Gingerbread with Molasses") in got["gingerbread-3.jpeg"]
    meta = got["9-5.png"][("surrounding", "A Penguin Shaped Egg Cooker")]
    assert meta["before"] == "A Penguin Shaped Egg Cooker" and meta["after"] == ""


def test_no_card_title_outside_a_card():
    # a widget holding several pictures (its heading is the widget's, not a card's), a card
    # with two headings and no shared link, a link whose twin says something else, a
    # picture in a related box whose card has a heading but no link going where the
    # picture's goes (forty-fourth pass, R), a picture whose own block has text (unchanged)
    html = page(
        '<div class="widget"><h4>you might also like:</h4>'
        '<article><a href="/gift-guide/"><img src="/up/gift.jpg"></a></article>'
        '<article><a href="/cookies/"><img src="/up/cookies.jpg"></a></article></div>'
        '<div class="card"><div><img src="/up/two.jpg"></div>'
        '<h3>Garden lights for the patio</h3><h3>Rope lights for the deck</h3></div>'
        '<div class="card"><div><a href="/p/1"><img src="/up/twin.jpg"></a></div>'
        '<a href="/p/1">Warm white bulb for lamps</a><a href="/p/1">Cool white bulb too</a></div>'
        '<div class="related-posts"><div class="card"><div><a href="/p/2">'
        '<img src="/up/related.jpg"></a></div><h3>A related story headline here</h3>'
        '</div></div>'
        '<div class="card"><p><img src="/up/own.jpg"> A lamp on a desk by the window</p>'
        '<h3>Another heading of the card</h3></div>')
    got = extracted(html)
    for name in ("gift.jpg", "cookies.jpg", "two.jpg", "twin.jpg", "related.jpg"):
        assert name not in got
    assert all("card_title" not in meta for meta in got["own.jpg"].values())


def test_in_a_related_or_aside_region_only_the_link_going_where_the_pictures_goes():
    # forty-fourth pass, R: justataste's sidebar (aside) and beyondfrosting's related
    # recipes: the picture's link and the title's link go to the recipe; a related card
    # titled by a heading alone, a picture in no link, and furniture (a footer) gain none
    card = ('<{tag} class="{c}"><div class="card"><div class="thumb"><a href="/r/{n}/">'
            '<img src="/up/{n}.jpg" width="285" height="285"></a></div>'
            '<h4><a href="/r/{n}/">{t}</a></h4></div></{tag}>')
    html = page(
        card.format(tag="div", c="sidebar", n="candy-apples", t="Easy Homemade Candy Apples")
        + card.format(tag="div", c="related-posts", n="coffee-cake",
                      t="Classic Sour Cream Coffee Cake")
        + '<div class="related-posts"><div class="card"><div><img src="/up/nolink.jpg"></div>'
          '<h4>Cocoa Powder Brownies Recipe</h4></div></div>'
        + '<div class="related-posts"><div class="card"><div><a href="/r/a/">'
          '<img src="/up/other.jpg"></a></div><h4><a href="/r/b/">Perfect Vanilla Frosting'
          '</a></h4></div></div>').replace("</body>", card.format(
              tag="footer", c="site-info", n="footer", t="Our Favourite Fall Recipes")
              + "</body>")
    got = extracted(html)
    meta = got["candy-apples.jpg"][("surrounding", "Easy Homemade Candy Apples")]
    assert meta["card_title"] is True and meta["region"] == "aside"
    meta = got["coffee-cake.jpg"][("surrounding", "Classic Sour Cream Coffee Cake")]
    assert meta["card_title"] is True and meta["region"] == "related"
    for name in ("footer.jpg", "nolink.jpg", "other.jpg"):
        assert name not in got


def test_a_noscript_copy_is_the_same_picture_and_a_headings_style_is_no_text():
    # a lazy loader's <noscript> copy of the picture does not make the card hold two; a
    # CSS-in-JS <style> inside the heading (delish.com) is not its text
    html = page(
        '<div class="card"><div class="img"><a href="/r/apple-betty">'
        '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="/up/betty.jpg">'
        '<noscript><img src="/up/betty.jpg"></noscript></a></div>'
        '<h2><style>.css-bc6d9y{display:block}</style><a href="/r/apple-betty">'
        'Apple Brown Betty with Oats</a></h2></div>')
    got = extracted(html)
    assert ("surrounding", "Apple Brown Betty with Oats") in got["betty.jpg"]


def test_with_page_roles_off_a_cards_title_is_read_in_any_region():
    # extract.page_roles false reads every side as it is (the comparison pool that samples
    # are drawn from): a card's title too, in a region as in the content; with roles on the
    # related box's picture gains none (its heading is no link going where the picture's
    # link goes: forty-fourth pass, R)
    html = page('<div class="related-posts"><div class="card"><div><a href="/p/2">'
                '<img src="/up/related.jpg"></a></div><h3>A related story headline here'
                '</h3></div></div>')
    body = Page(url=URL, body=html.encode(), content_type="text/html")
    ev = next(Extractor(page_roles=False).events(body))
    assert isinstance(ev, Keep)
    texts = {(c.text_source, c.text, c.meta.get("card_title")) for c in ev.outputs}
    assert ("surrounding", "A related story headline here", True) in texts
    assert "related.jpg" not in extracted(html)


def test_a_region_picture_in_no_link_takes_a_heading_that_is_one_link():
    # forty-eighth pass, U: fitmencook's popular-posts card (related): the picture in no link,
    # the title a heading wholly linked to the post; a promo box's heading that links nowhere
    # ("Sponsors"), a heading only partly a link, a card whose other link to the post says
    # something else, and a footer card gain none
    card = ('<div class="{c}"><div class="popular_post"><figure><img src="/up/{n}.jpg" '
            'width="2000" height="1125" alt=""></figure><h2 class="grid_title">{h}</h2>'
            '<p>I still remember the day these...</p>{x}<span>November 3, 2025</span>'
            '</div></div>')
    link = '<a href="/recipes/{n}/">{t}</a>'
    html = page(
        card.format(c="related-posts", n="klondike", x="", h=link.format(
            n="klondike", t="Mango Coconut Protein Nice Cream Klondike Bars (V)"))
        + card.format(c="sidebar", n="sponsors", x="", h="Sponsors")
        + card.format(c="sidebar", n="partly", x="", h="New: " + link.format(
            n="partly", t="Ground Bison Bowl"))
        + card.format(c="related-posts", n="readmore", h=link.format(
            n="readmore", t="Spicy Korean Ground Turkey Recipe"),
            x='<a href="/recipes/readmore/">Read more</a>')
    ).replace("</body>", '<footer class="site-info"><div class="item"><figure>'
              '<img src="/up/footer.jpg" alt=""></figure><h2>' + link.format(
                  n="footer", t="Budget Potato Stuffed Burritos") + '</h2><p>Our pick</p>'
              '</div></footer></body>')
    got = extracted(html)
    meta = got["klondike.jpg"][("surrounding",
                                "Mango Coconut Protein Nice Cream Klondike Bars (V)")]
    assert meta["card_title"] is True and meta["region"] == "related"
    assert meta["after"] and not meta["before"]
    for name in ("sponsors.jpg", "partly.jpg", "readmore.jpg", "footer.jpg"):
        assert all(src != "surrounding" for src, _ in got.get(name, {})), (name, got.get(name))


def test_the_climb_skips_only_levels_with_no_text():
    # speed pass 18: the levels up to the picture's nearest block are not read where the
    # walk read no text in that block (PageImages.blank_block); every picture of the real
    # pages whose block is blank gets the same card either way (a level skipped that held
    # text would give a smaller card, or none)
    from pathlib import Path

    import pytest

    from pipeline.steps.html_images import find_images
    from pipeline.steps.image_cards import card_title

    pages = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "real_pages"
    files = sorted(pages.glob("*.html"))
    if not files:
        pytest.skip(f"no real pages at {pages}")
    asked = titled = 0
    for path in files:
        found = find_images(path.read_bytes().decode("utf-8", "replace"), URL)
        for img in found.images:
            if img.node is None or not found.blank_block(img):
                continue
            for by_link in (False, True):
                got = card_title(img.node, img.link, 300, by_link, {}, True)
                assert got == card_title(img.node, img.link, 300, by_link, {}, False), path.name
                asked += 1
                titled += bool(got[0])
    assert asked > 2000 and titled > 300  # the skip is taken, and cards are found past it
