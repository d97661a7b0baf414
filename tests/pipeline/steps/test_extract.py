"""Extractor on tiny inline pages (one rule each) and on the saved real pages."""
from __future__ import annotations

import codecs
import re
from pathlib import Path
from urllib.parse import urljoin

import pytest

from pipeline.config import ConfigError, ExtractConfig
from pipeline.steps.extract import Extractor
from pipeline.steps.html_images import find_images
from pipeline.steps.image_urls import resolve
from pipeline.core.records import TEXT_SOURCES, Candidate, Page
from pipeline.core.stage import Drop, Keep

REPO = Path(__file__).resolve().parents[3]
PAGES_DIR = REPO.parent / "shared" / "data" / "real_pages"
WARC_DIR = REPO.parent / "shared" / "data" / "warc"
URL = "https://example.com/blog/post.html"


def run(body, url=URL, content_type="text/html", headers=None, **kw) -> list[Candidate] | Drop:
    """The stage's single event for one page: its candidates, or the Drop."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    page = Page(url=url, body=body, content_type=content_type, headers=headers or {})
    (event,) = list(Extractor(**kw).events(page))
    return list(event.outputs) if isinstance(event, Keep) else event


def by_source(cands) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c in cands:
        out.setdefault(c.text_source, []).append(c.text)
    return out


def urls(cands) -> list[str]:
    return sorted({c.image_url for c in cands})


# ---- image URLs ------------------------------------------------------------------------------

def test_relative_urls_resolve_against_the_page():
    got = run('<img src="a.jpg" alt="a"><img src="/b.png" alt="b"><img src="../c.gif" alt="c">'
              '<img src="//cdn.example.org/d.webp" alt="d"><img src=" e f.jpg#x " alt="e">')
    assert urls(got) == ["https://cdn.example.org/d.webp", "https://example.com/b.png",
                         "https://example.com/blog/a.jpg", "https://example.com/blog/e%20f.jpg",
                         "https://example.com/c.gif"]


def test_credentials_are_stripped_from_image_and_page_urls():
    """``user:pass@`` in a page or image URL is never stored (issue 17.8); nor sent: browsers
    refuse subresource URLs with embedded credentials too."""
    got = run('<img src="https://bob:s3cret@img.example.org:8443/a.jpg" alt="a red boat">'
              '<img src="//tok@cdn.example.org/b.jpg" alt="b"><img src="c.jpg" alt="c">',
              url="https://alice:pw@example.com/blog/post.html")
    assert urls(got) == ["https://cdn.example.org/b.jpg", "https://example.com/blog/c.jpg",
                         "https://img.example.org:8443/a.jpg"]
    assert {c.page_url for c in got} == {"https://example.com/blog/post.html"}
    assert not any("s3cret" in repr(c) or "alice" in repr(c) or "tok@" in repr(c) for c in got)

def test_base_href_wins_over_the_page_url():
    got = run('<html><head><base href="https://static.example.net/img/"></head>'
              '<body><img src="x.jpg" alt="x"><img src="/y.jpg" alt="y"></body></html>')
    assert urls(got) == ["https://static.example.net/img/x.jpg", "https://static.example.net/y.jpg"]
    relative_base = run('<base href="/media/"><img src="x.jpg" alt="x">')
    assert urls(relative_base) == ["https://example.com/media/x.jpg"]


def test_unusable_urls_are_dropped():
    page = ('<img src="data:image/png;base64,iVBORw0KGgo=" alt="d"><img src="javascript:void(0)" '
            'alt="j"><img src="" alt="e"><img alt="none"><img src="mailto:a@b.c" alt="m">')
    assert run(page) == Drop("extract_no_images")
    assert urls(run(page + '<img src="ok.jpg" alt="ok">')) == ["https://example.com/blog/ok.jpg"]


def test_srcset_first_url_when_src_missing():
    got = run('<img srcset="small.jpg 480w, big.jpg 1080w" alt="s">'
              '<img src="own.jpg" srcset="other.jpg 2x" alt="t">')
    assert [(c.image_url, c.meta["url_attr"]) for c in got] == [
        ("https://example.com/blog/small.jpg", "srcset"), ("https://example.com/blog/own.jpg", "src")]


def test_lazy_attributes_replace_placeholders_only():
    got = run('<img src="data:image/gif;base64,R0lGOD" data-src="real1.jpg" alt="1">'
              '<img data-lazy-src="real2.jpg" alt="2">'
              '<img src="/img/leer.gif" data-retina-src="real3.jpg" alt="3">'
              '<img src="real4.jpg" data-src="other4.jpg" alt="4">'  # a real src stays
              '<img src="/img/spacer.gif" alt="5">')  # placeholder, nothing better: a spacer
    assert [(c.image_url.rsplit("/", 1)[1], c.meta["url_attr"]) for c in got] == [
        ("real1.jpg", "data-src"), ("real2.jpg", "data-lazy-src"),
        ("real3.jpg", "data-retina-src"), ("real4.jpg", "src")]


def test_a_low_quality_placeholder_src_gives_way_to_the_lazy_attributes_best_candidate():
    # LQIP / "blur-up" (fiftieth pass): a src asking its image server for a blur, a quality of
    # 10 or less or a side of 64 px or less, beside a lazy attribute naming a larger picture,
    # is what the lazy loader replaces: homechef's imgix cards (the lazy srcset's largest
    # candidate), monsterpetsupplies' one-pixel Cloudinary srcs.  A real src stays, and so does
    # one whose lazy URL asks the same small size (fortune's "?h=52": no larger picture).
    got = run('<img class="lazyload" src="https://x.imgix.net/a.jpg?w=75&amp;blur=100&amp;q=0" '
              'data-srcset="https://x.imgix.net/a.jpg?w=275 275w, https://x.imgix.net/a.jpg?w=550 '
              '550w" alt="Feta and Herb Crusted Salmon with Greek arugula salad">'
              '<img src="https://res.cloudinary.com/m/image/upload/c_scale,w_1,h_1/v1/b.jpg" '
              'data-src="https://res.cloudinary.com/m/image/upload/v1/b.jpg" alt="Blink wet cat food">'
              '<img src="https://cdn.example.com/c.jpg?q=80&amp;w=640" '
              'data-src="https://cdn.example.com/c-other.jpg" alt="A real src stays here">'
              '<img class="b-lazy" src="https://cdn.example.com/d.jpg?h=52" '
              'data-src="https://cdn.example.com/d2.jpg?h=52" alt="No larger picture named">')
    assert [(c.image_url, c.meta["url_attr"]) for c in got] == [
        ("https://x.imgix.net/a.jpg?w=550", "data-srcset"),
        ("https://res.cloudinary.com/m/image/upload/v1/b.jpg", "data-src"),
        ("https://cdn.example.com/c.jpg?q=80&w=640", "src"),
        ("https://cdn.example.com/d.jpg?h=52", "src")]


def test_old_lazy_loaders_longdesc_and_inline_background():
    # jQuery "delayed image" scripts keep the URL in longdesc (HuffPost, Blogger), Yahoo's lzbg
    # in an inline background-image over a transparent src; a real src stays, and a longdesc
    # naming a page (its HTML meaning) or a background without an image file is not a URL.
    got = run('<img src="/images/trans.gif" longdesc="http://i.example.org/a/photo-a.jpg" '
              'width="400" height="300" alt="a">'
              '<img src="https://s.example.org/transparent-1093278.png" width="400" height="300" '
              'style="background-image:url(\'https://farm4.example.org/b_photo.jpg\');" alt="b">'
              '<img src="real-c.jpg" longdesc="other-c.jpg" alt="c">'
              '<img src="/img/blank.gif" longdesc="describe-d.html" alt="d">'
              '<img src="/img/blank.gif" style="background: url(data:image/png;base64,AA)" alt="e">')
    assert [(c.image_url.rsplit("/", 1)[1], c.meta["url_attr"]) for c in got] == [
        ("photo-a.jpg", "longdesc"), ("b_photo.jpg", "style"), ("real-c.jpg", "src")]


def test_a_src_shared_by_different_lazy_images_is_a_placeholder():
    got = run('<img src="/p/f2e86e.png" data-src="a.jpg" alt="a">'
              '<img src="/p/f2e86e.png" data-src="b.jpg" alt="b">'
              '<img src="/av/1.png" data-src="/av/1-big.png" alt="c">')
    assert [c.image_url.rsplit("/", 1)[1] for c in got] == ["a.jpg", "b.jpg", "1.png"]


def test_picture_source_when_img_has_no_src():
    got = run('<picture><source type="image/webp" srcset="p.webp 1x, p2.webp 2x">'
              '<img alt="pic"></picture><picture><source srcset="q.webp"><img src="q.jpg" '
              'alt="q"></picture>')
    assert [(c.image_url, c.meta["url_attr"]) for c in got] == [
        ("https://example.com/blog/p.webp", "picture"), ("https://example.com/blog/q.jpg", "src")]


# ---- texts -----------------------------------------------------------------------------------

def test_alt_title_caption_and_surrounding():
    got = run('<figure><img src="a.jpg" alt="A dog" title="Dog photo"><figcaption>'
              'A <b>dog</b>  running</figcaption></figure>')
    assert by_source(got) == {"alt": ["A dog"], "caption": ["A dog running"],
                              "title": ["Dog photo"]}
    # surrounding == caption text here (the figure is the block): kept once, as the caption
    assert all(c.meta["in_figure"] for c in got)


def test_figcaption_after_the_image_and_nested_figures():
    got = run('<figure><img src="a.jpg"><figure><img src="b.jpg"><figcaption>Inner</figcaption>'
              '</figure><figcaption>Outer</figcaption></figure><figure><img src="c.jpg"></figure>')
    caps = {c.image_url.rsplit("/", 1)[1]: c.text for c in got if c.text_source == "caption"}
    assert caps == {"a.jpg": "Outer", "b.jpg": "Inner"}


@pytest.mark.parametrize("inner, caps", [
    # the figcaption after a.jpg's figure holds a figure with a figcaption after it: the
    # inner one used to clear the outer's figure, and closing the outer raised TypeError
    # (the page dropped as extract_error_type_error; found by test_extract_fuzz.py)
    ("<figcaption>Inner</figcaption>", {"a.jpg": "Cap Inner", "b.jpg": "Inner"}),
    # ... a figure with no caption: the outer one ended that figure's caption, not a.jpg's
    (" tail", {"a.jpg": "Cap tail"}),
])
def test_a_figcaption_after_its_figure_ends_that_figures_caption(inner, caps):
    got = run('<div><figure><img src="a.jpg"></figure><figcaption>Cap<figure><img src="b.jpg">'
              f'</figure>{inner}</figcaption></div>')
    assert {c.image_url.rsplit("/", 1)[1]: c.text for c in got
            if c.text_source == "caption"} == caps
    assert not isinstance(run('<img src="a.jpg" alt="a"><figure></figure><figcaption>'
                              f'<figure></figure>{inner}</figcaption>'), Drop)


def test_surrounding_text_stays_inside_the_nearest_block():
    # the nearest block is the <div>: its nested blocks count, text outside it does not
    (c,) = run('<p>Other paragraph.</p><div><h2>Title</h2>Before the <i>picture</i>'
               '<img src="a.jpg"> and after it.<p>Still in the div.</p></div><p>Outside.</p>')
    assert c.text_source == "surrounding"
    assert c.meta["before"] == "Title Before the picture"
    assert c.meta["after"] == "and after it. Still in the div."
    assert c.raw_text == c.text == "Title Before the picture and after it. Still in the div."
    # here it is the <p>; inline markup joins words without extra spaces
    (c,) = run('<div><h2>Title</h2><p>Before the <i>pic</i>ture<img src="a.jpg"> and '
               '<a href="/">after</a> it.</p><p>Next paragraph.</p></div>')
    assert (c.meta["before"], c.meta["after"]) == ("Before the picture", "and after it.")


def test_surrounding_text_is_bounded_to_whole_words_next_to_the_image():
    words_before = " ".join(f"b{i}" for i in range(400))
    words_after = " ".join(f"a{i}" for i in range(400))
    (c,) = run(f'<p>{words_before} <img src="x.jpg"> {words_after}</p>', surrounding_chars=50)
    before, after = c.meta["before"], c.meta["after"]
    assert len(before) <= 50 and len(after) <= 50
    assert before.endswith("b398 b399") and after.startswith("a0 a1")
    assert words_before.endswith(before) and words_after.startswith(after)  # no cut words
    assert c.text == f"{before} {after}"


def test_script_style_and_svg_text_is_not_surrounding_text():
    (c,) = run('<p>Real<script>var x = "code";</script><style>p{}</style><svg><title>icon'
               '</title></svg> words <img src="a.jpg"><template>hidden</template></p>')
    assert c.text == "Real words"


def test_duplicate_texts_of_one_image_keep_the_preferred_source():
    got = run('<figure><img src="a.jpg" alt="Sunset" title="sunset"><figcaption>SUNSET'
              '</figcaption></figure>')
    assert by_source(got) == {"alt": ["Sunset"]}


def test_identical_triples_on_a_page_are_kept_once():
    got = run('<div><img src="a.jpg" alt="Boat"></div><div><img src="a.jpg" alt="Boat"></div>'
              '<div><img src="a.jpg" alt="Boat 2"></div>')
    assert [(c.text_source, c.text, c.img_index) for c in got] == [
        ("alt", "Boat", 0), ("alt", "Boat 2", 2)]


def test_entities_and_whitespace():
    got = run('<img src="a.jpg" alt="Fish &amp; chips&nbsp;&nbsp;in\n\t Caf&eacute;" '
              'title="double &amp;amp; escaped &amp;eacute;">')
    assert by_source(got) == {"alt": ["Fish & chips in Café"], "title": ["double & escaped é"]}


def test_long_texts_are_cut_at_max_text_chars():
    alt = "word " * 100
    (c,) = run(f'<img src="a.jpg" alt="{alt}">', max_text_chars=42)
    assert len(c.text) <= 42 and c.text == ("word " * 8).strip()


def test_page_title_lang_and_meta():
    got = run('<html lang="EN-us"><head><title> My  &amp; Title </title></head><body>'
              '<a href="/big.jpg"><img src="pics/cat.jpg?v=2" alt="cat" width="640" '
              'height="480px"></a><img src="b.jpg" alt="b" width="50%"></body></html>')
    c = got[0]
    assert (c.page_title, c.page_lang, c.page_url, c.img_index) == ("My & Title", "en", URL, 0)
    assert c.meta["img_width"] == 640 and c.meta["img_height"] == 480
    assert c.meta["file_name"] == "cat.jpg" and c.meta["n_images"] == 2 and c.meta["in_link"]
    assert "img_width" not in got[1].meta and not got[1].meta["in_link"]
    assert run('<img src="a.jpg" alt="x">')[0].page_lang == ""
    assert run('<html lang="de_AT"><img src="a.jpg" alt="x">')[0].page_lang == "de"


def test_broken_markup():
    got = run('<html><body><div><p>Unclosed <b>bold <img src=a.jpg alt=Hello world>'
              '<table><tr><td>cell <img src="b.jpg" alt="B"</td></tr><p>text <img src="c.jpg" '
              'alt="C" <img src="d.jpg" alt="D">')
    assert set(by_source(got)["alt"]) >= {"Hello", "C"}
    assert "https://example.com/blog/a.jpg" in urls(got)


def test_deeply_nested_markup_does_not_hit_recursion_limits():
    # deeper than Python's default recursion limit (1000), within the parse's depth cap
    got = run("<div>" * 1020 + 'deep <img src="a.jpg" alt="deep">' + "</div>" * 1020)
    assert by_source(got)["alt"] == ["deep"]
    # past the cap the page is not parsed at all (issue 17.5)
    assert run("<div>" * 5000 + '<img src="a.jpg" alt="deep">') == Drop("extract_html_too_deep")


# ---- decoding --------------------------------------------------------------------------------

PAGE = '<html><head>{meta}</head><body><p>Grüße aus Köln – €5</p><img src="a.jpg" alt="Café">'


def alt_and_surrounding(got):
    return by_source(got)["alt"][0], by_source(got)["surrounding"][0]


@pytest.mark.parametrize("headers,meta", [
    ({"content-type": "text/html; charset=ISO-8859-1"}, ""),  # the web reads latin-1 as cp1252
    ({}, '<meta charset="windows-1252">'),
    ({}, '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'),
    ({}, ""),  # undeclared: sniffed
])
def test_cp1252_pages(headers, meta):
    body = PAGE.format(meta=meta).encode("cp1252")
    assert alt_and_surrounding(run(body, headers=headers)) == ("Café", "Grüße aus Köln – €5")


def test_utf8_declared_as_latin1_is_read_as_utf8():
    body = PAGE.format(meta='<meta charset="iso-8859-1">').encode("utf-8")
    assert alt_and_surrounding(run(body)) == ("Café", "Grüße aus Köln – €5")


@pytest.mark.parametrize("bom,codec", [(codecs.BOM_UTF8, "utf-8"),
                                       (codecs.BOM_UTF16_LE, "utf-16-le"),
                                       (codecs.BOM_UTF16_BE, "utf-16-be")])
def test_byte_order_marks(bom, codec):
    # the BOM wins over a wrong declaration
    body = bom + PAGE.format(meta='<meta charset="windows-1251">').encode(codec)
    assert alt_and_surrounding(run(body)) == ("Café", "Grüße aus Köln – €5")


@pytest.mark.parametrize("headers,meta", [
    ({}, ""),  # undeclared
    ({}, '<meta charset="windows-1250">'),  # declared, wrongly
    ({"content-type": "text/html; charset=utf-8"}, ""),
])
def test_one_stray_byte_keeps_a_utf8_page_utf8(headers, meta):
    """Issue 17.8: one Latin-1 byte pasted into a UTF-8 page (here \\xe9) must not send the
    page to an encoding guess (it came out cp1250: "Grüße" -> "GrĂźĂźe")."""
    body = PAGE.format(meta=meta).encode("utf-8") + b"<p>caf\xe9 au lait</p>"
    got = run(body, headers=headers)
    assert alt_and_surrounding(got) == ("Café", "Grüße aus Köln – €5 café au lait")
    assert got[0].meta["encoding"] == "utf-8"
    # and the stray byte itself is read as windows-1252, not U+FFFD
    from pipeline.web.charset import decode_html

    text, codec, _ = decode_html(body, headers.get("content-type", ""))
    assert "café au lait" in text and "\ufffd" not in text


def test_cp1252_page_declared_utf8_keeps_its_characters():
    body = PAGE.format(meta='<meta charset="utf-8">').encode("cp1252")
    got = run(body)
    assert alt_and_surrounding(got) == ("Café", "Grüße aus Köln – €5")
    got = run(PAGE.format(meta="").encode("cp1252"),
              headers={"content-type": "text/html; charset=UTF-8"})
    assert alt_and_surrounding(got) == ("Café", "Grüße aus Köln – €5")


def test_legacy_pages_are_not_mistaken_for_mixed_utf8():
    from pipeline.web.charset import decode_html

    for text, codec in (("Привет, мир! Это «тест» — ёлка и №5.", "cp1251"),
                        ("Zażółć gęślą jaźń, łódź i źdźbło.", "cp1250"),
                        ("Grüße aus Köln, naïve café, 5 €.", "cp1252")):
        body = f'<html><head><meta charset="{codec}"></head><body><p>{text}</p>'.encode(codec)
        got, used, how = decode_html(body)
        assert text in got and how == "meta", (codec, used, how)


def test_euc_jp_page():
    html = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">'
            '<title>ヘッドポーター</title></head><body><img src="a.jpg" alt="吉田カバン 財布">')
    got = run(html.encode("euc-jp"))
    assert got[0].text == "吉田カバン 財布" and got[0].page_title == "ヘッドポーター"
    assert got[0].meta["encoding"] == "euc_jp"


def test_invalid_bytes_in_a_page():
    # declared UTF-8, bytes are cp1252: the characters survive, no U+FFFD (issue 17.8)
    got = run(b'<meta charset="utf-8"><p>caf\xe9 ok</p><img src="a.jpg" alt="x\xff\xfey">')
    assert by_source(got) == {"alt": ["x\xff\xfey"], "surrounding": ["caf\xe9 ok"]}
    binary = b"<html>" + bytes(range(256)) * 200
    assert run(binary, headers={"content-type": "text/html; charset=utf-8"}) == \
        Drop("extract_undecodable")


def test_drop_reasons():
    assert run("<p>No images here</p>") == Drop("extract_no_images")
    assert run("") == Drop("extract_no_images")
    assert run('<div><img src="a.jpg"><img src="b.jpg"></div>') == Drop("extract_no_text")
    assert run(b"\x00\x01\x02\x03" * 1000) == Drop("extract_undecodable")


def test_deterministic_and_picklable():
    import pickle

    page = '<p>Text <img src="a.jpg" alt="A" title="T"> more</p><img src="b.jpg" alt="B">'
    assert run(page) == run(page)
    stage = pickle.loads(pickle.dumps(Extractor(surrounding_chars=10)))
    assert stage.surrounding_chars == 10


def test_bad_configuration():
    for kw in ({"surrounding_chars": 0}, {"max_text_chars": -5}, {"surrounding_chars": "300"},
               {"max_text_chars": True}):
        with pytest.raises(ConfigError):
            Extractor(**kw)
    stage = Extractor.from_config(ExtractConfig(surrounding_chars=7, max_text_chars=9))
    assert (stage.surrounding_chars, stage.max_text_chars) == (7, 9)


# ---- real pages ------------------------------------------------------------------------------

# <img> inside these are not page content: HTML5 makes <template> content inert (lexbor keeps
# it out of the document tree) and the walk skips them; lxml (libxml2) keeps them as elements.
NOT_CONTENT = {"template", "script", "style", "svg", "math", "iframe", "textarea", "select",
               "object", "noframes", "head"}
LAZY = ("src", "data-src", "data-lazy-src", "data-original", "data-lazy", "data-origin",
        "data-normal")


def lxml_count(raw: bytes, page_url: str) -> tuple[int, int]:
    """Independent count with lxml: (img with a usable URL and non-empty alt, of those the
    ones inside a NOT_CONTENT element)."""
    import lxml.html

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("cp1252")
    doc = lxml.html.document_fromstring(text)
    base = doc.xpath("//base/@href")
    base = urljoin(page_url, base[0].strip()) if base else page_url
    total = hidden = 0
    for img in doc.iter("img"):
        if not " ".join((img.get("alt") or "").split()):
            continue
        refs = [img.get(a) for a in LAZY]
        refs += [(img.get(a) or "").strip().split(" ")[0] for a in img.attrib if "srcset" in a]
        refs += [img.get(a) for a in img.attrib if a.startswith("data-") and a.endswith("src")]
        refs += [s.get("srcset", "").strip().split(" ")[0]
                 for s in img.itersiblings("source", preceding=True)
                 if img.getparent().tag == "picture"]
        if not any(r and r.strip() and not r.strip().lower().startswith(("data:", "javascript:"))
                   and urljoin(base, r.strip()).startswith(("http://", "https://"))
                   for r in refs):
            continue
        total += 1
        hidden += any(a.tag in NOT_CONTENT for a in img.iterancestors())
    return total, hidden


@pytest.mark.skipif(not PAGES_DIR.is_dir(), reason="../shared/data absent")
def test_real_pages_against_an_lxml_count():
    files = sorted(PAGES_DIR.glob("*.html"))
    assert len(files) == 110
    stage, reasons, diffs = Extractor(), {}, []
    for path in files:
        raw = path.read_bytes()
        url = f"https://example.com/pages/{path.name}"
        (event,) = list(stage.events(Page(url=url, body=raw, content_type="text/html")))
        reasons[path.name] = event.reason if isinstance(event, Drop) else "keep"
        for c in getattr(event, "outputs", ()):
            assert c.image_url.startswith(("http://", "https://")) and "#" not in c.image_url
            assert c.text and c.text == " ".join(c.text.split()) and c.text_source in TEXT_SOURCES
        found = find_images(raw.decode("utf-8") if path.name not in CP1252 else
                            raw.decode("cp1252"), url)
        # <img> elements only: lazy containers (a <div data-src data-alt>) are extra.
        ours = sum(1 for img in found.images if img.url and img.alt and not img.container)
        total, hidden = lxml_count(raw, url)
        if ours != total:
            diffs.append((path.name, total, ours, hidden))
            print(f"{path.name}: lxml {total}, ours {ours}; {hidden} inside non-content "
                  f"elements ({sorted(NOT_CONTENT)})")
        assert ours == total - hidden, (path.name, total, hidden, ours)
    assert not [n for n, r in reasons.items() if "error" in r]
    # pages with no <img> at all, or with images but no text (SOURCE.md: 0 img / 0 alt), and
    # pages whose only texts belong to avatars, logos and icons (pipeline/steps/image_roles.py) or to
    # surrounding text in comments, menus and headers, or to images of the site's header,
    # footer and menu or its theme folder (extract_image_furniture; the image counts say which)
    assert {n: r for n, r in reasons.items() if r != "keep"} == {
        "gregoryszorc.com.python3.html": "extract_no_images",
        "reuters.com.parasite.html": "extract_no_images",
        # vice.com.amazon.html gives one text since the fortieth pass: its newsletter box's
        # heading as a card's title, which the text step drops (text_boilerplate)
        **{name: "extract_no_text" for name in (
            "de.creativecommons.org.endlich.html", "denkanstoos.com.2012.html",
            "ebrosia.de.zinfandel.html", "internet-law.de.pseudonymen.html",
            "gruen-digital.de.jahrestagung.html", "spreeblick.com.habeck.html",
            "sauvonsluniversite.com.spip.html",
            "lanouvellerepublique.fr.martin.html", "laviedesidees.fr.evaluation.html",
            "lemire.me.json.html", "moritz-meyer.net.vreni.html", "pluralsight.com.python.html",
            "novalanalove.com.ear-candy.html",
            "spektrum.de.engelbart.html", "stackoverflow.com.rust.html",
            # thirty-second pass, rule F: its last text was a read-aloud button's alt
            # ("Artikel vorlesen") under "social-media-icons/"
            "rnz.de.witzel.html")},
    }
    print(f"{len(files)} pages, {len(diffs)} differing from lxml, all explained")


CP1252 = {"cdu-fraktion-erfurt.de.waldorfschule.html", "landwirt.com.sensortechnik.html"}


@pytest.mark.skipif(not PAGES_DIR.is_dir(), reason="../shared/data absent")
def test_cp1252_real_pages_decode_right():
    for name in CP1252:
        got = run((PAGES_DIR / name).read_bytes())
        assert got[0].meta["encoding"] == "cp1252"
        text = " ".join(c.text for c in got)
        assert "\ufffd" not in text and "Ã" not in text
        assert any(ch in text for ch in "äöüßÄÖÜ")


@pytest.mark.skipif(not WARC_DIR.is_dir(), reason="../shared/data absent")
def test_real_warc_pages_through_extraction():
    from collections import Counter

    from pipeline.steps.read import WarcReader

    src, stage, got = WarcReader([str(WARC_DIR)]), Extractor(), Counter()
    titles = []
    for part in src.parts():
        for ev in src.events(part):
            for page in getattr(ev, "outputs", ()):
                (out,) = list(stage.events(page))
                got[out.reason if isinstance(out, Drop) else "keep"] += 1
                if isinstance(out, Keep) and "uraharajuku" in page.url:
                    titles.append(out.outputs[0].page_title)
    assert sum(got.values()) == 46 and not [r for r in got if "error" in r]
    # 8 pages hold only icons, logos, a Yandex counter in the footer, a menu's header image
    assert got["keep"] >= 38
    # EUC-JP decoded: every title is Japanese and clean, most name the brand
    assert len(titles) == 29
    assert all("\ufffd" not in t and re.search("[\u30a0-\u30ff]{3}", t) for t in titles)
    assert sum("ヘッドポーター" in t for t in titles) == 28


@pytest.mark.skipif(not WARC_DIR.is_dir(), reason="../shared/data absent")
def test_source_and_extract_under_the_local_executor():
    from pipeline.engines.local import run_local
    from pipeline.core.plan import Plan, Step
    from pipeline.steps.read import WarcReader

    src = WarcReader([str(WARC_DIR / "*.warc.gz")], part_size=2)
    plan = Plan([Step("source", src), Step("map", Extractor())], parts=src.parts())
    read, extract = run_local(plan).steps
    assert read.balanced() and extract.balanced()
    assert (read.n_in, read.kept, dict(read.dropped)) == (47, 46, {"read_truncated": 1})
    assert extract.n_in == 46 and extract.out > 900
    # images and surrounding sides are counted inside the pages, each unit kept or dropped
    units = extract.to_dict()["units"]
    assert set(units) == {"image", "side"}
    for u in units.values():
        assert u["in"] == u["kept"] + sum(u["dropped"].values()) and u["kept"] > 0
    assert units["image"]["in"] >= extract.out // 4 and "extract_image_no_text" in units["image"]["dropped"]
    again = run_local(Plan([Step("source", src), Step("map", Extractor())], parts=src.parts())).steps
    assert [s.to_dict() for s in again] == [read.to_dict(), extract.to_dict()]


def _urljoin_resolve(base: str, ref: str) -> str:
    """resolve() as it was before its shortcut for paths from the root: urljoin's answer."""
    from urllib.parse import urldefrag, urlsplit
    ref = re.sub(r"[\t\n\r]", "", ref.strip())
    if not ref or ref.lower().startswith(("data:", "javascript:", "about:", "blob:", "#")):
        return ""
    try:
        url = urldefrag(urljoin(base, ref))[0]
        parts = urlsplit(url)
    except ValueError:
        return ""
    ok = parts.scheme in ("http", "https") and parts.netloc
    return url.replace(" ", "%20") if ok else ""


