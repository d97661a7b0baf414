"""A small, deterministic sample of what each step dropped, for the report.

Each worker keeps, per (step, reason), the K dropped records with the smallest content hash;
merging keeps the K smallest again.  A bottom-K sample merges the same way whatever the
partitioning, so both engines write the same rejects.parquet.
"""
from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from pipeline.core import storage
from pipeline.core.records import Candidate, ImageItem, Page, Pair

PER_REASON = 6
THUMB = 160  # px, longest side of the thumbnails kept for dropped images


def _thumb(data: bytes | None, pixels=None) -> bytes | None:
    """A small JPEG of a dropped image: from its decoded pixels (PIL RGB, upright) when a
    decode stage left them on the record, else from its bytes (which, for an image dropped
    before the store step, are the fetched file: decoding that again would cost more)."""
    try:
        if pixels is not None:
            # a copy (thumbnail() works in place); an RGB array is accepted as well
            im = pixels.convert("RGB") if hasattr(pixels, "convert") else Image.fromarray(pixels)
        else:
            im = Image.open(io.BytesIO(data))
            im.draft("RGB", (THUMB, THUMB))
            im = im.convert("RGB")
        im.thumbnail((THUMB, THUMB))
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=80)
        return buf.getvalue()
    except Exception:
        return None


def identity(record) -> tuple[str, dict]:
    """(hash, cheap fields) of a dropped record; the thumbnail is made only if it is sampled."""
    loc = ""
    if isinstance(record, Page):
        f = {"page_url": record.url}
        # a WARC holds a URL more than once (revisits, re-crawls): its location tells them
        # apart, so which record is sampled never depends on the order records arrive in
        loc = warc_location(record)
    elif isinstance(record, Candidate):
        f = {"page_url": record.page_url, "image_url": record.image_url,
             "text_source": record.text_source, "text": record.text, "raw_text": record.raw_text}
    elif isinstance(record, ImageItem):
        c = record.candidates[0] if record.candidates else None
        f = {"image_url": record.image_url, "page_url": c.page_url if c else "",
             "text_source": c.text_source if c else "", "text": c.text if c else "",
             "raw_text": c.raw_text if c else ""}
    elif isinstance(record, Pair):
        c = record.candidate
        f = {"image_url": record.image.image_url, "page_url": c.page_url, "text_source": c.text_source,
             "text": c.text, "raw_text": c.raw_text}
    else:
        f = {"text": repr(record)[:200]}
    h = hashlib.sha1(("\x1f".join(f"{k}={v}" for k, v in sorted(f.items())) + loc).encode()).hexdigest()
    return h, f


def warc_location(page: Page) -> str:
    """``path@offset`` of a page read from a WARC file, else ""."""
    meta = page.meta or {}
    return f"{meta['warc']}@{meta.get('warc_offset')}" if meta.get("warc") else ""


def detail(record) -> dict:
    """What decided a drop, for the report: a page's or text's detected language, an image's
    model scores, a pair's score and key (the winner of ``best_text_not_best`` is the kept
    sample with that key).  Not part of the sample's hash: it does not change which records
    are sampled."""
    d: dict = {}
    meta = getattr(record, "meta", None) or {}
    if isinstance(record, (Page, Candidate)) and meta.get("lang"):
        d["lang"], d["lang_conf"] = meta["lang"], meta.get("lang_conf")
    if isinstance(record, Candidate) and meta.get("shown_url"):
        # A URL the extractor wrote (a larger version of the picture the page shows: "wp
        # original", "a href", ...): without this its fetch drop names a URL the page lacks.
        d["url_attr"], d["shown_url"] = meta.get("url_attr"), meta["shown_url"]
    if isinstance(record, Page) and meta.get("warc"):  # where to find the record again
        d.update(warc=meta["warc"], warc_offset=meta.get("warc_offset"))
        if meta.get("http_status") is not None:
            d["http_status"] = meta["http_status"]
        if meta.get("warc_truncated"):
            d["warc_truncated"] = meta["warc_truncated"]
    if isinstance(record, ImageItem):
        d = {k: getattr(record, k) for k in ("nsfw", "natural") if getattr(record, k, None) is not None}
    if isinstance(record, Pair):
        d = {"key": record.key, "score": record.score}
    return d


@dataclass
class RejectSample:
    step: str
    by_reason: dict[str, list[tuple[str, dict]]] = field(default_factory=dict)

    def offer(self, reason: str, record) -> None:
        h, fields = identity(record)
        got = self.by_reason.setdefault(reason, [])
        if len(got) >= PER_REASON and h >= got[-1][0]:
            return
        if any(h == g[0] for g in got):
            return
        image = record.image if isinstance(record, Pair) else record
        data, pixels = getattr(image, "data", None), getattr(image, "pixels", None)
        d = detail(record)
        fields = dict(fields, thumb=_thumb(data, pixels) if data or pixels is not None else None,
                      key=d.pop("key", None), detail=json.dumps(d, sort_keys=True) if d else None)
        got.append((h, fields))
        got.sort(key=lambda g: g[0])
        del got[PER_REASON:]

    def merge(self, other: "RejectSample") -> "RejectSample":
        for reason, got in other.by_reason.items():
            mine = {h: f for h, f in self.by_reason.get(reason, [])}
            mine.update(dict(got))
            self.by_reason[reason] = sorted(mine.items())[:PER_REASON]
        return self


SCHEMA = pa.schema([("step", pa.string()), ("reason", pa.string()), ("page_url", pa.string()),
                    ("image_url", pa.string()), ("text_source", pa.string()), ("text", pa.string()),
                    ("raw_text", pa.string()), ("thumb", pa.binary()), ("key", pa.string()),
                    ("detail", pa.string())])  # JSON: what decided the drop (see detail())


def write_rejects(path: str, samples: list[RejectSample], step_order: list[str]) -> int:
    rows = []
    for s in sorted(samples, key=lambda s: step_order.index(s.step)):
        for reason in sorted(s.by_reason):
            for _, f in s.by_reason[reason]:
                rows.append({"step": s.step, "reason": reason, **{k: f.get(k) for k in SCHEMA.names[2:]}})
    cols = {n: [r.get(n) for r in rows] for n in SCHEMA.names}
    table = pa.table(cols, schema=SCHEMA)
    storage.write_whole(path, lambda f: pq.write_table(table, f, compression="zstd"))
    return len(rows)
