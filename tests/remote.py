"""Real servers on 127.0.0.1 for the remote-storage tests: an HTTP file server with range
requests (and faults on demand), and moto's S3 API server (the one s3fs's own tests use)."""
from __future__ import annotations

import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_RANGE_RE = re.compile(r"bytes=(\d+)-(\d*)$")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _target(self):
        path = self.path.split("?", 1)[0]
        fault = self.server.faults.get(path)
        file = (self.server.root / path.lstrip("/")).resolve()
        if self.server.root not in file.parents or not file.is_file():
            return fault, None
        return fault, file.read_bytes()

    def do_HEAD(self):  # noqa: N802 (http.server's naming)
        self._serve(head=True)

    def do_GET(self):  # noqa: N802
        self._serve(head=False)

    def _serve(self, head: bool):
        fault, data = self._target()
        self.server.hits.append((self.command, self.path, self.headers.get("Range")))
        if fault == "forbidden":
            return self._status(403)
        if data is None or fault == "missing":
            return self._status(404)
        start, end = 0, len(data) - 1
        m = _RANGE_RE.match(self.headers.get("Range", ""))
        if m:
            start = int(m.group(1))
            end = min(int(m.group(2)) if m.group(2) else end, len(data) - 1)
        body = data[start:end + 1]
        self.send_response(206 if m else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(body)))
        if m:
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.end_headers()
        if head:
            return
        if fault == "slow" and self.command == "GET":
            self.wfile.write(body[:100])
            self.wfile.flush()
            time.sleep(self.server.slow_s)  # then the connection just stays quiet
            return
        if fault == "cut" and self.command == "GET":
            # A body cut short mid-transfer: half of what Content-Length promised, then close.
            self.wfile.write(body[:max(1, len(body) // 2)])
            self.wfile.flush()
            self.close_connection = True
            return
        if fault == "flaky" and self.command == "GET" and self.server.flaky_left > 0:
            self.server.flaky_left -= 1
            self.wfile.write(body[:max(1, len(body) // 3)])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def _status(self, code: int):
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def serve_files(root: Path) -> ThreadingHTTPServer:
    """Serves the files under ``root`` with range requests; ``srv.faults[path] = "missing" |
    "forbidden" | "slow" | "cut" | "flaky"`` makes one path misbehave."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    srv.root = Path(root).resolve()
    srv.faults, srv.hits = {}, []
    srv.slow_s, srv.flaky_left = 30.0, 0
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    return srv


S3_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
          "AWS_DEFAULT_REGION": "us-east-1", "AWS_SESSION_TOKEN": ""}


def start_s3():
    """moto's S3 server on a free loopback port; returns ``(server, endpoint)``.  The AWS_*
    variables (inherited by Spark's Python workers) point every S3 client at it."""
    from moto.server import ThreadedMotoServer

    srv = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    srv.start()
    host, port = srv.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    return srv, endpoint


def s3_env(endpoint: str) -> dict:
    env = {k: v for k, v in S3_ENV.items() if v}
    env["AWS_ENDPOINT_URL"] = endpoint
    return env


def apply_env(env: dict) -> dict:
    """Sets ``env`` in os.environ; returns what to restore."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    return old


def restore_env(old: dict) -> None:
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
