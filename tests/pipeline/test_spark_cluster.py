"""A real Spark standalone cluster on 127.0.0.1: master + one worker started from the pyspark
install, the job submitted with ``spark-submit --master spark://...``, output compared with
Spark local mode, cluster stopped.  The master and worker start with no PYTHONPATH: the
executors find the project only through ``spark.executorEnv.PYTHONPATH`` given at submit time
(the checkout must be at that path on every node: a shared or synced directory).

Slow (JVM start-ups: about a minute on 2 cores), and CI runs it.
"""
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark
import pytest
import yaml

from pipeline.build import build
from pipeline.core.stats import read_stats
from tests.faultweb import FaultWeb
from tests.pipeline.test_fault_web import fault_config

REPO = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # see the module docstring
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_LOG_DIR=str(tmp / "logs"), SPARK_WORKER_DIR=str(tmp / "work"),
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    return env


def wait_for(pred, what: str, timeout: float = 120.0, procs=()):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{what}: process exited with {p.returncode}")
        time.sleep(0.5)
    raise TimeoutError(what)


def stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextlib.contextmanager
def standalone_cluster(tmp: Path, env: dict):
    """A master and one worker (2 cores) on 127.0.0.1 started with ``env``; yields the
    master's URL and stops both on exit."""
    port = free_port()
    master_url = f"spark://127.0.0.1:{port}"
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    procs = []
    try:
        mlog, wlog = tmp / "master.log", tmp / "worker.log"
        procs.append(subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(free_port())],
            stdout=open(mlog, "wb"), stderr=subprocess.STDOUT, env=env, start_new_session=True))
        wait_for(lambda: "I have been elected leader" in mlog.read_text(errors="replace"),
                 "master start", procs=procs)
        procs.append(subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
             "--cores", "2", "--memory", "1g", "--webui-port", str(free_port()),
             "--work-dir", str(tmp / "work"), master_url],
            stdout=open(wlog, "wb"), stderr=subprocess.STDOUT, env=env, start_new_session=True))
        wait_for(lambda: "Successfully registered with master" in wlog.read_text(errors="replace"),
                 "worker registration", procs=procs)
        yield master_url
    finally:
        for p in reversed(procs):
            stop(p)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("spark-cluster")
    env = cluster_env(tmp)
    with standalone_cluster(tmp, env) as master_url:
        yield master_url, env, tmp


@pytest.fixture(scope="module")
def web():
    w = FaultWeb().site().start()
    yield w
    w.stop()


def files(out: Path) -> dict:
    return {f"{sub}/{p.name}": p.read_bytes()
            for sub in ("shards", "parquet") for p in sorted((out / sub).iterdir())}


def test_spark_submit_to_standalone_cluster_equals_local_mode(cluster, web, spark, tmp_path):
    master_url, env, tmp = cluster
    cfg = tmp_path / "job.yaml"
    cfg.write_text(yaml.safe_dump(fault_config(web)))

    out_cluster = tmp_path / "cluster"
    cmd = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", master_url,
           "--conf", f"spark.executorEnv.PYTHONPATH={REPO}",
           "--conf", "spark.executor.memory=512m", "--conf", "spark.ui.enabled=false",
           "--conf", "spark.driver.host=127.0.0.1",
           str(REPO / "tools" / "cli.py"), "build", "--config", str(cfg),
           "--out", str(out_cluster), "--engine", "spark"]
    res = subprocess.run(cmd, env={**env, "PYTHONPATH": str(REPO)}, cwd=str(tmp_path), capture_output=True, text=True,
                         timeout=400)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    # The job really ran on the cluster: the worker launched an executor for the app.
    assert list((tmp / "work").glob("app-*/*/stderr")), "no executor ran on the worker"

    out_local = tmp_path / "local"
    build(str(cfg), str(out_local), engine="spark", spark=spark)  # Spark local mode

    cluster_stats, local_stats = read_stats(str(out_cluster / "stats.json")), read_stats(str(out_local / "stats.json"))
    assert cluster_stats["steps"] == local_stats["steps"]
    assert cluster_stats["steps"][-1]["in"] == 9  # the fault web's nine good images
    assert files(out_cluster) == files(out_local)
    assert (out_cluster / "rejects.parquet").read_bytes() == (out_local / "rejects.parquet").read_bytes()
