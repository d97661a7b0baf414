"""Page regions, image roles, surrounding sides and the image / side units of the extract step
(pipeline/steps/regions.py, image_roles.py, extract.py), one rule per test, on tiny inline pages."""
from __future__ import annotations

import json

import pytest

from pipeline.steps.extract import Extractor, below_picture, file_name
from pipeline.steps.html_images import find_images
from pipeline.core.records import Page
from pipeline.steps.image_roles import image_role, site_names
from pipeline.steps.image_urls import interchange_url, srcset_largest
from pipeline.steps.regions import class_region
from pipeline.core.stage import Drop, Keep
from pipeline.core.stats import StepStats, format_funnel

URL = "https://example.com/blog/post.html"
PROSE = "<p>The harbour at dawn, with the fishing boats coming back in. <img src='boat.jpg'> " \
        "Gulls follow them all the way to the quay.</p>"


def event(body: str, **kw):
    (ev,) = list(Extractor(**kw).events(Page(url=URL, body=body.encode(), content_type="text/html")))
    return ev


def units(ev) -> dict:
    return {(u, outcome): n for u, outcome, n in ev.units}


def region(html: str) -> str:
    (img,) = find_images(html, URL).images
    return img.region


# ---- regions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("html,expected", [
    ("<nav><img src='a.jpg'></nav>", "nav"),
    ("<aside><img src='a.jpg'></aside>", "aside"),
    ("<header><img src='a.jpg'></header>", "header"),
    ("<footer><div><img src='a.jpg'></div></footer>", "footer"),
    ("<div role='navigation'><img src='a.jpg'></div>", "nav"),
    ("<div role='contentinfo'><img src='a.jpg'></div>", "footer"),
    ("<ol class='comment-list'><li><img src='a.jpg'></li></ol>", "comments"),
    ("<div id='relatedPosts'><img src='a.jpg'></div>", "related"),  # camelCase split
    ("<div class='share_bar'><img src='a.jpg'></div>", "share"),
    ("<div class='newsletter-signup'><img src='a.jpg'></div>", "newsletter"),
    ("<div class='cookie-banner'><img src='a.jpg'></div>", "cookie"),
    ("<div class='author-box'><img src='a.jpg'></div>", "author"),
    ("<div class='ad-slot'><img src='a.jpg'></div>", "ad"),
    ("<div class='post-body'><p><img src='a.jpg'></p></div>", ""),
])
def test_region_by_tag_role_and_class_tokens(html, expected):
    assert region(html) == expected


def test_the_innermost_region_wins():
    assert region("<aside><div class='comments'><img src='a.jpg'></div></aside>") == "comments"


def test_an_articles_own_header_and_footer_are_content():
    assert region("<article><header><img src='a.jpg'></header></article>") == ""
    assert region("<main><footer><img src='a.jpg'></footer></main>") == ""
    assert region("<header><img src='a.jpg'></header><article>x</article>") == "header"


def test_main_ends_a_region_that_wraps_it_and_layout_wrappers_name_none():
    assert region("<div class='sidebar-left'><main><img src='a.jpg'></main></div>") == ""
    assert region("<div class='content-sidebar-wrap'><img src='a.jpg'></div>") == ""
    assert class_region("has-sidebar no-comments") == ""  # page states, not regions
    assert class_region("widget_recent_entries") == "aside"


@pytest.mark.parametrize("value,expected", [
    # twelfth pass: a component's head or foot is inside the content (austria.info's
    # "table-header" held its pictures; people.com's "card__header", a post's "entry-footer")
    ("table-header", ""), ("card__header", ""), ("entry-footer", ""), ("stream-item-header", ""),
    ("more-about__cardHeader", ""), ("post-footer-ad", "ad"),  # the name's other words count
    # the site's own header and footer keep their region; generic containers are no component
    ("header", "header"), ("site-header", "header"), ("header__list", "header"),
    ("site-header__block", "header"), ("site-footer", "footer"), ("footer-widgets", "footer"),
    ("section-footer", "footer"), ("block-footer-copyright", "footer"),
    ("mini-panel-header", "header"), ("block-area block-area-before-footer", "footer"),
    ("modal-header", "header"),  # a dialog's head is no content either
    ("page-header", ""), ("header-main", ""),  # layout words, as before
])
def test_a_components_header_or_footer_names_no_region(value, expected):
    assert class_region(value) == expected


def test_pictures_in_a_tables_header_are_content_outside_the_site_header():
    html = ("<div class='table-header'><div class='background-image' data-lazy='[https://cdn."
            "austria.info/t/radfahren.jpg.3761067.jpg, (default)]' data-alt='Bike-Ausflug ins "
            "Grüne © Tourismus Salzburg GmbH'></div></div>")
    assert region(html) == ""
    assert region("<div class='site-header'><div class='table-header'><img src='a.jpg'></div>"
                  "</div>") == "header"  # inside the site's header it is the site's


def test_a_related_box_inside_the_article_is_still_related():
    assert region("<article><div class='related-posts'><img src='a.jpg'></div></article>") \
        == "related"


# ---- image roles -----------------------------------------------------------------------------

