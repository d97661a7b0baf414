"""Thirteenth pass (docs/captions.md): WordPress's taxonomy classes, a section's own
<header> / <footer>, Foundation Interchange on an <img>, content-recommendation ad hosts and a
hash read as a width; fourteenth pass: a layout wrapper's sidebar modifier, Tableau Public's
static picture; fifteenth pass: TripleLift's image hosts, a logo named by its link or the block
around it; one rule per test, on tiny inline pages."""
from __future__ import annotations

import pytest

from pipeline.steps.html_images import find_images
from pipeline.steps.extract import Extractor
from pipeline.steps.image_names import names_logo, query_width
from pipeline.steps.image_roles import image_role
from pipeline.steps.regions import class_region
from pipeline.core.records import Page
from pipeline.core.stage import Keep

URL = "https://example.com/blog/post.html"


def region(html: str) -> str:
    (img,) = find_images(html, URL).images
    return img.region


@pytest.mark.parametrize("value,expected", [
    # get_post_class(): the post's taxonomy terms and state say what it is about
    ("post-96709 post type-post status-publish format-standard hentry "
     "category-social-issues", ""),
    ("post-3710 post category-cookies tag-chocolate", ""),
    ("post tag-comments tag-related-news", ""), ("format-aside", ""),
    ("type-sponsored status-publish", ""), ("product type-product product_cat-share-bags "
                                            "product_tag-newsletter", ""),
    # the element's other names still count; "post-" is a theme's box, not a taxonomy
    ("category-news sidebar-widget", "aside"), ("post-author", "author"),
    ("post-share", "share"), ("post-comments", "comments"),
    ("social-share", "share"), ("tagline", ""), ("footer-category-list", "footer"),
])
def test_taxonomy_classes_name_no_region(value, expected):
    assert class_region(value) == expected


def test_a_posts_category_does_not_make_its_picture_furniture():
    html = ("<div class='post-1 post hentry category-social-issues'><div class='entry'>"
            "<img src='/up/carissa-etienne.png' alt='Dr Carissa Etienne'></div></div>")
    assert region(html) == ""
    assert region("<div class='post-1 post category-news share-box'><img src='a.jpg'></div>") \
        == "share"  # a real share box keeps its region


@pytest.mark.parametrize("html,expected", [
    # HTML-AAM: <header> / <footer> are banner / contentinfo only outside sectioning content
    ("<header><img src='a.jpg'></header>", "header"),
    ("<div><footer><img src='a.jpg'></footer></div>", "footer"),
    ("<section><header><img src='a.jpg'></header></section>", ""),
    ("<section class='card'><footer class='meta'><img src='a.jpg'></footer></section>", ""),
    ("<div role='region'><header><img src='a.jpg'></header></div>", ""),
    ("<aside><header><img src='a.jpg'></header></aside>", "aside"),  # the aside's own head
    ("<nav><footer><img src='a.jpg'></footer></nav>", "nav"),
    # read as a div's: its class and role still count
    ("<section><header class='site-header'><img src='a.jpg'></header></section>", "header"),
    ("<section><header role='banner'><img src='a.jpg'></header></section>", "header"),
    ("<section><footer class='author-bio'><img src='a.jpg'></footer></section>", "author"),
    ("<article><header class='byline'><img src='a.jpg'></header></article>", "author"),
    # a section inside the site's header is still in the site's header
    ("<header><section><header><img src='a.jpg'></header></section></header>", "header"),
])
def test_a_sections_own_header_or_footer_is_not_the_sites(html, expected):
    assert region(html) == expected


@pytest.mark.parametrize("html,expected", [
    ("<header class='card-header'><img src='a.jpg'></header>", ""),
    ("<header class='article-header'><img src='a.jpg'></header>", ""),
    ("<header class='entry-header'><img src='a.jpg'></header>", ""),
    ("<footer id='post-footer'><img src='a.jpg'></footer>", ""),
    ("<header class='entry-header share-row'><img src='a.jpg'></header>", "share"),
    # no component's head: the site's
    ("<header class='site-header'><img src='a.jpg'></header>", "header"),
    ("<header class='header__list'><img src='a.jpg'></header>", "header"),
    ("<footer class='section-footer'><img src='a.jpg'></footer>", "footer"),
    ("<header class='card-header' role='banner'><img src='a.jpg'></header>", "header"),
])
def test_a_header_tag_with_a_components_class_is_that_components(html, expected):
    assert region(html) == expected


