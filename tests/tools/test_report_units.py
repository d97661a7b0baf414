"""Every step a build can run has its unit in the report (found walking the demo's report: the
`dedup` step was drawn as a funnel of "records" of its own, which cut the pairs funnel in two)."""
import json
import re

import pipeline.jobs as jobs
from filters.dedup import DedupPass
from pipeline.core.stage import Stage
from tools.report import render
from tools.report_charts import STEP_UNITS


def plan_step_names() -> set[str]:
    """The names of every stage the plan assembles (optional ones included: the safety lists,
    the evaluation-image check, the crawler), and the visible dedup pass."""
    names = {cls.name for cls in vars(jobs).values()
             if isinstance(cls, type) and issubclass(cls, Stage) and cls.__module__ != Stage.__module__}
    return names | {DedupPass(1, 1).name}


def test_every_step_the_plan_can_hold_has_a_unit():
    names = plan_step_names()
    assert {"read", "crawl", "page_blocklist", "url_blocklist", "hash_blocklist",
            "dedup_evaluation", "dedup", "write"} <= names  # the scan finds them
    assert sorted(names - set(STEP_UNITS)) == []


def test_the_pairs_funnel_is_one_chart_with_dedup_inside(tmp_path):
    steps = [("score", 10, 8, 8), ("dedup", 8, 7, 7), ("text_share", 7, 7, 7), ("best_text", 7, 5, 5),
             ("write", 5, 5, 0)]
    doc = {"steps": [{"name": n, "in": i, "kept": k, "out": o, "dropped": {f"{n}_x": i - k} if i > k else {}}
                     for n, i, k, o in steps], "config": {}, "timings": {}}
    (tmp_path / "stats.json").write_text(json.dumps(doc))
    page = render(str(tmp_path))
    assert re.findall(r'id="funnel-([^"]+)"', page) == ["pairs"]
    assert re.search(r'data-step="dedup"><td><b>dedup</b></td><td>pairs</td>', page)


def test_reasons_counted_without_a_sample_are_named(tmp_path):
    """The dropped-samples section showed only the reasons rejects.parquet has a sample of:
    read's drops (WARC records), drops inside a record (a page's images, a pair's near-duplicate
    images) and withheld reasons were absent without a word, so a reason of the table seemed
    to have been lost on the way."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.core.rejects import SCHEMA

    doc = {"steps": [
        {"name": "read", "in": 5, "kept": 3, "out": 3, "dropped": {"read_not_html": 2}},
        {"name": "extract", "in": 3, "kept": 2, "out": 4, "dropped": {"extract_no_text": 1},
         "units": {"image": {"in": 9, "kept": 4, "dropped": {"extract_image_icon": 5}}}},
        {"name": "score", "in": 4, "kept": 4, "out": 4, "dropped": {}}],
        "config": {}, "timings": {}}
    (tmp_path / "stats.json").write_text(json.dumps(doc))
    row = {n: None for n in SCHEMA.names} | {"step": "extract", "reason": "extract_no_text",
                                              "page_url": "http://a.example/p", "text": "x"}
    pq.write_table(pa.Table.from_pylist([row], schema=SCHEMA), tmp_path / "rejects.parquet")
    page = render(str(tmp_path))
    note = re.search(r'<p class="muted" id="not-sampled">(.*?)</p>', page, re.S).group(1)
    assert "read_not_html (2)" in note and "extract_image_icon (5)" in note
    assert "extract_no_text" not in note


def test_the_drops_card_counts_each_unit_apart(tmp_path):
    """The card summed every step's drops into one number: WARC records, pages, images and pairs
    added together.  It now gives one figure per unit, drops inside a record under their own;
    a page's pictures dropped by extract (icons, logos: never fetched) are "page images", apart
    from the fetched images the image steps and dedup drop (they were added together)."""
    doc = {"steps": [
        {"name": "read", "in": 5, "kept": 3, "out": 3, "dropped": {"read_not_html": 2}},
        {"name": "language", "in": 3, "kept": 2, "out": 2, "dropped": {"language_not_target": 1}},
        {"name": "extract", "in": 2, "kept": 2, "out": 6, "dropped": {},
         "units": {"image": {"in": 9, "kept": 4, "dropped": {"extract_image_icon": 3, "extract_image_logo": 2}}}},
        {"name": "image_size", "in": 6, "kept": 2, "out": 2, "dropped": {"image_size_too_small": 4}},
        {"name": "naturalness", "in": 2, "kept": 2, "out": 2, "dropped": {}},
        {"name": "score", "in": 2, "kept": 1, "out": 1, "dropped": {"score_irrelevant": 1}},
        {"name": "dedup", "in": 1, "kept": 1, "out": 1, "dropped": {},
         "units": {"image": {"in": 3, "kept": 1, "dropped": {"dedup_near_duplicate": 2}}}}],
        "config": {}, "timings": {}}
    (tmp_path / "stats.json").write_text(json.dumps(doc))
    page = render(str(tmp_path))
    card = re.search(r'<div class="card" id="drops-by-unit">(.*?)</div>', page, re.S).group(1)
    got = dict((u, int(n)) for n, u in re.findall(r'<b data-unit="[^"]+">(\d+) <small>([^<]+)</small></b>', card))
    assert got == {"WARC records": 2, "pages": 1, "page images": 5, "images": 6, "pairs": 1}
    assert list(got) == ["WARC records", "pages", "page images", "images", "pairs"]  # funnel order
    # the table's rows and the reasons chart name the same units
    assert re.search(r'data-unit="image"><td>page images inside</td><td>page images</td>', page)
    assert re.search(r'data-unit="image"><td>images inside</td><td>images</td>', page)
    assert "extract_image_icon (page images)" in page and "dedup_near_duplicate (images)" in page
    from pipeline.core.stats import format_funnel  # lait stats names them alike

    funnel = format_funnel(doc)
    assert "(page images inside: in 9, kept 4)" in funnel and "(images inside: in 3, kept 1)" in funnel


def _one_read_drop(tmp_path, reason: str, url: str, detail: dict) -> str:
    """The report of a run whose read step dropped one record, sampled with ``detail``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.core.rejects import SCHEMA

    doc = {"steps": [{"name": "read", "in": 3, "kept": 2, "out": 2, "dropped": {reason: 1}}],
           "config": {}, "timings": {}}
    (tmp_path / "stats.json").write_text(json.dumps(doc))
    row = {n: None for n in SCHEMA.names} | {
        "step": "read", "reason": reason, "page_url": url, "detail": json.dumps(detail)}
    pq.write_table(pa.Table.from_pylist([row], schema=SCHEMA), tmp_path / "rejects.parquet")
    return render(str(tmp_path))


