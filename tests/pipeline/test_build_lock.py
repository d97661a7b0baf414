"""Two builds into one local --out: the second fails at once, naming the first's pid, before
it touches the work files (before, both ran and wrote the same waves side by side; nothing
guaranteed what the folder held after).  The lock is an flock, so a killed build leaves
nothing that blocks the rerun (tests/pipeline/test_interrupt.py reruns after Ctrl-C)."""
import os
import subprocess
import sys

from pipeline.core.locks import folder_lock
from pipeline.waves import WORK
from tests.conftest import REPO

CONFIG = str(REPO / "configs" / "demo.yaml")


def test_a_second_build_into_the_same_out_fails_at_once(sample_web, tmp_path):
    out = tmp_path / "out"
    with folder_lock(str(out), "held by the test", ".lock"):  # the first build, as build() holds it
        res = subprocess.run([sys.executable, "-m", "tools.cli", "build", "--config", CONFIG,
                              "--out", str(out), "--engine", "local",
                              "--set", f"input.warc=[{sample_web / 'pages.warc.gz'}]"],
                             capture_output=True, text=True, cwd=REPO, timeout=300)
    assert res.returncode == 2, res.stderr[-2000:]
    assert f"being built by another process (pid {os.getpid()})" in res.stderr
    assert "Traceback" not in res.stderr
    assert not (out / WORK).exists()  # refused before any work file


def test_the_lock_is_released_when_its_holder_ends(tmp_path):
    with folder_lock(str(tmp_path), "busy {pid}", ".lock"):
        pass
    with folder_lock(str(tmp_path), "busy {pid}", ".lock"):  # taken again: nothing stale
        assert (tmp_path / ".lock").read_text().strip() == str(os.getpid())
