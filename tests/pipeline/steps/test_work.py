"""Work files between jobs: records that a later group step needs together share a bucket."""
import pickle

import pytest

from pipeline.config import from_dict
from pipeline.web.urls import canonical_url
from pipeline.jobs import build_jobs
from pipeline.core.records import Candidate
from pipeline.steps.work import WorkSink, WorkSource

SPELLINGS = ["http://example.com/img/a.jpg", "HTTP://Example.COM:80/img/a.jpg",
             "http://example.com/img/a.jpg#top"]


def cand(url: str, page: str) -> Candidate:
    return Candidate(page_url=page, image_url=url, text_source="alt", text="a dog", raw_text="a dog")


def test_spellings_of_one_image_url_share_a_bucket_and_the_fetch_key():
    from pipeline.steps.fetch import ImageFetcher

    sink = WorkSink("/unused", 997, "image_url", canonical_url)
    fetcher = ImageFetcher()
    assert len({sink.key(cand(u, "p")) for u in SPELLINGS}) == 1
    assert len({fetcher.key(cand(u, "p")) for u in SPELLINGS}) == 1
    # Raw bucketing (the old behaviour) scatters them: the fetcher would see each alone.
    raw = WorkSink("/unused", 997, "image_url")
    assert len({raw.key(cand(u, "p")) for u in SPELLINGS}) > 1


def test_pages_job_buckets_by_the_canonical_image_url(tmp_path):
    (tmp_path / "none.warc.gz").write_bytes(b"")  # never read: only the plan is built
    cfg = from_dict({"input": {"warc": [str(tmp_path / "none.warc.gz")]}, "run": {"buckets": 997}})
    pages = build_jobs(cfg, str(tmp_path / "out"), str(tmp_path / "work"))[0]
    plan = pages().plan([], str(tmp_path / "wave"))
    sink = plan.steps[-1].stage
    assert isinstance(sink, WorkSink)
    assert len({sink.key(cand(u, f"http://p/{i}")) for i, u in enumerate(SPELLINGS)}) == 1
    pickle.loads(pickle.dumps(sink))  # engines ship the stage to workers


def test_sink_and_source_round_trip(tmp_path):
    sink = WorkSink(str(tmp_path), 4, "image_url", canonical_url)
    recs = [cand(u, f"http://p/{i}") for i, u in enumerate(SPELLINGS)]
    (bucket,) = {sink.key(r) for r in recs}
    sink.reduce(bucket, recs)
    src = WorkSource([str(tmp_path)], 4)
    assert src.parts() == [bucket]
    assert [ev.outputs[0] for ev in src.read(bucket)] == recs


def test_resume_refuses_other_models_or_work_format(tmp_path, monkeypatch):
    """A resume must not mix work files written by other model files or under another
    work-file format with new ones; the error names what differs."""
    from pipeline import waves
    from pipeline.core.errors import ConfigError

    out, cfg = str(tmp_path / "out"), {"a": 1}
    waves.check_work_dir(out, {"a": 0})
    waves.check_work_dir(out, cfg)  # no finished wave yet: nothing to mix, the stamp is replaced
    (tmp_path / "out" / "_work" / "pages").mkdir()
    (tmp_path / "out" / "_work" / "pages" / "0123456789ab.done").write_bytes(b"")  # a wave's marker
    waves.check_work_dir(out, cfg)  # same config, format and models: resumes
    with monkeypatch.context() as m:
        m.setattr(waves, "models_digest", lambda: "0" * 16)
        with pytest.raises(ConfigError, match="other model files"):
            waves.check_work_dir(out, cfg)
    with monkeypatch.context() as m:
        m.setattr(waves, "WORK_FORMAT", waves.WORK_FORMAT + 1)
        with pytest.raises(ConfigError, match="another version of the work files"):
            waves.check_work_dir(out, cfg)
    with pytest.raises(ConfigError, match="another configuration"):
        waves.check_work_dir(out, {"a": 2})


def test_resume_with_other_code_says_so_and_keeps_the_first_stamp(tmp_path, monkeypatch, caplog):
    """Code changes keep the work format, so a resume across one is allowed, but the units
    finished before keep the old code's decisions: the resume warns, naming both digests, on
    every resume until a new --out (the stamp keeps the code that began the run)."""
    import json
    import logging

    from pipeline import waves

    out, cfg = str(tmp_path / "out"), {"a": 1}
    waves.check_work_dir(out, cfg)
    first = json.loads((tmp_path / "out" / "_work" / "config.json").read_text())["code"]
    assert first == waves.code_digest()
    (tmp_path / "out" / "_work" / "pages").mkdir()
    (tmp_path / "out" / "_work" / "pages" / "0123456789ab.done").write_bytes(b"")
    with caplog.at_level(logging.WARNING, logger="pipeline.waves"):
        waves.check_work_dir(out, cfg)  # the same code: no word
        assert not caplog.records
        monkeypatch.setattr(waves, "code_digest", lambda: "f" * 16)
        waves.check_work_dir(out, cfg)  # other code: resumes, and says so
    assert len(caplog.records) == 1
    assert "other lait code" in caplog.text and first in caplog.text and "f" * 16 in caplog.text
    assert json.loads((tmp_path / "out" / "_work" / "config.json").read_text())["code"] == first


