"""`lait report DIR`: one self-contained HTML page about a built corpus (``DIR/report.html``).

It reads what a build leaves: ``stats.json`` (the funnel and drop reasons), ``rejects.parquet``
(a deterministic sample of dropped records per reason, with thumbnails) and the shards
(``parquet/*.parquet`` for captions, scores, sizes and languages; ``shards/*.tar`` for the kept
images).  Charts are inline SVG, styles inline CSS, images base64 ``data:`` URIs: the file
opens anywhere, offline, with nothing beside it.  A few lines of script only record, for the
headless-browser test, how many images loaded (``body[data-images-loaded]``).
"""
from __future__ import annotations

import base64
import io
import json
import os
import tarfile
from collections import Counter
from urllib.parse import urlsplit

import pyarrow.parquet as pq
import yaml
from PIL import Image

from pipeline.core import storage
from pipeline.core.errors import UsageError
from pipeline.core.stats import inner_unit_name, read_stats
from pipeline.steps.write import parquet_files
from tools import report_charts as charts
from tools.report_reasons import describe, explain, reason_counts
from tools.report_charts import esc, unit_of

KEPT_SAMPLES = 24  # kept pairs shown (spread evenly over the corpus in key order)
THUMB = 160

CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:14px;margin:16px 0 6px} .muted{color:#666} table{border-collapse:collapse;margin:6px 0}
.scroll{overflow-x:auto;max-width:100%} p{overflow-wrap:anywhere}
td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right} td:first-child,th:first-child{text-align:left}
.reason td:first-child{padding-left:28px;color:#555} td.why,p.why{color:#555;font-size:12px} .cards{display:flex;gap:18px;flex-wrap:wrap}
.card{background:#f6f7f9;border-radius:6px;padding:8px 14px} .card b{font-size:20px;display:block}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px}
.cell{border:1px solid #e3e3e3;border-radius:6px;padding:6px;font-size:12px;overflow:hidden}
.cell img{width:160px;height:120px;object-fit:cover;display:block;background:#eee;border-radius:3px}
.cell .t{margin-top:4px;max-height:5.6em;overflow:hidden} .cell .m{color:#777;margin-top:2px}
.charts{display:flex;flex-wrap:wrap;gap:12px 32px;align-items:flex-start} svg text{font:11px system-ui,sans-serif}
figure.chart{margin:6px 0;max-width:100%;min-width:0} figcaption{font-weight:600;margin:0 0 4px} svg{display:block;max-width:100%;height:auto}
.cell a{color:#1f5fa8} .cell .k{font-family:ui-monospace,monospace;font-size:11px;overflow-wrap:anywhere}
.cell .d{color:#a23;} pre{background:#f6f7f9;padding:10px;border-radius:6px;font-size:12px;overflow:auto;max-height:480px}
"""

SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  document.body.dataset.imagesTotal = imgs.length;
  document.body.dataset.imagesLoaded = imgs.filter(function (i) {
    return i.complete && i.naturalWidth > 0; }).length;
});
"""


# ---------------------------------------------------------------- data
def _shards(out_dir: str, ext: str) -> list[str]:
    """The committed shards' files (a shard is committed when its tar is there: the tar is
    written last, docs/storage.md), local or on an object store."""
    d = storage.join(out_dir, "shards")
    names = storage.listdir(d)
    tars = {n[:-4] for n in names if n.endswith(".tar")}
    return [storage.join(d, n) for n in names if n.endswith(ext) and n[:-len(ext)] in tars]


def read_rows(out_dir: str) -> list[dict]:
    rows = []
    for f in parquet_files(out_dir):
        rows += pq.read_table(io.BytesIO(storage.read_bytes(f))).to_pylist()
    rows.sort(key=lambda r: r["key"])
    return rows


def read_rejects(out_dir: str) -> list[dict]:
    path = storage.join(out_dir, "rejects.parquet")
    return pq.read_table(io.BytesIO(storage.read_bytes(path))).to_pylist() if storage.exists(path) else []


def kept_images(out_dir: str, keys: set[str]) -> dict[str, bytes]:
    """``key -> jpg bytes`` for the wanted keys, read from the shards' tars."""
    found = {}
    for f in _shards(out_dir, ".tar"):
        with storage.open_read(f) as raw, tarfile.open(fileobj=raw, mode="r|") as tar:
            for m in tar:
                key, ext = os.path.splitext(m.name)
                if ext == ".jpg" and key in keys:
                    found[key] = tar.extractfile(m).read()
    return found


def thumb_uri(data: bytes | None) -> str | None:
    if not data:
        return None
    try:
        with Image.open(io.BytesIO(data)) as im:
            im = im.convert("RGB")
            im.thumbnail((THUMB, THUMB))
            buf = io.BytesIO()
            im.save(buf, "JPEG", quality=80)
            data = buf.getvalue()
    except Exception:
        return None
    return "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")


# ---------------------------------------------------------------- the page
def host(url: str | None) -> str:
    return urlsplit(url or "").hostname or "?"


def link(url: str | None, label: str) -> str:
    # Links to the crawled pages are the one thing that leaves the file (when clicked).
    return f'<a href="{esc(url)}" rel="noreferrer nofollow" target="_blank">{esc(label)}</a>' if url else ""


def distinct(rows: list[dict]) -> list[dict]:
    """Rows with no repeated picture or caption: the same photo can be stored under two keys
    (two sizes of one image), and the same caption can win on two pictures."""
    seen, out = set(), []
    for r in rows:
        try:
            phash = json.loads(r.get("image_meta") or "{}").get("phash")
        except ValueError:
            phash = None
        marks = {("key", r["key"]), ("sha", r.get("sha256")), ("url", r.get("image_url")),
                 ("text", (r.get("caption") or "").strip().lower())} | ({("phash", phash)} if phash else set())
        if marks & seen:
            continue
        seen |= marks
        out.append(r)
    return out


def kept_cell(r: dict, uri: str | None) -> str:
    score = r.get("score")
    facts = [f"{r.get('text_source')}", f"{r.get('width')}×{r.get('height')}"]
    if score is not None:
        facts.append(f"score {score:.2f}")
    return (f'<div class="cell kept" data-key="{esc(r["key"])}">' + (f'<img src="{uri}" alt="">' if uri else "")
            + f'<div class="t">{esc(r.get("caption") or "")}</div><div class="m">{esc(" · ".join(facts))}</div>'
            + f'<div class="m">{link(r.get("page_url"), r.get("page_title") or host(r.get("page_url")))}'
            + f' · {link(r.get("image_url"), "image")}</div><div class="m k">key {esc(r["key"])}</div></div>')


def reject_detail(r: dict, winners: dict[str, str]) -> str:
    """What decided the drop: the detected language, the score, the winning text; a read drop's
    HTTP status and WARC location; for a larger version the extractor chose (a srcset candidate,
    a WordPress original, ...), the picture the page shows."""
    try:
        d = json.loads(r.get("detail") or "{}")
    except ValueError:
        d = {}
    bits = []
    if d.get("lang"):
        bits.append(f"detected {d['lang']}" + (f" ({d['lang_conf']:.2f})" if d.get("lang_conf") is not None else ""))
    if d.get("shown_url"):
        bits.append(f"a larger version ({d.get('url_attr')}) of the page's {d['shown_url']}")
    if d.get("score") is not None:
        bits.append(f"score {d['score']:.3f}")
    if d.get("http_status") is not None and r.get("reason") not in ("read_not_html", "read_warc_truncated"):
        bits.append(f"HTTP {d['http_status']}")
    if d.get("warc_truncated"):
        bits.append(f"cut by the crawler ({d['warc_truncated']})")
    if d.get("warc"):  # where a read drop sits: the record can be looked at again
        bits.append(f"{os.path.basename(str(d['warc']))} @ {d.get('warc_offset')}")
    if r.get("reason") == "best_text_not_best" and r.get("key") in winners:
        bits.append(f"winner: “{winners[r['key']]}”")
    return " · ".join(bits)


def reject_cell(r: dict, winners: dict[str, str]) -> str:
    text = r.get("text") or r.get("raw_text") or r.get("image_url") or r.get("page_url") or ""
    uri = ("data:image/jpeg;base64," + base64.b64encode(r["thumb"]).decode("ascii")) if r.get("thumb") else None
    detail = reject_detail(r, winners)
    links = " · ".join(x for x in (link(r.get("page_url"), "page"), link(r.get("image_url"), "image")) if x)
    return (f'<div class="cell dropped">' + (f'<img src="{uri}" alt="">' if uri else "")
            + f'<div class="t">{esc(text)}</div><div class="m">{esc(r["reason"])}</div>'
            + (f'<div class="m d">{esc(detail)}</div>' if detail else "")
            + (f'<div class="m">{links}</div>' if links else "") + "</div>")


def table(head: list[str], rows: list[list], tid: str = "") -> str:
    ident = f' id="{esc(tid)}"' if tid else ""
    # In a box of its own that scrolls sideways: a wide table never widens a narrow page.
    return (f'<div class="scroll"><table{ident}><tr>' + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows) + "</table></div>")


def domain_tables(rows: list[dict], rejects: list[dict], top: int = 10) -> str:
    kept = Counter(host(r.get("page_url")) for r in rows)
    dropped = Counter(host(r.get("page_url") or r.get("image_url")) for r in rejects)
    fetch = Counter((host(r.get("image_url")), r["reason"]) for r in rejects if r["step"] == "fetch")
    return ('<div class="charts"><div><h3>Top page domains by kept samples</h3>'
            + table(["domain", "kept samples"], kept.most_common(top), "domains-kept")
            + '</div><div><h3>Top domains among the sampled drops</h3>'
            + table(["domain", "sampled drops"], dropped.most_common(top), "domains-dropped")
            + '</div><div><h3>Fetch errors per image host (sampled)</h3>'
            + table(["host", "reason", "sampled"], [[h, r, n] for (h, r), n in fetch.most_common(top)], "fetch-hosts")
            + '</div></div><p class="muted">Drops per domain come from rejects.parquet, a sample '
            "of up to 6 records per reason; stats.json's counts are not split by domain.</p>")


def resumed(doc: dict) -> bool:
    """Whether the last command found units done by an earlier one (stats.json's timings are
    that command's alone)."""
    return any((r or {}).get("skipped") for r in (doc.get("resume") or {}).values())


def timings_table(doc: dict) -> str:
    """Per job (steps of one job run fused on the engine, so a step's own time is not
    measured): seconds, records into its first step, records per second."""
    t, steps = doc.get("timings", {}), {s["name"]: s for s in doc.get("steps", [])}
    first = {"pages": "read", "images": "image_size", "corpus": "text_share"}
    rows = []
    for job, step in first.items():
        sec = t.get(f"{job}_s")
        if sec is None:
            continue
        n = steps.get(step, {}).get("in", 0)
        done = (doc.get("resume") or {}).get(job) or {}
        if done.get("skipped"):  # the counts cover units an earlier command ran: no rate
            rate = f"— ({done['skipped']} of {done.get('units', '?')} units done before)"
        else:
            rate = f"{n / sec:.1f}/s" if sec else "?"
        rows.append([job, f"{sec:.1f}", f"{n} {unit_of(step)[0]} into {step}", rate])
    rows.append(["whole run" if not resumed(doc) else "the last command", f"{t.get('wall_s', 0):.1f}", "", ""])
    return table(["job", "seconds", "records", "throughput"], rows, "timings")


def reason_row(reason: str, n: int) -> str:
    """A reason's row of the drops table, with what the reason means (tools/report_reasons.py):
    a name like ``extract_image_furniture`` alone does not say which rule dropped the record."""
    return (f'<tr class="reason" data-reason="{esc(reason)}"><td>{esc(reason)}</td><td></td><td></td><td></td>'
            f'<td></td><td>{n}</td><td class="why">{esc(describe(reason))}</td></tr>')


def not_sampled(steps: list[dict], sampled: set[str]) -> str:
    """The reasons stats.json counts that have no sample above, and why: without this line a
    reason of the table seems lost on the way."""
    missing = [(r, n) for r, n in reason_counts(steps).items() if n and r not in sampled]
    if not missing:
        return ""
    return ('<p class="muted" id="not-sampled">Counted, with no sample above: '
            + ", ".join(f"{esc(r)} ({n})" for r, n in sorted(missing, key=lambda kv: (-kv[1], kv[0])))
            + ". rejects.parquet samples the records a step drops (the read step's: the URL and "
            "WARC location of each response; the crawl's: the URL); the read step's unreadable files "
            "and damaged stretches (no record to name), drops inside a record (a page's images "
            "and sides, a text's sentences, a pair's near-duplicate images) and withheld reasons "
            "(safety-list matches, evaluation images) have none.</p>")


def drops_by_unit(steps: list[dict]) -> dict[str, int]:
    """Drops summed per unit, in funnel order: a step's drops count its input unit, drops inside
    a record (a page's images, a text's sentences) their own.  One sum over every step added
    pages to images to pairs, a number that counted nothing."""
    out: dict[str, int] = {}
    for s in steps:
        unit = unit_of(s["name"])[0]
        out[unit] = out.get(unit, 0) + sum(s["dropped"].values())
        for inner, u in s.get("units", {}).items():
            label = inner_unit_name(s["name"], inner)
            out[label] = out.get(label, 0) + sum(u["dropped"].values())
    return {u: n for u, n in out.items() if n}


def drops_card(steps: list[dict]) -> str:
    """One line per unit: a number with its unit, never a sum across units."""
    lines = [f'<b data-unit="{esc(u)}">{n} <small>{esc(u)}</small></b>' for u, n in drops_by_unit(steps).items()]
    return "".join(lines) or "<b>0</b>"


def render(out_dir: str) -> str:
    doc = read_stats(storage.join(out_dir, "stats.json"))
    steps = doc.get("steps", [])
    rows = read_rows(out_dir)
    rejects = read_rejects(out_dir)
    cfg = doc.get("config", {})
    threshold = (cfg.get("score") or {}).get("threshold")
    timings = doc.get("timings", {})
    body = [f"<h1>LAIT corpus report</h1><p class=\"muted\">{esc(storage.absolute(out_dir))} · engine "
            f"{esc(doc.get('engine', '?'))} · {len(doc.get('inputs', []))} input part(s)</p>",
            '<div class="cards">'
            f'<div class="card"><b id="n-samples">{len(rows)}</b>samples in the shards</div>'
            f'<div class="card"><b>{steps[0]["in"] if steps else 0}</b>{esc(unit_of(steps[0]["name"])[0] if steps else "records")} read</div>'
            f'<div class="card" id="drops-by-unit">{drops_card(steps)}dropped, by unit</div>'
            f'<div class="card"><b>{esc(timings.get("wall_s", "?"))} s</b>'
            + ("wall time of the last command (resumed: earlier commands did part of the work)"
               if resumed(doc) else "wall time") + '</div></div>']

    body.append("<h2>Funnel, per unit</h2>" + charts.funnel(steps))
    tab = ['<div class="scroll">' "<table><tr><th>step / reason</th><th>unit</th><th>in</th><th>kept</th><th title='the records handed to the next step (its in): a kept record may give several'>passed on</th><th>dropped</th><th>why</th></tr>"]
    for s in steps:
        u_in, u_out = unit_of(s["name"])
        unit = u_in if u_in == u_out else f"{u_in} → {u_out}"
        tab.append(f'<tr class="step" data-step="{esc(s["name"])}"><td><b>{esc(s["name"])}</b></td>'
                   f'<td>{esc(unit)}</td><td>{s["in"]}</td><td>{s["kept"]}</td><td>{s["out"]}</td>'
                   f'<td>{sum(s["dropped"].values())}</td><td class="why"></td></tr>')
        for reason, n in sorted(s["dropped"].items(), key=lambda kv: (-kv[1], kv[0])):
            tab.append(reason_row(reason, n))
        # Smaller units counted inside the step's records (images of a page, ...), each
        # balanced on its own: in = kept + their drops.
        for unit, u in s.get("units", {}).items():
            label = inner_unit_name(s["name"], unit)
            tab.append(f'<tr class="unit" data-unit="{esc(unit)}"><td>{esc(label)} inside</td><td>{esc(label)}</td>'
                       f'<td>{u["in"]}</td><td>{u["kept"]}</td><td></td><td>{sum(u["dropped"].values())}</td><td class="why"></td></tr>')
            for reason, n in sorted(u["dropped"].items(), key=lambda kv: (-kv[1], kv[0])):
                tab.append(reason_row(reason, n))
    tab.append("</table></div>")
    body.append("<h2>Drop reasons per step</h2>" + "".join(tab))
    reasons = [(f"{r} ({unit_of(s['name'])[0]})", n) for s in steps for r, n in s["dropped"].items()]
    reasons += [(f"{r} ({inner_unit_name(s['name'], unit)})", n) for s in steps for unit, u in s.get("units", {}).items()
                for r, n in u["dropped"].items()]
    body.append(charts.bar_chart("Drops by reason (unit in brackets)", sorted(reasons, key=lambda kv: (-kv[1], kv[0])),
                                 width=760, color="#E45756", label_w=300, fid="chart-reasons"))
    body.append("<h2>Time per job</h2>" + timings_table(doc))

    words = [len((r.get("caption") or "").split()) for r in rows]
    sizes = [max(r.get("original_width") or 0, r.get("original_height") or 0) for r in rows]
    body.append('<h2>Distributions of the kept samples</h2><div class="charts">'
                + charts.histogram(words, "Caption length (words)", fid="hist-words")
                + charts.histogram([r.get("score") for r in rows], "Relevance score (kept pairs)",
                                   rng=(0.0, 1.0), color="#4C78A8", mark=threshold,
                                   mark_label="threshold", fid="hist-score")
                + charts.histogram(sizes, "Image size (original longest side, px)", color="#F58518", fid="hist-size")
                + "</div>")

    langs = Counter()
    for r in rows:
        try:
            langs[json.loads(r.get("text_meta") or "{}").get("lang") or r.get("page_lang") or "?"] += 1
        except ValueError:
            langs["?"] += 1
    sources = Counter(r.get("text_source") or "?" for r in rows)
    body.append('<h2>Language and text source mix</h2><div class="charts">'
                + charts.bar_chart("Caption language", sorted(langs.items(), key=lambda kv: (-kv[1], kv[0])),
                                   width=360, label_w=80, fid="chart-langs")
                + charts.bar_chart("Text source of the kept captions", sorted(sources.items(), key=lambda kv: (-kv[1], kv[0])),
                                   width=360, label_w=100, fid="chart-sources")
                + "</div>")
    body.append("<h2>Domains</h2>" + domain_tables(rows, rejects))

    unique = distinct(rows)
    step_ = max(1, len(unique) // KEPT_SAMPLES)
    sample = unique[::step_][:KEPT_SAMPLES]
    images = kept_images(out_dir, {r["key"] for r in sample})
    body.append(f"<h2>Sample kept pairs ({len(sample)} of {len(rows)}, no picture or caption twice)</h2>"
                '<div class="grid" id="kept">'
                + "".join(kept_cell(r, thumb_uri(images.get(r["key"]))) for r in sample) + "</div>")

    body.append("<h2>Sample dropped records, per reason</h2>")
    winners = {r["key"]: r.get("caption") or "" for r in rows}
    by_reason: dict[tuple[str, str], list[dict]] = {}
    for r in rejects:
        by_reason.setdefault((r["step"], r["reason"]), []).append(r)
    if not by_reason:
        body.append('<p class="muted">no rejects.parquet, or nothing was dropped</p>')
    for (step, reason), rs in by_reason.items():
        why = f'<p class="why">{esc(explain(reason))}</p>' if explain(reason) else ""
        body.append(f'<h3>{esc(reason)} <span class="muted">(step {esc(step)}, {esc(unit_of(step)[0])})</span></h3>'
                    + why + '<div class="grid">' + "".join(reject_cell(r, winners) for r in rs) + "</div>")
    body.append(not_sampled(steps, {reason for _, reason in by_reason}))

    body.append("<h2>Configuration</h2><pre id=\"config\">"
                + esc(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True)) + "</pre>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>LAIT corpus report</title><style>" + CSS + "</style></head><body>"
            + "\n".join(body) + "<script>" + SCRIPT + "</script></body></html>\n")


def write_report(out_dir: str, path: str | None = None) -> str:
    path = path or storage.join(out_dir, "report.html")
    page = render(out_dir)
    storage.write_bytes(path, page.encode("utf-8"))  # local (atomic rename) or an object store
    return path


def main(args) -> int:
    stats = storage.join(args.dir, "stats.json")
    if not storage.exists(stats):  # a killed or running build: its stats.json comes last
        raise UsageError(f"report: {stats}: no such file (is {args.dir} the --out of a "
                         "finished build?)")
    # A run whose shards were moved or deleted would give a report of 0 samples that looks
    # like an empty corpus: say so instead (the write step counts what the shards hold).
    try:
        doc = read_stats(stats)
    except UsageError as exc:
        raise UsageError(f"report: {exc}") from None
    written = next((s["kept"] for s in doc["steps"] if s["name"] == "write"), 0)
    if written and not parquet_files(args.dir):
        raise UsageError(f"report: stats.json counts {written} samples written, but "
                         f"{storage.join(args.dir, 'shards')} holds none (moved or deleted?)")
    path = write_report(args.dir)
    print(f"report: {path}")
    return 0
