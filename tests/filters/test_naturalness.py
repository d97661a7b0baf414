"""Naturalness: photos kept, graphics dropped, held-out accuracy, the CLI and the trainer."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from filters.naturalness import Naturalness, NaturalnessConfig, NaturalnessFilter
from pipeline.core.errors import ConfigError
from pipeline.core.stage import Drop
from tests.filters.image_helpers import REPO, asset, decoded_item, image_models  # noqa: F401
from tests import off_limits
from tools.render_graphics import render


def test_photos_are_kept_and_scored(image_models):
    stage = NaturalnessFilter()
    stage.setup()
    items = [decoded_item(asset("photos", p)) for p in ("cat.jpg", "pagoda.jpg", "meadow.jpg")]
    for item, res in zip(items, stage.process_batch(items)):
        assert res == [item], (item.image_url, item.natural)
        assert item.natural >= 0.5


def _graphic(kind: str):
    if kind == "clipart":
        return decoded_item(asset("clipart", "calculator.png"))
    return decoded_item(render(kind, 987_654))  # seeds far from the training images' (0..149)


@pytest.mark.parametrize("kind", ["clipart", "chart", "text", "ui", "flat"])
def test_graphics_are_dropped(image_models, kind):
    # By the head alone (pre-check off) ...
    item = _graphic(kind)
    assert NaturalnessFilter(NaturalnessConfig(flat_check=False)).process(item) \
        == Drop("naturalness_not_natural")
    assert item.natural < 0.5
    # ... and as shipped, where the flat ones never reach it.
    item = _graphic(kind)
    assert NaturalnessFilter().process(item) in (Drop("naturalness_flat_graphic"),
                                                 Drop("naturalness_not_natural"))


@pytest.mark.parametrize("kind", ["chart", "ui", "flat"])
def test_flat_graphics_are_dropped_before_the_backbone(image_models, kind):
    item = _graphic(kind)
    assert NaturalnessFilter().process(item) == Drop("naturalness_flat_graphic")
    assert item.natural is None  # no head score: the backbone never ran
    assert item.backbone_out is None and item.view is None


def test_flat_precheck_spares_photos(image_models):
    """Every committed photo, grey ones and close-up textures included, is far below the
    pre-check's shares; so is a small photo cut-out on a white background (a product shot);
    clip art with flat fills is above them."""
    import glob

    from PIL import Image, ImageDraw

    from filters.naturalness import flat_shares, is_flat_graphic

    cfg = NaturalnessConfig()
    photos = sorted(glob.glob(os.path.join(os.path.dirname(asset("photos", "cat.jpg")), "*.jpg")))
    shares = {os.path.basename(p): flat_shares(decoded_item(p).pixels)[0] for p in photos}
    assert len(shares) >= 20 and max(shares.values()) < 0.7, shares
    # A photo's centre, 5% of the frame, on pure white: 95% one colour, the rest a photo.
    with Image.open(asset("photos", "coffee.jpg")) as im:
        photo = im.convert("RGB")
    w, h = photo.size
    cw, ch = int(w * 0.25), int(h * 0.25)
    cut = photo.crop(((w - cw) // 2, (h - ch) // 2, (w + cw) // 2, (h + ch) // 2))
    mask = Image.new("L", cut.size, 0)
    ImageDraw.Draw(mask).ellipse((0, 0, cw - 1, ch - 1), fill=255)
    product = Image.new("RGB", (w, h), (255, 255, 255))
    product.paste(cut, ((w - cw) // 2, (h - ch) // 2), mask)
    share, rest = flat_shares(decoded_item(product).pixels)
    assert share >= cfg.flat_share and rest < cfg.flat_rest_share / 2, (share, rest)
    assert not is_flat_graphic(decoded_item(product).pixels, cfg)
    # the filter's early-stopping count decides as the full shares do, on both sides
    clipart_dir = os.path.dirname(asset("clipart", "apple.png"))
    clipart = sorted(glob.glob(os.path.join(clipart_dir, "*.png")))
    for p in photos[:5] + clipart:
        px = decoded_item(p).pixels
        share, rest = flat_shares(px)
        full = share >= cfg.flat_share and rest >= cfg.flat_rest_share
        assert is_flat_graphic(px, cfg) == full, p
    assert 0 < sum(is_flat_graphic(decoded_item(p).pixels, cfg) for p in clipart) < len(clipart)
    # switched off, a flat graphic goes to the head like any image
    off = NaturalnessConfig(flat_check=False)
    assert NaturalnessFilter(off).process(_graphic("flat")) == Drop("naturalness_not_natural")


def test_threshold_zero_keeps_everything(image_models):
    item = decoded_item(render("chart", 987_655))  # everything the head scores: the
    off = NaturalnessConfig(threshold=0.0, flat_check=False)  # pre-check is its own switch
    assert NaturalnessFilter(off).process(item) == [item]


@pytest.fixture(scope="module")
def test_split_report(image_models):
    """The test split: sources used neither to train the head nor to choose its recipe."""
    from tools.naturalness_eval import evaluate

    report = evaluate(split="test", backbone="int8")  # the pipeline's backbone
    print("\nnaturalness on the held-out test sources:", json.dumps(report))
    return report


def test_accuracy_on_held_out_sources(test_split_report):
    report = test_split_report
    assert report["n_natural"] >= 80 and report["n_other"] >= 200
    # A regression guard at what the shipped heads score (docs/images.md, sixth round: 0.871
    # / 0.872 / photos 0.880 / others 0.863, on the test split widened with four unseen
    # sources), the same figure on every CPU: the int8 models cannot saturate and the pixel
    # statistics are integer counts (tests/filters/test_portable.py).  The bounds leave about
    # one image.  Issue 15's target is 0.95 balanced accuracy with 0.95 of the photos kept;
    # not met.
    assert report["second_opinion"] > 0
    assert report["accuracy"] >= 0.865 and report["balanced_accuracy"] >= 0.865
    assert report["natural_accuracy"] >= 0.875 and report["other_accuracy"] >= 0.855
    # The flat-graphic pre-check (thresholds chosen on train and val) fires on no held-out
    # photo, so it can only turn the head's misses on graphics into hits.
    assert report["precheck_on"] and report["precheck"]["fired_natural"] == 0
    assert report["precheck"]["fired_other"] > 0
    assert report["accuracy"] >= report["without_precheck"]["accuracy"]


@pytest.fixture(scope="module")
def test7_report(image_models):
    """The seventh round's fresh test split: packages no step had seen (docs/images.md)."""
    from tools.naturalness_eval import evaluate

    report = evaluate(split="test7", backbone="int8")
    print("\nnaturalness on the fresh test7 sources:", json.dumps(report))
    return report