@pytest.mark.parametrize("img,role", [
    ("<img src='t.gif' width='1' height='1' alt='x'>", "tracker"),
    ("<img src='https://pixel.quantserve.com/pixel/p-abc.gif' alt='x'>", "tracker"),
    ("<img src='/img/1x1.trans.gif' alt='Quantcast'>", "spacer"),
    ("<img src='http://c.statcounter.com/5194729/0/8c29befd/1/' alt='blogspot counter'>",
     "tracker"),
    ("<img src='https://secure.gravatar.com/avatar/0a1b?s=96' alt='John'>", "avatar"),
    ("<img src='/u/jane-headshot.jpg' width='300' height='300' alt='Jane Doe'>", "avatar"),
    ("<img src='/i/rss-icon.png' alt='RSS feed'>", "icon"),
    ("<img src='/i/pic.png' width='32' height='32' alt='Our team at work'>", "icon"),
    ("<img src='/i/bul2.gif' alt='Rush-hour metro blast'>", "icon"),
    ("<img src='/i/site-logo.png' alt='Example News'>", "logo"),
    ("<img src='/i/a.png' alt='ACME logo'>", "logo"),
    ("<img src='/b/app-store-badge.png' alt='Download on the App Store'>", "badge"),
    ("<img src='/ads/banner.jpg' alt='Buy a car'>", "tracker"),  # an ad server path
    ("<img src='/b/roa_300x250.jpeg' alt='Rhythms of Africa'>", "ad"),
    ("<img src='/i/c.jpg' width='728' height='90' alt='Big sale on sofas'>", "ad"),
    ("<img src='/i/chart.svg' alt='Sales by year'>", "vector"),
    ("<img src='/i/thumb.jpg' width='80' height='80' alt='A red bicycle by a wall'>", "small"),
    ("<img src='/i/generic-96x96.gif' alt='Is BPA bad for you?'>", "small"),
])
def test_image_roles_are_dropped_before_any_fetch_with_their_reason(img, role):
    ev = event(f"<p>{img}</p>")
    assert isinstance(ev, Drop) and ev.reason == "extract_no_text"
    assert units(ev) == {("image", f"extract_image_{role}"): 1}


def test_a_picture_declared_large_is_no_icon_whatever_its_name():
    ev = event("<p><img src='/i/arrow-up-price.jpg' width='600' height='400' "
               "alt='Prices rising on a chart'></p>")
    assert [c.text for c in ev.outputs] == ["Prices rising on a chart"]
    assert image_role("https://e.com/avatar.png", {}, 600, 600, "") == "avatar"


def test_a_branded_alt_drops_its_image_only_when_it_is_all_the_image_has():
    url = "https://www.fortinet.com/blog/x"
    html = ("<p>Figure 3: the manifest's SMS filter, as the packer leaves it.<img src='/i/f3.png' "
            "alt='Fortinet FortiGuard Labs Threat Research'></p>")
    (ev,) = list(Extractor().events(Page(url=url, body=html.encode(), content_type="text/html")))
    assert {c.text_source for c in ev.outputs} == {"alt", "surrounding"}


def test_svg_served_without_its_extension_is_a_vector():
    # seventh pass: MediaWiki's formulas ("media/math/render/svg/<hash>"), an svg folder
    url = "https://wikimedia.org/api/rest_v1/media/math/render/svg/2cc3ef3b4d237787cd82e5"
    assert image_role(url, {}, None, None, "") == "vector"
    assert image_role("https://e.com/assets/svgs/arrow", {}, None, None, "") == "vector"
    assert image_role("https://e.com/uploads/svg-guide-cover.jpg", {}, None, None, "") == ""


def test_comment_and_author_pictures_are_avatars():
    ev = event("<div class='comments'><img src='/u/17.jpg' width='60' height='60'>"
               "Ann says: great recipe!</div>")
    assert units(ev) == {("image", "extract_image_avatar"): 1}
    # an author box's picture at any size (declared or not) is its author's
    for img in ("<img src='/u/beth-200x200.jpg' width='200' height='200' alt='Beth Steinberg'>",
                "<img src='/u/daniel.jpg' alt='Daniel Bader'>"):
        ev = event(f"<div class='author-bio'>{img} Beth writes about food.</div>")
        assert units(ev) == {("image", "extract_image_avatar"): 1}


def test_square_thumbnails_and_long_names_are_no_ad_or_share_button():
    # 250x250 is an IAB square, and the size of many recipe thumbnails
    assert image_role("https://e.com/up/spider-bread.jpg", {}, 250, 250, "") == ""
    assert image_role("https://e.com/up/b.jpg", {}, 300, 250, "") == "ad"
    assert image_role("https://e.com/up/keto-omelet-250x250.jpg", {}, None, None, "") == ""
    assert image_role("https://e.com/up/roa_300x250.jpeg", {}, None, None, "") == "ad"
    # a social network's name among many words: a Pinterest version of a recipe picture
    assert image_role("https://e.com/up/salisbury-steak-recipe-pinterest-blog-150x150.jpg",
                      {}, None, None, "") == ""
    assert image_role("https://e.com/i/pinterest-sm-original-43x43.png", {}, None, None,
                      "") == "icon"


