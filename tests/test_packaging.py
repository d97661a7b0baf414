"""The installable worker (#16): a wheel built by ``python -m build`` installs into a fresh
venv and runs ``lait build`` there, from a folder outside the checkout, with the checkout on
no path.

The fresh venv (no system site-packages) gets the dependencies offline: a ``.pth`` file
names this environment's site-packages, which ``make setup`` filled from requirements.txt
and constraints.txt (what ``pip install WHEEL -c constraints.txt`` puts in a worker's venv;
downloading torch and the rest again would take minutes).  Only directory lines of a ``.pth``
are followed, so this environment's editable install of the checkout (an import hook started
by its own ``.pth``) stays off, and the ``lait-builder`` the venv imports is the wheel's:
each test checks where ``pipeline`` and ``filters`` came from.  The wheel itself is built
with ``--no-isolation`` (this environment's pinned setuptools and Cython: no download).
The same venv, packed into a tar.gz, is then shipped to a Spark standalone cluster with
``--archives`` (docs/fetching.md's Spark recipe).  Slow (a wheel build, a Beam run, JVM
start-ups: 6.7 minutes measured on the shared 2-core machine under load), and CI runs it.
"""
from __future__ import annotations

import ast
import email.parser
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

PACKAGES = ("pipeline", "filters", "scoring", "model", "tools")
BUILD_INPUTS = ["setup.py", "pyproject.toml", "MANIFEST.in", "requirements.txt",
                "constraints.txt", "README.md", *PACKAGES]
# Run from a checkout to rebuild the shipped models (they need requirements.txt's development
# lines, e.g. onnx), never by a worker: their imports need not be declared.
MODEL_BUILDERS = {"tools/build_image_models.py", "tools/train_naturalness.py",
                  "tools/naturalness_head.py"}
# What a worker loads: the generated image models, the committed naturalness heads, the
# relevance scorer and its label vectors, the word lists.
SHIPPED = ["filters/models/efficientnet_lite0_int8.onnx", "filters/models/open_nsfw_int8.onnx",
           "filters/models/naturalness_head.onnx", "filters/models/naturalness_head.json",
           "filters/models/naturalness_second_head.onnx",
           "scoring/models/scorer.json", "scoring/models/label_vectors.npz",
           "scoring/data/imagenet_label_text.json", "filters/wordlists/adult_en.txt",
           "filters/imagenet_classes.txt"]
# The job: the demo's settings on a cut of the sample web (its images served on 127.0.0.1).
CONFIG = {"text": {"min_words": 3},
          "fetch": {"timeout_s": 5, "allow_networks": ["127.0.0.1/32"]},
          "image": {"min_width": 300, "min_height": 300, "resize_longest": 512},
          "output": {"num_shards": 2}}
RECORDS = 40  # the sample web's first WARC records: a handful of pages, a few dozen images


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of what the build reads (the built models included, the compiled
    extension left out so it is compiled afresh): the build leaves no build/ or egg-info in
    the checkout, and no stale build/lib file or other untracked folder gets shipped."""
    src = tmp_path_factory.mktemp("src") / "lait"
    src.mkdir()
    for name in BUILD_INPUTS:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.so", "_fastlid.c"))
        else:
            shutil.copy2(REPO / name, src / name)
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                        "--outdir", str(out), str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (whl,) = out.glob("lait_builder-*.whl")
    return whl


def _clean_env(venv: Path) -> dict:
    """No trace of the checkout or of this environment: conftest puts the checkout on
    PYTHONPATH and points PYSPARK_PYTHON at this interpreter."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV",
                        "PYTHONHOME", "PYTHONSTARTUP")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.fixture(scope="module")
def worker(wheel, tmp_path_factory):
    """A fresh venv with the wheel installed; returns (venv, its python, a clean env)."""
    venv = tmp_path_factory.mktemp("worker") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    deps = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}
    Path(site, "_lait_test_deps.pth").write_text("".join(f"{d}\n" for d in sorted(deps)))
    # --force-reinstall: through the .pth, pip also sees this environment's editable
    # lait-builder of the same version and would otherwise call the wheel "already satisfied"
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                        "--no-deps", "--no-index", "--force-reinstall", str(wheel)],
                       capture_output=True, text=True, env=_clean_env(venv))
    assert r.returncode == 0, r.stderr[-3000:]
    return venv, python, _clean_env(venv)


