"""`lait report DIR`: one self-contained HTML page about a built corpus (``DIR/report.html``).

It reads what a build leaves: ``stats.json`` (the funnel and drop reasons), ``rejects.parquet``
(a deterministic sample of dropped records per reason, with thumbnails) and the shards
(``shards/*.parquet`` for captions, scores, sizes and languages; ``shards/*.tar`` for the kept
images).  Charts are inline SVG, styles inline CSS, images base64 ``data:`` URIs: the file
opens anywhere, offline, with nothing beside it.  A few lines of script only record, for the
headless-browser test, how many images loaded (``body[data-images-loaded]``).
"""
from __future__ import annotations

import base64
import html
import io
import json
import os
import tarfile
from collections import Counter

import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from pipeline.core import storage
from pipeline.core.stats import read_stats

KEPT_SAMPLES = 24  # kept pairs shown (spread evenly over the corpus in key order)
THUMB = 160

CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:14px;margin:16px 0 6px} .muted{color:#666} table{border-collapse:collapse;margin:6px 0}
td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right} td:first-child,th:first-child{text-align:left}
.reason td:first-child{padding-left:28px;color:#555} .cards{display:flex;gap:18px;flex-wrap:wrap}
.card{background:#f6f7f9;border-radius:6px;padding:8px 14px} .card b{font-size:20px;display:block}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px}
.cell{border:1px solid #e3e3e3;border-radius:6px;padding:6px;font-size:12px;overflow:hidden}
.cell img{width:160px;height:120px;object-fit:cover;display:block;background:#eee;border-radius:3px}
.cell .t{margin-top:4px;max-height:5.6em;overflow:hidden} .cell .m{color:#777;margin-top:2px}
.charts{display:flex;flex-wrap:wrap;gap:24px} svg text{font:11px system-ui,sans-serif}
"""

SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  document.body.dataset.imagesTotal = imgs.length;
  document.body.dataset.imagesLoaded = imgs.filter(function (i) {
    return i.complete && i.naturalWidth > 0; }).length;
});
"""


def esc(x) -> str:
    return html.escape(str(x), quote=True)


# ---------------------------------------------------------------- charts (inline SVG)
def bar_chart(rows: list[tuple[str, float]], width: int = 560, unit: str = "", color: str = "#4C78A8",
              label_w: int = 150) -> str:
    """Horizontal bars, one per (label, value), the value written at the bar's end."""
    if not rows:
        return '<p class="muted">no data</p>'
    h, top = 20, 4
    vmax = max(v for _, v in rows) or 1
    bw = width - label_w - 70
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + h * len(rows)}">']
    for i, (label, v) in enumerate(rows):
        y = top + i * h
        w = max(1.0, bw * v / vmax) if v else 0
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{esc(label)}</text>'
                     f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{h - 6}" fill="{color}"/>'
                     f'<text x="{label_w + w + 4:.1f}" y="{y + 14}">{esc(_fmt(v))}{esc(unit)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def funnel_chart(steps: list[dict], width: int = 760) -> str:
    """Per step: the records in (light) and kept (dark), with both numbers."""
    if not steps:
        return '<p class="muted">no steps</p>'
    label_w, h, top = 110, 24, 18
    vmax = max(max(s["in"], s["out"]) for s in steps) or 1
    bw = width - label_w - 170
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + h * len(steps) + 4}">',
             f'<text x="{label_w}" y="12" fill="#555">records in (light) and kept (dark); numbers: in → kept (out)</text>']
    for i, s in enumerate(steps):
        y = top + i * h
        win = bw * s["in"] / vmax
        wkept = bw * s["kept"] / vmax
        parts.append(f'<text x="{label_w - 6}" y="{y + 16}" text-anchor="end">{esc(s["name"])}</text>'
                     f'<rect x="{label_w}" y="{y + 4}" width="{win:.1f}" height="{h - 8}" fill="#c6d7ea"/>'
                     f'<rect x="{label_w}" y="{y + 4}" width="{wkept:.1f}" height="{h - 8}" fill="#4C78A8"/>'
                     f'<text x="{label_w + max(win, wkept) + 6:.1f}" y="{y + 16}">'
                     f'{s["in"]} → {s["kept"]} ({s["out"]})</text>')
    parts.append("</svg>")
    return "".join(parts)


def histogram(values, bins: int = 12, title: str = "", width: int = 360, height: int = 170,
              color: str = "#54A24B", rng=None) -> str:
    vals = np.asarray([v for v in values if v is not None and np.isfinite(v)], float)
    head = f"<h3>{esc(title)}</h3>"
    if not len(vals):
        return head + '<p class="muted">no data</p>'
    counts, edges = np.histogram(vals, bins=bins, range=rng)
    left, bottom, top = 34, 30, 8
    pw, ph = width - left - 22, height - bottom - top
    cmax = counts.max() or 1
    bw = pw / len(counts)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
             f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#999"/>',
             f'<text x="{left - 4}" y="{top + 10}" text-anchor="end">{cmax}</text>',
             f'<text x="{left - 4}" y="{top + ph}" text-anchor="end">0</text>']
    for i, c in enumerate(counts):
        hgt = ph * c / cmax
        parts.append(f'<rect x="{left + i * bw + 1:.1f}" y="{top + ph - hgt:.1f}" width="{bw - 2:.1f}" '
                     f'height="{hgt:.1f}" fill="{color}"><title>{_fmt(edges[i])}–{_fmt(edges[i + 1])}: {c}</title></rect>')
    for i in (0, len(edges) // 2, len(edges) - 1):
        parts.append(f'<text x="{left + i * bw:.1f}" y="{top + ph + 14}" text-anchor="middle">{_fmt(edges[i])}</text>')
    parts.append(f'<text x="{left + pw / 2:.1f}" y="{height - 2}" text-anchor="middle" fill="#555">'
                 f'n = {len(vals)}, median {_fmt(float(np.median(vals)))}</text></svg>')
    return head + "".join(parts)


def _fmt(v) -> str:
    if isinstance(v, (int, np.integer)) or (isinstance(v, float) and v.is_integer() and abs(v) >= 10):
        return str(int(v))
    return f"{v:.2f}" if abs(v) < 10 else f"{v:.0f}"


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
    for f in _shards(out_dir, ".parquet"):
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


def cell(uri: str | None, text: str, meta: str) -> str:
    img = f'<img src="{uri}" alt="">' if uri else ""  # records dropped before any image fetch
    return f'<div class="cell">{img}<div class="t">{esc(text)}</div><div class="m">{esc(meta)}</div></div>'


# ---------------------------------------------------------------- the page
def render(out_dir: str) -> str:
    doc = read_stats(storage.join(out_dir, "stats.json"))
    steps = doc.get("steps", [])
    rows = read_rows(out_dir)
    rejects = read_rejects(out_dir)
    n_in = steps[0]["in"] if steps else 0
    timings = doc.get("timings", {})
    body = [f"<h1>LAIT corpus report</h1><p class=\"muted\">{esc(storage.absolute(out_dir))} · engine "
            f"{esc(doc.get('engine', '?'))} · {len(doc.get('inputs', []))} input part(s)</p>",
            '<div class="cards">'
            f'<div class="card"><b id="n-samples">{len(rows)}</b>samples in the shards</div>'
            f'<div class="card"><b>{n_in}</b>records read</div>'
            f'<div class="card"><b>{sum(sum(s["dropped"].values()) for s in steps)}</b>drops counted</div>'
            f'<div class="card"><b>{esc(timings.get("wall_s", "?"))} s</b>wall time</div></div>']

    body.append("<h2>Funnel</h2>" + funnel_chart(steps))
    table = ["<table><tr><th>step / reason</th><th>in</th><th>kept</th><th>out</th><th>dropped</th></tr>"]
    for s in steps:
        table.append(f'<tr class="step" data-step="{esc(s["name"])}"><td><b>{esc(s["name"])}</b></td>'
                     f'<td>{s["in"]}</td><td>{s["kept"]}</td><td>{s["out"]}</td>'
                     f'<td>{sum(s["dropped"].values())}</td></tr>')
        for reason, n in sorted(s["dropped"].items(), key=lambda kv: (-kv[1], kv[0])):
            table.append(f'<tr class="reason"><td>{esc(reason)}</td><td></td><td></td><td></td><td>{n}</td></tr>')
        # Smaller units counted inside the step's records (images of a page, ...), each
        # balanced on its own: in = kept + their drops.
        for unit, u in s.get("units", {}).items():
            table.append(f'<tr class="unit" data-unit="{esc(unit)}"><td>{esc(unit)}s inside</td>'
                         f'<td>{u["in"]}</td><td>{u["kept"]}</td><td></td>'
                         f'<td>{sum(u["dropped"].values())}</td></tr>')
            for reason, n in sorted(u["dropped"].items(), key=lambda kv: (-kv[1], kv[0])):
                table.append(f'<tr class="reason"><td>{esc(reason)}</td><td></td><td></td><td></td><td>{n}</td></tr>')
    table.append("</table>")
    body.append("<h2>Drop reasons per step</h2>" + "".join(table))
    reasons = [(r, n) for s in steps for r, n in s["dropped"].items()]
    reasons += [(f"{r} ({unit})", n) for s in steps for unit, u in s.get("units", {}).items()
                for r, n in u["dropped"].items()]
    body.append(bar_chart(sorted(reasons, key=lambda kv: (-kv[1], kv[0])), width=760,
                          color="#E45756", label_w=260))

    words = [len((r.get("caption") or "").split()) for r in rows]
    scores = [r.get("score") for r in rows]
    sizes = [max(r.get("original_width") or 0, r.get("original_height") or 0) for r in rows]
    body.append('<h2>Distributions of the kept samples</h2><div class="charts">'
                + histogram(words, title="caption length (words)")
                + histogram(scores, title="relevance score", rng=(0.0, 1.0), color="#4C78A8")
                + histogram(sizes, title="image size (original longest side, px)", color="#F58518")
                + "</div>")

    langs = Counter()
    for r in rows:
        try:
            langs[json.loads(r.get("text_meta") or "{}").get("lang") or r.get("page_lang") or "?"] += 1
        except ValueError:
            langs["?"] += 1
    sources = Counter(r.get("text_source") or "?" for r in rows)
    body.append('<h2>Language and text source mix</h2><div class="charts"><div><h3>caption language</h3>'
                + bar_chart(sorted(langs.items(), key=lambda kv: (-kv[1], kv[0])), width=360, label_w=80)
                + '</div><div><h3>text source</h3>'
                + bar_chart(sorted(sources.items(), key=lambda kv: (-kv[1], kv[0])), width=360, label_w=100)
                + "</div></div>")

    step_ = max(1, len(rows) // KEPT_SAMPLES)
    sample = rows[::step_][:KEPT_SAMPLES]
    images = kept_images(out_dir, {r["key"] for r in sample})
    body.append(f"<h2>Sample kept pairs ({len(sample)} of {len(rows)})</h2><div class=\"grid\" id=\"kept\">")
    for r in sample:
        score = r.get("score")
        meta = f"{r.get('text_source')} · {r.get('width')}×{r.get('height')}" + (
            f" · score {score:.2f}" if score is not None else "")
        body.append(cell(thumb_uri(images.get(r["key"])), r.get("caption") or "", meta))
    body.append("</div>")

    body.append("<h2>Sample dropped records, per reason</h2>")
    by_reason: dict[tuple[str, str], list[dict]] = {}
    for r in rejects:
        by_reason.setdefault((r["step"], r["reason"]), []).append(r)
    if not by_reason:
        body.append('<p class="muted">no rejects.parquet, or nothing was dropped</p>')
    for (step, reason), rs in by_reason.items():
        body.append(f'<h3>{esc(reason)} <span class="muted">(step {esc(step)})</span></h3><div class="grid">')
        for r in rs:
            text = r.get("text") or r.get("raw_text") or r.get("image_url") or r.get("page_url") or ""
            uri = ("data:image/jpeg;base64," + base64.b64encode(r["thumb"]).decode("ascii")) if r.get("thumb") else None
            body.append(cell(uri, text, reason))
        body.append("</div>")

    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>LAIT corpus report</title><style>" + CSS + "</style></head><body>"
            + "\n".join(body) + "<script>" + SCRIPT + "</script></body></html>\n")


def write_report(out_dir: str, path: str | None = None) -> str:
    path = path or storage.join(out_dir, "report.html")
    page = render(out_dir)
    storage.write_bytes(path, page.encode("utf-8"))  # local (atomic rename) or an object store
    return path


def main(args) -> int:
    path = write_report(args.dir)
    print(f"report: {path}")
    return 0