def test_a_role_word_split_in_two_in_the_file_name():
    assert image_role("https://e.com/up/irena-profile-pic-1-185x185.jpg", {}, None, None,
                      "aside") == "avatar"
    assert image_role("https://e.com/up/author_pic.jpg", {}, None, None, "") == "avatar"
    assert image_role("https://e.com/up/profile-of-a-hill.jpg", {}, None, None, "") == ""


@pytest.mark.parametrize("page_url,head,alt,role", [
    ("https://www.poppycooks.com/r/1", "", "Poppy Cooks", "logo"),
    ("https://x.example.org/", "<meta property='og:site_name' content='The Eleutheran'>",
     "The Eleutheran", "logo"),
    ("https://www.bbc.co.uk/news/1", "", "BBC", ""),  # under 4 letters: too common to judge
    ("https://www.theguardian.com/a", "", "Guardian", "logo"),
    ("https://www.poppycooks.com/r/1", "", "Poppy cooks pasta in her kitchen", ""),
    # seventh pass: the site's name among a few capitalised words, all the image has
    ("https://www.befifty.com/montauk", "", "Montauk Long Island USA BeFifty", "branded"),
    ("https://www.glamour.com/a", "", "Subscribe to Glamour", "branded"),
    ("https://www.befifty.com/montauk", "", "Beate walks along the beach at Montauk with BeFifty",
     ""),
])
def test_an_alt_that_is_the_sites_name_is_its_logo(page_url, head, alt, role):
    html = f"<html><head>{head}</head><body><p><img src='/i/a.jpg' alt='{alt}'></p></body></html>"
    (ev,) = list(Extractor().events(Page(url=page_url, body=html.encode(),
                                         content_type="text/html")))
    if role:
        assert units(ev) == {("image", f"extract_image_{role}"): 1}
    else:
        assert [c.text for c in ev.outputs] == [alt]
    assert site_names("https://www.bbc.co.uk/x") == frozenset()
    assert site_names("https://www.poppycooks.com/", "Poppy Cooks") == {"poppycooks"}


# ---- surrounding sides -------------------------------------------------------------------------

def test_prose_sides_are_kept_and_the_region_recorded():
    ev = event(f"<article>{PROSE}</article>")
    (c,) = ev.outputs
    assert c.text_source == "surrounding" and c.meta["region"] == "content"
    assert c.meta["before"].startswith("The harbour") and c.meta["after"].startswith("Gulls")
    assert units(ev) == {("image", "kept"): 1, ("side", "kept"): 2}


def test_sides_in_furniture_regions_are_discarded_alt_kept():
    ev = event("<nav><a href='/'><img src='home.jpg' width='600' alt='Our shop front at night'>"
               "</a> Home About Contact</nav>")
    assert [(c.text_source, c.meta["region"]) for c in ev.outputs] == [("alt", "nav")]
    assert units(ev) == {("image", "kept"): 1, ("side", "extract_side_region"): 1}


@pytest.mark.parametrize("html", [
    "<header><img src='/img/goj-header.png' alt='Government of Jamaica'></header>",
    "<footer><p>As seen in</p><img src='/up/britco.png' alt='Brit + Co'></footer>",
    # 300 px wide but 144 high: a wide logo, not a picture (under 300 px on a 2x screen)
    "<footer><img src='/up/britco.png' width='300' height='144' alt='Brit + Co'></footer>",
    "<nav><a href='/x'><img src='/u/dbu.png' width='120' alt='Dont Bore Us'></a></nav>",
])
def test_images_of_the_site_header_footer_and_menu_are_furniture(html):
    ev = event(html)
    assert isinstance(ev, Drop) and units(ev)[("image", "extract_image_furniture")] == 1


@pytest.mark.parametrize("alt,role", [
    # a description in sentence case is a picture's (docs/captions.md, "Fourth pass") ...
    ("A plate of spaghetti carbonara with bacon and Parmesan", ""),
    # ... a headline, a label or a site's tagline is not
    ("The Navy's New Robot Looks and Swims Just Like a Shark", "furniture"),
    ("The Airbnb Blog - Company news, travel tips, and featured listings", "furniture"),
    ("Subscribe to GQ", "furniture"),
])
def test_a_menu_image_whose_alt_describes_a_picture_is_no_furniture(alt, role):
    assert image_role("https://e.com/i/p.jpg?w=184", {"alt": alt}, 184, 184, "nav") == role


@pytest.mark.parametrize("url,alt,width,height,role", [
    # a menu's photograph declared 120 px or more with a phrase for an alt (eighth pass) ...
    ("https://e.com/i/jamiexmastable.jpg?w=184", "Christmas dinner table", 184, 184, ""),
    ("https://e.com/u/blumen-kleid-200x135.jpg", "Maxikleid mit Blumen", 200, 135, ""),
    # ... not a PNG, a smaller one, one without a declared size, a title-case label
    ("https://e.com/i/table.png", "Christmas dinner table", 184, 184, "furniture"),
    ("https://e.com/i/cover.jpg", "Christmas dinner table", 148, 110, "furniture"),
    ("https://e.com/i/cover.jpg", "Christmas dinner table", None, None, "furniture"),
    ("https://e.com/i/cover_2011-04.jpg", "Scientific American Magazine", 192, 254, "furniture"),
    ("https://e.com/i/cover.jpg", "Subscribe to GQ", 184, 184, "furniture"),
    ("https://e.com/i/cover.jpg", "Glamour - the best of beauty", 184, 184, "furniture"),
])
def test_a_menu_photograph_with_a_phrase_for_an_alt_is_no_furniture(url, alt, width, height,
                                                                     role):
    assert image_role(url, {"alt": alt}, width, height, "nav") == role


