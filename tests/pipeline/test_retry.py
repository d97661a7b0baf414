"""Issue 17.2: fetches that failed for a network cause are not lost for good.

The demo is built while nothing serves its images (every connection refused): the run says
the corpus is empty and exits non-zero.  Started again once the server is up, the finished
waves are not redone (a finished part never is), but ``--retry-failed`` fetches the failed
buckets again and ends with the same shards as a run that had the server from the start."""
import pytest

from pipeline.core import executor
from tests.conftest import REPO, free_port
from tools import cli

CONFIG = str(REPO / "configs" / "demo.yaml")


def shard_bytes(out):
    d = out / "shards"
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())} if d.is_dir() else {}


def fetch_step(out):
    import json

    doc = json.loads((out / "stats.json").read_text())
    return next(s for s in doc["steps"] if s["name"] == "fetch"), doc


@pytest.fixture(scope="module")
def dark_web(tmp_path_factory):
    """The sample web generated for a port on which nothing listens (yet)."""
    from tools.sampleweb import generate

    web = tmp_path_factory.mktemp("dark-web")
    port = free_port()
    generate(str(web), seed=0, base_url=f"http://127.0.0.1:{port}")
    return web, port


def new_process():
    """Each ``lait build`` runs in its own process; in this one, forget the set-up stages
    (and with them the robots.txt answers a worker caches)."""
    executor._READY.clear()


def test_network_failures_are_retried_and_an_empty_corpus_fails(dark_web, tmp_path, capsys):
    from tools.sampleweb import serve

    web, port = dark_web
    argv = ["build", "--config", CONFIG, "--out", str(tmp_path / "out"), "--engine", "local",
            "--input", str(web / "pages.warc.gz"), "--set", "fetch.retries=0"]
    assert cli.main(argv) == 1  # nothing fetched: an empty corpus is an error
    err = capsys.readouterr().err
    assert "corpus is empty" in err and "--retry-failed" in err
    fetch, doc = fetch_step(tmp_path / "out")
    assert fetch["in"] > 0 and fetch["kept"] == 0
    assert doc["retryable"]["fetch"] == fetch["in"]  # all of them: refused connections
    assert cli.main(argv + ["--allow-empty"]) == 0

    srv = serve(str(web), host="127.0.0.1", port=port)
    new_process()
    try:
        assert cli.main(argv) == 1  # finished waves are not redone without being asked
        assert cli.main(argv + ["--retry-failed"]) == 0
        capsys.readouterr()
        fetch, doc = fetch_step(tmp_path / "out")
        assert doc["retryable"]["fetch"] == 0 and doc["retryable"]["reopened_units"] > 0
        assert fetch["in"] == fetch["kept"] + sum(fetch["dropped"].values())
        fresh = ["build", "--config", CONFIG, "--out", str(tmp_path / "fresh"), "--engine",
                 "local", "--input", str(web / "pages.warc.gz"), "--set", "fetch.retries=0"]
        assert cli.main(fresh) == 0
    finally:
        srv.shutdown()
    retried = shard_bytes(tmp_path / "out")
    assert retried and retried == shard_bytes(tmp_path / "fresh")
    # Nothing failed this time, so a further --retry-failed reopens nothing.
    assert cli.main(argv + ["--retry-failed"]) == 0
    assert fetch_step(tmp_path / "out")[1]["retryable"]["reopened_units"] == 0