@pytest.mark.parametrize("base", [
    "https://x.com", "https://x.com/a/b?q#f", "http://X.COM:8080/a/", "HTTPS://x.com/a",
    "https://u@x.com/a", "https://[::1]/a", "https://[bad/a", "https://x.com\n",
    "https://x.com?q", "https://xn--b.com/é/", "ftp://x.com/a", "x.com/a"])
def test_paths_from_the_root_resolve_as_urljoin_does(base):
    # resolve() joins "/path" refs itself (no urljoin): dot segments, params, empty queries,
    # fragments and odd bases must still come out as urljoin makes them.
    for ref in ["/", "/a", "/a/../b", "/a/./b", "/.", "/..", "/a/.", "/a?", "/a?x", "/a?x#y",
                "/a#y", "/a;p", "/a;p?x", "/a?x;y", "/a b", "/a\tb", " /a ", "/a\\b", "/é.jpg",
                "//cdn.x.com/a.jpg", "/a\u00a0b", "/a?x/../y", "/a//b", "/.well-known/x",
                "/a/..b", "/a?&", "/?x"]:
        assert resolve(base, ref) == _urljoin_resolve(base, ref), (base, ref)


def _texts_both_ways(html: str, url: str = URL) -> tuple[list, list, bool]:
    """Every image's fields and link shares from find_images (which walks only the subtrees
    its images read: html_images.image_subtrees) and from a walk of the whole body, and
    whether find_images took the subtrees."""
    from selectolax.lexbor import LexborHTMLParser

    from pipeline.steps import html_images
    from pipeline.steps.image_texts import PageImages

    def fields(found):
        return [(img.index, img.url, img.url_attr, img.alt, img.title, img.caption,
                 img.before, img.after, img.region, img.in_link, img.container,
                 img.figure is not None, found.links(img, False), found.links(img, True))
                for img in found.images]

    part = find_images(html, url)
    body = LexborHTMLParser(html).body
    containers = frozenset(n.mem_id for n in body.css(html_images.LAZY_CONTAINER_CSS)) \
        if "data-alt" in html else frozenset()
    whole = PageImages(base=part.base)  # the page's <base href>, read once
    whole.tokens, whole.images, whole.spans = html_images.walk(body, part.base, containers)
    html_images.choose_urls(whole.images, part.base)
    whole.captions = html_images.cms_captions(whole.max_text_chars)  # as find_images does
    whole.ends = [e for _, e in whole.spans]
    for img in whole.images:
        whole.fill(img)
    items = body.css(html_images._ITEMS_CSS)
    sub = html_images.image_subtrees(body, items, containers)
    return fields(part), fields(whole), sub is not None


