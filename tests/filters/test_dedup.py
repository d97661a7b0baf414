"""Near-duplicate merging: band passes find every pair within the distance, never all pairs."""
from __future__ import annotations

import copy
import dataclasses
import os
import random
from collections import defaultdict

import numpy as np
import pytest

from filters.dedup import (DedupConfig, DedupPass, Work, band_slices, close_pairs, passes,
                           probes_per_hash)
from pipeline.core.errors import ConfigError
from pipeline.core.records import Candidate, ImageFacts, Pair
from pipeline.core.stage import Drop, Keep
from tests.filters.image_helpers import asset


def pair(sha: str, phash: int | None, size=(100, 100), text="t"):
    meta = {} if phash is None else {"phash": f"{phash:016x}"}
    im = ImageFacts(image_url=f"http://x/{sha}.jpg", data=b"", width=size[0], height=size[1],
                    orig_width=size[0], orig_height=size[1], sha256=sha, meta=meta)
    cand = Candidate("http://x/", im.image_url, "alt", text, text)
    return Pair(key=sha[:24], candidate=cand, image=im)


def run_passes(pairs, d):
    """The passes as the local engine runs them: group by key, reduce each bucket."""
    stages = passes(DedupConfig(max_distance=d))
    units = defaultdict(int)
    for st in stages:
        buckets = defaultdict(list)
        for p in pairs:
            buckets[st.key(p)].append(p)
        out = []
        for k in sorted(buckets):
            for ev in st.reduce(k, buckets[k]):
                out.extend(ev.outputs)
                for _, what, n in ev.units:
                    units[what] += n
        pairs = out
    return pairs, stages, units


def flip(h: int, bits: list[int]) -> int:
    for b in bits:
        h ^= 1 << b
    return h


def test_bands_cover_the_hash():
    for n in (1, 5, 7, 17):
        sl = band_slices(n)
        assert sum(w for _, w in sl) == 64 and max(w for _, w in sl) - min(w for _, w in sl) <= 1


def test_chain_merges_into_the_largest_and_pools_texts():
    rng = random.Random(1)
    a = rng.getrandbits(64)
    b = flip(a, [0, 9, 20, 33, 47, 60])  # 6 bits from a
    c = flip(b, [1, 10, 21])  # 3 bits from b, 9 from a: joined through b
    far = a ^ ((1 << 64) - 1)
    pairs = [pair("a" * 64, a, (300, 300), "one"), pair("b" * 64, b, (600, 400), "two"),
             pair("c" * 64, c, (300, 300), "three"), pair("d" * 64, far, (900, 900), "four"),
             pair("e" * 64, None, (900, 900), "five")]
    out, _, units = run_passes(pairs, 6)
    by_text = {p.candidate.text: p for p in out}
    assert len(out) == 5  # no text is lost
    for t in ("one", "two", "three"):
        assert by_text[t].image.sha256 == "b" * 64 and by_text[t].key == ("b" * 64)[:24]
    assert by_text["one"].candidate.meta["dedup_of"] == {
        "sha256": "a" * 64, "image_url": "http://x/" + "a" * 64 + ".jpg", "phash": f"{a:016x}"}
    assert "dedup_of" not in by_text["two"].candidate.meta
    assert [m["sha256"] for m in by_text["two"].image.meta["near_duplicates"]] == ["a" * 64, "c" * 64]
    assert by_text["four"].image.sha256 == "d" * 64 and by_text["five"].image.sha256 == "e" * 64
    assert units == {"kept": 3, "dedup_near_duplicate": 2}


def test_same_result_whatever_the_order():
    rng = random.Random(2)
    base = [rng.getrandbits(64) for _ in range(40)]
    hashes = base + [flip(h, rng.sample(range(64), rng.randint(0, 8))) for h in base]
    pairs = [pair(f"{i:064x}", h, (100 + i % 7, 100)) for i, h in enumerate(hashes)]
    first, _, _ = run_passes(pairs, 6)
    again, _, _ = run_passes(list(reversed(pairs)), 6)
    key = lambda p: (p.candidate.image_url, p.image.sha256)  # noqa: E731
    assert sorted(map(key, first)) == sorted(map(key, again))


def test_one_picture_through_several_urls_gives_the_same_output_in_any_order():
    """Pairs of one stored image reached through two URLs carry different facts; the output
    never depends on which arrives first (Beam and Spark deliver groups in other orders)."""
    rng = random.Random(5)
    h = rng.getrandbits(64)
    a1, a2 = pair("a" * 64, h, (500, 500), "one"), pair("a" * 64, h, (500, 500), "two")
    a2.image = dataclasses.replace(a2.image, image_url="http://y/aaa.jpg", orig_width=900)
    a2.candidate.image_url = a2.image.image_url
    b1, b2 = pair("b" * 64, flip(h, [1, 2]), (300, 300), "three"), pair("b" * 64, flip(h, [1, 2]), (300, 300), "four")
    b2.image = dataclasses.replace(b2.image, image_url="http://a/bbb.jpg")
    pairs = [a1, a2, b1, b2]
    outs = []
    for order in ([0, 1, 2, 3], [1, 0, 3, 2], [3, 2, 1, 0], [2, 0, 3, 1]):
        out, _, units = run_passes([copy.deepcopy(pairs[i]) for i in order], 6)
        outs.append(sorted(repr(p) for p in out))
        assert units == {"kept": 1, "dedup_near_duplicate": 1}
    assert all(o == outs[0] for o in outs)


