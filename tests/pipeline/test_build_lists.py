"""Decontamination and the safety lists through a real build, on Beam and on Spark: the listed
images are dropped under their own reasons, the rest is kept, both engines write the same
bytes, and no match reaches rejects.parquet or report.html."""
import base64
import hashlib
import io
import json
import os
import re

import pyarrow.parquet as pq
import pytest
from PIL import Image

from pipeline.build import build
from tests.conftest import REPO
from tests.pipeline.test_build import samples, shard_bytes
from tools.report import write_report

CONFIG = str(REPO / "configs" / "demo.yaml")


def demo_reject(demo_run, site, reason: str) -> str:
    """A natural-photo URL (of a group no list names) that the demo run without lists drops
    under ``reason`` and samples into rejects.parquet, the first by URL."""
    out, _ = demo_run
    rows = pq.read_table(os.path.join(out, "rejects.parquet")).to_pylist()
    named = ("cat", "rocket", "coffee", "raindrops", "ladybird")
    info = site["images"]
    urls = sorted({r["image_url"] for r in rows if r["reason"] == reason and r["thumb"] is not None
                   and r["image_url"] in info and info[r["image_url"]]["group"] not in named
                   and (reason != "image_size_too_small" or info[r["image_url"]]["content"] == "natural")})
    assert urls, f"the demo corpus samples images under {reason}"
    return urls[0]