def test_accuracy_on_the_fresh_test7_split(test7_report):
    report = test7_report
    assert report["n_natural"] >= 30 and report["n_other"] >= 100
    # A regression guard at what the shipped heads score there (docs/images.md, tenth round's
    # TL, test7's second score, no longer fresh: accuracy 0.768, balanced 0.732, photos kept
    # 0.657 = 23/35, others 0.806 = 83/103; the seventh round's heads 0.775 / 0.736 / 23/35 /
    # 84/103), the same on every CPU; the bounds leave about one image.  Far below issue 15's 0.95.
    assert report["accuracy"] >= 0.76 and report["balanced_accuracy"] >= 0.72
    assert report["natural_accuracy"] >= 0.62 and report["other_accuracy"] >= 0.79
    assert report["precheck"]["fired_natural"] == 0


def test_every_file_is_in_one_split():
    """No file (by resolved path or by content) is in two splits or two sources: the
    openclipart package links one drawing into several categories."""
    from tools.image_sources import SPLITS, file_hash, natural_sources, nonnatural_sources

    owner, hashes = {}, {}
    for split in SPLITS:
        nat, oth = natural_sources(split), nonnatural_sources(split)
        assert nat and oth and not set(nat) & set(oth)
        for source, files in {**nat, **oth}.items():
            for path in files:
                real = os.path.realpath(path)
                assert real not in owner, (real, owner.get(real), (split, source))
                owner[real] = (split, source)
                hashes.setdefault(os.path.getsize(real), []).append(real)
    for same_size in hashes.values():
        if len(same_size) > 1:
            digests = [file_hash(p) for p in same_size]
            assert len(set(digests)) == len(digests), same_size
    # the held-out clip-art categories are complete apart from what an earlier split owns
    assert sum(1 for s, src in owner.values() if s == "test" and src.startswith("openclipart")) > 1000


