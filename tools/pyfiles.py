"""Zip the project's packages for ``spark-submit --py-files`` (Spark executors import the
stage classes by module name, so they need the code that the driver has).

    python -m tools.pyfiles dist/lait.zip
    spark-submit --master spark://HOST:7077 --py-files dist/lait.zip tools/cli.py \\
        build --config job.yaml --out /shared/out --engine spark

The zip holds sources only (and the data files a package ships beside them); the third-party
libraries must be installed on every worker (``pip install -r requirements.txt``).  Entries
are written in sorted order with fixed timestamps, so the same tree gives the same zip.
"""
from __future__ import annotations

import os
import sys
import zipfile

PACKAGES = ("pipeline", "filters", "scoring", "model", "tools")
SKIP_DIRS = {"__pycache__", ".pytest_cache"}


def build_zip(dest: str, root: str | None = None) -> str:
    root = os.path.abspath(root or os.path.join(os.path.dirname(__file__), os.pardir))
    os.makedirs(os.path.dirname(os.path.abspath(dest)) or ".", exist_ok=True)
    files = []
    for pkg in PACKAGES:
        base = os.path.join(root, pkg)
        if not os.path.isfile(os.path.join(base, "__init__.py")):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in filenames:
                if not name.endswith((".pyc", ".pyo")):
                    files.append(os.path.join(dirpath, name))
    tmp = dest + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(files):
            info = zipfile.ZipInfo(os.path.relpath(path, root), date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with open(path, "rb") as f:
                zf.writestr(info, f.read())
    os.replace(tmp, dest)
    return dest


if __name__ == "__main__":
    print(build_zip(sys.argv[1] if len(sys.argv) > 1 else "dist/lait.zip"))
