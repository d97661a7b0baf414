"""A quiet static HTTP server for the generated sample web (images and pages)."""
from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves files with explicit image types and logs nothing (tests fetch thousands)."""

    extensions_map = {**SimpleHTTPRequestHandler.extensions_map,
                      ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png",
                      ".gif": "image/gif", ".webp": "image/webp", ".html": "text/html",
                      ".css": "text/css", ".pdf": "application/pdf", ".json": "application/json",
                      ".jsonl": "application/jsonl", ".gz": "application/gzip"}

    def log_message(self, format, *args):  # noqa: A002 (the base class's signature)
        pass


def serve(directory, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """Start serving ``directory`` on a daemon thread and return the server.

    ``server.server_address[1]`` is the port (pick one with ``port=0``); ``server.shutdown()``
    stops it (and ``server.server_close()`` frees the socket).
    """
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="sampleweb-http", daemon=True)
    thread.start()
    return server
