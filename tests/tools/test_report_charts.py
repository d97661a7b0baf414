"""The report's charts show every label whole (the funnel cut "1164 in, 1164 kept → 1164
candidate texts" to "1164 in, 1164 kept → 1164 candidate tex…"), and a chart wider than the
page scales down to it; checked in the HTML and laid out by headless Chromium."""
import html
import json
import re

from tests.tools.test_scored_build import run_chromium
from tools import report_charts as charts
from tools.report import render

STEPS = [("read", 1234567, 1200000, 1200000), ("language", 1200000, 1164, 1164),
         ("extract", 1164, 1164, 1164099), ("text", 1164099, 1000000, 1000001),
         ("fetch", 1000001, 900000, 876543), ("image_size", 876543, 800000, 800000),
         ("pairs", 800000, 800000, 812345), ("dedup_evaluation_of_a_long_name", 812345, 800000, 800000)]
LONG_REASON = "extract_image_furniture_of_a_site_with_a_very_long_reason_name"


def doc() -> dict:
    steps = [{"name": n, "in": i, "kept": k, "out": o, "dropped": {f"{n}_dropped": i - k} if i > k else {}}
             for n, i, k, o in STEPS]
    steps[2]["dropped"] = {LONG_REASON: 7}
    steps[2]["in"] += 7
    return {"steps": steps, "config": {}, "timings": {}}


def svgs(page: str) -> list[str]:
    return re.findall(r"<svg.*?</svg>", page, re.S)


def svg_texts(page: str) -> list[str]:
    return [html.unescape(t) for s in svgs(page) for t in re.findall(r"<text[^>]*>([^<]*)</text>", s)]


def test_funnel_and_bar_labels_are_whole(tmp_path):
    (tmp_path / "stats.json").write_text(json.dumps(doc()))
    page = render(str(tmp_path))
    texts = svg_texts(page)
    for step in doc()["steps"]:  # each funnel row's text, as the funnel words it
        unit = charts.unit_of(step["name"])[0]
        assert charts.funnel_numbers(step, unit) in texts
        assert step["name"] in texts
    assert "1171 in, 1164 kept → 1164099 candidate texts" in texts
    assert f"{LONG_REASON} (pages)" in texts  # the drops-by-reason chart's label
    assert not [t for t in texts if "…" in t]
    for s in svgs(page):  # each chart scales down with the page instead of overflowing it
        w, h = re.search(r'width="(\d+)" height="(\d+)"', s).groups()
        assert f'viewBox="0 0 {w} {h}"' in s


def test_label_columns_widen_to_the_longest_label():
    short = charts.bar_chart("t", [("a", 1.0)], width=360, label_w=80)
    long = charts.bar_chart("t", [("a", 1.0), ("x" * 60, 2.0)], width=360, label_w=80)
    width = lambda s: int(re.search(r'<svg[^>]* width="(\d+)"', s).group(1))  # noqa: E731
    assert width(long) >= width(short) + 60 * charts.CHAR_W - 80
    assert "x" * 60 + "</text>" in long


LAYOUT_SCRIPT = """<script>
window.addEventListener('load', function () {
  var bad = [], right = 0;
  document.querySelectorAll('svg').forEach(function (s) {
    var box = s.getBoundingClientRect(), texts = s.querySelectorAll('text');
    right = Math.max(right, box.right);
    texts.forEach(function (t, i) {
      var r = t.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1) bad.push('outside: ' + t.textContent);
      for (var j = i + 1; j < texts.length; j++) {
        var q = texts[j].getBoundingClientRect();
        var w = Math.min(r.right, q.right) - Math.max(r.left, q.left);
        var h = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
        if (w > 0 && h > 0 && w * h > 2) bad.push('overlap: ' + t.textContent + ' x ' + texts[j].textContent);
      }
    });
  });
  document.body.dataset.bad = JSON.stringify(bad.slice(0, 20));
  document.body.dataset.scrollWidth = document.documentElement.scrollWidth;
  document.body.dataset.clientWidth = document.documentElement.clientWidth;
  document.body.dataset.chartsRight = Math.ceil(right);
});
</script>"""


def test_whole_labels_fit_their_chart_in_chromium(tmp_path):
    """Laid out by Chromium, at a wide and a narrow window: every label of every chart lies
    inside its chart (the columns are sized generously enough for the real font), no two
    overlap, and no chart is wider than the window (a wide one scales down); nor is the page
    itself, at either width: a table wider than a 480 px window scrolls inside its own box, a
    long reason name in a paragraph wraps."""
    (tmp_path / "stats.json").write_text(json.dumps(doc()))
    page = render(str(tmp_path)).replace("</body>", LAYOUT_SCRIPT + "</body>")
    path = tmp_path / "page.html"
    path.write_text(page, encoding="utf-8")
    for width in (1400, 480):
        dom = run_chromium(["--virtual-time-budget=5000", f"--window-size={width},3000", "--dump-dom",
                            "file://" + str(path)], tmp_path)
        body = re.search(r"<body([^>]*)>", dom).group(1)
        bad = json.loads(html.unescape(re.search(r'data-bad="([^"]*)"', body).group(1)))
        assert bad == [], (width, bad)
        assert int(re.search(r'data-charts-right="(\d+)"', body).group(1)) <= width
        # The page scrolls sideways only if it is wider than its viewport; headless Chromium
        # lays a 480 px window out at its smallest, 500 px (485 inside the scrollbar).
        client = int(re.search(r'data-client-width="(\d+)"', body).group(1))
        assert client <= max(width, 500)
        assert int(re.search(r'data-scroll-width="(\d+)"', body).group(1)) <= client, width
        assert "1171 in, 1164 kept → 1164099 candidate texts" in html.unescape(dom)
