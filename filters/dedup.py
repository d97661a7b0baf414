"""The ``dedup`` step: near-duplicate images become one, their texts pooled for best text.

Images whose 64-bit pHashes (``image_meta["phash"]``, set by the labels step) lie within
``dedup.max_distance`` bits form one group; the group keeps its largest image (original pixel
count, then stored pixel count, ties broken by the smaller sha256) and every pair of the
others is re-pointed at it, so ``best_text`` chooses among the union of their texts.  The
default distance comes from a measurement (docs/dedup.md): re-encoded and resized copies lie
within 6 bits, the closest two distinct photos 10 bits apart.

No all-pairs comparison: multi-index hashing.  The hash is cut into ``max_distance + 1``
bands; two hashes within ``max_distance`` agree exactly on at least one band (pigeonhole).
The plan runs one group step per band (``dedup_band_0`` ... then ``dedup``, the last, the
only one shown in the funnel), keyed by that band's bits, so the engine's shuffle makes the
buckets and both engines see the same groups.  Within a bucket the images found within the
distance are joined (union-find) and re-pointed at the group's kept image; a later band sees
the kept image's hash, so groups chain across bands.  Whatever is left after the last band
has no two images within the distance: two such images share a band, and on that band's pass
they met in one bucket.  A large bucket is searched through an in-memory multi-index
(sub-bands probed at radius <= 1) instead of pair by pair, so the work per image stays
bounded however many images share a band value.

Decontamination is not done here: ``dedup.exclude`` (evaluation test splits) is checked in the
images job, before the image filters, by the ``dedup_evaluation`` step
(``filters/dedup_evaluation.py``), so every image reaching this step was checked and no group
of them can bring an evaluation image in.

Counts: pairs are never dropped for being near-duplicates (their texts go on); the images
inside are counted on the ``dedup`` row: ``kept``, or ``dedup_near_duplicate``.  The kept
image's ``image_meta["near_duplicates"]`` lists the images merged into it (``sha256``,
``image_url``), and a merged pair's ``text_meta["dedup_of"]`` the image its text came with.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field

from filters.eval_images import check_sources
from pipeline.core.errors import ConfigError
from pipeline.core.records import ImageFacts, Pair
from pipeline.core.stage import GroupStage, Keep

BITS = 64
MAX_DISTANCE = 16  # more means more passes than a pHash can bear: distinct photos meet at 10


@dataclass
class DedupConfig:
    """Near-duplicate images merged, evaluation images dropped (filters/dedup.py, docs/dedup.md)."""

    enabled: bool = True  # false: no dedup step (every copy of a picture may be kept)
    max_distance: int = 6  # pHash bits (0..16); measured: copies <= 6, distinct photos >= 10
    # evaluation images never to keep (nor images within max_distance of one), checked by the
    # dedup_evaluation step before the image filters, even when enabled is false: image
    # folders, webdataset shards (.tar) or pHash files (lait hashes DIR -o FILE)
    exclude: list[str] = field(default_factory=list)

    def check(self) -> "DedupConfig":
        if not 0 <= self.max_distance <= MAX_DISTANCE:
            raise ConfigError(f"dedup.max_distance must be within 0..{MAX_DISTANCE} "
                              f"(got {self.max_distance!r})")
        check_sources(self.exclude)
        return self


def band_slices(n: int, bits: int = BITS) -> list[tuple[int, int]]:
    """``n`` contiguous (shift, width) bands covering ``bits`` bits, widths differing by <= 1."""
    out, start = [], 0
    for i in range(n):
        w = bits // n + (1 if i < bits % n else 0)
        out.append((start, w))
        start += w
    return out


def band(h: int, sl: tuple[int, int]) -> int:
    shift, width = sl
    return (h >> shift) & ((1 << width) - 1)


def parse_phash(value) -> int | None:
    if not isinstance(value, str) or len(value) != 16:
        return None
    try:
        return int(value, 16)
    except ValueError:
        return None


class Work:
    """Hamming comparisons and index probes made (what the scaling test counts)."""

    def __init__(self):
        self.comparisons = 0
        self.probes = 0


def probes_per_hash(d: int) -> int:
    """Index probes one hash makes in a large bucket: its value and one-bit neighbours on each
    of ``d // 2 + 1`` sub-bands.  Buckets no larger than this are compared pair by pair, so
    a hash's work in one bucket is at most this many probes, plus the comparisons with the
    hashes it finds (only close ones, unless a bucket holds many copies of one picture)."""
    return sum(w + 1 for _, w in band_slices(d // 2 + 1))


class HashIndex:
    """An in-memory multi-index over hashes: ``d // 2 + 1`` sub-bands, so two hashes within
    ``d`` differ by at most one bit on some sub-band; a query probes its sub-band values and
    their one-bit neighbours, and only the hashes found there are compared."""

    def __init__(self, hashes: list[int], d: int):
        self.hashes, self.d = hashes, d
        self.subs = band_slices(d // 2 + 1)
        self.tables = [defaultdict(list) for _ in self.subs]
        for i, h in enumerate(hashes):
            for t, sl in zip(self.tables, self.subs):
                t[band(h, sl)].append(i)

    def matches(self, h: int, work: "Work | None" = None, after: int = -1):
        """Indices (> ``after``) of the indexed hashes within ``d`` of ``h``, each once, in
        index order."""
        c = work or Work()
        seen, found = set(), []
        for t, (shift, width) in zip(self.tables, self.subs):
            v = band(h, (shift, width))
            for probe in (v, *(v ^ (1 << b) for b in range(width))):
                c.probes += 1
                for j in t.get(probe, ()):
                    if j > after and j not in seen:
                        seen.add(j)
                        c.comparisons += 1
                        if (h ^ self.hashes[j]).bit_count() <= self.d:
                            found.append(j)
        return sorted(found)


def close_pairs(hashes: list[int], d: int, counter: "Work | None" = None):
    """Index pairs (i < j) of ``hashes`` within Hamming distance ``d``: few hashes compared
    pair by pair, many through a :class:`HashIndex`."""
    c = counter or Work()
    n = len(hashes)
    if n - 1 <= probes_per_hash(d):
        for i, h in enumerate(hashes):
            c.comparisons += n - 1 - i
            # int.bit_count (a popcount) rather than bin().count: the per-comparison cost is
            # what makes time per image grow while buckets are small (bench/dedup.py)
            yield from ((i, j) for j in range(i + 1, n) if (h ^ hashes[j]).bit_count() <= d)
        return
    index = HashIndex(hashes, d)
    for i, h in enumerate(hashes):
        yield from ((i, j) for j in index.matches(h, c, after=i))


def components(n: int, edges) -> list[int]:
    """Union-find: the root of each of ``n`` nodes (the smallest index of its component)."""
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return [find(i) for i in range(n)]


def keep_rank(im: ImageFacts) -> tuple:
    """The kept image of a group is the smallest rank: largest original, then stored size,
    then content (never the order an engine delivers a group in)."""
    return (-(im.orig_width * im.orig_height), -(im.width * im.height), im.sha256)


def merge_bucket(images: dict[str, ImageFacts], d: int, counter: "Work | None" = None) -> dict[str, str]:
    """sha256 -> the sha256 of the image it is merged into (itself when kept)."""
    shas = sorted(images)
    hashed = [s for s in shas if parse_phash(images[s].meta.get("phash")) is not None]
    roots = components(len(hashed), close_pairs(
        [parse_phash(images[s].meta["phash"]) for s in hashed], d, counter))
    groups = defaultdict(list)
    for s, r in zip(hashed, roots):
        groups[r].append(s)
    into = {s: s for s in shas}
    for members in groups.values():
        best = min(members, key=lambda s: keep_rank(images[s]))
        for s in members:
            into[s] = best
    return into


class DedupPass(GroupStage):
    """One band's pass of the ``dedup`` step (see the module doc); the last is the visible one."""

    def __init__(self, band_index: int, max_distance: int):
        self.band_index = band_index
        self.max_distance = max_distance
        self.last = band_index == max_distance
        self.name = "dedup" if self.last else f"dedup_band_{band_index}"
        self.internal = not self.last  # the funnel shows the passes as one step
        self._work = Work()  # comparisons and probes of this copy (the scaling test reads it)

    @property
    def work(self) -> Work:
        return self._work

    def key(self, pair: Pair) -> str:
        h = parse_phash(pair.image.meta.get("phash"))
        if h is None:  # no hash, nothing to compare with: a bucket of its own
            return "-" + pair.image.sha256
        sl = band_slices(self.max_distance + 1)[self.band_index]
        return f"{band(h, sl):x}"

    def reduce(self, key, pairs):
        # One picture reached through several URLs: its pairs hold the same stored image with
        # other facts (URL, original size).  The group's image is the first URL's facts, so
        # that nothing depends on the order an engine delivers the pairs in.
        images = {}
        for p in pairs:
            have = images.get(p.image.sha256)
            if have is None or p.image.image_url < have.image_url:
                images[p.image.sha256] = p.image
        into = merge_bucket(images, self.max_distance, self._work) if len(images) > 1 else {
            s: s for s in images}
        kept_keys = {p.image.sha256: p.key for p in pairs if into[p.image.sha256] == p.image.sha256}
        out = [self._repoint(p, images[into[p.image.sha256]], kept_keys) for p in pairs]
        if not self.last:
            return [Keep((p,)) for p in out]
        return self._finish(out)

    @staticmethod
    def _repoint(p: Pair, target: ImageFacts, kept_keys: dict) -> Pair:
        if target.sha256 == p.image.sha256:
            return p
        meta = dict(p.candidate.meta)
        if "dedup_of" not in meta:  # the image the text came with (a later hop keeps it)
            meta["dedup_of"] = {"sha256": p.image.sha256, "image_url": p.image.image_url,
                                "phash": p.image.meta.get("phash")}
        cand = dataclasses.replace(p.candidate, meta=meta)
        return dataclasses.replace(p, key=kept_keys[target.sha256], candidate=cand, image=target)

    def _finish(self, after: list[Pair]) -> list:
        """The last band: record the merges on each kept image, count the images (no pair
        is dropped: evaluation images never get here, see ``filters/dedup_evaluation.py``)."""
        merged = defaultdict(dict)
        for p in after:
            of = p.candidate.meta.get("dedup_of")
            if of:
                have = merged[p.image.sha256].get(of["sha256"])
                if have is None or of["image_url"] < have["image_url"]:  # order-free, as above
                    merged[p.image.sha256][of["sha256"]] = of
        facts = {}  # (sha256, image_url) -> the facts with the merges recorded
        for p in after:
            s = p.image.sha256
            if s in merged and (s, p.image.image_url) not in facts:
                near = [merged[s][k] for k in sorted(merged[s])]
                facts[s, p.image.image_url] = dataclasses.replace(
                    p.image, meta={**p.image.meta, "near_duplicates": near})
        events, counted = [], set()
        for p in after:
            orig = p.candidate.meta.get("dedup_of", {}).get("sha256", p.image.sha256)
            units = ()
            if orig not in counted:
                counted.add(orig)
                what = "kept" if orig == p.image.sha256 else self.reason("near_duplicate")
                units = (("image", what, 1),)
            f = facts.get((p.image.sha256, p.image.image_url))
            q = dataclasses.replace(p, image=f) if f is not None else p
            events.append(Keep((q,), units))
        return events


def passes(cfg: DedupConfig) -> list[DedupPass]:
    """The passes of the step, in order (none when the step is off)."""
    if not cfg.enabled:
        return []
    d = cfg.max_distance
    return [DedupPass(i, d) for i in range(d + 1)]
