"""Hostile pages never crash or hang the extract step, and what it gives is bounded
(docs/captions.md, "Worst-case cost of hostile input").

No timing assertion: the families run in a subprocess whose generous limit only detects a hang.
Speed is ``bench/extract_worst.py``'s."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from pipeline.steps.image_urls import MAX_URL_CHARS, resolve
from tests.pipeline.steps.hostile_pages import FAMILIES

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

_CHILD = r"""
import json, sys
from pipeline.core.records import Page
from pipeline.core.stage import Drop, Keep
from pipeline.steps.extract import Extractor
from tests.pipeline.steps.hostile_pages import FAMILIES
from tools.report_reasons import explain
size = int(sys.argv[1])
ex = Extractor()
out = {}
for name, make in sorted(FAMILIES.items()):
    body = make(size)
    (ev,) = list(ex.events(Page(url="https://example.com/p.html", body=body,
                                content_type="text/html")))
    units = {}
    for unit, reason, count in ev.units:
        units.setdefault(unit, {})[reason] = count
        assert explain(reason) or reason == "kept", reason
    if isinstance(ev, Drop):
        assert explain(ev.reason), ev.reason
    out[name] = {"type": type(ev).__name__, "reason": getattr(ev, "reason", ""),
                 "units": units,
                 "urls": max((len(c.image_url) for c in getattr(ev, "outputs", ())), default=0),
                 "texts": max((len(c.text) for c in getattr(ev, "outputs", ())), default=0),
                 "meta": max((len(str(v)) for c in getattr(ev, "outputs", ())
                              for v in c.meta.values()), default=0)}
print(json.dumps(out))
"""


def test_every_hostile_page_family_finishes_bounded_hang_guard():
    """Every family at 1 MB (the cost is linear in the page: `bench/extract_worst.py` runs
    them at the 5 MB `max_page_bytes`) through the real extractor in a subprocess: the 300 s
    limit is a hang detector (the families take ~5 s in all), not a speed test.  No crash (a
    crash would be an ``extract_error_*`` drop), every reason explained in the report, and no
    candidate carries a URL over MAX_URL_CHARS nor a text over ``max_text_chars``."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": REPO}
    proc = subprocess.run([sys.executable, "-c", _CHILD, "1000000"], cwd=REPO, env=env,
                          timeout=300, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(out) == set(FAMILIES)
    for name, row in out.items():
        assert "_error_" not in row["reason"], (name, row)
        assert row["urls"] <= MAX_URL_CHARS, name
        assert row["texts"] <= 1000, name  # Extractor's max_text_chars
        assert row["meta"] <= MAX_URL_CHARS, name  # no megabyte attribute rides in meta
    # a megabyte src is no usable URL: counted, the page dropped for want of another image
    assert out["attr_src"]["units"]["image"]["extract_image_no_url"] == 1
    # a page nested past MAX_DEPTH is dropped unparsed, with its reason
    assert out["nest_div_over"]["reason"] == "extract_html_too_deep"


def test_url_length_bound():
    base = "https://example.com/a/"
    long = "x" * (MAX_URL_CHARS - len(base))
    assert resolve(base, long) == base + long
    assert resolve(base, long + "x") == ""  # resolved over the bound
    assert resolve(base, "https://e.com/" + "y" * MAX_URL_CHARS) == ""  # given over it
    assert resolve(base, "/" + "z" * (MAX_URL_CHARS - 1)) == ""  # origin + path over it


def test_families_have_about_the_size_asked():
    for name, make in FAMILIES.items():
        size = len(make(100_000))
        assert 80_000 <= size <= 130_000, (name, size)