def test_a_teaser_title_naming_the_file_is_kept_beside_a_menu_picture():
    html = ("<nav><div><a href='/r/basil'><img src='/u/Basil-Chicken-in-Coconut-Curry-Sauce-"
            "Featured-1-500x500.jpg' width='500' height='500'></a> <a href='/r/basil'>Basil "
            "Chicken in Coconut Curry Sauce</a></div><div><a href='/r/x'><img src='/u/IMG_1.jpg'"
            " width='500' height='500'></a> <a href='/r/x'>Basil Chicken in Coconut Curry "
            "Sauce</a></div></nav>")
    ev = event(html)
    assert [(c.text_source, c.image_url.rsplit("/", 1)[-1][:5]) for c in ev.outputs] == \
        [("surrounding", "Basil")]
    assert units(ev)[("side", "extract_side_region")] == 1


@pytest.mark.parametrize("img", [
    "<img src='/up/yucca-leaves-1200x1053.jpg' alt='Yucca tree leaves'>",
    "<img src='/up/capitol.jpg?w=1920&h=1080&crop=1' alt='Texas State Capitol'>",
    "<img src='/up/capitol.jpg' width='640' alt='Texas State Capitol'>",
])
def test_a_picture_of_picture_size_in_the_header_is_kept(img):
    ev = event(f"<header>{img}</header>")
    assert [c.text_source for c in ev.outputs] == ["alt"]
    # in an article, a header is the article's own: no region
    ev = event(f"<article><header><img src='/a/b.png' alt='The team at work'></header></article>")
    assert [c.meta["region"] for c in ev.outputs] == ["content"]


def test_a_list_of_links_is_no_surrounding_text():
    ev = event("<div><img src='a.jpg' alt='A big photo of a lake'> <a href='/1'>Politics</a> "
               "<a href='/2'>Sports</a> <a href='/3'>Weather</a></div>")
    assert [c.text_source for c in ev.outputs] == ["alt"]
    assert units(ev)[("side", "extract_side_links")] == 1


def test_a_teaser_cards_title_is_kept_in_a_related_box():
    ev = event("<div class='related'><a href='/r'><img src='dip.jpg'></a>"
               "<a href='/r'>Cranberry jalapeno dip with cream cheese</a></div>")
    (c,) = ev.outputs
    assert c.text_source == "surrounding" and c.meta["region"] == "related"
    assert c.meta["after"] == "Cranberry jalapeno dip with cream cheese"
    # the same box's plain text (a date, a blurb) is not a teaser's title
    ev = event("<div class='related'><img src='dip.jpg'> Posted March 3 by Ann</div>")
    assert isinstance(ev, Drop) and units(ev)[("side", "extract_side_region")] == 1


def test_a_side_repeating_the_alt_is_counted_as_a_repeat():
    ev = event("<p><img src='a.jpg' alt='Boats in the harbour at dawn'>Boats in the harbour at "
               "dawn</p>")
    assert [c.text_source for c in ev.outputs] == ["alt"]
    assert units(ev) == {("image", "kept"): 1, ("side", "extract_side_repeat"): 1}


def test_page_roles_off_reads_everything_as_before():
    body = "<nav><img src='/i/logo.png' alt='Example'> Home About</nav>"
    assert isinstance(event(body), Drop)
    assert {c.text_source for c in event(body, page_roles=False).outputs} == {"alt", "surrounding"}


# ---- extraction ------------------------------------------------------------------------------

def test_a_figcaption_right_after_its_figure():
    ev = event("<figure><img src='a.jpg'></figure>\n <figcaption>Texas State Capitol at dusk"
               "</figcaption><figure><img src='b.jpg'></figure><p>x</p>"
               "<figcaption>Not b's caption</figcaption>")
    assert [(c.image_url.rsplit("/", 1)[1], c.text) for c in ev.outputs
            if c.text_source == "caption"] == [("a.jpg", "Texas State Capitol at dusk")]


def test_a_lazy_container_with_an_alt_like_attribute():
    ev = event("<div class='slide' data-src='/img/runway-01.jpg' data-alt='Nicole Miller Fall "
               "2002 Ready-to-Wear Collection'></div><div data-src='https://youtube.com/embed/x'"
               " data-alt='YouTube video player'></div>")
    (c,) = ev.outputs
    assert (c.image_url, c.text, c.meta["url_attr"]) == (
        "https://example.com/img/runway-01.jpg",
        "Nicole Miller Fall 2002 Ready-to-Wear Collection", "data-src")