def test_calibration_photos_are_the_fixed_training_side_list():
    """The int8 models were calibrated on exactly these; the splits must not move them."""
    from tools.image_sources import calibration_photos, natural_sources

    photos = calibration_photos()
    assert [os.path.basename(p) for p in photos] == [
        "Aqua.jpg", "Blinds.jpg", "Dune.jpg", "FreshFlower.jpg", "Garden.jpg", "GreenMeadow.jpg",
        "LadyBird.jpg", "RainDrops.jpg", "Storm.jpg", "TwoWings.jpg", "Wood.jpg",
        "YellowFlower.jpg", "china.jpg", "flower.jpg", "grace_hopper.jpg"]
    train = {os.path.realpath(p) for ps in natural_sources("train").values() for p in ps}
    assert {os.path.realpath(p) for p in photos} <= train


def test_cli_prints_one_json_line_per_file(image_models, tmp_path):
    chart = tmp_path / "chart.png"
    render("chart", 987_656).save(chart)
    bad = tmp_path / "notes.txt"
    bad.write_text("not an image")
    proc = subprocess.run([sys.executable, "-m", "filters.naturalness", asset("photos", "cat.jpg"),
                           str(chart), str(bad)], cwd=REPO, capture_output=True, text=True)
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [x["path"] for x in lines] == [asset("photos", "cat.jpg"), str(chart), str(bad)]
    assert lines[0]["natural"] >= 0.5 and lines[1]["natural"] < 0.5
    assert lines[2]["natural"] is None and "error" in lines[2]
    assert proc.returncode == 1  # one file could not be read


def test_trainer_learns_from_folders(image_models, tmp_path):
    from tools.naturalness_head import train

    nat, other = tmp_path / "natural", tmp_path / "other"
    nat.mkdir()
    other.mkdir()
    for p in ("cat.jpg", "coffee.jpg", "rocket.jpg", "storm.jpg", "pagoda.jpg"):
        os.symlink(asset("photos", p), nat / p)
    for p in ("calculator.png", "envelope_01.png", "scissors.png", "house.png", "gift01.png"):
        os.symlink(asset("clipart", p), other / p)
    head = str(tmp_path / "head.onnx")
    report = train([str(nat)], [str(other)], head)
    assert report["natural"] == 5 and report["other"] == 5
    assert os.path.getsize(head) < 25_000_000
    files = [asset("photos", "cat.jpg"), asset("clipart", "calculator.png")]
    probs = Naturalness(head=head, second_opinion=0.0).score_files(files)
    assert probs[0] > 0.5 > probs[1]
    # the second opinion's head: open_nsfw's pooled features as a third input
    second = str(tmp_path / "second.onnx")
    report = train([str(nat)], [str(other)], second, nsfw_pool=True)
    assert report["features"] == ["embedding", "stats", "nsfw_pool"]
    model = Naturalness(head=head, second_opinion=0.5, second_head=second)  # it decides all
    assert model.second.head.load().uses_pool
    probs = model.score_files(files)
    assert probs[0] > 0.5 > probs[1]


def _second_opinion_items(band: float):
    """The committed photos and clip art through the filter with the pre-check off, and the
    two heads' own probabilities for them."""
    import glob

    import numpy as np

    from filters.backbone import view_of
    from filters.image_stats import stats_batch

    paths = sorted(glob.glob(os.path.join(os.path.dirname(asset("photos", "cat.jpg")), "*.jpg")))
    paths += sorted(glob.glob(os.path.join(os.path.dirname(asset("clipart", "apple.png")), "*.png")))
    items = [decoded_item(p) for p in paths]
    stage = NaturalnessFilter(NaturalnessConfig(flat_check=False, second_opinion=band))
    stage.setup()
    stage.process_batch(items)
    emb = np.stack([it.backbone_out[0] for it in items])
    stats = stats_batch([view_of(it) for it in items])
    first = stage._head(emb, stats=stats)
    second = stage._second
    pooled = second.nsfw.run([view_of(it) for it in items])[1]
    return items, first, second.head(emb, stats=stats, pooled=pooled)


