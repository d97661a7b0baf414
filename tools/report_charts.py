"""Inline SVG charts of the report (``tools/report.py``): titled bar charts, the funnel drawn per
unit, histograms with a marked threshold.  Every chart is a ``<figure>`` with a ``<figcaption>``
title; a label column is as wide as its longest label (no label is cut: "1164 in, 1164 kept →
1164 candidate tex…" hid the funnel's out count), and a chart wider than the page scales down
to it (``viewBox``), so nothing overlaps or overflows at any page width."""
from __future__ import annotations

import html

import numpy as np

CHAR_W = 7.0  # one 11-px character, generously: a DejaVu Sans digit is 7.0 px (Chromium measured 6.2 short)

# What each step counts (README "Steps and their units"): its input unit, and its output unit
# where it differs.  A step not listed (a new one) is shown as counting "records".
# Every step the plan can hold (pipeline/jobs.py; tests/tools/test_report_units.py checks):
# a step missing here is drawn as a funnel of "records" of its own, cutting its unit's in two.
STEP_UNITS = {
    "read": ("WARC records", "pages"), "crawl": ("URLs", "pages"), "page_blocklist": ("pages",),
    "language": ("pages",), "extract": ("pages", "candidate texts"), "url_blocklist": ("candidate texts",),
    "text": ("candidate texts",), "fetch": ("candidate texts", "images"), "hash_blocklist": ("images",),
    "dedup_evaluation": ("images",), "image_size": ("images",),
    "image_decode": ("images",), "naturalness": ("images",), "nsfw": ("images",),
    "labels": ("images",), "image_store": ("images",), "pairs": ("images", "pairs"),
    "score": ("pairs",), "dedup": ("pairs",), "text_share": ("pairs",), "best_text": ("pairs",),
    "write": ("pairs",),
}


def esc(x) -> str:
    return html.escape(str(x), quote=True)


def fmt(v) -> str:
    if isinstance(v, (int, np.integer)) or (isinstance(v, float) and v.is_integer() and abs(v) >= 10):
        return str(int(v))
    return f"{v:.2f}" if abs(v) < 10 else f"{v:.0f}"


def text_width(label: str) -> float:
    """``label``'s width in px at the charts' 11 px font, generously (CHAR_W a character)."""
    return CHAR_W * len(label)


def svg_open(width: float, height: float) -> str:
    """An ``<svg>`` of ``width`` x ``height`` px whose drawing scales down with it when the
    page is narrower (the report's CSS caps it at its container's width)."""
    w, h = int(round(width)), int(round(height))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            'preserveAspectRatio="xMinYMin meet">')


def figure(title: str, svg: str, fid: str = "") -> str:
    ident = f' id="{esc(fid)}"' if fid else ""
    return f'<figure class="chart"{ident}><figcaption>{esc(title)}</figcaption>{svg}</figure>'


def unit_of(step: str) -> tuple[str, str]:
    units = STEP_UNITS.get(step, ("records",))
    return units[0], units[-1]


def bar_chart(title: str, rows: list[tuple[str, float]], width: int = 560, unit: str = "",
              color: str = "#4C78A8", label_w: int = 150, fid: str = "") -> str:
    """Horizontal bars, one per (label, value), the value written at the bar's end.  ``width``
    and ``label_w`` are the least: the label column widens to the longest label, and the
    chart with it, the bars keeping their length."""
    if not rows:
        return figure(title, '<p class="muted">no data</p>', fid)
    h, top = 20, 4
    vmax = max(v for _, v in rows) or 1
    bw = width - label_w - 70
    label_w = max(label_w, int(max(text_width(str(label)) for label, _ in rows)) + 12)
    value_w = max(text_width(fmt(v) + unit) for _, v in rows) + 8
    parts = [svg_open(label_w + bw + value_w, top + h * len(rows))]
    for i, (label, v) in enumerate(rows):
        y = top + i * h
        w = max(1.0, bw * v / vmax) if v else 0
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{esc(label)}</text>'
                     f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{h - 6}" fill="{color}"/>'
                     f'<text x="{label_w + w + 4:.1f}" y="{y + 14}">{esc(fmt(v))}{esc(unit)}</text>')
    parts.append("</svg>")
    return figure(title, "".join(parts), fid)


def funnel_groups(steps: list[dict]) -> list[tuple[str, list[dict]]]:
    """Consecutive steps grouped by the unit they count, so each group is drawn on its own
    scale (pages and pairs are not comparable numbers)."""
    groups: list[tuple[str, list[dict]]] = []
    for s in steps:
        unit = unit_of(s["name"])[0]
        if groups and groups[-1][0] == unit:
            groups[-1][1].append(s)
        else:
            groups.append((unit, [s]))
    return groups