def test_data_source_and_other_image_url_attributes():
    ev = event("<img data-source-large='/full/cat.jpg' alt='A grey cat asleep'>"
               "<img data-original-src='/full/dog.jpg' alt='A dog on the beach'>"
               "<img data-image-url='/full/owl.jpg' alt='An owl in a tree'>")
    assert [(c.image_url.rsplit("/", 1)[1], c.meta["url_attr"]) for c in ev.outputs] == [
        ("cat.jpg", "data-source-large"), ("dog.jpg", "data-original-src"),
        ("owl.jpg", "data-image-url")]


def test_foundation_interchange_rules_give_their_last_path():
    # twelfth pass: austria.info's lazy containers hold Zurb Foundation's Interchange syntax
    # in data-lazy; it was read as one relative URL (".../[https:/cdn...jpg,%20(default)]")
    ev = event("<div class='background-image' data-lazy=\"[https://cdn.austria.info/media/"
               "radfahren--salzburgerland-tourismus.jpg.3761067.jpg, (default)]\" data-alt="
               "'Bike-Ausflug ins Grüne'></div>"
               "<img data-lazy='[/t/gwandhaus.jpg.3998923.jpg, (default)], "
               "[/t/gwandhaus.jpg.3998910.jpg, (large)]' alt='Gwandhaus in Salzburg'>"
               "<img src='/t/small.jpg' data-interchange='[/c/w_300,h_200/a.jpg, (small)], "
               "[/c/w_900,h_600/a.jpg, (large)]' alt='A sunset over the Salzach'>")
    assert [(c.image_url, c.meta["url_attr"]) for c in ev.outputs] == [
        ("https://cdn.austria.info/media/radfahren--salzburgerland-tourismus.jpg.3761067.jpg",
         "data-lazy"),
        ("https://example.com/t/gwandhaus.jpg.3998910.jpg", "data-lazy"),  # the last rule
        # thirteenth pass: Interchange's script replaces a real src too (its last rule)
        ("https://example.com/c/w_900,h_600/a.jpg", "data-interchange")]
    (img,) = find_images("<img src='/blank.gif' data-interchange=' [/c/w_300,h_200/a.jpg, "
                         "(small)], [/c/w_900,h_600/a.jpg, (large)]' alt='x'>", URL).images
    assert (img.url, img.url_attr) == ("https://example.com/c/w_900,h_600/a.jpg",
                                       "data-interchange")  # commas in a path, a space first


@pytest.mark.parametrize("value,url", [
    ("[/a.jpg, (default)]", "https://example.com/a.jpg"),
    ("[/a.jpg, (small)],[/b.jpg,(medium)] , [/c.jpg, (large)]", "https://example.com/c.jpg"),
    ("[/a.jpg, (small)], [javascript:void(0), (large)]", "https://example.com/a.jpg"),
    ("[/a.jpg]", ""), ("[/a.jpg, default]", ""), ("[]", ""), ("/a.jpg, (small)", ""),
])
def test_interchange_url_reads_rules_and_rejects_other_brackets(value, url):
    assert interchange_url(value, URL) == url


def test_a_placeholder_src_gives_way_to_the_srcset():
    ev = event("<img src='/wp/penci-holder.png' srcset='/up/real-900.jpg 900w, /up/real-300.jpg "
               "300w' alt='A market stall full of lemons'>")
    (c,) = ev.outputs
    assert (c.image_url, c.meta["url_attr"]) == ("https://example.com/up/real-900.jpg", "srcset")


def test_file_name_is_that_of_urlsplit():
    from posixpath import basename
    from urllib.parse import urlsplit

    for u in ("https://a.com/x/y.jpg?q=1/2#f", "https://a.com", "https://a.com/",
              "https://a.com?x=/y.jpg", "https://a.com#/x.jpg", "http://u:p@h.com:80/p/q.gif"):
        assert file_name(u) == basename(urlsplit(u).path), u


# ---- the funnel ------------------------------------------------------------------------------

def test_image_and_side_units_balance_and_reach_stats_funnel_and_report(tmp_path):
    pages = [f"<article>{PROSE}<img src='/i/rss-icon.png' alt='RSS'><div><img src='x.jpg'></div>"
             "<img src='data:image/gif;base64,R0lGOD' alt='d'></article>",
             "<nav><img src='/i/logo.png' alt='Site'> Home About</nav>", "<p>no images</p>",
             "<footer><img src='/up/britco.png' alt='Brit + Co'></footer>"]
    stats = StepStats("extract")
    for body in pages:
        stats.add_event(event(body))
    d = stats.to_dict()
    assert (d["in"], d["kept"]) == (4, 1)
    assert d["units"]["image"] == {"in": 6, "kept": 1, "dropped": {
        "extract_image_icon": 1, "extract_image_logo": 1, "extract_image_no_text": 1,
        "extract_image_no_url": 1, "extract_image_furniture": 1}}
    assert d["units"]["side"] == {"in": 2, "kept": 2, "dropped": {}}
    # merge and round trip
    again = StepStats.from_dict(json.loads(json.dumps(d)))
    assert again.merge(StepStats.from_dict(d)).to_dict()["units"]["image"]["in"] == 12
    funnel = format_funnel({"steps": [d]})
    assert "(page images inside: in 6, kept 1)" in funnel and "extract_image_logo: 1" in funnel
    assert "extract_image_furniture: 1" in funnel
    # the HTML report lists the unit reasons beside the step's own
    from tools.report import render

    (tmp_path / "stats.json").write_text(json.dumps({"steps": [d]}))
    html = render(str(tmp_path))
    for reason in d["units"]["image"]["dropped"]:
        assert reason in html
    assert isinstance(event(pages[0]), Keep) and event(pages[0]) == event(pages[0])