def _run(worker, argv, cwd, **kw):
    _, _, env = worker
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, **kw)


def test_wheel_carries_models_and_extension(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [p for p in SHIPPED if p not in names]
    assert not missing, f"not in the wheel: {missing}"
    from filters import language
    if language._fastlid is not None or os.environ.get("LAIT_REQUIRE_COMPILED"):
        # built in the checkout, so the compiler is there: the wheel has it too
        assert any(re.fullmatch(r"filters/_fastlid\..*\.so", n) for n in names)


def test_metadata_declares_every_imported_distribution(wheel):
    """Requires-Dist is not empty and names the distribution of every third-party module the
    packaged code imports (at module level or inside a function)."""
    with zipfile.ZipFile(wheel) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(z.read(meta_name).decode())
    declared = {_norm(re.match(r"[A-Za-z0-9_.\-]+", r).group()) for r in meta.get_all("Requires-Dist", [])}
    assert len(declared) > 10
    dists = importlib.metadata.packages_distributions()
    undeclared = {}
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in MODEL_BUILDERS:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    mods = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    mods = [node.module]
                else:
                    continue
                for top in {m.split(".")[0] for m in mods}:
                    if top in sys.stdlib_module_names or top in PACKAGES or top == "__future__":
                        continue
                    # a module two distributions provide (fasttext) needs one of them declared
                    if not {_norm(d) for d in dists.get(top, [top])} & declared:
                        undeclared.setdefault(top, rel)
    assert not undeclared, f"imported but not in the package metadata (module: first file): {undeclared}"


def test_installed_package_is_the_wheel(worker, tmp_path):
    venv, python, _ = worker
    probe = textwrap.dedent(f"""
        import json, os, sys
        import filters.language, pipeline, scoring
        # the checkout itself or a folder in it; the venv's .pth names this environment's
        # site-packages, which lies inside the checkout when make setup made .venv there
        checkout = os.path.realpath({str(REPO)!r})
        from pipeline.waves import code_digest, models_digest
        print(json.dumps({{"files": [pipeline.__file__, filters.language.__file__, scoring.__file__],
                           "fastlid": getattr(filters.language._fastlid, "__file__", None),
                           "checkout_on_path": [p for p in map(os.path.realpath, filter(None, sys.path))
                                                if (p + "/").startswith(checkout + "/")
                                                and not (p + "/").startswith(checkout + "/.venv/")],
                           "digest": models_digest(), "code": code_digest()}}))
    """)
    r = _run(worker, [str(python), "-c", probe], cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout)
    inside = str(venv.resolve())
    assert all(f.startswith(inside) for f in got["files"]), got["files"]
    assert not got["checkout_on_path"], got["checkout_on_path"]
    from filters import language
    if language._fastlid is not None:
        assert got["fastlid"] and got["fastlid"].startswith(inside)
    # same model files as the checkout: a run started from a checkout resumes on wheel workers
    # and the same decision code: no "other lait code" warning on that resume either
    from pipeline.waves import code_digest, models_digest
    assert got["digest"] == models_digest()
    assert got["code"] == code_digest()

    show = _run(worker, [sys.executable, "-m", "pip", "--python", str(python), "show",
                         "lait-builder"], cwd=tmp_path)
    fields = dict(line.split(": ", 1) for line in show.stdout.splitlines() if ": " in line)
    assert os.path.realpath(fields["Location"]).startswith(inside)
    assert "torch" in fields["Requires"] and "onnxruntime" in fields["Requires"]


@pytest.fixture(scope="module")
def job(sample_web, tmp_path_factory) -> Path:
    """A folder outside the checkout with the first WARC records of the sample web and a
    config naming them by absolute path (a cluster's executors run in folders of their own)."""
    from fastwarc.warc import ArchiveIterator

    run = tmp_path_factory.mktemp("job")
    assert REPO not in run.resolve().parents
    with open(sample_web / "pages.warc.gz", "rb") as f:
        cut = [r.stream_pos for r in ArchiveIterator(f, parse_http=False)][RECORDS]
    (run / "pages.warc.gz").write_bytes((sample_web / "pages.warc.gz").read_bytes()[:cut])
    (run / "job.yaml").write_text(yaml.safe_dump(
        {"input": {"warc": [str(run / "pages.warc.gz")]}, **CONFIG}))
    return run


@pytest.fixture(scope="module")
def reference(job, tmp_path_factory) -> dict:
    """This checkout's own build of the job (local engine, in this process): shard bytes."""
    from pipeline.build import build

    out = tmp_path_factory.mktemp("reference")
    build(str(job / "job.yaml"), str(out), engine="local")
    return shard_files(out)


def shard_files(out: Path) -> dict:
    return {f"{d}/{p.name}": p.read_bytes() for d in ("shards", "parquet")
            for p in sorted((out / d).iterdir())}


def test_installed_worker_builds_outside_the_checkout(worker, job, reference):
    """`lait build` (Beam, the default engine) in the venv, in a folder outside the checkout,
    writes the same shards as this checkout's own build of the same input."""
    venv, _, _ = worker
    r = _run(worker, [str(venv / "bin" / "lait"), "build", "--config", "job.yaml", "--out", "out"],
             cwd=job, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    got = shard_files(job / "out")
    assert sorted(got) == ["parquet/00000.parquet", "parquet/00001.parquet",
                           "shards/00000.tar", "shards/00000_stats.json",
                           "shards/00001.tar", "shards/00001_stats.json"]
    steps = json.loads((job / "out" / "stats.json").read_text())["steps"]
    assert steps[-1]["name"] == "write" and steps[-1]["kept"] > 0
    assert got == reference


def test_spark_cluster_runs_the_packed_worker_venv(worker, job, reference, tmp_path):
    """docs/fetching.md's Spark recipe: the worker venv packed into a tar.gz and shipped with
    ``--archives venv.tar.gz#env``, executors on ``./env/bin/python``, the application the
    installed ``tools/cli.py``; no PYTHONPATH and no PYSPARK_PYTHON anywhere, so executors
    can only find the package in the archive.  (venv-pack does what the tarfile does here,
    and likewise leaves the interpreter out: the nodes have it at the same path.)"""
    from tests.pipeline.test_spark_cluster import SPARK_HOME, cluster_env, standalone_cluster

    venv, python, _ = worker
    archive = tmp_path / "lait-env.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(venv, arcname=".")  # symlinks (bin/python -> the base interpreter) kept
    cli = _run(worker, [str(python), "-c", "import tools.cli; print(tools.cli.__file__)"],
               cwd=tmp_path).stdout.strip()
    assert cli.startswith(str(venv.resolve()))
    env = {k: v for k, v in cluster_env(tmp_path).items()
           if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    with standalone_cluster(tmp_path, env) as master_url:
        r = subprocess.run(
            [str(SPARK_HOME / "bin" / "spark-submit"), "--master", master_url,
             "--archives", f"{archive}#env",
             "--conf", "spark.pyspark.python=./env/bin/python",
             "--conf", f"spark.pyspark.driver.python={python}",
             "--conf", "spark.executor.memory=1g", "--conf", "spark.ui.enabled=false",
             "--conf", "spark.driver.host=127.0.0.1",
             cli, "build", "--config", str(job / "job.yaml"), "--out", str(tmp_path / "out"),
             "--engine", "spark"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=500)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    # executors ran on the worker, each beside its unpacked copy of the venv
    assert list((tmp_path / "work").glob("app-*/*/env/bin/python"))
    assert shard_files(tmp_path / "out") == reference


def test_demo_outside_a_checkout_says_so(worker, tmp_path):
    venv, _, _ = worker
    r = _run(worker, [str(venv / "bin" / "lait"), "demo", "--out", "o", "--web", "w"], cwd=tmp_path)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "checkout" in r.stderr
    assert not (tmp_path / "w").exists()  # said before generating anything