def test_second_opinion_decides_where_the_head_is_unsure(image_models):
    items, first, second = _second_opinion_items(NaturalnessConfig.second_opinion)
    unsure = abs(first - 0.5) < NaturalnessConfig.second_opinion
    for it, p1, p2, u in zip(items, first, second, unsure):
        assert it.natural == round(float(p2 if u else p1), 4), it.image_url
        # the NSFW pass ran for the unsure images only, and is cached for the NSFW step
        assert (it.nsfw_out is not None) == bool(u), it.image_url
    # off: the head alone, no NSFW pass; the widest band: the second head everywhere
    items, first, _ = _second_opinion_items(0.0)
    assert [it.natural for it in items] == [round(float(p), 4) for p in first]
    assert all(it.nsfw_out is None for it in items)
    items, _, second = _second_opinion_items(0.5)
    assert [it.natural for it in items] == [round(float(p), 4) for p in second]


def test_nsfw_step_reuses_the_second_opinions_pass(image_models, monkeypatch):
    from filters.nsfw import NsfwConfig, NsfwFilter, NsfwModel

    items, _, _ = _second_opinion_items(0.5)  # every item has its NSFW pass cached
    cached = [it.nsfw_out[1] for it in items]
    fresh = NsfwModel().scores([it.view for it in items])  # the step's own model, run anew
    runs = []
    real_run = NsfwModel.run
    monkeypatch.setattr(NsfwModel, "run", lambda self, views: runs.append(len(views))
                        or real_run(self, views))
    stage = NsfwFilter()
    stage.setup()
    stage.process_batch(items)
    assert runs == []  # same settings (int8, no JPEG round trip): nothing ran again
    assert [it.nsfw for it in items] == [round(float(s), 4) for s in cached]
    assert [round(float(s), 4) for s in fresh] == [it.nsfw for it in items]
    # other settings are other scores: the step runs its own model
    NsfwFilter(NsfwConfig(jpeg_reencode=True)).process_batch(items)
    assert runs == [len(items)]


def test_bad_config_fails_fast():
    with pytest.raises(ConfigError, match="naturalness.threshold"):
        NaturalnessConfig(threshold=1.5).check()
    with pytest.raises(ConfigError, match="naturalness.backbone"):
        NaturalnessConfig(backbone="fp16").check()
    with pytest.raises(ConfigError, match="naturalness.flat_colors"):
        NaturalnessConfig(flat_share=0.0).check()
    with pytest.raises(ConfigError, match="naturalness.second_opinion"):
        NaturalnessConfig(second_opinion=0.6).check()


def test_make_data_names_never_clash():
    """KDE's wallpapers are all images/<size>.jpg: one source's files must not overwrite each
    other's crops, and sources with distinct names keep them (the committed head's data)."""
    from tools.naturalness_data import _stems

    assert _stems(["/a/Aqua.jpg", "/b/Dune.jpg"]) == ["Aqua", "Dune"]
    clash = _stems(["/w/Grey/images/2560x1600.jpg", "/w/Kite/images/2560x1600.jpg", "/w/x.png"])
    assert clash == ["000_2560x1600", "001_2560x1600", "002_x"] and len(set(clash)) == 3


