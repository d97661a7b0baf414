"""What the side-by-side benches share: argument checks, one pinned core, and a run of the same
script in a detached worktree of another git revision (its result, one JSON line)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def check_ref(ap, ref: str) -> None:
    """``ap.error`` (a one-line error, exit 2) unless ``ref`` names a commit of this repository."""
    if ref and subprocess.run(["git", "-C", HERE, "rev-parse", "--verify", "-q",
                               ref + "^{commit}"], capture_output=True).returncode != 0:
        ap.error(f"--against: {ref!r} is no commit of this repository")


def positive_ints(ap, name: str, value: str) -> list[int]:
    """A comma-separated list of integers > 0, or ``ap.error``."""
    try:
        out = [int(x) for x in value.split(",")]
    except ValueError:
        ap.error(f"{name}: comma-separated integers")
    if not out or min(out) <= 0:
        ap.error(f"{name} must be > 0")
    return out


def one_core() -> None:
    """Pin this process to one core: the figures are per core, and the machines are shared."""
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    except (AttributeError, OSError):
        pass


def run_at(ref: str, script: str, argv: list[str], link_ignored: bool = False) -> dict:
    """``script`` run with ``argv + ["--_child", TREE]`` inside a detached worktree TREE of
    ``ref``; its last stdout line parsed as JSON.  ``link_ignored``: the compiled fastText
    predictor and the ONNX models (ignored files, not in git) are linked in from this tree."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "-C", HERE, "worktree", "add", "--detach", "-q", tmp, ref],
                       check=True)
        try:
            if link_ignored:
                _link_ignored(tmp)
            proc = subprocess.run([sys.executable, os.path.abspath(script), *argv,
                                   "--_child", tmp],
                                  cwd=tmp, capture_output=True, text=True, check=True)
            return json.loads(proc.stdout.strip().splitlines()[-1])
        finally:
            subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", tmp])


def _link_ignored(tree: str) -> None:
    for name in os.listdir(os.path.join(HERE, "filters")):
        dst = os.path.join(tree, "filters", name)
        if name == "models":
            for m in os.listdir(os.path.join(HERE, "filters", name)):
                if not os.path.exists(os.path.join(dst, m)):
                    os.symlink(os.path.join(HERE, "filters", name, m), os.path.join(dst, m))
        elif name.startswith("_fastlid") and not os.path.exists(dst):
            os.symlink(os.path.join(HERE, "filters", name), dst)
