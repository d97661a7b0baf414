"""Thumbnails served small by a resizing image CDN (tenth pass): the same URL asking for the
picture at the image step's size (pipeline/steps/image_resize.py), and the extract step using
it only where size is all that keeps a thumbnail from a pair."""
from __future__ import annotations

import pytest

from pipeline.core.records import Page
from pipeline.core.stage import Drop
from pipeline.steps.extract import Extractor
from pipeline.steps.image_resize import resized_url

SANITY = "https://asset.example.com/images/cq7w2e71/production/" \
         "ef521d3f8cf2763a161ff16f4ac995a67c88210f-{}.jpg/houmous.jpg"


@pytest.mark.parametrize("url,declared,expected", [
    # WordPress.com's file servers: w and h scaled together, crop kept
    ("http://site.files.wordpress.com/2012/06/a.jpg?w=126&h=95&crop=1", (126, 95),
     ("http://site.files.wordpress.com/2012/06/a.jpg?w=398&h=300&crop=1", "resize wordpress",
      398, 300)),
    # Photon: one side asked, the other side's share from the declared aspect (a wide picture:
    # its height is the short side)
    ("https://i0.wp.com/example.org/wp-content/uploads/a.jpg?w=200", (200, 100),
     ("https://i0.wp.com/example.org/wp-content/uploads/a.jpg?w=600", "resize wordpress",
      600, None)),
    # one side asked, no aspect known: that side at 300
    ("https://site.files.wordpress.com/2017/01/a.jpg?h=52", (None, None),
     ("https://site.files.wordpress.com/2017/01/a.jpg?h=300", "resize wordpress", None, 300)),
    # resize=W,H (URL-encoded comma kept as written)
    ("https://site.files.wordpress.com/2013/10/a.jpg?resize=200%2C100", (None, None),
     ("https://site.files.wordpress.com/2013/10/a.jpg?resize=600%2C300", "resize wordpress",
      600, 300)),
    # the VIP file service on the site's own host: other parameters kept as written
    ("https://news.example.com/wp-content/uploads/2022/08/a.jpg?quality=75&strip=all&w=180&h=120"
     "&crop=1", (None, None),
     ("https://news.example.com/wp-content/uploads/2022/08/a.jpg?quality=75&strip=all&w=450"
      "&h=300&crop=1", "resize wordpress", 450, 300)),
    # imgix (a custom domain), fit / crop / auto kept
    ("https://imgix.example.com/up/a.jpg?w=159&h=110&fit=crop&crop=faces&auto=format%2Ccompress",
     (None, None),
     ("https://imgix.example.com/up/a.jpg?w=434&h=300&fit=crop&crop=faces&auto=format%2Ccompress",
      "resize imgix", 434, 300)),
    # Sanity's asset path: rect (the source region, 958 px) kept
    (SANITY.format("958x1280") + "?rect=0,161,958,958&w=48&h=48&fm=webp&q=80&fit=crop",
     (48, 48),
     (SANITY.format("958x1280") + "?rect=0,161,958,958&w=300&h=300&fm=webp&q=80&fit=crop",
      "resize imgix", 300, 300)),
    # Contentful, Shopify
    ("https://images.ctfassets.net/sp/id/h/a.jpg?fm=jpg&q=90&h=100&w=100&fit=thumb", (None, None),
     ("https://images.ctfassets.net/sp/id/h/a.jpg?fm=jpg&q=90&h=300&w=300&fit=thumb",
      "resize imgix", 300, 300)),
    ("https://cdn.shopify.com/s/files/1/p/a.jpg?v=1&width=100", (100, 100),
     ("https://cdn.shopify.com/s/files/1/p/a.jpg?v=1&width=300", "resize shopify", 300, None)),
    # Cloudinary: the last component asking pixels is scaled (a chained one, too)
    ("https://res.cloudinary.com/x/image/upload/c_fill,g_face,h_74,w_133/v136/a.jpg", (None, None),
     ("https://res.cloudinary.com/x/image/upload/c_fill,g_face,h_300,w_540/v136/a.jpg",
      "resize cloudinary", 540, 300)),
    ("https://res.cloudinary.com/x/image/upload/c_scale,h_1,w_1/f_auto,c_pad,w_200,h_200,q_75/"
     "v14/a.jpg", (None, None),
     ("https://res.cloudinary.com/x/image/upload/c_scale,h_1,w_1/f_auto,c_pad,w_300,h_300,q_75/"
      "v14/a.jpg", "resize cloudinary", 300, 300)),
])
def test_a_resizing_cdn_url_asks_for_the_picture_at_300_px(url, declared, expected):
    assert resized_url(url, *declared, 300) == expected