@pytest.mark.parametrize("html", [
    "<div><template><p>a<img src=/t.jpg alt=x>b</p></template><p>c<img src=/a.jpg>d</p></div>",
    "<div><svg><foreignObject><p>x<img src=/s.jpg>y</p></foreignObject></svg></div>"
    "<p>q<img src=/b.jpg>r</p>",
    "<object data=x><p>fb<img src=/o.jpg alt=o></p></object><div>t<img src=/d.jpg></div>",
    # a link around the image's block: the link's text share is read above that block
    "<div><a href=/x.jpg title=T><div>in link<img src=/e.jpg></div></a> after "
    "<a href=/y>L</a></div>",
    # a figcaption just after its figure, outside the image's block
    "<section><figure><div><img src=/f.jpg></div></figure><figcaption>Cap</figcaption></section>",
    "<div><picture><source srcset=/p.webp><div><img src=/g.jpg></div></picture></div>",
    "<div>a<div data-src=/l.jpg data-alt=lazy>x<img src=/h.jpg alt=h></div>b</div>",
    "<p>one<img src=/i.jpg>two</p><p>three<a href=/z><img src=/j.jpg></a>four</p>",
    "<noscript><img src=/px.gif></noscript><div><p>text<img src=/k.jpg>more</p></div>",
    "<div><p>a<img src=/m.jpg>b</p><p>c<img src=/n.jpg>d</p></div><p>e<img src=/o.jpg></p>",
    # a caption element of a pre-figcaption CMS (thirty-eighth pass): Blogger's table, whose
    # image's block (its cell) is below the container
    "<p>x</p><table class=tr-caption-container><tr><td><a href=/x><img src=/b.jpg></a></td>"
    "</tr><tr><td class=tr-caption>Cap</td></tr></table>",
    # a figcaption after its figure holding a figure with one after it (the whole walk raised)
    "<p>x<img src=/a.jpg alt=a>y</p><figure></figure><figcaption><figure></figure>"
    "<figcaption>c</figcaption></figcaption>",
])
def test_subtree_walk_reads_what_the_whole_walk_does(html):
    part, whole, _ = _texts_both_ways(html)
    assert part == whole


