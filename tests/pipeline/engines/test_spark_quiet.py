"""Spark is quiet by default (issue 18.6): a local session prints no banner and no warning the
user cannot act on; under spark-submit no INFO line once the session is up (the per-job and
shutdown lines); with Python logging at INFO (`lait -v`) Spark logs as it would."""
import os
import subprocess
import sys
import time

import pyspark

from tests.conftest import REPO

SCRIPT = """
import logging, sys
if {verbose}:
    logging.basicConfig(level=logging.INFO)
from pipeline.engines.spark import session
s = session({master})
# through the JVM's stderr, in order with Spark's log lines (spark-submit sends the Python
# program's own stderr to its stdout)
s.sparkContext._jvm.java.lang.System.err.println("SESSION_READY")
print("COUNT", s.sparkContext.parallelize(range(10), 2).count())
s.stop()
"""
# Printed by the JVM itself for the vector module Spark adds; no logging setting reaches it.
JVM_NOTICE = "WARNING: Using incubator modules"


def run(cmd, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO), SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0 and "COUNT 10" in r.stdout, r.stderr[-3000:]
    return [line for line in r.stderr.splitlines() if line.strip() and not line.startswith(JVM_NOTICE)]


def script(tmp_path, verbose=False, master="'local[1]'"):
    path = tmp_path / f"s{verbose}.py"
    path.write_text(SCRIPT.format(verbose=verbose, master=master))
    return str(path)


def test_local_session_prints_nothing_but_its_own_lines(tmp_path):
    assert run([sys.executable, script(tmp_path)], tmp_path) == ["SESSION_READY"]


def test_verbose_keeps_sparks_logging(tmp_path):
    lines = run([sys.executable, script(tmp_path, verbose=True)], tmp_path)
    assert any("log4j profile" in line or " WARN " in line or " INFO " in line for line in lines)


def test_no_info_lines_under_spark_submit_once_the_session_is_up(tmp_path):
    submit = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    lines = run([submit, "--master", "local[1]", script(tmp_path, master="None")], tmp_path)
    after = lines[lines.index("SESSION_READY") + 1:]
    assert not [line for line in after if " INFO " in line], after[:10]


# Every Python of the run, Spark's workers included, fails to write work files as a full disk
# does: a sitecustomize on their PYTHONPATH (a monkeypatch would reach the driver only).
FULL_DISK = """
import builtins, errno
from pipeline.core import storage
def full(path, mode="r", *a, **kw):
    if "w" in mode and ".pkl.tmp-" in str(path):
        raise OSError(errno.ENOSPC, "No space left on device")
    return builtins.open(path, mode, *a, **kw)
storage.open = full
"""


def test_a_failed_task_is_lait_s_one_line_not_spark_s_tracebacks(sample_web, tmp_path):
    """A write that fails on Spark (disk full, the S3 server stopped mid-run) printed the
    executor's and the task manager's copies of the worker's Python and Java traces (120
    lines locally, 900 on a standalone cluster, some after lait's own line) around the one
    line that names the file and the cause.  -v keeps Spark's logging."""
    (tmp_path / "inject").mkdir()
    (tmp_path / "inject" / "sitecustomize.py").write_text(FULL_DISK)
    env = dict(os.environ, PYTHONPATH=f"{tmp_path / 'inject'}{os.pathsep}{REPO}",
               SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "tools.cli", "build", "--config", str(REPO / "configs" / "demo.yaml"),
           "--set", f"input.warc=[{sample_web / 'pages.warc.gz'}]", "--out", str(tmp_path / "out"),
           "--engine", "spark", "--", "--master", "local[1]"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 1, r.stderr[-3000:]
    lines = [ln for ln in r.stderr.replace("\r", "\n").splitlines()
             if ln.strip() and not ln.startswith((JVM_NOTICE, "build: "))]  # and progress bars
    assert "Traceback" not in r.stderr and not [ln for ln in lines if ln.startswith("\tat ")], lines[:20]
    assert lines[-1].startswith("lait: build: the pages job failed (WriteFailed: could not write work file")
    assert "No space left on device" in lines[-1]
    # what is left of Spark's logging: its one-line notice that the job was aborted
    assert len(lines) <= 2, lines


# Spark's workers start writing their first work file, say so, and hold their task there until
# the run is interrupted (the driver never writes work files on Spark).
HOLD = """
import builtins, os, time
from pipeline.core import storage
def hold(path, mode="r", *a, **kw):
    if "w" in mode and ".pkl.tmp-" in str(path):
        open(os.environ["LAIT_TEST_STARTED"], "w").close()
        time.sleep(120)
    return builtins.open(path, mode, *a, **kw)
storage.open = hold
"""


def test_ctrl_c_is_lait_s_one_line_not_the_jvm_s_traces(sample_web, tmp_path):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) while Spark's tasks run:
    lait printed its one line and exited 130, and then the JVM, which outlives the driver for a
    moment, printed "ERROR DAGScheduler: Failed to update accumulator" with some 40 lines of
    Java traces for each task that finished after the driver had gone (on the user's prompt).
    The session lait started is now stopped before it leaves."""
    import signal
    (tmp_path / "inject").mkdir()
    (tmp_path / "inject" / "sitecustomize.py").write_text(HOLD)
    started = tmp_path / "started"
    env = dict(os.environ, PYTHONPATH=f"{tmp_path / 'inject'}{os.pathsep}{REPO}",
               SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, OMP_NUM_THREADS="1",
               LAIT_TEST_STARTED=str(started))
    cmd = [sys.executable, "-m", "tools.cli", "build", "--config", str(REPO / "configs" / "demo.yaml"),
           "--set", f"input.warc=[{sample_web / 'pages.warc.gz'}]", "--out", str(tmp_path / "out"),
           "--engine", "spark", "--", "--master", "local[1]"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env=env, start_new_session=True)
    try:
        for _ in range(2400):  # a task is running once its worker writes (at most 240 s)
            if started.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert started.exists(), proc.stderr.read()[-3000:] if proc.poll() is not None else "no task"
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=300)  # until every holder of the pipe (the JVM) is gone
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    lines = [ln for ln in err.replace("\r", "\n").splitlines()
             if ln.strip() and not ln.startswith((JVM_NOTICE, "build: "))]  # and progress bars
    assert proc.returncode == 130, err[-3000:]
    assert lines == [lines[-1]] and lines[-1].startswith("lait: build: interrupted"), lines[:20]