def test_code_digest_follows_source_and_word_lists_not_caches(tmp_path, monkeypatch):
    from pipeline import waves

    pkg = tmp_path / "code_probe_pkg"
    (pkg / "rules" / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    (pkg / "rules" / "text.py").write_text("A = 1\n")
    (pkg / "rules" / "words.txt").write_text("menu\n")
    dirs = ("code_probe_pkg",)
    first = waves.code_digest(dirs)
    (pkg / "rules" / "__pycache__" / "text.cpython-311.pyc").write_bytes(b"cache")
    (pkg / "rules" / "notes.md").write_text("not code")
    assert waves.code_digest(dirs) == first
    (pkg / "rules" / "words.txt").write_text("menu\nfooter\n")
    assert waves.code_digest(dirs) != first


def test_models_digest_follows_model_bytes(tmp_path, monkeypatch):
    """The model folders are found through their package (as in an installed wheel)."""
    from pipeline import waves

    pkg = tmp_path / "digest_probe_pkg"
    (pkg / "m").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    (pkg / "m" / "head.onnx").write_bytes(b"one")
    (pkg / "m" / ".built").write_bytes(b"stamp")
    dirs = ("digest_probe_pkg/m",)
    first = waves.models_digest(dirs)
    (pkg / "m" / ".built").write_bytes(b"other stamp")
    assert waves.models_digest(dirs) == first  # build stamps do not count
    (pkg / "m" / "head.onnx").write_bytes(b"two")
    assert waves.models_digest(dirs) != first


def test_resume_refuses_work_scored_without_the_embedding(tmp_path):
    """Before WORK_FORMAT 8, ``labels.store_embedding: false`` also took the embedding from
    the scorer, so the images job's pairs were scored without it; a run of that kind, killed
    and resumed by this version, would mix pairs scored both ways.  Such a resume is refused;
    a default run (whose work files are the same under both versions) still resumes, and its
    stamp keeps the bytes it had."""
    import json

    from pipeline import waves
    from pipeline.core.errors import ConfigError

    def stamp(out: str, config: dict, work_format: int) -> None:
        (tmp_path / out / "_work").mkdir(parents=True)
        doc = {"fingerprint": waves._fingerprint(config), "work_format": work_format,
               "models": waves.models_digest(), "config": config}
        (tmp_path / out / "_work" / "config.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
        (tmp_path / out / "_work" / "images").mkdir()
        (tmp_path / out / "_work" / "images" / "0123456789ab.done").write_bytes(b"")  # work done

    default = from_dict({"input": {"warc": ["a.warc.gz"]}}).to_dict()
    lean = from_dict({"input": {"warc": ["a.warc.gz"]}, "labels": {"store_embedding": False}}).to_dict()
    stamp("lean", lean, 7)
    with pytest.raises(ConfigError, match="another version of the work files"):
        waves.check_work_dir(str(tmp_path / "lean"), lean)
    stamp("default", default, 7)
    waves.check_work_dir(str(tmp_path / "default"), default)
    fresh = tmp_path / "fresh"
    waves.check_work_dir(str(fresh), default)
    assert json.loads((fresh / "_work" / "config.json").read_text())["work_format"] == 7
    waves.check_work_dir(str(tmp_path / "lean_new"), lean)
    waves.check_work_dir(str(tmp_path / "lean_new"), lean)  # this version's own work resumes


def test_another_configuration_names_the_keys_that_differ(tmp_path):
    """README: a run on an --out made with another configuration "fails at once, naming what
    differs".  It said only "another configuration": a user who reran with one --set
    changed (score.threshold) could not tell which."""
    from pipeline import waves
    from pipeline.core.errors import ConfigError

    out = str(tmp_path / "out")
    old = {"score": {"threshold": 0.0, "enabled": True}, "input": {"warc": ["a.warc.gz"]}}
    waves.check_work_dir(out, old)
    (tmp_path / "out" / "_work" / "pages").mkdir()
    (tmp_path / "out" / "_work" / "pages" / "0123456789ab.done").write_bytes(b"")
    new = {"score": {"threshold": None, "enabled": True}, "input": {"warc": ["b.warc.gz"]},
           "text": {"min_words": 1}}
    with pytest.raises(ConfigError) as e:
        waves.check_work_dir(out, new)
    msg = str(e.value)
    assert "another configuration" in msg
    assert "score.threshold: 0.0 there, null here" in msg
    assert 'input.warc: ["a.warc.gz"] there, ["b.warc.gz"] here' in msg
    assert "text.min_words: absent there, 1 here" in msg
    assert "enabled" not in msg