def test_subtree_walk_on_the_real_pages():
    files = sorted(PAGES_DIR.glob("*.html"))
    if not files:
        pytest.skip(f"no real pages at {PAGES_DIR}")
    took = 0
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        part, whole, sub = _texts_both_ways(text, f"https://example.com/pages/{path.name}")
        assert part == whole, path.name
        took += sub
    assert took > len(files) // 2  # most pages' images sit in blocks of their own


def test_a_furniture_pictures_own_text_gets_its_other_own_texts():
    # twenty-ninth pass, rule M: an alt or title in the furniture gets the picture's other own
    # texts (meta "image_text"), so the text step keeps a two-word name its headline repeats
    # (filters/file_names.named_by_image); not a text repeated verbatim, not in the content
    # (where a picture's own text is kept from two words anyway)
    nav = ("<nav><a href='/story'><img src='/u/alice-360x240.jpg' width='360' height='240' "
           "alt='Alice Waters' title='Legendary Chef Alice Waters Comes To LA'></a>"
           "<a href='/shop'><img src='/u/logo-360x240.jpg' width='360' height='240' "
           "alt='Rooster Radio' title='rooster radio'></a></nav>")
    got = {(c.text_source, c.text): c for c in run(nav, page_roles=False)}
    alt = got["alt", "Alice Waters"]
    assert alt.meta["region"] == "nav"
    assert alt.meta["image_text"] == "Legendary Chef Alice Waters Comes To LA"
    assert got["title", "Legendary Chef Alice Waters Comes To LA"].meta["image_text"] \
        == "Alice Waters"
    assert "image_text" not in got["alt", "Rooster Radio"].meta
    own = [c for c in run("<p>Text.</p><img src='/u/alice.jpg' width='360' height='240' "
                          "alt='Alice Waters' title='Legendary Chef Alice Waters Comes To LA'>")
           if c.text_source != "surrounding"]
    assert len(own) == 2 and all(c.meta["region"] == "content" and "image_text" not in c.meta
                                 for c in own)