def test_cutouts_are_placed_whole_on_a_plain_background_and_seeded(tmp_path):
    """A photo cut out onto transparency (the fourth round's Scratch costumes) is laid whole on
    white or a light colour with margins, never cropped into; a rerun writes the same bytes."""
    import numpy as np
    from PIL import Image, ImageDraw

    from tools.naturalness_data import CUTOUT_PLACEMENTS, _cutouts

    with Image.open(asset("photos", "coffee.jpg")) as im:
        photo = im.convert("RGB").resize((160, 120))
    mask = Image.new("L", photo.size, 0)
    ImageDraw.Draw(mask).ellipse((10, 10, 150, 110), fill=255)
    cut = photo.convert("RGBA")
    cut.putalpha(mask)
    cut.save(tmp_path / "cup.png")
    out = tmp_path / "out"
    assert _cutouts(str(out), "scratch_cutouts", [str(tmp_path / "cup.png")], 0) == CUTOUT_PLACEMENTS
    files = sorted((out / "natural" / "scratch_cutouts").iterdir())
    assert [f.name for f in files] == [f"cup_c{k}.jpg" for k in range(CUTOUT_PLACEMENTS)]
    for f in files:
        with Image.open(f) as im:
            a = np.asarray(im.convert("RGB")).astype(int)
        assert im.width > 160 or im.height > 120  # margins added, nothing cut away
        corners = np.stack([a[0, 0], a[0, -1], a[-1, 0], a[-1, -1]])
        assert corners.min() >= 160 and np.ptp(corners, axis=0).max() <= 12  # one light colour
        assert a.std() > 20  # the photo is there
    first = files[0].read_bytes()
    _cutouts(str(out), "scratch_cutouts", [str(tmp_path / "cup.png")], 0)
    assert files[0].read_bytes() == first


def test_make_data_is_seeded_by_content_not_by_path(tmp_path, monkeypatch):
    """The same files unpacked in two places (a .deb cache moved, another $LAIT_CACHE) give
    make-data the same bytes in any output folder; another file's content draws other crops."""
    from PIL import Image

    from tools import naturalness_data as nd

    def unpack(root, rotate=0):
        root.mkdir(parents=True)
        with Image.open(asset("photos", "coffee.jpg")) as im:
            im.convert("RGB").rotate(rotate).save(root / "photo.jpg")
            im.convert("RGB").transpose(Image.Transpose.FLIP_TOP_BOTTOM).save(root / "art.png")
            im.convert("RGB").resize((80, 60)).save(root / "clip.png")
        return {"photos": [str(root / "photo.jpg")]}, {"art": [str(root / "art.png")],
                                                        "openclipart_x": [str(root / "clip.png")]}

    def run(src, out):
        nat, oth = src
        monkeypatch.setattr(nd, "natural_sources", lambda split: nat)
        monkeypatch.setattr(nd, "nonnatural_sources", lambda split: oth)
        monkeypatch.setattr(nd, "RENDERED_PER_KIND", 1)
        nd.make_data(str(out))
        return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.jpg"))}

    a = run(unpack(tmp_path / "cache_a" / "deep"), tmp_path / "out_a")
    b = run(unpack(tmp_path / "b"), tmp_path / "elsewhere" / "out_b")
    assert a == b and any(k.startswith("natural/photo_bw/") for k in a)
    c = run(unpack(tmp_path / "c", rotate=1), tmp_path / "out_c")
    assert c.keys() == a.keys() and c["other/art/art_00.jpg"] == a["other/art/art_00.jpg"]
    assert c["natural/photos/photo_00.jpg"] != a["natural/photos/photo_00.jpg"]


def test_every_source_weighs_the_same_within_its_class():
    import numpy as np

    from tools.naturalness_head import source_weights

    y = np.array([1, 1, 1, 1, 0, 0, 0])
    src = np.array(["a", "a", "a", "b", "c", "c", "d"])
    w = source_weights(src, y)
    assert w[:3].sum() == pytest.approx(w[3]) and w[4:6].sum() == pytest.approx(w[6])
    assert w[y == 1].sum() == pytest.approx(w[y == 0].sum()) == pytest.approx(len(y) / 2)


def test_the_committed_heads_are_the_trainers_defaults():
    """`make-data` then `train` (and `train --nsfw-pool`) with no recipe flags rebuild both
    committed heads (docs/images.md, fourteenth round): their reports name the trainer's
    defaults and the folders' counts, so neither head needs a number kept outside the tree."""
    from tools import naturalness_head as nh

    for name, c, t, pool in (("naturalness_head", nh.C, nh.THRESHOLD, False),
                             ("naturalness_second_head", nh.SECOND_C, nh.SECOND_THRESHOLD, True)):
        with open(os.path.join(REPO, "filters", "models", name + ".json")) as f:
            report = json.load(f)
        assert (report["C"], report["threshold"]) == (c, t)
        assert ("nsfw_pool" in report["features"]) == pool
        assert (report["natural"], report["other"]) == (7395, 4760)  # the same make-data folders