@pytest.mark.parametrize("url", [
    # no CDN whose URL API says what w means: an undocumented resizer, a plain site
    "http://images.example.com/FFImage/thumb.aspx?i=/productImages/ff_821054_xl.jpg&w=100",
    "https://example.com/i/p.jpg?w=48",
    # signed: a changed size breaks the signature
    "https://preview.example.it/award_images/a.png?width=32&height=32&auto=webp&s=a6882eb3",
    "https://x.imgix.net/a.jpg?w=100&h=100&s=0f3c9a",
    "https://res.cloudinary.com/x/image/upload/s--Ab12Cd34--/w_100,h_100/v1/a.jpg",
    # a Cloudinary named transformation: its size is the server's
    "https://media.example.com/image/upload/t_focal-120x180,f_auto,q_auto:best/n/a.jpg",
    # not pixels
    "https://res.cloudinary.com/x/image/upload/w_auto,c_scale/v1/a.jpg",
    # already asked at the image step's size one way
    "https://site.files.wordpress.com/a.jpg?w=640&h=120",
    # the source is smaller than 300 px: an upscale, no picture (WordPress's own 136 px file,
    # Sanity's 245 px crop region)
    "https://i2.wp.com/example.org/wp-content/uploads/2019/03/cupcakes-136x136.jpg?w=136",
    SANITY.format("474x316") + "?rect=128,32,245,245&w=48&h=48&fm=webp",
    # a size that is not a number
    "https://site.files.wordpress.com/a.jpg?w=auto",
])
def test_urls_that_are_not_rewritten(url):
    assert resized_url(url, 48, 48, 300) == ("", "", None, None)


URL = "https://example.com/blog/post.html"


def outputs(body: str, **kw):
    (ev,) = list(Extractor(**kw).events(Page(url=URL, body=body.encode(),
                                             content_type="text/html")))
    return ev


WP_THUMB = "https://site.files.wordpress.com/2012/06/stanley-cup.jpg?w=126&h=95&crop=1"


def test_a_cdn_thumbnail_with_no_larger_version_is_asked_at_300_px():
    (cand,) = outputs(f"<p><img src='{WP_THUMB}' width='126' height='95' "
                      "alt='Players lift the Stanley Cup on the ice'></p>").outputs
    assert cand.image_url.endswith("?w=398&h=300&crop=1")
    assert cand.meta["url_attr"] == "resize wordpress" and cand.meta["shown_url"] == WP_THUMB
    assert (cand.meta["img_width"], cand.meta["img_height"]) == (398, 300)


def test_an_undeclared_image_asked_small_of_its_cdn_is_asked_at_300_px():
    (cand,) = outputs(f"<p><img src='{WP_THUMB}' alt='Players lift the Stanley Cup'></p>").outputs
    assert cand.meta["url_attr"] == "resize wordpress" and cand.meta["shown_url"] == WP_THUMB


def test_an_icon_sized_cdn_picture_is_asked_at_300_px_and_a_page_named_version_wins():
    thumb = SANITY.format("487x487") + "?w=48&h=48&fm=webp"
    (cand,) = outputs(f"<p><img src='{thumb}' width='48' height='48' "
                      "alt='Simple houmous with a side of crudites'></p>").outputs
    assert cand.meta["url_attr"] == "resize imgix" and "w=300&h=300" in cand.image_url
    # a larger version the page names comes first (sixth pass)
    (cand,) = outputs(f"<p><img src='{thumb}' width='48' height='48' srcset='{thumb} 48w, "
                      f"{SANITY.format('487x487')}?w=960 960w' "
                      "alt='Simple houmous with a side of crudites'></p>").outputs
    assert cand.meta["url_attr"] == "srcset 960w"


@pytest.mark.parametrize("html", [
    # menu furniture stays furniture (ninth pass, sample 10)
    f"<nav><a href='/sports'><img src='{WP_THUMB}' width='126' height='95' alt='Sports'></a></nav>",
    # a role the larger version still has: a logo by its name
    "<p><img src='https://site.files.wordpress.com/2010/07/site-logo.png?w=80&h=40' width='80' "
    "height='40' alt='WCBS 880'></p>",
])
def test_roles_other_than_size_still_drop_the_image(html):
    assert isinstance(outputs(html), Drop)