@pytest.mark.parametrize("html", [
    "<base href=/a/><p>x<img src=i.jpg>",
    "<html><body><img src=i.jpg></body></html><base href=/c/>",
    "<table><base href=/f/><tr><td>x<img src=i.jpg></table>",
    "<template><base href=/g/></template><img src=i.jpg>",
    "<svg><base href=/h/></svg><img src=i.jpg>",
    "<p>x<base data-alt=y><base href=/k/><base href=/k2/><img src=i.jpg>",
    "<p>x<base href=/m/ data-alt=y data-src=/l.jpg><img src=i.jpg>",
    "<head><noscript><base href=/n/></noscript></head><img src=i.jpg>",
    # a <frameset> after the body's start takes the body out of the document: its <base>
    # is no more the page's (the body is still walked, as before)
    "<p><base href=/o/><frameset><img src=i.jpg>",
])
def test_base_href_is_the_documents_first_wherever_the_parser_puts_it(html):
    # speed pass 18: the <base> is found by the images' own query of the body and a query
    # of the head (html_images._page_items), not by a search of the source gating a query
    # of the whole tree; the base is still the document's first <base href>
    from selectolax.lexbor import LexborHTMLParser

    node = LexborHTMLParser(html).css_first("base[href]")
    want = resolve(URL, node.attributes["href"]) if node is not None else URL
    found = find_images(html, URL)
    assert found.base == want
    assert [img.url for img in found.images if not img.container] == \
        [urljoin(want, "i.jpg")] * len([i for i in found.images if not i.container])


