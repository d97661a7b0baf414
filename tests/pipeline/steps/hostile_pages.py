"""Hostile pages for the extract step's worst-case cost (docs/captions.md, "Worst-case cost of
hostile input"): ``FAMILIES`` maps a family's name to ``make(n) -> bytes``, a page of about
``n`` bytes (the read step drops a page over ``max_page_bytes``, 5,000,000 by default).
Used by ``bench/extract_worst.py`` and ``tests/pipeline/steps/test_extract_worst.py``."""
from __future__ import annotations

from pipeline.web.html import MAX_DEPTH

_HEAD = b"<!doctype html><html lang=en><head><title>t</title></head><body>"
_TAIL = b"</body></html>"


def _one(attr: bytes, unit: bytes, n: int, tag: bytes = b"img", extra: bytes = b"") -> bytes:
    """One element whose attribute ``attr`` holds ``unit`` repeated to fill the page."""
    k = max(n - len(_HEAD) - len(_TAIL) - 200, 0) // len(unit)
    return (_HEAD + b"<p>Some words before the picture of a red boat on a lake.</p><" + tag
            + b" " + extra + attr + b'="' + unit * k + b'"><p>Some words after it.</p>' + _TAIL)


def _many(unit: bytes, n: int) -> bytes:
    k = max(n - len(_HEAD) - len(_TAIL), 0) // len(unit)
    return _HEAD + unit * k + _TAIL


def _nested(open_: bytes, close: bytes, depth: int, inner: bytes, n: int) -> bytes:
    """``depth`` nested elements around ``inner``, repeated to fill the page."""
    block = open_ * depth + inner + close * depth
    return _many(block, n)


FAMILIES = {
    "attr_alt_words": lambda n: _one(b"alt", b"a red boat ", n, extra=b'src="a.jpg" '),
    "attr_alt_digits": lambda n: _one(b"alt", b"1 .", n, extra=b'src="a.jpg" '),
    "attr_alt_entities": lambda n: _one(b"alt", b"&amp;", n, extra=b'src="a.jpg" '),
    "attr_src": lambda n: _one(b"src", b"a", n, extra=b'alt="a red boat on a lake" '),
    "attr_src_path": lambda n: _one(b"src", b"a/", n, extra=b'alt="a red boat on a lake" '),
    "attr_srcset": lambda n: _one(b"srcset", b"a.jpg 1w, ", n, extra=b'alt="a red boat" '),
    "attr_srcset_x": lambda n: _one(b"srcset", b"b.jpg 2x,", n, extra=b'alt="a red boat" '),
    "attr_srcset_nospace": lambda n: _one(b"srcset", b"a,", n, extra=b'alt="a red boat" '),
    "attr_class": lambda n: _one(b"class", b"logo ad icon ", n, extra=b'src="a.jpg" alt="a" '),
    "attr_style": lambda n: _one(b"style", b"width:1px;", n, extra=b'src="a.jpg" alt="a" '),
    "attr_width": lambda n: _one(b"width", b"9", n, extra=b'src="a.jpg" alt="a red boat" '),
    "attr_data_alt": lambda n: _one(b"data-alt", b"a red boat ", n, tag=b"div",
                                    extra=b'data-src="a.jpg" '),
    "attr_data_src": lambda n: _one(b"data-src", b"a", n, extra=b'alt="a red boat on a lake" '),
    "attr_title": lambda n: _one(b"title", b"aA", n, extra=b'src="a.jpg" '),
    "attr_href": lambda n: _one(b"href", b"a", n, tag=b"a",
                                extra=b"") + b'<img src="a.jpg" alt="a red boat on a lake">',
    "attr_many": lambda n: _many(b'<img src="a.jpg" alt="boat" ' + b"a=b " * 1000 + b">", n),
    "images_many": lambda n: _many(b'<img src="a.jpg" alt="a red boat">', n),
    "images_distinct": lambda n: b"".join([_HEAD] + [
        b'<img src="i%d.jpg" alt="boat %d">' % (i, i) for i in range(n // 32)] + [_TAIL]),
    "images_thumbs_srcset": lambda n: b"".join([_HEAD] + [
        b'<img src="i%d-100x100.jpg" width=100 height=100 srcset="i%d.jpg 1000w" alt="b">'
        % (i, i) for i in range(n // 80)] + [_TAIL]),
    "images_in_links": lambda n: _many(b'<a href="/x"><img src="a.jpg" alt="a boat"></a>', n),
    "images_in_figures": lambda n: _many(
        b'<figure><img src="a.jpg"><figcaption>a red boat</figcaption></figure>', n),
    "images_lazy": lambda n: _many(b'<div data-alt="a boat" data-src="a.jpg"></div>', n),
    "text_one_image": lambda n: _HEAD + b"<p>" + b"word " * ((n - 200) // 5)
    + b'<img src="a.jpg" alt="a red boat"></p>' + _TAIL,
    "text_siblings": lambda n: _HEAD + b"<p>x</p>" * ((n - 200) // 8)
    + b'<img src="a.jpg" alt="a red boat">' + _TAIL,
    "text_siblings_inside": lambda n: _HEAD + b"<div>" + b"<span>x</span>" * ((n - 200) // 14)
    + b'<img src="a.jpg" alt="a red boat"></div>' + _TAIL,
    "nest_div_max": lambda n: _nested(b"<div>", b"</div>", MAX_DEPTH - 10,
                                      b'<img src="a.jpg" alt="a red boat">', n),
    "nest_div_over": lambda n: _nested(b"<div>", b"</div>", MAX_DEPTH + 10,
                                       b'<img src="a.jpg" alt="a red boat">', n),
    "nest_a_max": lambda n: _nested(b'<a href="/x">', b"</a>", MAX_DEPTH - 10,
                                    b'<img src="a.jpg" alt="a red boat">', n),
    "nest_figure_max": lambda n: _nested(b"<figure>", b"</figure>", MAX_DEPTH - 10,
                                         b'<img src="a.jpg"><figcaption>c</figcaption>', n),
    "nest_unclosed_p": lambda n: _many(b'<p><img src="a.jpg" alt="a red boat">', n),
    "nest_unclosed_div": lambda n: _many(b'<div><img src="a.jpg" alt="a red boat">', n),
    "nest_unclosed_b": lambda n: _many(b'<b><img src="a.jpg" alt="a red boat">', n),
    "nest_table": lambda n: _many(b'<table><tr><td><img src="a.jpg" alt="boat">', n),
    "nest_lists": lambda n: _many(b'<ul><li><img src="a.jpg" alt="boat">', n),
    "comments": lambda n: _many(b"<!-- <img src=a.jpg> -->", n) + b'<img src="a.jpg" alt="boat">',
    "base_many": lambda n: _many(b'<base href="/a/">', n) + b'<img src="a.jpg" alt="boat">',
}