@pytest.mark.parametrize("url,role", [
    ("https://e.com/wp-content/themes/jis/img/goj-header.png", "furniture"),
    ("http://g.fool.com/art/foollogo/horizontaltmf.gif", "logo"),
    ("https://e.com/global/v3/promo/politico-337x120.png", "ad"),
    ("https://e.com/wp-content/uploads/gravatar/cassie-m-marshall.jpg", "avatar"),
    ("https://e.com/static/icons/arrow.png", "icon"),
    # fifth pass: header graphics, sprite sheets, banner folders
    ("https://e.com/static/all/img/head/special-report-slide.png", "furniture"),
    ("https://e.com/.element/img/3.0/global/header/us/hdr-politics.gif", "furniture"),
    ("https://e.com/img/site-header/top.png", "furniture"),
    ("https://images.e.com/global/v4/sprites/x.gif", "icon"),
    ("https://e.com/src/images/oth_banner/200701_top10_r.jpg", "ad"),
])
def test_the_folders_of_a_sites_design_files_name_a_role(url, role):
    assert image_role(url, {}, None, None, "") == role
    # a theme folder's picture declared at picture size is content a CMS keeps there
    assert image_role(url, {}, 985, 400, "") == ("" if role == "furniture" else role)


@pytest.mark.parametrize("url", [
    "https://e.com/wp-content/uploads/2023/05/themed-cake.jpg",
    "https://e.com/theme-park/ride.jpg", "https://themes.e.com/uploads/dog.jpg",
    "https://e.com/photos/x.jpg?src=/themes/a.png"])
def test_folder_roles_read_whole_folder_names_of_the_path(url):
    assert image_role(url, {}, 600, 400, "") == ""


@pytest.mark.parametrize("url", [
    "https://e.com/theme-park/ride.jpg", "https://e.com/talking-head/anchor.jpg",
    "https://e.com/headlines/storm.jpg", "https://e.com/uploads/2023/05/header-cake.jpg",
    "https://e.com/uploads/banner-ridge-trail.jpg"])
def test_only_header_and_banner_are_read_as_words_of_a_folder_name(url):
    assert image_role(url, {}, None, None, "") == ""


@pytest.mark.parametrize("url,role", [
    # forty-seventh pass, rule D: a Drupal image style's name is a derivative's size and slot,
    # its "banner" no ad folder (nestle-family's recipe hero under "desktop_banner")
    ("https://e.com/sites/s.com/files/styles/desktop_banner/public/2020-01/17154---Roasted"
     "-Chicken-with-Oriental-Rice.jpg?itok=wUcsrDWz", ""),
    ("https://e.com/sites/default/files/styles/banner/private/hero.jpg", ""),
    # only "banner", only in the style segment (then "public" / "private", core's schemes)
    ("https://e.com/sites/default/files/styles/logo/public/brands5c9.png", "logo"),
    ("https://e.com/files/styles/blog_channel_header_768x100/public/strip.png", "furniture"),
    ("https://e.com/sites/default/files/styles/promo/public/a.jpg", "ad"),
    ("https://e.com/files/styles/top_banner/s3/a.jpg", "ad"),
    ("https://e.com/oth_banner/styles/thumb/public/a.jpg", "ad"),
])
def test_a_drupal_image_styles_banner_is_no_ad_folder(url, role):
    assert image_role(url, {}, None, None, "") == role


@pytest.mark.parametrize("url", [
    "http://imgs.sfgate.com/graphics/partners/kaango/pets/kaango_classifieds.gif",
    "http://images.recipe.com/recipe/images/partners/100_bhg.jpg",
    "http://st.snimg.com/image/sponsors/dodge/presented-by-charger.png"])
def test_a_partners_or_sponsors_folder_names_an_ad(url):
    # seventeenth pass: partner and sponsor logos and promos; a picture declared at the image
    # step's size both ways there is still a picture
    assert image_role(url, {}, None, None, "content") == "ad"
    assert image_role(url, {}, 120, 60, "content") == "ad"
    assert image_role(url, {}, 640, 400, "content") == ""
    assert image_role("https://e.com/uploads/partnership-signing.jpg", {}, None, None, "") == ""
    assert image_role("https://e.com/sponsored-posts/cake.jpg", {}, 640, 400, "") == ""


def test_cost_per_click_tiles_are_ads():
    # thirty-first pass, rule C: a "cpc" folder holds a partner's paid tiles (aol's
    # "aoldotcom-releases/cpc/boredom-therapy.png"), at any size; "cpc" in a class or id
    # names an ad region; a folder merely holding the letters is none
    url = "https://o.aolcdn.com/aoldotcom-releases/cpc/boredom-therapy.png"
    assert image_role(url, {"alt": "Boredom Therapy"}, None, None, "content") == "ad"
    assert image_role(url, {}, 640, 400, "content") == "ad"
    for other in ("https://e.com/cpcs/boredom.png", "https://e.com/uploads/cpc-meeting.jpg"):
        assert image_role(other, {}, 640, 400, "content") == "", other
    assert class_region("cpc-items subitem") == "ad"
    assert class_region("module-cpc") == "ad"
    assert class_region("with-fourth-cpc") == ""  # a page state, as before


