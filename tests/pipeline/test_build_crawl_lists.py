"""The safety lists in a crawl, through a real `lait build` on Beam and on Spark: a listed page
is never requested (nor its robots.txt), a redirect to a listed URL is never followed (pages
and images), each match is counted under its own reason and never reaches rejects.parquet or
report.html, and both engines write the same bytes."""
import os

import pyarrow.parquet as pq
import pytest
import yaml

from pipeline.build import build
from tests.faultweb import PROSE, FaultWeb, body, encode, photo, redirect
from tests.pipeline.test_build import shard_bytes
from tests.pipeline.test_fault_web import fault_config
from tools.report import write_report


def page(title: str, inner: str) -> bytes:
    return (f'<!doctype html><html lang="en"><head><title>{title}</title></head><body>'
            f"<h1>{title}</h1>{PROSE}{inner}</body></html>").encode()


def img(path: str, subject: str) -> str:
    return (f'<p><img src="{path}" alt="A photograph of the {subject} near our village on a '
            f'bright summer morning"></p>')


@pytest.fixture(scope="module")
def web():
    jpg = lambda seed: body(encode(photo(seed), "JPEG", quality=90), "image/jpeg")  # noqa: E731
    w = FaultWeb()
    w.routes.update({
        "/robots.txt": body(b"User-agent: *\nAllow: /\n", "text/plain"),
        "/": body(page("Home", '<a href="/ok.html">ok</a> <a href="/listed/page.html">x</a> '
                               '<a href="/to_listed.html">y</a>'), "text/html"),
        "/ok.html": body(page("Photos", img("/img/ok.jpg", "fishing boat")
                              + img("/img/to_listed.jpg", "stone church")), "text/html"),
        "/to_listed.html": redirect("/listed/landing.html"),
        "/img/ok.jpg": jpg(1),
        "/img/to_listed.jpg": redirect("/listed/img.jpg"),
        # listed: never to be requested, though each would be served
        "/listed/page.html": body(page("Listed", img("/img/ok.jpg", "fishing boat")), "text/html"),
        "/listed/landing.html": body(page("Landing", ""), "text/html"),
        "/listed/img.jpg": jpg(2),
    })
    yield w.start()
    w.stop()


@pytest.fixture(scope="module")
def runs(web, tmp_path_factory, spark):
    d = tmp_path_factory.mktemp("crawl-lists")
    (d / "urls.txt").write_text(f"{web.url}/listed/\n")
    cfg = fault_config(web)
    cfg["safety"] = {"url_blocklist": [str(d / "urls.txt")]}
    cfg["dedup"] = {"enabled": False}
    path = d / "crawl.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = {}
    for engine in ("beam", "spark"):
        o = str(d / engine)
        out[engine] = (o, build(str(path), o, engine=engine, spark=spark if engine == "spark" else None))
    return out


def test_listed_pages_and_redirects_never_requested(web, runs):
    assert not [p for p in web.paths() if p.startswith("/listed/")], web.paths()
    assert "/to_listed.html" in web.paths() and "/img/to_listed.jpg" in web.paths()
    for engine, (out, doc) in runs.items():
        by = {s["name"]: s for s in doc["steps"]}
        for s in doc["steps"]:
            assert s["in"] == s["kept"] + sum(s["dropped"].values()), (engine, s)
        assert by["crawl"]["dropped"] == {"crawl_url_blocklist_prefix": 1,
                                          "crawl_redirect_blocklist_prefix": 1}, engine
        assert by["crawl"]["kept"] == 2  # the home page and ok.html
        assert by["fetch"]["dropped"] == {"fetch_redirect_blocklist_prefix": 1}, engine
        assert by["write"]["kept"] == 1  # ok.jpg


def test_both_engines_same_bytes(runs):
    (b, bdoc), (s, sdoc) = runs["beam"], runs["spark"]
    assert shard_bytes(b) == shard_bytes(s) and bdoc["steps"] == sdoc["steps"]


def test_matches_never_in_rejects_or_report(runs):
    for out, _ in runs.values():
        path = os.path.join(out, "rejects.parquet")
        rows = pq.read_table(path).to_pylist() if os.path.exists(path) else []
        for r in rows:
            assert "blocklist" not in r["reason"] and "listed" not in (r["image_url"] or ""), r
        html = open(write_report(out), encoding="utf-8").read()
        assert "to_listed" not in html and "/listed/" not in html