def test_a_read_drop_shows_its_status_and_warc_location(tmp_path):
    page = _one_read_drop(tmp_path, "read_http_status", "http://a.example/missing", {
        "http_status": 404, "warc": "/crawl/CC-MAIN-0001.warc.gz", "warc_offset": 5120})
    assert "HTTP 404 · CC-MAIN-0001.warc.gz @ 5120" in page
    assert 'id="not-sampled"' not in page  # the one reason has its sample


def test_a_page_the_crawler_cut_shows_how(tmp_path):
    page = _one_read_drop(tmp_path, "read_warc_truncated", "http://a.example/long", {
        "http_status": 200, "warc_truncated": "length", "warc": "/crawl/CC-MAIN-0001.warc.gz",
        "warc_offset": 512})
    assert "cut by the crawler (length) · CC-MAIN-0001.warc.gz @ 512" in page
    assert "payload the crawler cut" in page   # the reason's sentence


def test_a_resumed_run_does_not_claim_its_last_command_timed_the_work(tmp_path):
    """A rerun that found every wave done wrote wall time 0.01 s, and the report showed it as
    the run's time, with a throughput of 2,000 records/s for the pages it had not read.  The
    figures are the last command's: the report now says so, and gives no throughput for a
    job whose units were done before it."""
    steps = [{"name": "read", "in": 12, "kept": 11, "out": 11, "dropped": {"read_warc_truncated": 1}},
             {"name": "image_size", "in": 8, "kept": 8, "out": 8, "dropped": {}},
             {"name": "text_share", "in": 4, "kept": 4, "out": 4, "dropped": {}}]
    doc = {"steps": steps, "config": {}, "timings": {"pages_s": 0.006, "images_s": 2.0, "corpus_s": 0.5,
                                                     "wall_s": 2.6},
           "resume": {"pages": {"units": 1, "skipped": 1, "waves_run": 0},
                      "images": {"units": 16, "skipped": 8, "waves_run": 1},
                      "corpus": {"units": 1, "skipped": 0, "waves_run": 1}}}
    (tmp_path / "stats.json").write_text(json.dumps(doc))
    page = render(str(tmp_path))
    card = re.search(r'<div class="card"><b>2.6 s</b>(.*?)</div>', page, re.S).group(1)
    assert "wall time of the last command" in card and "resumed" in card
    timing = re.search(r'id="timings".*?</table>', page, re.S).group(0)
    assert "2000.0/s" not in timing and "1 of 1 units done before" in timing
    assert "8 of 16 units done before" in timing and "4.0/s" not in timing   # images: 8 / 2.0 s
    assert "8.0/s" in timing                 # corpus ran whole in this command: 4 pairs / 0.5 s
    doc.pop("resume")                       # a run in one go: plain wall time, throughputs
    (tmp_path / "stats.json").write_text(json.dumps(doc))
    page = render(str(tmp_path))
    assert '<b>2.6 s</b>wall time</div>' in page and "2000.0/s" in page
