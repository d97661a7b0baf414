"""Per-host politeness: a minimum interval between request starts and a concurrency cap.

One :class:`HostLimiter` is shared by every thread of a worker process.  A thread may start a
request to a host only when, under the lock, ``now >= last_start + interval``; otherwise it
sleeps and checks again, so the starts really made (not merely planned) are at least
``interval`` apart however many threads wait and however late the OS wakes them.  A semaphore
per host caps how many requests to it are in flight.  A host's ``Crawl-delay`` from robots.txt can
widen its interval.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager


class HostLimiter:
    """``rate_per_host`` requests per second per host (0: no limit) and at most
    ``per_host_concurrency`` requests in flight per host (0: no cap)."""

    def __init__(self, rate_per_host: float = 0.0, per_host_concurrency: int = 0,
                 max_delay_s: float = 30.0):
        self.interval = 1.0 / rate_per_host if rate_per_host > 0 else 0.0
        self.per_host_concurrency = per_host_concurrency
        self.max_delay_s = max_delay_s
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}  # when the last request to each host started
        self._delay: dict[str, float] = {}
        self._sems: dict[str, threading.Semaphore] = {}

    def set_delay(self, host: str, seconds: float | None) -> None:
        """Widens one host's interval (robots.txt ``Crawl-delay``), capped at ``max_delay_s``."""
        if seconds:
            with self._lock:
                self._delay[host] = min(float(seconds), self.max_delay_s)

    def interval_for(self, host: str) -> float:
        return max(self.interval, self._delay.get(host, 0.0))

    def _semaphore(self, host: str):
        if self.per_host_concurrency <= 0:
            return None
        with self._lock:
            sem = self._sems.get(host)
            if sem is None:
                sem = self._sems[host] = threading.BoundedSemaphore(self.per_host_concurrency)
            return sem

    def _wait_turn(self, host: str) -> None:
        while True:
            with self._lock:
                interval = self.interval_for(host)
                if interval <= 0:
                    return
                now = time.monotonic()
                wait = self._last.get(host, -interval) + interval - now
                if wait <= 0:
                    self._last[host] = now  # this thread's start, stamped as it happens
                    return
            time.sleep(wait)

    @contextmanager
    def slot(self, host: str):
        """Blocks until a request to ``host`` may start; holds a concurrency slot meanwhile."""
        sem = self._semaphore(host)
        if sem is not None:
            sem.acquire()
        try:
            self._wait_turn(host)
            yield
        finally:
            if sem is not None:
                sem.release()
