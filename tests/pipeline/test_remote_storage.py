"""Where the data lives: input over HTTP from a Common Crawl path list, output to S3.

Real servers on 127.0.0.1, started here: an HTTP file server with range requests (tests/remote.py)
serving the demo's WARC split into three files under a Common Crawl layout, with its
``warc.paths.gz``; and moto's S3 API server (``ThreadedMotoServer``).  The shards written to
S3 and read back with ``webdataset.WebDataset`` through fsspec must equal a local run's, on
Beam and on Spark, also after a kill; bad remote input must end as a counted reason or a clear
error naming the URL.
"""
from __future__ import annotations

import gzip
import importlib
import os
import signal
import subprocess
import time
from pathlib import Path

import fsspec
import pytest
import webdataset as wds
import yaml
from fastwarc.warc import ArchiveIterator

from pipeline.build import build, check_output_dir
from pipeline.core import storage
from pipeline.core.errors import ConfigError
from pipeline.core.stage import Keep
from pipeline.steps.read import WarcReader, expand_path_list
from tests.conftest import REPO
from tests.pipeline.test_spark_cluster import cluster  # noqa: F401 (a fixture: master + worker)
from tests.remote import apply_env, restore_env, s3_env, serve_files, start_s3

CONFIG = REPO / "configs" / "demo.yaml"
CRAWL = "crawl-data/CC-TEST-2026-01"
BUCKET = "lait-test"


