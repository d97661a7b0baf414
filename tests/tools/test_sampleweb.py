"""The sample web: deterministic, big and varied enough, truthful, served, and scorable."""
from __future__ import annotations

import collections
import io
import json
import re
import socket
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urljoin

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastwarc.warc import ArchiveIterator
from PIL import Image
from selectolax.lexbor import LexborHTMLParser as HTMLParser

from tools.sampleweb import evaluate, generate, good_pairs, labelled_pairs, serve
from tools.sampleweb.__main__ import main
from tools.sampleweb.texts import TEXT_KINDS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    out = tmp_path_factory.mktemp("sampleweb")
    summary = generate(out, seed=0, base_url=base)
    return out, base, port, summary


@pytest.fixture(scope="module")
def truth(site):
    out = site[0]
    return [json.loads(line) for line in (out / "truth.jsonl").read_text(encoding="utf-8").splitlines()]


def all_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_gives_identical_bytes(site, tmp_path):
    out, base, _, _ = site
    again = tmp_path / "again"
    assert main(["generate", "--out", str(again), "--seed", "0", "--base-url", base]) == 0
    first, second = all_files(out), all_files(again)
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert differing == []


def test_counts_and_every_kind_present(site, truth):
    out, _, _, summary = site
    assert summary["pages"] >= 200
    images = [p for p in (out / "images").rglob("*") if p.is_file()]
    distinct = {p.read_bytes() for p in images}
    assert len(distinct) >= 150
    assert summary["distinct_images"] == len(distinct)
    assert {r["image_kind"] for r in truth} == {"natural", "clipart", "graphic", "small"}
    assert {r["text_kind"] for r in truth} == set(TEXT_KINDS)
    assert {r["text_source"] for r in truth} == {"alt", "title", "caption", "surrounding"}
    assert {r["markup"] for r in truth} >= {"img", "figure", "para", "lazy", "lazy_placeholder",
                                            "picture", "picture_source", "thumb", "thumb_link"}
    assert {r["page_lang"] for r in truth} == {"en", "de", "fr"}
    # Every file on disk is shown by some page.
    assert {f"{site[1]}/images/{p.relative_to(out / 'images')}" for p in images} == {r["image_url"] for r in truth}
    variants = {i["variant"] for i in summary["images"].values()}
    assert variants >= {"original", "crop", "reencode", "resize", "thumb", "webp", "copy", "render"}


def test_good_means_descriptive_english_on_a_large_natural_photo(site, truth):
    out = site[0]
    good = [r for r in truth if r["good"]]
    assert len({r["group"] for r in good}) >= 50  # every photo and crop has a good text somewhere
    for r in good:
        assert r["text_kind"] == "descriptive" and r["page_lang"] == "en" and r["image_kind"] == "natural"
        with Image.open(out / r["image_path"]) as im:
            assert min(im.size) >= 300
    # Image kinds agree with the files' real sizes.
    for r in truth:
        with Image.open(out / r["image_path"]) as im:
            assert (min(im.size) < 300) == (r["image_kind"] == "small"), r["image_path"]


def test_shared_generic_caption_spans_more_than_ten_photos(truth):
    by_text = collections.defaultdict(set)
    for r in truth:
        if r["text_kind"] == "shared_generic":
            by_text[r["text"]].add(r["group"])
    assert max(len(g) for g in by_text.values()) > 10
    other = [r for r in truth if r["text_kind"] == "other_photo"]
    assert len(other) >= 10 and not any(r["good"] for r in other)


def test_same_image_under_two_urls_and_on_many_pages(site, truth):
    summary = site[3]
    by_sha = collections.defaultdict(set)
    for url, info in summary["images"].items():
        by_sha[info["sha256"]].add(url)
    assert any(len(urls) >= 2 for urls in by_sha.values())
    pages_per_image = collections.defaultdict(set)
    for r in truth:
        pages_per_image[r["image_url"]].add(r["page_url"])
    assert max(len(p) for p in pages_per_image.values()) >= 100


def read_warc(path):
    recs = []
    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh, parse_http=True, strict_mode=False):
            body = rec.reader.read()
            # WarcRecordType is not hashable: keep its name.
            recs.append((repr(rec.record_type).split(".")[-1], rec.headers.get("WARC-Target-URI"), rec, body))
    return recs