def test_photo_variants_are_dark_or_grey_and_seeded(tmp_path):
    import numpy as np
    from PIL import Image

    from tools.photo_variants import write_variants

    src = tmp_path / "natural" / "cats"
    src.mkdir(parents=True)
    with Image.open(asset("photos", "coffee.jpg")) as im:
        for i in range(6):
            im.convert("RGB").rotate(i).save(src / f"{i}.jpg")
    counts = write_variants(str(tmp_path), ["cats"])
    assert counts == {"photo_bw": 1, "photo_lowkey": 1}
    with Image.open(asset("photos", "coffee.jpg")) as im:
        mean = np.asarray(im.convert("L")).mean()
    with Image.open(tmp_path / "natural" / "photo_lowkey" / "0001.jpg") as dark:
        assert np.asarray(dark.convert("L")).mean() < mean * 0.7
    with Image.open(tmp_path / "natural" / "photo_bw" / "0000.jpg") as bw:
        a = np.asarray(bw.convert("RGB")).astype(int)  # grey or toned: one hue throughout
        assert np.abs(np.diff(a, axis=2)).max() <= 80
    first = (tmp_path / "natural" / "photo_bw" / "0000.jpg").read_bytes()
    write_variants(str(tmp_path), ["cats"])
    assert (tmp_path / "natural" / "photo_bw" / "0000.jpg").read_bytes() == first


# Issue 15's independent evaluation set: no file of theirs (nor of what they depend on for
# their images) may be in any split.
OFF_LIMITS = off_limits.IMAGE_FILTERS
HELD_OUT = OFF_LIMITS | off_limits.IMAGE_FILTERS_DEPENDENCIES


def test_no_split_uses_an_off_limits_package():
    """Every file of every source is owned (dpkg) by an allowed package; the GCompris files,
    unpacked into the cache, come from gcompris-qt-data's resource files, and the
    Enlightenment photos, read out of Eet archives into the cache, from those archives; the
    files read out of a downloaded .deb into the cache (the seventh round) from that package."""
    from tools.image_sources import SPLITS, natural_sources, nonnatural_sources
    from tools.image_sources_wide import (
        ENLIGHTENMENT,
        GCOMPRIS_RCC,
        _cache_dir,
        deb_cache,
        enlightenment_cache,
    )

    assert len(OFF_LIMITS) == 55  # as the issue lists them
    paths, debs = {}, set()
    for split in SPLITS:
        for source, files in {**natural_sources(split), **nonnatural_sources(split)}.items():
            assert files, source
            for f in files:
                if f.startswith(_cache_dir()):
                    paths.setdefault(GCOMPRIS_RCC, source)
                elif f.startswith(enlightenment_cache()):
                    stem = os.path.splitext(os.path.basename(f))[0]
                    paths.setdefault(os.path.join(ENLIGHTENMENT, f"{stem}.edj"), source)
                elif f.startswith(deb_cache()):
                    package = os.path.relpath(f, deb_cache()).split(os.sep)[0]
                    assert package not in HELD_OUT, (source, f)
                    debs.add(package)
                elif f.startswith("/usr/"):
                    paths.setdefault(f, source)
    assert len(paths) > 1000  # every packaged file, not one per source
    assert len(debs) >= 5  # test7's packages
    proc = subprocess.run(["dpkg", "-S", *sorted(paths)], capture_output=True, text=True)
    owners = {}
    for line in proc.stdout.splitlines():
        pkgs, path = line.split(": ", 1)
        owners[path] = {p.split(":")[0] for p in pkgs.split(", ")}
    for path, source in paths.items():
        assert path in owners, (source, path, proc.stderr[-500:])
        assert not owners[path] & HELD_OUT, (source, path, owners[path])
