"""qa22 (docs/captions.md): faults of the extract step found by reading one by one the English
new-site pages that gave no candidate text; one fault per test, on tiny inline pages."""
from __future__ import annotations

from pipeline.core.records import Page
from pipeline.core.stage import Keep
from pipeline.steps.extract import Extractor

URL = "https://www.example-recipes.net/blog/jalapeno-popper-casserole/"
SVG = "data:image/svg+xml;base64,PHN2ZyB2aWV3Qm94PSIwIDAgMTUxIDE1MSI+PC9zdmc+"


def extracted(html: str) -> tuple[dict, dict]:
    """({(source, text): image URL} of the page's candidates, its counted image reasons)."""
    ev = next(Extractor().events(Page(url=URL, body=html.encode(), content_type="text/html")))
    got = {(c.text_source, c.text): c.image_url for c in ev.outputs} \
        if isinstance(ev, Keep) else {}
    return got, {reason: n for _, reason, n in ev.units}


def test_a_lazy_loaders_own_attribute_outside_data_names_the_image():
    # NitroPack keeps the real URL in nitro-lazy-src / nitro-lazy-srcset over an inline SVG;
    # an older loader in lazysrc over a transparent gif (castironketo.net: 30 images, none
    # read, the page dropped as extract_no_images)
    big = ("https://nitrocdn.com/Prl/assets/static/optimized/rev-1/wp-content/uploads/2021/01/"
           "Keto-Jalapeno-Popper-Casserole.jpg")
    html = ("<html><body><article>"
            f'<p><img width="1200" height="1553" src="{SVG}" class="size-full nitro-lazy" '
            f'nitro-lazy-empty="" data-pin-title="Keto Popper Casserole" '
            f'nitro-lazy-srcset="{big} 1200w, {big[:-4]}-300x300.jpg 300w" '
            f'nitro-lazy-src="{big}" alt="Keto Jalapeno Popper Casserole in a cast iron skillet">'
            "</p>"
            '<p><img src="/img/clear.gif" lazysrc="/uploads/2020/09/harbour-at-dawn.jpg" '
            'width="700" height="467" alt="Fishing boats in the harbour at dawn"></p>'
            "</article></body></html>")
    got, counted = extracted(html)
    assert got[("alt", "Keto Jalapeno Popper Casserole in a cast iron skillet")] == big
    assert got[("alt", "Fishing boats in the harbour at dawn")] == \
        "https://www.example-recipes.net/uploads/2020/09/harbour-at-dawn.jpg"
    assert "extract_image_no_url" not in counted


def test_a_lazy_attribute_gives_way_to_a_real_srcset_and_to_a_real_src():
    # a browser shows a srcset at once: it stays the URL (theperspective.com); so does a real
    # src, and an attribute that only says "lazy" names no URL
    html = ("<html><body><article>"
            '<p><img lazysrc="http://e.org/a-700x467.jpg" '
            'srcset="https://e.org/a-700x467.jpg 700w, https://e.org/a-300x200.jpg 300w" '
            'alt="A red kite over the ridge at noon"></p>'
            '<p><img src="/photos/b.jpg" nitro-lazy-src="https://cdn.e.org/b-other.jpg" '
            'width="640" height="480" alt="A heron standing in the reeds"></p>'
            '<p><img src="/photos/c.jpg" lazy-load="true" width="640" height="480" '
            'alt="Two swans on the frozen lake"></p>'
            "</article></body></html>")
    got, _ = extracted(html)
    assert got[("alt", "A red kite over the ridge at noon")] == "https://e.org/a-700x467.jpg"
    assert got[("alt", "A heron standing in the reeds")] == \
        "https://www.example-recipes.net/photos/b.jpg"
    assert got[("alt", "Two swans on the frozen lake")] == \
        "https://www.example-recipes.net/photos/c.jpg"


def test_a_sticky_footers_push_wrapper_is_no_footer():
    # the CSS sticky footer: a wrapper named "footerPush" holds the whole page above the
    # footer (a shop page: every product tile was "footer" furniture, no candidate); the
    # footer itself stays the footer
    product = "http://iweb.example-shop.com/images/products/shprodde/601583.jpg"
    html = ("<html><body><div id='wrap'><section id='content'><div id='footerPush'>"
            "<div id='products'><article class='gridSku'><div class='gridSkuImg'>"
            f"<a href='/p/601583'><img src='{product}' alt='Hazelnut Ground Coffee, 1-lb'></a>"
            "</div></article></div></div></section></div>"
            "<div id='footer'><img src='/images/footer/store-front.jpg' alt='Our store front'>"
            "</div></body></html>")
    got, counted = extracted(html)
    assert got[("alt", "Hazelnut Ground Coffee, 1-lb")] == product
    assert ("alt", "Our store front") not in got
    assert counted["extract_image_furniture"] == 1
