"""A dropped candidate whose image URL the extractor wrote (a larger version of the picture the
page shows: ``url_attr`` "wp original", "a href", "srcset 1200w", ...) says so in
rejects.parquet and in the report (qa23: the offline end-to-end run's report showed
``fetch_http_404`` for WordPress originals with nothing naming the thumbnail on the page, so a
user saw a failed URL the page does not contain)."""
from __future__ import annotations

import json

from pipeline.core.records import Candidate
from pipeline.core.rejects import RejectSample
from tools.report import reject_cell

THUMB = "https://blog.example/wp-content/uploads/2015/01/pilaw-63x53.jpg"
ORIGINAL = "https://blog.example/wp-content/uploads/2015/01/pilaw.jpg"


def sampled(c: Candidate, reason: str = "fetch_http_404") -> dict:
    s = RejectSample("fetch")
    s.offer(reason, c)
    ((_, fields),) = s.by_reason[reason]
    return dict(fields, step="fetch", reason=reason)


def test_a_dropped_wp_original_names_the_thumbnail_the_page_shows():
    c = Candidate(page_url="https://blog.example/post", image_url=ORIGINAL, text_source="alt",
                  text="Afghan Norinj Pilaw", raw_text="Afghan Norinj Pilaw",
                  meta={"url_attr": "wp original", "shown_url": THUMB, "lang": "en", "lang_conf": 0.9})
    row = sampled(c)
    d = json.loads(row["detail"])
    assert d["url_attr"] == "wp original" and d["shown_url"] == THUMB and d["lang"] == "en"
    cell = reject_cell(row, {})
    assert "wp original" in cell and THUMB in cell and ORIGINAL in cell


def test_a_url_the_page_names_carries_no_such_detail():
    c = Candidate(page_url="https://blog.example/post", image_url=THUMB, text_source="alt",
                  text="Afghan Norinj Pilaw", raw_text="Afghan Norinj Pilaw",
                  meta={"url_attr": "src", "lang": "en", "lang_conf": 0.9})
    d = json.loads(sampled(c)["detail"])
    assert "url_attr" not in d and "shown_url" not in d
    assert "shown" not in reject_cell(sampled(c), {})


def test_the_small_role_says_a_larger_version_may_come_from_the_url():
    """extract_image_small's sentence said "no larger version named on the page", but since the
    tenth pass (a resizing CDN's size) and the thirty-fourth (a WordPress upload's original) a
    thumbnail the page names nothing larger for is kept when its own URL gives one."""
    from tools.report_reasons import ROLES

    assert "WordPress" in ROLES["small"] and "CDN" in ROLES["small"]