def test_interchange_on_an_img_replaces_a_real_src():
    (img,) = find_images("<img src='/t/small.jpg' data-interchange='[/t/a-300.jpg, (small)], "
                         "[/t/a-1200.jpg, (large)]' alt='A sunset'>", URL).images
    assert (img.url, img.url_attr) == ("https://example.com/t/a-1200.jpg", "data-interchange")
    # another lazy attribute still gives way to a real src
    (img,) = find_images("<img src='/t/small.jpg' data-src='/t/big.jpg' alt='x'>", URL).images
    assert (img.url, img.url_attr) == ("https://example.com/t/small.jpg", "src")


@pytest.mark.parametrize("url", [
    "https://images.revcontent.com/revcontent/image/fetch/f_jpg,q_auto,h_150,w_225,c_fill/"
    "pg_1/https://media.revcontent.com/content/images/7d7e1b90.jpeg",
    "https://cdn.revcontent.com/assets/img/rc-logo.png",
    "https://images.outbrainimg.com/transform/v3/eyJpdSI6ImFi.webp",
    "https://images.taboola.com/taboola/image/fetch/f_jpg/http%3A//x.com/a.jpg",
])
def test_content_recommendation_networks_images_are_ads(url):
    assert image_role(url, {"alt": "Here Are 45 of the Coolest Gifts"}, None, None, "") == "ad"


def test_a_revcontent_widget_is_a_related_box():
    assert class_region("post-listing revcontent-listing") == "related"
    assert class_region("rcjsload_10f9a4") == "related"


@pytest.mark.parametrize("url,width", [
    ("https://a.com/x.jpg?w=1920", 1920), ("https://a.com/x.jpg?h=300&w=600&crop=1", 600),
    ("https://res.cloudinary.com/d/image/upload/c_fill,w_800,h_600/x.jpg", 800),
    ("https://a.com/x.jpg?resize=300%2C200", 300), ("https://a.com/x.jpg?width=400;q=80", 400),
    # a hash whose first characters are digits is no width
    ("https://a.com/x.jpg?w=98c520fc", 0), ("https://a.com/x.jpg?v=1&w=1234abcd", 0),
    # the fragment never reaches the server
    ("https://a.com/x.jpg#view&w=1200", 0), ("https://a.com/x.jpg?w=640#w=1200", 640),
])
def test_query_width_reads_a_whole_number_outside_the_fragment(url, width):
    assert query_width(url) == width


@pytest.mark.parametrize("value,expected", [
    # a layout wrapper saying where its sidebar sits wraps the content too (fourteenth pass)
    ("cb-post-wrap cb-wrap-pad wrap clearfix cb-sidebar-right", ""),
    ("container right-sidebar", ""), ("page-wrapper sidebarLeft", ""),
    # no layout name beside it: the sidebar itself
    ("sidebar-right", "aside"), ("widget-area sidebar-left", "aside"),
    # the wrapper's other region names still count; a sidebar not placed is still one
    ("wrap sidebar-right share-bar", "share"), ("container sidebar", "aside"),
])
def test_a_layout_wrappers_sidebar_modifier_names_no_region(value, expected):
    assert class_region(value) == expected


def test_a_caption_in_a_wrapper_with_a_sidebar_modifier_is_content():
    html = ("<div class='cb-post-wrap wrap cb-sidebar-right'><article><div class='wp-caption'>"
            "<img src='/up/botany-2022.jpg' alt='Whitewashed Botany'>"
            "<p class='wp-caption-text'>Whitewashed Botany, 2022</p></div></article>"
            "<aside class='cb-sidebar'><img src='/up/ad.jpg' alt='x'></aside></div>")
    assert [img.region for img in find_images(html, URL).images] == ["", "aside"]


@pytest.mark.parametrize("url", [
    "https://public.tableausoftware.com/static/images/re/real-presidents/iatripsdash/1_rss.png",
    "https://public.tableau.com/static/images/Io/IowaTrips/Dash/1_rss.png",
    "https://public.tableau.com/static/images/Io/IowaTrips/Dash/1.png",
])
def test_a_tableau_vizs_static_picture_is_no_feed_icon(url):
    alt = {"alt": "Iowa Trips by Possible Presidential Candidates, by Party"}
    assert image_role(url, alt, None, None, "") == ""
    # size and region are read as for any image
    assert image_role(url, alt, 40, 40, "") == "icon"
    # elsewhere "rss" still names a feed icon
    assert image_role("https://example.com/img/1_rss.png", alt, None, None, "") == "icon"


