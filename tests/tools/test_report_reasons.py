"""Every drop reason the code can emit has a sentence saying what it means (tools/report_reasons.py),
and the report and ``lait stats --why`` show it.  The reasons are read from the code itself
(stage names, literal ``drop("...")`` calls, image roles, text rules, fetch failures), so a new
reason without an explanation fails here."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools.report_reasons import ROLES, explain, text_reasons

ROOT = Path(__file__).resolve().parents[2]
STEP_FILES = sorted([*ROOT.glob("pipeline/steps/*.py"), *ROOT.glob("filters/*.py"), *ROOT.glob("scoring/*.py")])


def literal_reasons() -> set[str]:
    out = set()
    for f in STEP_FILES:
        src = f.read_text()
        names = re.findall(r'\bname = "(\w+)"', src)
        for what in re.findall(r'\.drop\("(\w+)"[,)]', src):
            out |= {f"{n}_{what}" for n in names}
    return out


def test_every_literal_drop_is_explained():
    reasons = literal_reasons()
    assert len(reasons) >= 30, reasons  # the scan found the steps' drops
    assert sorted(r for r in reasons if explain(r) is None) == []
    # read keeps 203 (a 200 passed on by a transforming proxy) as well as 200
    assert "200 or 203" in explain("read_http_status")


def test_every_image_role_and_text_rule_is_explained():
    src = (ROOT / "pipeline/steps/image_roles.py").read_text()
    roles = set(re.findall(r'return "(\w+)"', src))
    assert roles and roles <= set(ROLES), roles - set(ROLES)
    assert all(explain(f"extract_image_{r}") for r in roles)
    texts = text_reasons()
    assert {"text_oov", "text_too_short", "text_not_target", "text_dateline"} <= texts
    assert sorted(t for t in texts if explain(t) is None) == []


def test_every_fetch_failure_is_explained_for_fetch_and_crawl():
    src = "".join(f.read_text() for f in ROOT.glob("pipeline/web/*.py")) + \
        (ROOT / "pipeline/steps/fetch.py").read_text()
    kinds = set(re.findall(r'FetchError\("(\w+)"', src))
    assert {"timeout", "dns_error", "robots_disallowed"} <= kinds
    missing = [f"{s}_{k}" for k in kinds for s in ("fetch", "crawl") if explain(f"{s}_{k}") is None]
    assert missing == []
    for r in ("fetch_http_404", "crawl_http_503", "fetch_not_image_type", "fetch_url_blocklist_domain",
              "fetch_redirect_blocklist_regex", "url_blocklist_prefix", "page_blocklist_hash"):
        assert explain(r), r
    assert "503" in explain("crawl_http_503")
    # the type checks read as sentences, not as the code's parameter name ("is not image_type")
    assert explain("fetch_not_image_type") == ("the server answered with a content type that is "
                                               "not an image (an HTML error or login page, ...)")
    assert explain("crawl_not_html") == "the server answered with a content type that is not HTML"
    # a JPEG cut short before its size is "not an image" only to the decoder
    assert "cut short" in explain("fetch_not_an_image")


def test_storage_failures_and_errors_are_explained_and_unknown_is_none():
    src = (ROOT / "pipeline/core/storage.py").read_text()
    body = src[src.index("def failure_kind"):]
    body = body[:body.index("\ndef ", 1)]
    kinds = set(re.findall(r'"([a-z_]+)"', body)) - {"no_credentials"}  # that one fails the job
    assert kinds and all(explain(f"read_{k}") for k in kinds), kinds
    assert "key_error" in explain("score_error_key_error")  # Stage.error_drop's form
    assert explain("dedup_band_2_near_duplicate") == explain("dedup_near_duplicate")
    assert explain("text_no_such_rule") is None
    assert explain("nonsense") is None


def stats_doc():
    return {"steps": [
        {"name": "extract", "in": 3, "kept": 1, "out": 1, "dropped": {"extract_no_text": 2},
         "units": {"image": {"in": 5, "kept": 1, "dropped": {"extract_image_furniture": 4}}}},
        {"name": "text", "in": 1, "kept": 0, "out": 0, "dropped": {"text_dateline": 1}},
    ]}


def test_stats_why_prints_each_reason_once(tmp_path):
    p = tmp_path / "stats.json"
    p.write_text(json.dumps(stats_doc()))
    out = subprocess.run([sys.executable, "-m", "tools.cli", "stats", str(p), "--why"],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        pytest.fail(out.stderr)
    why = out.stdout.split("\nwhy:\n", 1)[1]
    assert why.count("extract_image_furniture:") == 1
    assert explain("text_dateline") in why
    assert "(no description" not in why


def test_report_table_says_why(tmp_path):
    from tools.report import reason_row
    row = reason_row("text_dateline", 7)
    assert "byline" in row and ">7<" in row
    assert "no description" in reason_row("made_up_reason", 1)
