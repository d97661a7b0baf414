"""`lait build` crawling the fault web: every fault becomes its own counted reason."""
import collections
import io
import json
import tarfile
import time

import numpy as np
import pytest
from PIL import Image

import yaml

from pipeline.build import build
from pipeline.core.stats import read_stats
from tests.faultweb import EXPECTED_IMAGES, EXPECTED_PAGES, NEVER_FOLLOWED, FaultWeb

LOOPBACK = ["127.0.0.1/32"]  # the only private network these runs may reach
QUICK = dict(timeout_s=0.5, max_time_s=1.0, retries=1, backoff_s=0.05, max_retry_after_s=2.0,
             allow_networks=LOOPBACK)


def fault_config(web) -> dict:
    """A `lait build` config crawling the fault web with short timeouts."""
    return {
        "crawl": {"seeds": [web.url + "/"], "max_depth": 2, "max_pages": 50,
                  "rate_per_host": 0, "per_host_concurrency": 0, "concurrency": 8,
                  "max_bytes": 100_000, **QUICK},
        "fetch": {"max_bytes": 2_000_000, "concurrency": 8, **QUICK},
        "image": {"min_width": 300, "min_height": 300, "resize_longest": 512},
        # The fault web's test patterns are not photos (two flat colours, a ramp): its subject
        # is fetching and decoding, so neither the head nor the flat-graphic pre-check drops.
        "naturalness": {"threshold": 0.0, "flat_check": False},
        "score": {"enabled": False},
        "output": {"num_shards": 2},
    }


@pytest.fixture(scope="module")
def web():
    w = FaultWeb().site().start()
    yield w
    w.stop()


@pytest.fixture(scope="module")
def run(web, tmp_path_factory):
    """One `lait build` (local engine) over the fault web, shared by the tests below:
    (out dir, stats.json as read back, seconds)."""
    out = tmp_path_factory.mktemp("faultweb")
    cfg = out / "faultweb.yaml"
    cfg.write_text(yaml.safe_dump(fault_config(web)))
    t0 = time.monotonic()
    build(str(cfg), str(out), engine="local")
    return out, read_stats(str(out / "stats.json")), time.monotonic() - t0


def reasons(prefix: str, table: dict) -> dict:
    return dict(collections.Counter(r for r in table.values() if r.startswith(prefix)))


def test_every_fault_is_counted_under_its_reason(web, run):
    _, doc, elapsed = run
    by = {s["name"]: s for s in doc["steps"]}

    # No fault may hold the run: every wait is bounded by the timeouts above (the hanging
    # handlers sleep 3 s; two attempts of max_time_s 1 s plus one Retry-After of 1 s).
    assert elapsed < 20, elapsed
    for s in doc["steps"]:
        assert s["in"] == s["kept"] + sum(s["dropped"].values()), s

    assert by["crawl"]["dropped"] == reasons("crawl_", EXPECTED_PAGES)
    assert by["crawl"]["kept"] == list(EXPECTED_PAGES.values()).count("kept") == 4
    # Pages with images: the gallery (every image, alt text) and the second page (shared.jpg).
    assert by["extract"]["in"] == 4 and by["extract"]["kept"] == 2
    n_kept = list(EXPECTED_IMAGES.values()).count("kept")  # 9 images, shared.jpg on 2 pages
    assert by["fetch"]["dropped"] == reasons("fetch_", EXPECTED_IMAGES)
    assert by["fetch"]["in"] == 31 and by["fetch"]["out"] == 30 - sum(by["fetch"]["dropped"].values())
    assert by["image_size"]["dropped"] == reasons("image_size_", EXPECTED_IMAGES)
    assert by["image_decode"]["dropped"] == reasons("image_decode_", EXPECTED_IMAGES)
    assert by["image_decode"]["out"] == n_kept
    assert by["write"]["in"] == n_kept and by["write"]["kept"] == n_kept

    # What the server saw: robots.txt once per stage cache, shared image once, nothing
    # disallowed or behind nofollow, and the 429 retry waited for Retry-After.
    assert len(web.requests("/robots.txt")) == 2  # crawler's cache + fetcher's cache
    assert len(web.requests("/img/shared.jpg")) == 1
    for path in ("/private/secret.html", "/img/private/secret.jpg", *NEVER_FOLLOWED):
        assert path not in web.paths()
    first, second = web.requests("/img/busy_then_ok.jpg")
    assert second - first >= 0.95
    assert len(web.requests("/img/busy.jpg")) == 2  # one retry, then given up


def test_every_dropped_page_url_is_in_rejects_under_its_reason(web, run):
    """The funnel said `crawl_robots_disallowed: 1`, `crawl_too_many_redirects: 1`, ... but no
    URL: the crawl's drops never reached rejects.parquet (a source step had no record to
    sample), so a user could not learn which page a reason was about.  Each crawl drop now
    carries its URL (one page per reason here, under rejects' per-reason cap)."""
    import pyarrow.parquet as pq

    out, _, _ = run
    rows = pq.read_table(out / "rejects.parquet", columns=["step", "reason", "page_url"]).to_pylist()
    got = sorted((r["reason"], r["page_url"]) for r in rows if r["step"] == "crawl")
    assert got == sorted((reason, web.url + path) for path, reason in EXPECTED_PAGES.items()
                         if reason != "kept")


def shard_samples(out_dir):
    samples = {}
    for tar in sorted((out_dir / "shards").glob("*.tar")):
        with tarfile.open(tar) as t:
            files = {m.name: t.extractfile(m).read() for m in t.getmembers()}
        for name, data in files.items():
            if name.endswith(".json"):
                meta = json.loads(data)
                samples[meta["image_url"].rsplit("/", 1)[1]] = (
                    meta, Image.open(io.BytesIO(files[name[:-5] + ".jpg"])))
    return samples


def test_odd_but_valid_images_are_stored_upright_rgb_jpeg(run):
    samples = shard_samples(run[0])
    kept = {p.rsplit("/", 1)[1] for p, r in EXPECTED_IMAGES.items() if r == "kept"}
    assert set(samples) == kept
    for name, (meta, im) in samples.items():
        assert im.format == "JPEG" and im.mode == "RGB", name
    meta, im = samples["rotated.jpg"]
    assert im.size == (320, 400)  # stored 400x320 with EXIF orientation 6
    arr = np.asarray(im).astype(int)
    right, left = arr[:, 200:].mean(axis=(0, 1)), arr[:, :120].mean(axis=(0, 1))
    assert right[0] > 150 > right[2] and left[2] > 150 > left[0]  # red half turned right
    assert samples["cmyk.jpg"][0]["original_format"] == "jpeg"
    assert samples["rgb16.png"][0]["original_format"] == "png"
    assert samples["anim.gif"][0]["original_format"] == "gif"
    assert samples["photo.webp"][0]["original_format"] == "webp"
    assert samples["shared.jpg"][0]["page_url"].endswith(("/gallery.html", "/second.html"))