@pytest.mark.parametrize("url", [
    # TripleLift's native ads: the creative through its resizer, the picture, the AdChoices icon
    "https://img.3lift.com/?width=600&height=500&url=%2F%2Fimages.3lift.com%2F14226292.jpg"
    "&logo=%2F%2Fimages.3lift.com%2F16287942.png",
    "https://images.3lift.com/14283962.jpg",
    "https://ib.3lift.com/static/buttons/edaa/OBA_TRANS.png",
])
def test_triplelift_images_are_ads(url):
    assert image_role(url, {"alt": "State Farm"}, None, None, "") == "ad"


def test_a_host_merely_ending_in_lift_is_no_ad():
    assert image_role("https://cdn.facelift.com/p/team-photo.jpg", {"alt": "Our team at work"},
                      None, None, "") == ""


def linked(html: str) -> str:
    (img,) = find_images(html, URL).images
    width = int(img.attrs["width"]) if "width" in img.attrs else None
    height = int(img.attrs["height"]) if "height" in img.attrs else None
    return image_role(img.url, img.attrs, width, height, img.region, frozenset(), img.link)


@pytest.mark.parametrize("html,role", [
    # the block around the logo's link names it (jetwick), or the link itself does
    ("<div class='jetwicklogo'><a href='./'><img src='img/jetwick.png'></a></div>", "logo"),
    ("<a class='display-block image-element logo-link' href='/'><img src='/i/img.png'></a>",
     "logo"),
    ("<div class='td-main-logo'><a href='/'><img src='/u/Hero-1024x256.png'></a></div>", "logo"),
    ("<a id='siteLogo' href='/'><img src='/i/brand.png' alt='Acme News'></a>", "logo"),
    ("<div class='listen logo'><a href='/radio'><img src='/u/wfan1.png?w=150' alt='WFAN'>"
     "</a></div>", "logo"),
    # a picture declared at the image step's size both ways is still a picture
    ("<a class='logo-link' href='/'><img src='/u/team.jpg' width='600' height='400' "
     "alt='The team at the opening'></a>", ""),
    # a button's link names no logo: it also wraps book covers and gallery pictures
    ("<a class='button-link' href='?x'><img src='img/find-similar.png' "
     "title='Find Similar Tweets'></a>", ""),
    ("<a class='recipes-modal-button' href='#'><img src='/u/Jacket-232x300.jpg' width='232' "
     "height='300' alt='My Little French Kitchen'></a>", ""),
    # only the link and the element around it are read, not every ancestor
    ("<div class='site-logo'><p><span><a href='/post'><img src='/u/dish.jpg' "
     "alt='A bowl of soup'></a></span></p></div>", ""),
    # an image in no link is not judged by its parent's name here
    ("<div class='logo'><img src='/u/dish.jpg' alt='A bowl of soup'></div>", ""),
    # "catalogo", "dialogo": Spanish and Italian words, no logo
    ("<div class='catalogo-prodotti'><a href='/p/1'><img src='/u/chair.jpg' "
     "alt='A wooden chair'></a></div>", ""),
])
def test_a_logo_named_by_its_link_or_the_block_around_it(html, role):
    assert linked(html) == role


@pytest.mark.parametrize("value,named", [
    ("logo", True), ("logo-link", True), ("td-main-logo", True), ("siteLogo", True),
    ("jetwicklogo", True), ("brand-wordmark", True), ("logos-strip", True),
    ("catalogo", False), ("Dialogo-box", False), ("button-link", False), ("post", False),
])
def test_names_logo(value, named):
    assert names_logo(value) is named


def test_the_extractor_drops_a_linked_logo_with_its_own_reason():
    # the logo's tagline beside it (jetwick's "Search twitter without noise") was its side
    html = ("<html><body><div class='jetwicklogo'><a href='./'><img src='img/jetwick.png'>"
            "<div class='subtitle'>Search twitter without noise</div></a></div>"
            "<p>Some prose of the page about searching the short messages of a network.</p>"
            "<p><img src='/u/photo.jpg' alt='A crowd at the harbour at sunset'></p></body></html>")
    ev = next(Extractor().events(Page(url=URL, body=html.encode(), content_type="text/html")))
    assert isinstance(ev, Keep)
    assert {c.image_url for c in ev.outputs} == {"https://example.com/u/photo.jpg"}
    assert ("image", "extract_image_logo", 1) in ev.units
    assert ("image", "kept", 1) in ev.units
