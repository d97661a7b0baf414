"""Issue 17.5: a page is parsed once (language and extract share the tree), and a page nested
too deep for lexbor's super-linear tree building is dropped without being parsed."""
import pickle

import pytest

import filters.language
import pipeline.steps.html_images
import pipeline.web.html
from filters.language import PageLanguage
from pipeline.core.records import Page
from pipeline.core.stage import Drop
from pipeline.steps.extract import Extractor
from pipeline.web.html import MAX_DEPTH, nesting_depth, parsed

ENGLISH = ("<html lang=en><head><title>Garden notes</title></head><body><article><p>"
           + "We planted tomatoes and beans along the south fence this spring, and the "
           "harvest was the best we have had in years. " * 4
           + '</p><figure><img src="/tomato.jpg" alt="Ripe tomatoes on the vine in July">'
           "<figcaption>Our tomatoes in July</figcaption></figure></article></body></html>")


def page(html: str) -> Page:
    return Page(url="http://example.com/garden", body=html.encode(), content_type="text/html")


@pytest.fixture()
def parses(monkeypatch):
    """Counts lexbor parses, wherever a module calls the parser."""
    calls = []
    real = pipeline.web.html.LexborHTMLParser

    def counting(html):
        calls.append(len(html))
        return real(html)

    for mod in (pipeline.web.html, filters.language, pipeline.steps.html_images):
        monkeypatch.setattr(mod, "LexborHTMLParser", counting)
    return calls


@pytest.fixture(scope="module")
def language():
    s = PageLanguage()
    s.setup()
    return s


def test_language_and_extract_parse_a_page_once(language, parses):
    p = page(ENGLISH)
    assert language.process(p) == [p]
    out = Extractor().process(p)
    assert {c.text for c in out.outputs} >= {"Ripe tomatoes on the vine in July"}
    assert len(parses) == 1
    # the shared tree was not edited by the language step (it strips a clone)
    assert parsed(p).tree().css_first("head > title").text() == "Garden notes"


def test_a_page_crossing_processes_leaves_its_tree_behind(language):
    p = page(ENGLISH)
    language.process(p)
    again = pickle.loads(pickle.dumps(p))
    assert again.parsed is None and again == p
    assert Extractor().process(again).outputs  # parsed again where it landed


@pytest.mark.parametrize("inner", ["<div>", "<span><b>", '<svg><g class="x">'])
def test_deep_nesting_is_dropped_unparsed(language, parses, inner):
    deep = "<html><body>" + inner * 40_000 + "x" + "</p>" * 100
    assert nesting_depth(deep) > MAX_DEPTH
    assert list(language.events(page(deep))) == [Drop("language_html_too_deep")]
    assert list(Extractor().events(page(deep))) == [Drop("extract_html_too_deep")]
    assert parses == []  # the page was never handed to the parser


def test_depth_counts_what_nests_and_nothing_else():
    flat = "<html><body>" + "<p>para<br><img src=a.jpg><li>item" * 5000 + "</body></html>"
    assert nesting_depth(flat) <= 2
    closed = "<html><body>" + "<div><span>x</span></div>" * 5000
    assert nesting_depth(closed) == 2
    script = "<html><body><script>" + "'<div>' + " * 5000 + "''</script><!--" \
        + "<div>" * 5000 + "--><svg>" + "<path d=1/>" * 5000 + "</svg>"
    assert nesting_depth(script) == 1
    assert nesting_depth("<div>" * (MAX_DEPTH + 1)) == MAX_DEPTH + 1
    assert nesting_depth("<div>" * MAX_DEPTH) == MAX_DEPTH
    # Close tags bound the start tags, never hide depth: many of them, still too deep.
    assert nesting_depth("<div>" * (MAX_DEPTH + 1) + "</div>" * 5000) == MAX_DEPTH + 1
    assert nesting_depth("<div>x</div>" * 5000) <= MAX_DEPTH
    # where the tags start is found by a vectorised compare (speed pass 18): a "<" that ends
    # the page is a start tag followed by nothing, one after a multi-byte character counts
    assert nesting_depth("</" * (MAX_DEPTH + 5) + "<") == 1
    assert nesting_depth(b"</" * (MAX_DEPTH + 5) + b"<") == 1
    assert nesting_depth("é<div>" * (MAX_DEPTH + 1)) == MAX_DEPTH + 1
