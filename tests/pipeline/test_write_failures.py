"""Issue 17 item 1: the disk fills up while shards are written.

The run must fail (exit 1, one line naming the shard and the cause), leave no half-written shard
visible, and leave the corpus job unfinished, so that the same command, once there is space
again, completes the corpus with the same bytes as a run that never failed.  The disk filling
up is injected where the bytes are written (the file object of one shard's tar refuses bytes
past a budget with ENOSPC, as a full disk does), so the real clean-up paths run."""
from __future__ import annotations

import builtins
import errno
import json
from pathlib import Path

import pytest

from pipeline.core import storage
from tests.conftest import REPO
from tools.cli import main as lait

CONFIG = str(REPO / "configs" / "demo.yaml")


class _FullDisk:
    """A writable file that accepts ``budget`` bytes, then fails like a full disk."""

    def __init__(self, f, budget: int):
        self._f, self._left = f, budget

    def write(self, data) -> int:
        if len(data) > self._left:
            self._f.write(bytes(data[: self._left]))
            self._left = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self._left -= len(data)
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def files(out: Path) -> dict:
    d = out / "shards"
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())} if d.is_dir() else {}


def build_args(out: Path, sample_web: Path) -> list[str]:
    return ["build", "--config", CONFIG, "--out", str(out), "--engine", "local",
            "--set", f"input.warc=[{sample_web / 'pages.warc.gz'}]"]


@pytest.fixture(scope="module")
def reference(sample_web, tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "out"
    assert lait(build_args(out, sample_web)) == 0
    return out


def test_disk_full_while_writing_a_shard_fails_the_run_and_a_rerun_completes_it(
        sample_web, reference, tmp_path, monkeypatch, capsys):
    expected = files(reference)
    victim = "00002.tar"
    assert victim in expected
    out = tmp_path / "out"
    real_open = builtins.open

    def full_disk_open(path, mode="r", *a, **kw):
        f = real_open(path, mode, *a, **kw)
        if "w" in mode and Path(str(path)).name.startswith(victim + ".tmp-"):
            return _FullDisk(f, budget=len(expected[victim]) // 2)
        return f

    monkeypatch.setattr(storage, "open", full_disk_open, raising=False)  # storage's own writes
    assert lait(build_args(out, sample_web)) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lait:")]
    assert len(err) == 1 and "corpus job failed" in err[0], err  # one line (and progress bars)
    assert "No space left on device" in err[0] and victim[:5] in err[0]
    assert "run the same command again" in err[0]
    left = files(out)
    assert victim not in left and "00002.parquet" not in left  # no half shard
    assert not [n for n in left if ".tmp" in n]
    for name, data in left.items():  # whatever is visible is complete
        assert data == expected[name]
    assert not (out / "stats.json").exists()  # the run did not finish
    assert not list((out / "_work" / "corpus").glob("*.done"))  # nor did the corpus job
    assert len(list((out / "_work" / "images").glob("*.done"))) > 0  # earlier jobs are kept

    monkeypatch.undo()  # space again
    assert lait(build_args(out, sample_web)) == 0
    assert files(out) == expected
    doc = json.loads((out / "stats.json").read_text())
    assert doc["resume"]["pages"]["waves_run"] == 0 and doc["resume"]["images"]["waves_run"] == 0
    assert doc["resume"]["corpus"]["waves_run"] == 1
    assert not any(r.startswith("write_error") for s in doc["steps"] for r in s["dropped"])


def test_a_work_file_that_cannot_be_written_fails_the_run(sample_web, tmp_path, monkeypatch,
                                                          capsys):
    """The same for the pages job's work files: no wave marker, exit 1, nothing counted."""
    real_open = builtins.open

    def full_disk_open(path, mode="r", *a, **kw):
        f = real_open(path, mode, *a, **kw)
        if "w" in mode and ".pkl.tmp-" in str(path):
            return _FullDisk(f, budget=10)
        return f

    monkeypatch.setattr(storage, "open", full_disk_open, raising=False)
    out = tmp_path / "out"
    assert lait(build_args(out, sample_web)) == 1
    err = capsys.readouterr().err
    assert "pages job failed" in err and "could not write work file" in err
    assert not list((out / "_work" / "pages").glob("*.done"))


def test_on_beam_a_failed_write_is_one_line_without_beam_s_traceback(sample_web, tmp_path):
    """Beam logs an exception raised in a DoFn (``_LOGGER.exception``) before the pipeline
    fails, so a failed write on the default engine printed some 150 lines of traceback
    (aiohttp, botocore, Beam's runner) above lait's one line; seen with the S3 server stopped
    mid-run.  A subprocess, so that stderr is what a user sees."""
    import subprocess
    import sys

    code = (
        "import builtins, errno, sys\n"
        "from pipeline.core import storage\n"
        "def full(path, mode='r', *a, **kw):\n"
        "    if 'w' in mode and '.pkl.tmp-' in str(path):\n"
        "        raise OSError(errno.ENOSPC, 'No space left on device')\n"
        "    return builtins.open(path, mode, *a, **kw)\n"
        "storage.open = full\n"
        "from tools.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n")
    args = build_args(tmp_path / "out", sample_web)
    args[args.index("--engine") + 1] = "beam"
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         cwd=REPO, timeout=300)
    assert res.returncode == 1
    lines = [ln for ln in res.stderr.replace("\r", "\n").splitlines()
             if ln.strip() and not ln.startswith("build: ")]  # progress bars
    assert len(lines) == 1, res.stderr[-3000:]
    assert lines[0].startswith("lait: build: the pages job failed (WriteFailed: could not write work file")
    assert "No space left on device" in lines[0]