def test_a_bio_picture_is_an_avatar():
    # eighteenth pass: a byline's or a site owner's bio picture, named so
    for url in ("https://cdn.abcotvs.com/dip/images/13718537_KTRK-Alex-Bozarjian-BIO-IMG.png",
                "https://cookieandkate.com/images/2017/09/cookie-and-kate-bio-photo.jpg",
                "https://e.com/uploads/BFK-author-page-bio-maybe-author-thumbnail.jpg"):
        assert image_role(url, {}, None, None, "content") == "avatar", url
    # "bio" alone is no person's picture ("bio-eier.jpg": organic eggs; "bio-lab.jpg")
    for url in ("https://e.com/uploads/bio-eier.jpg", "https://e.com/uploads/bio-lab.jpg"):
        assert image_role(url, {}, 640, 400, "content") == "", url


def test_a_file_named_as_a_banner_is_an_ad():
    assert image_role("https://e.com/S1600-R/poobanner2%5B1%5D.JPG", {}, None, None,
                      "aside") == "ad"
    assert image_role("https://e.com/uploads/banner.jpg", {}, None, None, "") == ""


# ---- thumbnails whose page names a larger version (sixth pass) -----------------------------

@pytest.mark.parametrize("img,big,where", [
    # a link to the image file: the same picture's words in its name
    ("<a href='/up/red-bicycle.jpg'><img src='/up/red-bicycle-150x150.jpg' width='75' "
     "height='75' alt='A red bicycle by a wall'></a>", "https://example.com/up/red-bicycle.jpg",
     "a href"),
    # the largest srcset candidate, 300 px or wider (commas inside its URLs)
    ("<img src='/i/p.jpg?rect=0,0,9,9&w=48' width='48' height='48' alt='A red bicycle by a wall' "
     "srcset='/i/p.jpg?rect=0,0,9,9&w=48 48w, /i/p.jpg?rect=0,0,9,9&w=1200 1200w, "
     "/i/p.jpg?rect=0,0,9,9&w=96 96w'>", "https://example.com/i/p.jpg?rect=0,0,9,9&w=1200",
     "srcset 1200w"),
    # WordPress (Jetpack) galleries
    ("<img src='/up/bike-80x80.jpg' width='80' height='80' alt='A red bicycle by a wall' "
     "data-orig-file='/up/bike.jpg' data-large-file='/up/bike-1024x768.jpg'>",
     "https://example.com/up/bike.jpg", "data-orig-file"),
    # an image proxy's thumbnail of the absolute URL it is given
    ("<img src='/thumb.php?src=https%3A%2F%2Fcdn.example.org%2Fup%2Fred-bicycle.jpg&w=80&h=80' "
     "width='80' height='80' alt='A red bicycle by a wall'>",
     "https://cdn.example.org/up/red-bicycle.jpg", "proxy src"),
])
def test_a_thumbnail_with_a_larger_version_on_the_page_gives_that_version(img, big, where):
    ev = event(f"<p>{img}</p>")
    (cand,) = ev.outputs
    assert cand.image_url == big and cand.meta["url_attr"] == where
    assert cand.meta["shown_url"] != big and "img_height" not in cand.meta
    assert units(ev) == {("image", "kept"): 1}


@pytest.mark.parametrize("img", [
    # a srcset that stops below the image step's size
    "<img src='/i/p.jpg?w=48' width='48' height='48' alt='A red bicycle by a wall' "
    "srcset='/i/p.jpg?w=48 48w, /i/p.jpg?w=96 96w'>",
    # a link to another picture (a magnifier icon enlarging a photo), to a wiki's file page,
    # to a page
    "<a href='/i/harbour_large.jpg'><img src='/i/magnify.png' width='15' height='11' "
    "alt='Enlarge the harbour picture'></a>",
    "<a href='/wiki/File:Red_Plate.png'><img src='/w/48px-Red_Plate.png' width='48' "
    "height='48' alt='A red plate of food'></a>",
    "<a href='/shop/red-bicycle.html'><img src='/up/red-bicycle-72x72.jpg' width='72' "
    "height='72' alt='A red bicycle by a wall'></a>",
    # a larger version of a picture that has another role (a logo) keeps the role
    "<a href='/i/site-logo.png'><img src='/i/site-logo-50x50.png' width='50' height='50' "
    "alt='Example News'></a>",
])
def test_no_larger_version_or_another_picture_leaves_the_thumbnail_dropped(img):
    ev = event(f"<p>{img}</p>")
    assert isinstance(ev, Drop)
    assert sum(n for (u, outcome), n in units(ev).items() if u == "image") == 1
    assert ("image", "kept") not in units(ev)