@pytest.fixture(scope="module")
def lists(sample_web, demo_run, tmp_path_factory):
    """Lists naming pictures of the sample web; returns the overrides and what each names."""
    d = tmp_path_factory.mktemp("lists")
    site = json.loads((sample_web / "site.json").read_text())
    base, images = site["base_url"], site["images"]
    by_group = {}
    for url, i in images.items():
        by_group.setdefault(i["group"], []).append(url)
    # decontamination: a re-encoded copy of the cat photo is "an evaluation image", and so is
    # an image that naturalness would otherwise drop (and sample into rejects.parquet)
    ev = d / "eval"
    ev.mkdir()
    cat = Image.open(sample_web / "images" / "photos" / "cat.jpg").convert("RGB")
    cat.resize((cat.width // 2, cat.height // 2)).save(ev / "cat_test.jpg", quality=60)
    # ... and so are an image naturalness drops and a thumbnail the size check drops (both
    # sampled, with thumbnails, when there is no list)
    unnatural = demo_reject(demo_run, site, "naturalness_not_natural")
    small = demo_reject(demo_run, site, "image_size_too_small")
    for name, url in (("unnatural", unnatural), ("small", small)):
        ext = os.path.splitext(url)[1]  # lait hashes reads image files by their extension
        (ev / (name + ext)).write_bytes((sample_web / url[len(base):].lstrip("/")).read_bytes())
    # url list: a regex, a URL prefix, a domain that names nothing here
    page = f"{base}/articles/old-2.html"
    (d / "urls.txt").write_text(f"# test list\nre:/coffee[^/]*$\n{base}/images/gallery/raindrops\n"
                                f"example.org\n{page}\n")
    # hash list: the bytes of every rocket file, and the MD5 of one ladybird URL
    rocket = sorted(images[u]["sha256"] for u in by_group["rocket"])
    ladybird = f"{base}/images/photos/ladybird.jpg"
    assert ladybird in images
    (d / "hashes.txt").write_text("\n".join(rocket + [hashlib.md5(ladybird.encode()).hexdigest() + "  url"]) + "\n")
    over = {"dedup.exclude": [str(ev)], "safety.url_blocklist": [str(d / "urls.txt")],
            "safety.hash_blocklist": [str(d / "hashes.txt")]}
    return over, {"cat": by_group["cat"], "rocket": by_group["rocket"], "ladybird": [ladybird],
                  "page": [page], "unnatural": [unnatural], "small": [small],
                  "coffee": [u for u in by_group["coffee"] if re.search(r"/coffee[^/]*$", u)],
                  "raindrops": [u for u in by_group["raindrops"]
                                                          if "/gallery/raindrops" in u]}


@pytest.fixture(scope="module")
def runs(lists, demo_overrides, tmp_path_factory, spark):
    over = {**demo_overrides, **lists[0]}
    out = {}
    for engine in ("beam", "spark"):
        o = str(tmp_path_factory.mktemp(engine))
        doc = build(CONFIG, o, engine=engine, overrides=over, spark=spark if engine == "spark" else None)
        out[engine] = (o, doc)
    return out


def test_both_engines_same_bytes(runs):
    (b, bdoc), (s, sdoc) = runs["beam"], runs["spark"]
    assert shard_bytes(b) == shard_bytes(s) and bdoc["steps"] == sdoc["steps"]
    with open(os.path.join(b, "rejects.parquet"), "rb") as x, open(os.path.join(s, "rejects.parquet"), "rb") as y:
        assert x.read() == y.read()


def test_listed_images_dropped_under_their_reasons(runs, lists):
    out, doc = runs["beam"]
    by = {st["name"]: st for st in doc["steps"]}
    names = [st["name"] for st in doc["steps"]]
    assert names.index("page_blocklist") < names.index("language")
    assert names.index("extract") < names.index("url_blocklist") < names.index("text")
    assert names.index("fetch") + 1 == names.index("hash_blocklist") < names.index("image_decode")
    # evaluation images: decoded and checked before any filter that could sample one
    assert names.index("hash_blocklist") + 1 == names.index("dedup_evaluation") < names.index("image_size")
    ub = by["url_blocklist"]["dropped"]
    assert ub.get("url_blocklist_regex", 0) > 0 and ub.get("url_blocklist_prefix", 0) > 0
    assert ub.get("url_blocklist_hash", 0) > 0  # the ladybird URL, never fetched
    assert by["hash_blocklist"]["dropped"].get("hash_blocklist_image", 0) > 0
    # the cat copies, the image naturalness and the one image_size would have dropped; no
    # second check later
    assert by["dedup_evaluation"]["dropped"].get("dedup_evaluation_image", 0) >= 4
    assert not by["dedup"]["dropped"] and "dedup_evaluation_image" not in by["dedup"]["units"]["image"]["dropped"]
    for st in doc["steps"]:
        assert st["in"] == st["kept"] + sum(st["dropped"].values()), st["name"]
    assert by["page_blocklist"]["dropped"].get("page_blocklist_prefix", 0) >= 1
    kept = samples(out)
    kept_urls = {r["image_url"] for r in kept} | {r["page_url"] for r in kept}
    for what, urls in lists[1].items():
        assert not kept_urls & set(urls), what
    # the rest is kept: other pictures still make it, with their compliance facts
    assert len(kept_urls) > 35
    row = samples(out)[0]
    facts = row["image_meta"]["compliance"]
    assert facts["robots_txt"] == "allowed" and facts["opt_out"] == []
    assert [f["name"] for f in facts["blocklists"]["url_blocklist"]] == ["urls.txt"]
    assert [f["name"] for f in facts["blocklists"]["hash_blocklist"]] == ["hashes.txt"]
    assert all(len(f["sha256"]) == 64 for v in facts["blocklists"].values() for f in v)


def test_matches_never_in_rejects_or_report(runs, lists, demo_run):
    out, doc = runs["beam"]
    named = lists[1]
    by_url = {u for k in ("coffee", "raindrops", "ladybird") for u in named[k]}  # listed URLs
    # known bad only once fetched: listed bytes, and evaluation images (a step before the fetch
    # may still sample one's URL, e.g. for its text, never its pixels)
    by_bytes = {u for k in ("rocket", "cat", "unnatural", "small") for u in named[k]}
    names = [st["name"] for st in doc["steps"]]
    fetched = set(names[names.index("fetch") + 1:])
    rows = pq.read_table(os.path.join(out, "rejects.parquet")).to_pylist()
    assert rows  # other steps' samples are there
    for r in rows:
        assert not r["reason"].startswith(("url_blocklist", "hash_blocklist", "page_blocklist",
                                           "dedup_evaluation"))
        # a listed URL is dropped as soon as its candidate exists: no step after sees it; a
        # listed image is dropped right after its fetch: no step after it samples (or shows) it
        assert r["image_url"] not in by_url and r["page_url"] not in named["page"], r
        if r["image_url"] in by_bytes:
            assert r["step"] not in fetched and r["thumb"] is None, r
    html = open(write_report(out), encoding="utf-8").read()
    for u in by_url | set(named["page"]):
        assert u not in html
    # the thumbnails the demo run's report shows of the evaluation images (image_size,
    # naturalness) are not in this one
    demo = pq.read_table(os.path.join(demo_run[0], "rejects.parquet")).to_pylist()
    thumbs = [r["thumb"] for r in demo if r["image_url"] in named["unnatural"] + named["small"]
              and r["thumb"] is not None]
    assert len(thumbs) >= 2
    for t in thumbs:
        assert base64.b64encode(t).decode("ascii") not in html


def test_without_the_list_other_steps_sample_the_evaluation_images(demo_run, lists):
    """What the list changes: without it, the size check and naturalness sample two of the
    evaluation images, with thumbnails."""
    rows = pq.read_table(os.path.join(demo_run[0], "rejects.parquet")).to_pylist()
    named = lists[1]
    for what, step in (("small", "image_size"), ("unnatural", "naturalness")):
        assert any(r["image_url"] in named[what] and r["step"] == step and r["thumb"] is not None
                   for r in rows), what
