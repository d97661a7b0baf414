"""Ctrl-C during a build: one line saying the run was interrupted and how to resume, exit
130 (as a shell reports SIGINT), on every engine.  On Beam it printed Beam's traceback of the
DoFn (some 25 lines) and then "the images job failed (RuntimeError: KeyboardInterrupt
[while running 'LAIT/Step fetch'])", exit 1, as if the run had met an error; on the local
engine, Python's traceback.  The interrupt is raised where a real SIGINT lands, inside a
step (here the pages job's work-file write), in a subprocess so that stderr is what a user
sees."""
import subprocess
import sys

import pytest

from tests.conftest import REPO

CONFIG = str(REPO / "configs" / "demo.yaml")
CODE = (
    "import builtins, sys\n"
    "from pipeline.core import storage\n"
    "def ctrl_c(path, mode='r', *a, **kw):\n"
    "    if 'w' in mode and '.pkl.tmp-' in str(path):\n"
    "        raise KeyboardInterrupt\n"
    "    return builtins.open(path, mode, *a, **kw)\n"
    "storage.open = ctrl_c\n"
    "from tools.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n")


@pytest.mark.parametrize("engine", ["beam", "local"])
def test_ctrl_c_is_one_line_and_exit_130(sample_web, tmp_path, engine):
    out = tmp_path / "out"
    args = ["build", "--config", CONFIG, "--out", str(out), "--engine", engine,
            "--set", f"input.warc=[{sample_web / 'pages.warc.gz'}]"]
    res = subprocess.run([sys.executable, "-c", CODE, *args], capture_output=True, text=True,
                         cwd=REPO, timeout=300)
    lines = [ln for ln in res.stderr.replace("\r", "\n").splitlines()
             if ln.strip() and not ln.startswith("build: ")]  # progress bars
    assert res.returncode == 130, res.stderr[-3000:]
    assert len(lines) == 1, res.stderr[-3000:]
    assert lines[0].startswith("lait: build: interrupted")
    assert "run the same command again to resume" in lines[0]
    assert not list((out / "_work" / "pages").glob("*.done"))