def test_warc_readable_by_fastwarc(site):
    out, base, _, summary = site
    recs = read_warc(out / "pages.warc.gz")
    types = collections.Counter(t for t, *_ in recs)
    assert types["warcinfo"] == 1 and types["request"] >= 5
    responses = [(u, r, b) for t, u, r, b in recs if t == "response"]
    assert len(responses) == summary["warc_responses"]
    html_ok = [(u, r, b) for u, r, b in responses
               if r.http_headers.status_code == 200 and r.http_headers.get("Content-Type").startswith("text/html")]
    assert len(html_ok) == summary["pages"] >= 200
    assert all(u.startswith(base + "/") for u, _, _ in responses)
    ctypes = {r.http_headers.get("Content-Type") for _, r, _ in responses}
    assert "application/pdf" in ctypes
    assert {r.http_headers.status_code for _, r, _ in responses} == {200, 301, 404}
    for u, r, b in responses:
        assert int(r.http_headers.get("Content-Length")) == len(b)
    cp = [b for u, _, b in html_ok if b"charset=windows-1252" in b]
    assert len(cp) == 1 and "café".encode("cp1252") in cp[0]


def parsed_candidates(base_url: str, page_url: str, body: bytes) -> set:
    """(image URL, source, text) that an HTML5 parser finds for alt, title and figcaption."""
    m = re.search(rb"charset=([\w-]+)", body[:1000])
    tree = HTMLParser(body.decode(m.group(1).decode() if m else "utf-8"))
    base = tree.css_first("base")
    root = base.attributes["href"] if base else page_url
    found = set()
    for img in tree.css("img"):
        a = img.attributes
        urls = [urljoin(root, a[k]) for k in ("src", "data-src") if a.get(k)]
        if img.parent and img.parent.tag == "picture":
            urls += [urljoin(root, s.attributes["srcset"].split()[0]) for s in img.parent.css("source")]
        href = img.parent.attributes.get("href") if img.parent and img.parent.tag == "a" else None
        if href and re.search(r"\.(jpe?g|png|webp)$", href):  # a thumbnail linking to its picture
            urls.append(urljoin(root, href))
        fig = img.parent if img.parent and img.parent.tag == "figure" else None
        cap = fig.css_first("figcaption") if fig else None
        for url in urls:
            for key in ("alt", "title"):
                if a.get(key) is not None:
                    found.add((url, key, a[key]))
            if cap is not None:
                found.add((url, "caption", cap.text()))
    return found


def test_truth_matches_what_an_html_parser_finds(site, truth):
    out, base, _, _ = site
    expected = collections.defaultdict(set)
    for r in truth:
        if r["text_source"] != "surrounding":
            expected[r["page_url"]].add((r["image_url"], r["text_source"], r["text"]))
    pages = [(u, r, b) for t, u, r, b in read_warc(out / "pages.warc.gz")
             if t == "response" and r.http_headers.status_code == 200
             and r.http_headers.get("Content-Type").startswith("text/html")]
    checked = 0
    for url, _, body in pages:
        assert parsed_candidates(base, url, body) == expected.get(url, set()), url
        checked += 1
    assert checked >= 200
    # Surrounding texts are really in the paragraph around their image.
    by_page = {u: b for u, _, b in pages}
    for r in truth:
        if r["text_source"] == "surrounding":
            body = by_page[r["page_url"]]
            enc = "cp1252" if b"windows-1252" in body[:1000] else "utf-8"
            text = HTMLParser(body.decode(enc)).body.text()
            assert r["text"] in text


def test_server_serves_images_with_types_and_404s(site):
    out, base, port, summary = site
    server = serve(out, port=port)
    try:
        assert server.server_address[1] == port
        for url, info in list(summary["images"].items())[:: 25]:
            with urllib.request.urlopen(url, timeout=5) as resp:
                assert resp.status == 200
                assert resp.headers["Content-Type"] == info["mime"]
                assert len(resp.read()) == info["bytes"]
        webp = next(u for u, i in summary["images"].items() if i["mime"] == "image/webp")
        with urllib.request.urlopen(webp, timeout=5) as resp:
            assert resp.headers["Content-Type"] == "image/webp"
            assert Image.open(io.BytesIO(resp.read())).format == "WEBP"
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{base}/images/photos/no_such_photo.jpg", timeout=5)
        assert err.value.code == 404
    finally:
        server.shutdown()
        server.server_close()


