"""One wall-clock deadline per request attempt, connect to last byte.

Socket timeouts bound each recv, not a whole response: a server sending its headers or body
at one byte per second never trips them, and ``http.client`` reads the headers in one
blocking call where no deadline check of ours can run.  So :data:`WATCHDOG`, one thread per
process, shuts down the sockets of an attempt whose deadline has passed; the blocked read
then fails at once and :class:`pipeline.web.http.HttpClient` reports a timeout.
"""
from __future__ import annotations

import heapq
import itertools
import os
import socket
import threading
import time


class Attempt:
    """One request attempt's wall-clock budget and the sockets it is using."""

    def __init__(self, deadline: float):
        self.deadline = deadline
        self.expired = self.done = False
        self._socks: list = []
        self._lock = threading.Lock()

    def add(self, sock) -> None:
        with self._lock:
            self._socks.append(sock)
            late = self.expired
        if late:
            _shut(sock)

    def expire(self) -> None:
        with self._lock:
            if self.done:
                return
            self.expired = True
            socks, self._socks = self._socks, []
        for sock in socks:
            _shut(sock)

    def finish(self) -> bool:
        """From now on the sockets belong to the pool (and the next attempt): never cut.
        Returns whether the attempt had expired (been cut) first."""
        with self._lock:
            self.done = True
            self._socks = []
            return self.expired


def _shut(sock) -> None:
    try:  # wakes a thread blocked in recv on it: recv returns b"" and the read fails
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Watchdog:
    """One thread per process that cuts attempts whose deadline has passed.

    Socket timeouts bound each recv, not a whole response: a server sending its headers or
    body at one byte per second never trips them, and ``http.client`` reads the headers in
    one blocking call, where no deadline check of ours can run."""

    def __init__(self):
        self._reset()
        # A forked child has no watchdog thread and may have copied the lock held: start over.
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._heap: list = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, attempt: Attempt) -> None:
        with self._cond:
            if self._thread is None or not self._thread.is_alive():  # e.g. after a fork
                self._thread = threading.Thread(target=self._run, name="lait-http-deadline",
                                                daemon=True)
                self._thread.start()
            heapq.heappush(self._heap, (attempt.deadline, next(self._seq), attempt))
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][2].done:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                wait = self._heap[0][0] - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)[2].expire()


WATCHDOG = _Watchdog()
_current = threading.local()  # the attempt this thread is making


def current_attempt() -> Attempt | None:
    return getattr(_current, "attempt", None)


def set_attempt(attempt: Attempt | None) -> None:
    _current.attempt = attempt


