"""Kill `lait build` with SIGKILL at several moments, start the same command again, and end
with output byte-identical to an uninterrupted run; no partial tar is ever visible."""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

# When each attempt is killed: ("time", seconds as a fraction of an uninterrupted run),
# ("marker", delay): that long after the attempt's first new wave marker (right after a
# wave finished, or midway through the next), ("shards", 0): as soon as the corpus job has
# started writing shards.
KILL_AT = (("time", 0.3), ("marker", 0.0), ("marker", 0.3), ("shards", 0.0))


def command(cfg: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "tools.cli", "build", "--config", str(cfg), "--out", str(out),
            "--engine", "local"]


def shard_files(out: Path) -> dict:
    """OUT/shards/ and OUT/parquet/, by relative path."""
    return {f"{sub}/{p.name}": p.read_bytes() for sub in ("shards", "parquet")
            if (out / sub).is_dir() for p in sorted((out / sub).iterdir())}


@pytest.fixture(scope="module")
def reference(sample_web, tmp_path_factory):
    """The demo config on the sample web, in small waves (many moments to die between),
    built once without interruption: (config path, output dir, seconds it took)."""
    tmp = tmp_path_factory.mktemp("resume")
    cfg = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    cfg["input"]["warc"] = [str(sample_web / "pages.warc.gz")]
    cfg["run"] = {"wave_size": 2}
    path = tmp / "job.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = tmp / "reference"
    t0 = time.monotonic()
    subprocess.run(command(path, out), cwd=REPO, check=True, capture_output=True)
    return path, out, time.monotonic() - t0


class TarWatcher(threading.Thread):
    """Reads every ``*.tar`` under ``OUT/shards`` as often as it can while the runs go on;
    any tar that is not byte for byte a finished shard of the reference is a violation."""

    def __init__(self, out: Path, expected: dict):
        super().__init__(daemon=True)
        self.out, self.expected = out / "shards", expected
        self.seen, self.violations = 0, []
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            try:
                names = [n for n in os.listdir(self.out) if n.endswith(".tar")]
            except FileNotFoundError:
                names = []
            for name in names:
                try:
                    data = (self.out / name).read_bytes()
                except FileNotFoundError:
                    continue
                self.seen += 1
                if data != self.expected.get(name):
                    self.violations.append((name, len(data)))
            time.sleep(0.005)


def test_sigkill_at_any_moment_then_same_command_gives_identical_output(reference, tmp_path):
    cfg, ref_out, ref_s = reference
    expected = {n.split("/", 1)[1]: b for n, b in shard_files(ref_out).items()
                if n.startswith("shards/") and n.endswith(".tar")}
    assert expected
    out = tmp_path / "killed"
    watcher = TarWatcher(out, expected)
    watcher.start()
    kills = 0
    try:
        for when, arg in KILL_AT:
            markers = len(list(out.glob("_work/*/*.done")))
            proc = subprocess.Popen(command(cfg, out), cwd=REPO, start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + (arg * ref_s if when == "time" else 2 * ref_s)
            while proc.poll() is None and time.monotonic() < deadline:
                if when == "marker" and len(list(out.glob("_work/*/*.done"))) > markers:
                    time.sleep(arg)
                    break
                if when == "shards" and (out / "shards").is_dir():
                    break
                time.sleep(0.01)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                kills += 1
            proc.wait()
        final = subprocess.run(command(cfg, out), cwd=REPO, capture_output=True, text=True)
    finally:
        watcher.stopping.set()
        watcher.join()
    assert final.returncode == 0, final.stderr[-3000:]
    assert kills >= 3  # the runs above really died midway
    assert watcher.violations == []  # never a partial (or different) tar in sight
    assert shard_files(out) == shard_files(ref_out)  # tars and parquets, byte for byte
    import json

    got, ref = (json.loads((d / "stats.json").read_text()) for d in (out, ref_out))
    assert got["steps"] == ref["steps"]
    assert (out / "rejects.parquet").read_bytes() == (ref_out / "rejects.parquet").read_bytes()


@pytest.mark.parametrize("lost", ["tar", "whole shard"])
def test_rerun_of_a_finished_run_rewrites_a_deleted_shard(reference, tmp_path, lost):
    """A finished run whose shard was deleted (by hand, or a sync that lost it): the same
    command must not print the funnel and exit 0 over a corpus missing samples; it rewrites
    the corpus, byte-identical to the finished run."""
    import shutil

    cfg, ref_out, _ = reference
    out = tmp_path / "run"
    shutil.copytree(ref_out, out)
    name = sorted(p.stem for p in (out / "shards").glob("*.tar"))[-1]
    gone = [out / "shards" / f"{name}.tar"]
    if lost == "whole shard":
        gone += [out / "shards" / f"{name}_stats.json", out / "parquet" / f"{name}.parquet"]
    for path in gone:
        path.unlink()
    rerun = subprocess.run(command(cfg, out), cwd=REPO, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    # says what it found missing, and that it rewrites
    assert f"{name}.tar" in rerun.stderr if lost == "tar" else (
        "shards with no files: " in rerun.stderr and name in rerun.stderr)
    assert shard_files(out) == shard_files(ref_out)
    import json

    got, ref = (json.loads((d / "stats.json").read_text()) for d in (out, ref_out))
    assert got["steps"] == ref["steps"]