def write_parquet(path: Path, rows: list[dict]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path / "00000.parquet")


def test_evaluate_on_a_hand_made_parquet(tmp_path):
    u = "http://h/images/"
    truth_rows = [  # two good photos (a and its near-duplicate a2 share group "a"), one bad row
        {"image_url": u + "a.jpg", "group": "a", "text": "A red ladybird on a stem", "good": True},
        {"image_url": u + "a2.jpg", "group": "a", "text": "IMG_2041.JPG", "good": False},
        {"image_url": u + "b.jpg", "group": "b", "text": "A cup of espresso on a red saucer", "good": True},
        {"image_url": u + "b.jpg", "group": "b", "text": "Our team at work", "good": False},
        {"image_url": u + "c.jpg", "group": "c", "text": "Bar chart of revenue", "good": False},
    ]
    truth_path = tmp_path / "truth.jsonl"
    truth_path.write_text("".join(json.dumps(r) + "\n" for r in truth_rows))
    out = [  # good via the near-duplicate URL and an edited caption; good exact; two bad
        {"image_url": u + "a2.jpg", "caption": "a red ladybird on a stem", "raw_text": "A  red ladybird on a stem."},
        {"image_url": u + "a.jpg", "caption": "A red ladybird on a stem", "raw_text": "A red ladybird on a stem"},
        {"image_url": u + "b.jpg", "caption": "Our team at work", "raw_text": "Our team at work"},
        {"image_url": u + "c.jpg", "caption": "Bar chart of revenue", "raw_text": "Bar chart of revenue"},
    ]
    write_parquet(tmp_path / "shards", out)
    res = evaluate(tmp_path, truth_path)  # finds OUT/shards/*.parquet
    assert res == {"precision": 0.5, "recall": 0.5, "n_output": 4, "n_truth_images": 2,
                   "n_good_output": 2, "n_found_images": 1}
    # A longer surrounding text that contains the good sentence still counts.
    out.append({"image_url": u + "b.jpg", "caption": "x",
                "raw_text": "Posted by Anna. A cup of espresso on a red saucer. Click to enlarge."})
    write_parquet(tmp_path / "shards2", out)
    res = evaluate(tmp_path / "shards2", truth_path)
    assert (res["precision"], res["recall"]) == (0.6, 1.0)
    # A thumbnail (kind "small") of a good picture with its good text is not a good sample.
    truth_rows.append({"image_url": u + "a_t.jpg", "group": "a", "text": "thumb", "good": False,
                       "image_kind": "small"})
    truth_path.write_text("".join(json.dumps(r) + "\n" for r in truth_rows))
    write_parquet(tmp_path / "shards3", [{"image_url": u + "a_t.jpg", "caption": "c",
                                          "raw_text": "A red ladybird on a stem"}])
    res = evaluate(tmp_path / "shards3", truth_path)
    assert (res["precision"], res["n_good_output"]) == (0.0, 0)


def test_evaluate_on_generated_truth_and_cli(site, tmp_path, capsys):
    out = site[0]
    truth_path = out / "truth.jsonl"
    pairs = good_pairs(truth_path)
    per_group = {}
    for p in pairs:
        per_group.setdefault(p["group"], p)
    rows = [{"image_url": p["image_url"], "caption": p["text"], "raw_text": p["text"]} for p in per_group.values()]
    negatives = [p for p in labelled_pairs(truth_path) if p["label"] == 0][: len(rows)]
    assert {p["text_kind"] for p in labelled_pairs(truth_path) if p["label"] == 0} >= {"other_photo", "filename"}
    rows += [{"image_url": p["image_url"], "caption": p["text"], "raw_text": p["text"]} for p in negatives]
    write_parquet(tmp_path / "s", rows)
    assert main(["evaluate", str(tmp_path / "s"), str(truth_path)]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["recall"] == 1.0 and res["precision"] == 0.5
    assert res["n_truth_images"] == len(per_group) >= 50
    assert all(Path(p["image_path"]).is_file() for p in pairs)


def test_bad_arguments_fail_clearly(tmp_path):
    with pytest.raises(ValueError, match="base_url"):
        generate(tmp_path / "x", base_url="http://127.0.0.1:8642/some/path")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        generate(tmp_path / "busy")
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"
