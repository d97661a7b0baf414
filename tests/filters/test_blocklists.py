"""Safety lists: URL rules (domain, prefix, regex), MD5 / SHA-256 lists, counted drops that are
never sampled, and the list facts each sample records."""
from __future__ import annotations

import hashlib

import pytest

from filters.blocklists import SafetyConfig, list_facts
from filters.hash_blocklist import HashBlocklist
from filters.page_blocklist import PageBlocklist
from filters.url_blocklist import UrlBlocklist
from pipeline.core.errors import ConfigError
from pipeline.core.executor import run_map_partition
from pipeline.core.plan import Step
from pipeline.core.records import Candidate, ImageItem, Page
from pipeline.core.stage import Drop


def cand(image_url, page_url="http://news.example.net/a.html"):
    return Candidate(page_url, image_url, "alt", "a cat on a mat", "a cat on a mat")


@pytest.fixture()
def safety(tmp_path):
    urls = tmp_path / "urls.txt"
    urls.write_text("# domains, prefixes, regexes\nbad.example.com\nhttps://cdn.example.org/private/\n"
                    "re:/(nsfw|xxx)/\n")
    hashes = tmp_path / "hashes.txt"
    hashes.write_text(hashlib.md5(b"evil bytes").hexdigest() + "\n"
                      + hashlib.sha256(b"http://h.example.io/x.jpg").hexdigest().upper() + "  a URL\n")
    return SafetyConfig([str(urls)], [str(hashes)]).check()


def test_url_rules(safety):
    st = UrlBlocklist.from_config(safety)
    cases = {
        "http://bad.example.com/a.jpg": "url_blocklist_domain",
        "http://img.BAD.example.com./a.jpg": "url_blocklist_domain",  # subdomain, any case
        "http://notbad.example.com/a.jpg": None,  # another domain that ends the same
        "https://cdn.example.org/private/1.jpg": "url_blocklist_prefix",
        "https://CDN.example.org:443/private/2.jpg": "url_blocklist_prefix",  # canonical form
        "https://cdn.example.org/public/1.jpg": None,
        "http://x.example.net/xxx/1.jpg": "url_blocklist_regex",
        "http://h.example.io/x.jpg": "url_blocklist_hash",  # SHA-256 of the URL
        "http://h.example.io/y.jpg": None,
    }
    for url, want in cases.items():
        got = st.process(cand(url))
        assert (got.reason if isinstance(got, Drop) else None) == want, url
    # the page a candidate comes from counts too
    assert st.process(cand("http://ok.example.net/1.jpg", "http://bad.example.com/p")).reason == "url_blocklist_domain"
    pages = PageBlocklist.from_config(safety)
    assert pages.process(Page("http://bad.example.com/p", b"")).reason == "page_blocklist_domain"
    assert isinstance(pages.process(Page("http://good.example.com/p", b"")), list)


def test_hash_list_drops_images_and_records_list_versions(safety, tmp_path):
    st = HashBlocklist.from_config(safety)
    bad = ImageItem(image_url="http://a/1.jpg", data=b"evil bytes")
    good = ImageItem(image_url="http://a/2.jpg", data=b"fine bytes")
    assert st.process(bad).reason == "hash_blocklist_image"
    assert st.process(good) == [good]
    facts = good.meta["compliance"]["blocklists"]
    assert facts["url_blocklist"] == [list_facts(safety.url_blocklist[0])]
    assert facts["hash_blocklist"][0]["name"] == "hashes.txt"
    assert facts["hash_blocklist"][0]["sha256"] == hashlib.sha256(
        open(safety.hash_blocklist[0], "rb").read()).hexdigest()


def test_matches_are_counted_never_sampled(safety):
    items = [("r", ImageItem(image_url=f"http://a/{i}.jpg", data=b"evil bytes" if i % 2 else b"ok"))
             for i in range(6)]
    out = list(run_map_partition(Step("map", HashBlocklist.from_config(safety)), items))
    stats = [v for k, v in out if k == "s"][0]
    assert stats.n_in == 6 and stats.dropped == {"hash_blocklist_image": 3}
    assert not [v for k, v in out if k == "x"]  # no reject sample at all


def test_no_lists_no_steps_and_bad_lists_fail_at_load(tmp_path):
    assert UrlBlocklist.from_config(SafetyConfig()) is None
    assert HashBlocklist.from_config(SafetyConfig()) is None
    bad = tmp_path / "bad.txt"
    for text, key, match in (("re:(unclosed\n", "url", "bad.txt:1: bad regular expression"),
                             ("not a domain!\n", "url", "neither a domain"),
                             ("1234abcd\n", "hash", "bad.txt:1: expected an MD5")):
        bad.write_text(text)
        cfg = SafetyConfig([str(bad)], []) if key == "url" else SafetyConfig([], [str(bad)])
        with pytest.raises(ConfigError, match=match):
            cfg.check()
    with pytest.raises(ConfigError, match="is not a file"):
        SafetyConfig([str(tmp_path / "missing.txt")]).check()
