"""Spark is quiet by default (issue 18.6): a local session prints no banner and no warning the
user cannot act on; under spark-submit no INFO line once the session is up (the per-job and
shutdown lines); with Python logging at INFO (`lait -v`) Spark logs as it would."""
import os
import subprocess
import sys

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