def popcounts(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.bitwise_count(a[:, None] ^ b[None, :])


def synthetic(n: int, d: int, seed: int = 0):
    """n random hashes, a tenth of them copies of another one moved by 1..d bits."""
    rng = random.Random(seed)
    hashes = [rng.getrandbits(64) for _ in range(n - n // 10)]
    hashes += [flip(rng.choice(hashes), rng.sample(range(64), rng.randint(1, d)))
               for _ in range(n // 10)]
    return [pair(f"{i:064x}", h) for i, h in enumerate(hashes)]


@pytest.mark.parametrize("d", [6])
def test_grouping_is_not_quadratic_and_leaves_no_near_duplicates(d):
    per_image = {}
    for n in (1000, 10000):
        out, stages, units = run_passes(synthetic(n, d), d)
        work = sum(st.work.comparisons + st.work.probes for st in stages)
        per_image[n] = work / n
        assert units["kept"] + units["dedup_near_duplicate"] == n
        assert units["dedup_near_duplicate"] >= n // 10 - n // 100  # the planted copies
        kept = np.array(sorted({int(p.image.meta["phash"], 16) for p in out}), np.uint64)
        assert len(kept) == units["kept"]
        close = 0
        for i in range(0, len(kept), 2000):  # brute force, only to check the result
            dist = popcounts(kept[i:i + 2000], kept)
            close += int((dist <= d).sum()) - len(kept[i:i + 2000])
        assert close == 0, "two kept images within the distance"
    # All pairs would cost n / 2 comparisons per image: 500 at 1k, 5,000 at 10k.  The passes'
    # work per image (comparisons + index probes) has a bound that does not grow with n: per
    # pass, at most the in-bucket index's probes plus the few close hashes they find.  (It
    # rises towards that bound while buckets are small: all pairs are cheaper there.)
    bound = (d + 1) * (probes_per_hash(d) + 2)
    assert per_image[1000] < bound and per_image[10000] < bound, (per_image, bound)
    assert per_image[10000] < 5000 / 10, per_image


def test_close_pairs_index_finds_what_all_pairs_finds():
    rng = random.Random(3)
    base = [rng.getrandbits(64) for _ in range(150)]
    hashes = base + [flip(h, rng.sample(range(64), rng.randint(0, 7))) for h in base]
    for d in (0, 3, 6, 10):
        w = Work()
        got = set(close_pairs(hashes, d, w))
        want = {(i, j) for i in range(len(hashes)) for j in range(i + 1, len(hashes))
                if bin(hashes[i] ^ hashes[j]).count("1") <= d}
        assert got == want and w.probes > 0  # 300 hashes: the index, not all pairs


def test_config_is_checked(tmp_path):
    from pipeline.config import from_dict

    warc = {"warc": [str(tmp_path / "a.warc.gz")]}
    for bad, match in (({"max_distance": 40}, "dedup.max_distance"),
                       ({"max_distance": "6"}, "dedup.max_distance: expected an integer"),
                       ({"max_dist": 6}, "unknown key")):
        with pytest.raises(ConfigError, match=match):
            from_dict({"input": warc, "dedup": bad})
    assert from_dict({"input": warc}).dedup.max_distance == 6
    assert passes(DedupConfig(enabled=False)) == []
    names = [s.name for s in passes(DedupConfig(max_distance=2))]
    assert names == ["dedup_band_0", "dedup_band_1", "dedup"]
    assert isinstance(DedupPass(0, 0).key(pair("a" * 64, None)), str)


def test_hash_sources_folder_shard_and_file(tmp_path):
    import io
    import tarfile

    from PIL import Image

    from filters.eval_images import check_sources, load_exclude, phash_of, read_hash_file
    from tools.cli import main

    photos = [asset("photos", "cat.jpg"), asset("photos", "coffee.jpg")]
    folder = tmp_path / "eval" / "sub"
    folder.mkdir(parents=True)
    for p in photos:
        (folder / os.path.basename(p)).write_bytes(open(p, "rb").read())
    (folder / "notes.txt").write_text("not an image")
    shard = tmp_path / "eval.tar"
    with tarfile.open(shard, "w") as tf:
        for p in photos:
            tf.add(p, arcname="000/" + os.path.basename(p))
    out = tmp_path / "hashes.txt"
    assert main(["hashes", str(tmp_path / "eval"), "-o", str(out)]) == 0
    rows = read_hash_file(str(out))
    assert [n for _, n in rows] == ["sub/cat.jpg", "sub/coffee.jpg"]
    want = sorted(phash_of(open(p, "rb").read()) for p in photos)
    for src in (tmp_path / "eval", shard, out):
        check_sources([str(src)])
        assert load_exclude([str(src)]) == want
    # a resized, re-encoded copy hashes within the default distance of its original
    buf = io.BytesIO()
    Image.open(photos[0]).convert("RGB").resize((300, 200)).save(buf, "JPEG", quality=50)
    assert bin(phash_of(buf.getvalue()) ^ phash_of(open(photos[0], "rb").read())).count("1") <= 6
    bad = tmp_path / "bad.txt"
    bad.write_text("# ok\nzz12\n")
    with pytest.raises(ConfigError, match="bad.txt:2"):
        check_sources([str(bad)])
    with pytest.raises(ConfigError, match="does not exist"):
        check_sources([str(tmp_path / "missing")])