def split_warc(src: Path, dest: Path, n: int) -> list[str]:
    """Cuts a gzipped WARC into ``n`` WARCs at record (gzip member) boundaries; returns the
    keys, relative to ``dest``, in Common Crawl's layout."""
    data = src.read_bytes()
    offsets = [r.stream_pos for r in ArchiveIterator(str(src), parse_http=False)] + [len(data)]
    step = -(-(len(offsets) - 1) // n)
    keys = []
    for i in range(n):
        a, b = offsets[i * step], offsets[min((i + 1) * step, len(offsets) - 1)]
        key = f"{CRAWL}/segments/0000{i}/warc/CC-TEST-0000{i}.warc.gz"
        (dest / key).parent.mkdir(parents=True, exist_ok=True)
        (dest / key).write_bytes(data[a:b])
        keys.append(key)
    return keys


@pytest.fixture(scope="module")
def crawl(sample_web, tmp_path_factory):
    """The demo WARC as a 3-file crawl with its path list, served over HTTP."""
    root = tmp_path_factory.mktemp("crawl")
    keys = split_warc(sample_web / "pages.warc.gz", root, 3)
    (root / CRAWL / "warc.paths.gz").write_bytes(gzip.compress(("\n".join(keys) + "\n").encode()))
    srv = serve_files(root)
    yield root, keys, srv
    srv.shutdown()


@pytest.fixture(scope="module")
def s3():
    srv, endpoint = start_s3()
    old = apply_env(s3_env(endpoint))
    fs = fsspec.filesystem("s3", skip_instance_cache=True)
    fs.mkdir(BUCKET)
    yield endpoint, fs
    restore_env(old)
    srv.stop()


def remote_overrides(srv) -> dict:
    return {"input.warc": [], "input.paths": f"{srv.url}/{CRAWL}/warc.paths.gz",
            "input.prefix": f"{srv.url}/", "run.wave_size": 2}


@pytest.fixture(scope="module")
def local_run(crawl, tmp_path_factory):
    """The reference: the same three WARCs read from local disk, written to local disk."""
    root, keys, _ = crawl
    out = tmp_path_factory.mktemp("local")
    build(str(CONFIG), str(out), engine="beam",
          overrides={"input.warc": [str(root / k) for k in keys], "run.wave_size": 2})
    shards = {p.name: p.read_bytes() for p in sorted((out / "shards").iterdir())}
    assert any(n.endswith(".tar") for n in shards)
    return out, shards


def s3_shards(fs, url: str) -> dict:
    fs.invalidate_cache()
    prefix = url.split("://", 1)[1] + "/shards"
    return {p.rsplit("/", 1)[1]: fs.cat_file(p) for p in sorted(fs.ls(prefix, detail=False))}


def wds_samples(urls: list[str]) -> list[tuple]:
    """Every sample of the shards, read with webdataset (S3 URLs through fsspec)."""
    ds = wds.WebDataset(urls, shardshuffle=False, handler=wds.reraise_exception, empty_check=False)
    return [(s["__key__"], s["jpg"], s["txt"], s["json"]) for s in ds]


@pytest.fixture()
def wds_s3(monkeypatch):
    # webdataset opens "s3://" with the aws CLI by default; through fsspec here, as a user
    # with only s3fs installed would.
    def gopen_fsspec(url, mode="rb", bufsize=8192, **kw):
        return fsspec.open(url, mode).open()

    gopen_module = importlib.import_module("webdataset.gopen")  # wds.gopen is the function
    monkeypatch.setitem(gopen_module.gopen_schemes, "s3", gopen_fsspec)


def test_beam_http_path_list_to_s3_equals_local_run(crawl, s3, local_run, wds_s3):
    _, keys, srv = crawl
    _, fs = s3
    out = f"s3://{BUCKET}/beam"
    doc = build(str(CONFIG), out, engine="beam", overrides=remote_overrides(srv))
    got = s3_shards(fs, out)
    _, expected = local_run
    assert got == expected  # tars and parquets, byte for byte
    assert not Path("s3:").exists() and not (REPO / "s3:").exists()  # never a local "./s3:"
    assert doc["inputs"] == [f"{srv.url}/{k}" for k in keys]
    # the WARCs were streamed with range requests, not fetched whole up front
    assert any(r for _, p, r in srv.hits if p.endswith(".warc.gz"))
    tars = sorted(n for n in got if n.endswith(".tar"))
    local_dir = local_run[0] / "shards"
    remote = wds_samples([f"{out}/shards/{n}" for n in tars])
    assert remote and remote == wds_samples([str(local_dir / n) for n in tars])
    # the run's other files are on S3 too, and only there
    for name in ("stats.json", "rejects.parquet", "_work/config.json"):
        assert fs.exists(f"{BUCKET}/beam/{name}")
    assert len(fs.glob(f"{BUCKET}/beam/_work/pages/*.done")) == 2  # one marker per wave
    # `lait report` and `lait stats` read the run where it is
    from tools.report import write_report

    assert write_report(out) == f"{out}/report.html"
    page = fs.cat_file(f"{BUCKET}/beam/report.html").decode()
    assert page.count("data:image/jpeg;base64,") >= 1 and out in page


# --- bad remote input ---------------------------------------------------------------------

def read_events(url: str, **kw) -> list:
    reader = WarcReader([url], **kw)
    return list(reader.events(url))


def reasons(events) -> list[str]:
    return [e.reason for e in events if not isinstance(e, Keep)]


def test_path_list_expands_with_prefix_slice_and_default_folder(crawl):
    root, keys, srv = crawl
    url = f"{srv.url}/{CRAWL}/warc.paths.gz"
    assert expand_path_list(url, f"{srv.url}/") == [f"{srv.url}/{k}" for k in keys]
    assert expand_path_list(url, "s3://commoncrawl/", every=2) == [
        f"s3://commoncrawl/{keys[0]}", f"s3://commoncrawl/{keys[2]}"]
    assert expand_path_list(url, "https://data.commoncrawl.org", first=1) == [
        f"https://data.commoncrawl.org/{keys[0]}"]
    # default prefix: the list's own folder
    assert expand_path_list(url)[0] == f"{srv.url}/{CRAWL}/{keys[0]}"


def test_a_path_list_given_as_a_warc_is_refused(crawl):
    _, _, srv = crawl
    for given in (f"{srv.url}/{CRAWL}/warc.paths.gz", "/data/warc.paths.gz"):
        with pytest.raises(ConfigError, match="list of WARC paths"):
            WarcReader([given]).parts()
    with pytest.raises(ConfigError, match="is a WARC, not a list"):
        expand_path_list(f"{srv.url}/{crawl[1][0]}")


def test_missing_and_forbidden_urls_fail_at_once_naming_the_url(crawl, s3, tmp_path):
    _, keys, srv = crawl
    missing = f"{srv.url}/{CRAWL}/nope.warc.gz"
    with pytest.raises(ConfigError, match=f"{missing}.*not found"):
        WarcReader([missing]).parts()
    with pytest.raises(ConfigError, match="nope/warc.paths.gz.*not found"):
        expand_path_list(f"{srv.url}/nope/warc.paths.gz")
    srv.faults[f"/{keys[0]}"] = "forbidden"
    try:
        with pytest.raises(ConfigError, match=f"{keys[0]}.*forbidden"):
            WarcReader([f"{srv.url}/{keys[0]}"]).parts()
    finally:
        srv.faults.clear()
    with pytest.raises(ConfigError, match="s3://no-such-bucket-x/run.*not writable"):
        build(str(CONFIG), "s3://no-such-bucket-x/run", engine="local",
              overrides=remote_overrides(srv))


def test_a_bucket_folder_stands_for_the_warcs_in_it_as_a_local_folder_does(s3):
    """`--input /data/crawl` reads the WARCs in that folder, but `--input s3://b/crawl/` (or
    without the slash) said "not found (The specified key does not exist.)" of a prefix full
    of WARCs.  A folder URL now stands for the WARC files directly inside it."""
    from pipeline.steps.inputs import expand_patterns

    _, fs = s3
    for name in ("b.warc.gz", "a.warc", "notes.txt", "sub/c.warc.gz"):
        fs.pipe(f"{BUCKET}/folder/{name}", b"x")
    fs.pipe(f"{BUCKET}/nowarc/notes.txt", b"x")
    want = [f"s3://{BUCKET}/folder/a.warc", f"s3://{BUCKET}/folder/b.warc.gz"]
    for given in (f"s3://{BUCKET}/folder", f"s3://{BUCKET}/folder/"):
        assert expand_patterns([given]) == want
    with pytest.raises(ConfigError, match=f"s3://{BUCKET}/nowarc/' matches no WARC file"):
        expand_patterns([f"s3://{BUCKET}/nowarc/"])
    with pytest.raises(ConfigError, match=f"s3://{BUCKET}/nothing-here.*not found"):
        expand_patterns([f"s3://{BUCKET}/nothing-here"])


def test_a_key_of_the_list_that_is_gone_is_counted_not_a_crash(crawl):
    _, keys, srv = crawl
    srv.faults[f"/{keys[1]}"] = "missing"
    try:
        events = read_events(f"{srv.url}/{keys[1]}", backoff_s=0.01)
    finally:
        srv.faults.clear()
    assert reasons(events) == ["read_not_found"]


def test_a_read_failing_midway_is_retried_then_counted(crawl):
    root, keys, srv = crawl
    url = f"{srv.url}/{keys[0]}"
    clean = read_events(url)
    kept = sum(isinstance(e, Keep) for e in clean)
    assert kept > 10
    path = f"/{keys[0]}"
    srv.faults[path], srv.flaky_left = "flaky", 2  # two cut responses, then good ones
    try:
        flaky = read_events(url, retries=3, backoff_s=0.01)
        assert [type(e) for e in flaky] == [type(e) for e in clean]  # nothing lost
        srv.faults[path] = "cut"  # every response cut short: retries run out
        cut = read_events(url, retries=2, backoff_s=0.01)
    finally:
        srv.faults.clear()
    assert reasons(cut)[-1:] == ["read_io_error"]
    assert sum(isinstance(e, Keep) for e in cut) < kept


def test_a_truncated_object_is_counted(crawl, tmp_path):
    root, keys, srv = crawl
    data = (root / keys[0]).read_bytes()
    (root / "short.warc.gz").write_bytes(data[: len(data) // 2])
    events = read_events(f"{srv.url}/short.warc.gz", backoff_s=0.01)
    assert any(isinstance(e, Keep) for e in events)
    assert set(reasons(events)) & {"read_truncated", "read_bad_record"}


def test_a_stalled_server_times_out_and_is_counted(crawl):
    _, keys, srv = crawl
    srv.faults[f"/{keys[2]}"], srv.slow_s = "slow", 20
    try:
        events = read_events(f"{srv.url}/{keys[2]}", timeout_s=0.5, retries=1, backoff_s=0.01)
    finally:
        srv.faults.clear()
    assert reasons(events) == ["read_io_error"]


def test_wrong_s3_credentials_give_a_clear_error_naming_the_url(crawl, s3, monkeypatch):
    from moto import settings

    _, _, srv = crawl
    _, fs = s3
    fs.pipe(f"{BUCKET}/in/x.warc.gz", (crawl[0] / crawl[1][0]).read_bytes())
    # moto checks signatures against its IAM only when asked: every request now needs a key
    # that its IAM knows, which "testing" is not.
    monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)
    storage.filesystem("s3://x")[0].clear_instance_cache()
    with pytest.raises(ConfigError, match=f"s3://{BUCKET}/in/x.warc.gz.*forbidden"):
        WarcReader([f"s3://{BUCKET}/in/x.warc.gz"]).parts()
    with pytest.raises(ConfigError, match=f"s3://{BUCKET}/denied.*not writable"):
        build(str(CONFIG), f"s3://{BUCKET}/denied", engine="local", overrides=remote_overrides(srv))
    events = read_events(f"s3://{BUCKET}/in/x.warc.gz", backoff_s=0.01)
    assert reasons(events) == ["read_forbidden"]


def test_a_bucket_that_refuses_deletes_is_named_as_such(s3, monkeypatch):
    """A key allowed to write but not to delete (no s3:DeleteObject: a common "append-only"
    policy) was told "not writable (Access Denied)" although the probe had been written, and
    left that probe in the bucket unnamed.  A build deletes (a replaced shard, a resumed
    wave's partial files): the message now says deleting is refused and names the probe."""
    import json

    import boto3
    from moto import settings

    endpoint, fs = s3
    iam = boto3.client("iam", endpoint_url=endpoint)
    iam.create_user(UserName="nodelete")
    iam.put_user_policy(UserName="nodelete", PolicyName="put-get-list", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Resource": "*", "Action": [
            "s3:GetObject", "s3:PutObject", "s3:ListBucket"]}]}))
    key = iam.create_access_key(UserName="nodelete")["AccessKey"]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["AccessKeyId"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["SecretAccessKey"])
    monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)
    storage.filesystem("s3://x")[0].clear_instance_cache()
    out = f"s3://{BUCKET}/appendonly"
    try:
        with pytest.raises(ConfigError) as err:
            check_output_dir(out)
    finally:
        storage.filesystem("s3://x")[0].clear_instance_cache()
    msg = str(err.value)
    assert "not writable" not in msg and "\n" not in msg
    assert f"{out}: writable, but deleting is refused" in msg
    assert f"{out}/.write-probe-{os.getpid()}" in msg  # what the user is left to delete