def test_author_marks_read_what_the_three_searches_and_the_pattern_did():
    # speed pass 18: one search of the source for "author" (html_images._author_marks)
    # instead of 'name="author"', "name='author'", '"author"' and the JSON-LD pattern's own
    # scan; the same answers, overlapping and unmatched occurrences included
    import random

    from pipeline.steps.html_images import _LD_AUTHOR_RE, _author_marks

    def before(text):
        meta = 'name="author"' in text or "name='author'" in text
        return meta, [m.group(1) for m in _LD_AUTHOR_RE.finditer(text)]

    parts = ['"author"', "'author'", "name=", '"author": {"name": "Ann Lee"}', "{", "}", " ",
             '"name":"Bo Li"', "author", '"', "'", ":", "[", "x", "é",
             '"author":[{"@type":"Person","name":"Sylvia Fountaine"}]']
    rnd = random.Random(18)
    texts = ["", "author", '"author"', "name='author'", 'name="author"author"',
             '"author"author": {"name": "Ann Lee"}']
    texts += ["".join(rnd.choice(parts) for _ in range(rnd.randint(1, 12)))
              for _ in range(20000)]
    for text in texts:
        assert _author_marks(text) == before(text), text
    assert sum(bool(before(t)[1]) for t in texts) > 1000  # the pattern matched often