def test_resizing_is_tried_only_with_page_roles():
    (cand,) = outputs(f"<p><img src='{WP_THUMB}' width='126' height='95' "
                      "alt='Players lift the Stanley Cup on the ice'></p>",
                      page_roles=False).outputs
    assert cand.image_url == WP_THUMB and "shown_url" not in cand.meta


# Thirty-ninth pass: sizes named in the path by two documented conventions.
WIKI = "https://upload.wikimedia.org/wikipedia/commons/"
FLICKR = "https://farm3.staticflickr.com/2939/14704637726_cd6fe86019_{}.jpg"


@pytest.mark.parametrize("url,expected", [
    # MediaWiki: a thumbnail under thumb/<h>/<hh>/<File>/<N>px-<File> gives the upload itself
    (WIKI + "thumb/7/7d/Raranimus.jpg/120px-Raranimus.jpg",
     (WIKI + "7/7d/Raranimus.jpg", "resize mediawiki", None, None)),
    # a wiki of its own, a cache-busting query dropped
    ("https://wiki.example.org/mediawiki/images/thumb/d/d5/Radish.png/24px-Radish.png?1a2b3",
     ("https://wiki.example.org/mediawiki/images/d/d5/Radish.png", "resize mediawiki", None,
      None)),
    # Flickr: a small size suffix asked again as z (640 on the longest side), either host form
    (FLICKR.format("s"), (FLICKR.format("z"), "resize flickr", None, None)),
    ("http://farm1.static.flickr.com/2/1418878_1e92283336_m.jpg",
     ("http://farm1.static.flickr.com/2/1418878_1e92283336_z.jpg", "resize flickr", None, None)),
    ("https://live.staticflickr.com/65535/51234_0a1b2c3d4e_q.jpg",
     ("https://live.staticflickr.com/65535/51234_0a1b2c3d4e_z.jpg", "resize flickr", None, None)),
])
def test_a_documented_thumbnail_path_gives_the_larger_picture(url, expected):
    assert resized_url(url, 75, 75, 300) == expected


@pytest.mark.parametrize("url", [
    # a converted thumbnail (an SVG's PNG, a PDF's page): its upload is no raster or not it
    WIKI + "thumb/2/2a/Map.svg/40px-Map.svg.png",
    WIKI + "thumb/2/2a/Book.pdf/page1-120px-Book.pdf.jpg",
    # a thumbnail at the image step's size already, one of another file, no hashed folders
    WIKI + "thumb/2/2a/Innsbruck.jpg/360px-Innsbruck.jpg",
    WIKI + "thumb/2/2a/Innsbruck.jpg/120px-Salzburg.jpg",
    "https://wiki.example.org/images/thumb/Radish.png/24px-Radish.png",
    # Flickr: a size that is large already, the original's own secret, not a photo source URL
    FLICKR.format("b"), FLICKR.format("o"),
    "https://www.flickr.com/photos/someone/14704637726_s.jpg",
])
def test_paths_that_name_no_smaller_documented_size_are_left(url):
    assert resized_url(url, 75, 75, 300) == ("", "", None, None)


def test_a_wiki_or_flickr_thumbnail_dropped_for_its_size_gives_the_larger_picture():
    thumb = WIKI + "thumb/8/8f/Biarmosuchus.jpg/80px-Biarmosuchus.jpg"
    (cand,) = outputs(f"<p><img src='{thumb}' width='80' height='60' "
                      "alt='Biarmosuchus, a Biarmosuchian'></p>").outputs
    assert cand.image_url == WIKI + "8/8f/Biarmosuchus.jpg"
    assert cand.meta["url_attr"] == "resize mediawiki" and cand.meta["shown_url"] == thumb
    assert "img_width" not in cand.meta  # the upload's size is not known
    (cand,) = outputs(f"<p><img src='{FLICKR.format('s')}' width='75' height='75' "
                      "title='Normandy american cemetery by a photographer'></p>").outputs
    assert cand.image_url == FLICKR.format("z") and cand.meta["url_attr"] == "resize flickr"


def test_a_wiki_thumbnail_in_the_menu_stays_furniture():
    thumb = WIKI + "thumb/8/8f/Wiki_logo.png/80px-Wiki_logo.png"
    html = f"<nav><a href='/'><img src='{thumb}' width='80' height='80' alt='Home'></a></nav>"
    assert isinstance(outputs(html), Drop)