def funnel(steps: list[dict], width: int = 580) -> str:
    """One titled chart per unit: each step's records in (light) and kept (dark), and its out
    count with the out unit where the step turns one unit into another."""
    if not steps:
        return '<p class="muted">no steps</p>'
    out = []
    for unit, group in funnel_groups(steps):
        h, top = 24, 4
        vmax = max(s["in"] for s in group) or 1
        bw = width - 110 - 250
        numbers = [funnel_numbers(s, unit) for s in group]
        # Both text columns as wide as their longest text (the numbers were cut at 240 px).
        label_w = max(110, int(max(text_width(s["name"]) for s in group)) + 12)
        numbers_w = max(240, int(max(text_width(n) for n in numbers)) + 8)
        parts = [svg_open(label_w + bw + 8 + numbers_w, top + h * len(group) + 4)]
        for i, s in enumerate(group):
            y = top + i * h
            win, wkept = bw * s["in"] / vmax, bw * s["kept"] / vmax
            parts.append(f'<text x="{label_w - 6}" y="{y + 16}" text-anchor="end">{esc(s["name"])}</text>'
                         f'<rect x="{label_w}" y="{y + 4}" width="{win:.1f}" height="{h - 8}" fill="#c6d7ea"/>'
                         f'<rect x="{label_w}" y="{y + 4}" width="{wkept:.1f}" height="{h - 8}" fill="#4C78A8"/>'
                         f'<text x="{label_w + bw + 8:.1f}" y="{y + 16}">{esc(numbers[i])}</text>')
        parts.append("</svg>")
        out.append(figure(f"Funnel: {unit} (in: light, kept: dark)", "".join(parts),
                          f"funnel-{unit.replace(' ', '-')}"))
    return '<div class="charts">' + "".join(out) + "</div>"


def funnel_numbers(s: dict, unit: str) -> str:
    """A funnel row's text: "1164 in, 1164 kept → 1164 candidate texts" (the out count with
    the out unit where the step turns one unit into another)."""
    out_unit = unit_of(s["name"])[1]
    out_text = f' → {s["out"]} {out_unit}' if out_unit != unit else ""
    if out_unit == unit and s["out"] > s["kept"]:  # text: a sentence each side, as two
        out_text = f' → {s["out"]} passed on'
    return f'{s["in"]} in, {s["kept"]} kept{out_text}'


def histogram(values, title: str, bins: int = 12, width: int = 360, height: int = 170,
              color: str = "#54A24B", rng=None, mark: float | None = None, mark_label: str = "",
              fid: str = "") -> str:
    """A titled histogram; ``mark`` draws a dashed vertical line (e.g. the score threshold)."""
    vals = np.asarray([v for v in values if v is not None and np.isfinite(v)], float)
    if not len(vals):
        return figure(title, '<p class="muted">no data</p>', fid)
    counts, edges = np.histogram(vals, bins=bins, range=rng)
    left, bottom, top = 34, 30, 16
    pw, ph = width - left - 22, height - bottom - top
    cmax = counts.max() or 1
    bw = pw / len(counts)
    parts = [svg_open(width, height),
             f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#999"/>',
             f'<text x="{left - 4}" y="{top + 10}" text-anchor="end">{cmax}</text>',
             f'<text x="{left - 4}" y="{top + ph}" text-anchor="end">0</text>']
    for i, c in enumerate(counts):
        hgt = ph * c / cmax
        parts.append(f'<rect x="{left + i * bw + 1:.1f}" y="{top + ph - hgt:.1f}" width="{bw - 2:.1f}" '
                     f'height="{hgt:.1f}" fill="{color}"><title>{fmt(edges[i])}–{fmt(edges[i + 1])}: {c}</title></rect>')
    for i in (0, len(edges) // 2, len(edges) - 1):
        parts.append(f'<text x="{left + i * bw:.1f}" y="{top + ph + 14}" text-anchor="middle">{fmt(edges[i])}</text>')
    if mark is not None and edges[0] <= mark <= edges[-1]:
        x = left + pw * (mark - edges[0]) / ((edges[-1] - edges[0]) or 1)
        parts.append(f'<line class="threshold" data-value="{mark}" x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" '
                     f'y2="{top + ph}" stroke="#E45756" stroke-width="2" stroke-dasharray="4 3"/>'
                     f'<text x="{x + 4:.1f}" y="{top - 5 + 9}" fill="#E45756">{esc(mark_label)} {fmt(mark)}</text>')
    parts.append(f'<text x="{left + pw / 2:.1f}" y="{height - 2}" text-anchor="middle" fill="#555">'
                 f'n = {len(vals)}, median {fmt(float(np.median(vals)))}</text></svg>')
    return figure(title, "".join(parts), fid)