def test_larger_versions_are_looked_for_only_with_page_roles():
    img = "<a href='/up/red-bicycle.jpg'><img src='/up/red-bicycle-150x150.jpg' width='75' " \
          "height='75' alt='A red bicycle by a wall'></a>"
    (cand,) = event(f"<p>{img}</p>", page_roles=False).outputs
    assert cand.image_url.endswith("red-bicycle-150x150.jpg") and "shown_url" not in cand.meta


def test_srcset_largest_reads_descriptors_not_commas():
    assert srcset_largest("a.jpg?rect=0,0,9,9&w=48 48w, a.jpg?rect=0,0,9,9&w=960 960w, "
                          "a.jpg?rect=0,0,9,9&w=96 96w") == ("a.jpg?rect=0,0,9,9&w=960", 960, "w")
    assert srcset_largest("s.jpg 1x, l.jpg 2x") == ("l.jpg", 2, "x")
    assert srcset_largest("only.jpg") == ("", 0, "")
    assert srcset_largest(None) == ("", 0, "")


def test_srcset_largest_reads_a_url_right_after_a_descriptors_comma():
    # no space after the comma (littlethings' Contentful srcsets): the URL after "150w," is the
    # next candidate's, not glued to the descriptor (a fetch of ".../150w,/images..." before)
    big = "https://i.example/p.jpg?w=300"
    assert srcset_largest(f"https://i.example/p.jpg?w=150 150w,{big} 300w") == (big, 300, "w")
    assert srcset_largest("s.jpg 1x,l.jpg 2x,") == ("l.jpg", 2, "x")
    assert srcset_largest("s.jpg 1x,") == ("s.jpg", 1, "x")


# ---- thumbnails with no role under the image step's size (ninth pass) -----------------------

@pytest.mark.parametrize("img,big,where", [
    # a related post's 150 px picture whose srcset goes to 1024w
    ("<img src='/up/red-bicycle-150x150.jpg' width='150' height='150' "
     "alt='A red bicycle leaning on a wall' srcset='/up/red-bicycle-150x150.jpg 150w, "
     "/up/red-bicycle-1024x768.jpg 1024w'>", "https://example.com/up/red-bicycle-1024x768.jpg",
     "srcset 1024w"),
    # a 200 px picture named by its size, linking to its own file
    ("<a href='/up/red-bicycle.jpg'><img src='/up/red-bicycle-200x133.jpg' "
     "alt='A red bicycle leaning on a wall'></a>", "https://example.com/up/red-bicycle.jpg",
     "a href"),
])
def test_a_thumbnail_under_picture_size_with_a_larger_version_gives_that_version(img, big, where):
    (cand,) = event(f"<p>{img}</p>").outputs
    assert cand.image_url == big and cand.meta["url_attr"] == where
    assert cand.meta["shown_url"] != big


@pytest.mark.parametrize("img", [
    # declared at picture size: fetched as it is, whatever its srcset holds
    "<img src='/up/red-bicycle-640x480.jpg' width='640' height='480' alt='A red bicycle' "
    "srcset='/up/red-bicycle-640x480.jpg 640w, /up/red-bicycle-1600x1200.jpg 1600w'>",
    # under picture size with no larger version on the page
    "<img src='/up/red-bicycle-150x150.jpg' width='150' height='150' alt='A red bicycle' "
    "srcset='/up/red-bicycle-150x150.jpg 150w, /up/red-bicycle-250x250.jpg 250w'>",
    # no size declared, named or asked: nothing says it is a thumbnail
    "<img src='/up/red-bicycle.jpg' alt='A red bicycle' "
    "srcset='/up/red-bicycle.jpg 640w, /up/red-bicycle-big.jpg 1600w'>",
])
def test_other_images_keep_their_own_url(img):
    (cand,) = event(f"<p>{img}</p>").outputs
    assert cand.image_url.startswith("https://example.com/up/red-bicycle") \
        and "shown_url" not in cand.meta and cand.meta["url_attr"] == "src"


def test_below_picture_reads_declared_then_named_then_asked_sizes():
    assert below_picture(150, 150, "https://e.com/a.jpg")
    assert below_picture(150, None, "https://e.com/a.jpg")
    assert not below_picture(640, 150, "https://e.com/a.jpg")
    assert below_picture(None, None, "https://e.com/a-200x133.jpg")
    assert not below_picture(None, None, "https://e.com/a.jpg")
    assert not below_picture(150, 150, "https://e.com/a.jpg?w=1200")


@pytest.mark.parametrize("value", [
    "widget widget_dmc-widget-about", "widget-odd widget-first widget-1 about widget widget_text",
    "sidebar-aboutme"])
def test_an_about_me_widget_is_an_author_box(value):
    # thirty-fourth pass, rule A: a sidebar widget about the site's owner holds her portrait
    assert class_region(value) == "author"
    ev = event(f"<div class='{value}'><img src='/u/about-widget-170x170.png' width='170' "
               "height='170' alt='Photo of Ali Maffucci smiling'></div>")
    assert units(ev) == {("image", "extract_image_avatar"): 1}


@pytest.mark.parametrize("value,expected", [
    ("about-section", ""), ("about-recipe card", ""), ("sidebar", "aside"),
    ("widget widget_recent_posts", "aside")])
def test_about_outside_a_sidebar_or_a_sidebar_without_about_is_as_before(value, expected):
    assert class_region(value) == expected
