"""Shared fixtures: the real-data folder, one SparkSession for the whole run, an HTTP server."""
from __future__ import annotations

import http.server
import os
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

# Spark's Python workers import the stage classes by module name: give them the repo root.
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not beside this checkout")
    return SHARED_DATA


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for every test (it takes seconds to start)."""
    from pipeline.engines.spark import session

    s = session("local[2]", app_name="lait-tests",
                conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"})
    yield s
    s.stop()


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict = {}

    def do_GET(self):  # noqa: N802 (http.server's naming)
        route = self.server.routes.get(self.path)
        if route is None:
            self.send_response(404)
            self.end_headers()
            return
        route(self)

    def log_message(self, *args):
        pass


@pytest.fixture()
def http_server():
    """A loopback server; tests register ``path -> handler(request)`` in ``server.routes``."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.routes = {}
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    yield srv
    srv.shutdown()
    srv.server_close()


def serve_bytes(body: bytes, ctype: str = "image/jpeg", status: int = 200, headers: dict | None = None):
    def handler(req):
        req.send_response(status)
        req.send_header("Content-Type", ctype)
        req.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            req.send_header(k, v)
        req.end_headers()
        req.wfile.write(body)
    return handler


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def sample_web(tmp_path_factory):
    """The demo's sample web, generated once and served on a free loopback port."""
    from tools.sampleweb import generate, serve

    web = tmp_path_factory.mktemp("sample-web")
    port = free_port()
    generate(str(web), seed=0, base_url=f"http://127.0.0.1:{port}")
    srv = serve(str(web), host="127.0.0.1", port=port)
    yield web
    srv.shutdown()


@pytest.fixture(scope="session")
def demo_overrides(sample_web):
    return {"input.warc": [str(sample_web / "pages.warc.gz")], "run.wave_size": 4}


@pytest.fixture(scope="session")
def demo_run(sample_web, demo_overrides, tmp_path_factory):
    """The demo's corpus built once (local engine): ``(OUT, stats.json's document)``."""
    from pipeline.build import build

    out = str(tmp_path_factory.mktemp("demo-run"))
    return out, build(str(REPO / "configs" / "demo.yaml"), out, engine="local",
                      overrides=demo_overrides)