@pytest.mark.parametrize("html", [
    # tracking pixels straight under body, and in a <noscript> there
    "<p>a<img src=/a.jpg alt=a>b</p><img src=/px.gif width=1 height=1>"
    "<noscript><img src=/ns.gif></noscript><div>c<img src=/d.jpg>d</div>",
    # a link under body around a block, a figure with a figcaption after it, a picture
    "text<a href=/x.jpg title=T><div>in link<img src=/e.jpg></div></a> after <a href=/y>L</a>"
    "<figure><img src=/f.jpg></figure><figcaption>Cap</figcaption>"
    "<picture><source srcset=/p.webp><img src=/g.jpg></picture><p>x<img src=/h.jpg>y</p>",
    "<img src=/first.jpg alt=1>between<img src=/second.jpg alt=2><p>p<img src=/i.jpg></p>",
    # body text before a block whose image's sides are partly link text: the token indices
    # of the two walks differ, so its window must be read again from the whole walk
    "intro words here <img src=/px.gif><p>x <a href=/l>linked words</a><img src=/k.jpg> y "
    "<a href=/m>more</a> z</p>",
])
def test_images_walked_alone_read_the_whole_walks_texts(html):
    # speed pass 18: an <img> with no block below body is walked alone (its outermost
    # figure, picture or link, else itself) and the whole walk is made only when its texts
    # are asked for; then every record is the whole walk's, those filled before included
    def row(found, img):
        return (img.index, img.url, img.alt, img.title, img.caption, img.before, img.after,
                img.region, img.in_link, img.figure is not None, found.links(img, False),
                found.links(img, True))

    whole = find_images(html, URL)  # texts read at once: the whole walk, as before
    assert not whole.unread
    lazy = find_images(html, URL, texts=False)
    assert lazy.unread and lazy.whole is not None  # some images were walked alone
    others = [img for img in lazy.images if img.index not in lazy.unread]
    for img in others:
        lazy.fill(img)
    assert lazy.whole is not None  # the others need no whole walk
    for i in sorted(lazy.unread):
        lazy.fill(lazy.images[i])
    assert lazy.whole is None
    assert [row(lazy, img) for img in lazy.images] == [row(whole, img) for img in whole.images]