def test_a_worker_without_credentials_fails_the_job_instead_of_counting_every_file(
        crawl, s3, monkeypatch):
    """Spark executors started without the store's settings (no spark.executorEnv.AWS_*: the
    driver had them, so its checks passed) counted every WARC as read_io_error, after 15 s of
    retries each; the pages waves were committed with nothing read, and the same command run
    again with the settings skipped them: the corpus stayed empty.  Having no credentials at
    all is the worker's environment, never the file's: the read fails the job (StorageFailed,
    so no wave marker and exit 1 naming the URL), and the rerun reads the files."""
    from pipeline.core.errors import StorageFailed

    _, fs = s3
    url = f"s3://{BUCKET}/in/y.warc.gz"
    fs.pipe(url, (crawl[0] / crawl[1][0]).read_bytes())
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    storage.filesystem(url)[0].clear_instance_cache()
    try:
        with pytest.raises(StorageFailed, match=f"{url}: no credentials.*executorEnv"):
            read_events(url, retries=2, backoff_s=0.01)
    finally:
        storage.filesystem(url)[0].clear_instance_cache()


def test_spark_standalone_cluster_http_to_s3_killed_and_resumed_equals_local_run(
        crawl, s3, local_run, cluster, tmp_path):
    """spark-submit to a standalone master + worker (tests/pipeline/test_spark_cluster.py's
    cluster): executors that share no disk with the driver read the WARCs over HTTP and write
    to S3 (the store's settings reach them as spark.executorEnv); the driver is killed once a
    wave is committed, and the same spark-submit resumes it."""
    from tests.pipeline.test_spark_cluster import SPARK_HOME

    master_url, env, tmp = cluster
    _, _, srv = crawl
    endpoint, fs = s3
    cfg = yaml.safe_load(CONFIG.read_text())
    cfg["input"] = {"paths": f"{srv.url}/{CRAWL}/warc.paths.gz", "prefix": f"{srv.url}/"}
    cfg["run"] = {"wave_size": 4}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = f"s3://{BUCKET}/cluster"
    aws = s3_env(endpoint)
    cmd = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", master_url,
           "--conf", f"spark.executorEnv.PYTHONPATH={REPO}",
           *[a for k, v in aws.items() for a in ("--conf", f"spark.executorEnv.{k}={v}")],
           "--conf", "spark.executor.memory=1g", "--conf", "spark.ui.enabled=false",
           "--conf", "spark.driver.host=127.0.0.1",
           str(REPO / "tools" / "cli.py"), "build", "--config", str(path), "--out", out,
           "--engine", "spark"]
    run_env = {**env, **aws, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, env=run_env, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 400
    while proc.poll() is None and time.monotonic() < deadline:
        fs.invalidate_cache()
        if fs.glob(f"{BUCKET}/cluster/_work/*/*.done"):
            break
        time.sleep(0.2)
    killed = proc.poll() is None
    if killed:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert killed, proc.stderr.read().decode()[-3000:]
    again = subprocess.run(cmd, env=run_env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=500)
    assert again.returncode == 0, again.stderr[-4000:]
    assert list((tmp / "work").glob("app-*/*/stderr")), "no executor ran on the worker"
    assert s3_shards(fs, out) == local_run[1]
