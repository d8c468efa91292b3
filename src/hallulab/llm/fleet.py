"""Several OpenAI-compatible endpoints serving one model: which one takes the next request.

A catalogue entry of the ``openai`` backend may list ``endpoints`` (replicas of one model,
e.g. one ``vllm serve`` per GPU node) in place of one ``base_url``. Each request goes to the
live endpoint with the fewest requests outstanding (ties: the first listed), the rule of
least-outstanding-requests load balancers. An endpoint that fails ``set_aside_after`` times
in a row (connection errors, timeouts, 429 / 5xx, malformed replies) is set aside for
``retry_after`` seconds, then tried again: one success clears its count, one more failure sets
it aside again. While it is set aside its requests go to the others. When every endpoint is
set aside the fleet is down: :meth:`Fleet.acquire` raises :class:`FleetDownError` at once,
one line naming each endpoint and its last error, so a batch stops in seconds instead of each
prompt spending its own retries.

The state is shared by the request threads of one process (a lock guards it) and lives as
long as the backend object, so an endpoint set aside in one batch stays aside in the next
until its time is up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hallulab.core.errors import UserFacingError


class FleetDownError(RuntimeError, UserFacingError):
    """Every endpoint of a fleet is set aside."""


@dataclass
class Endpoint:
    """One replica: its client and what the fleet knows of it."""

    url: str
    client: Any
    outstanding: int = 0  #: requests sent and not yet answered
    failures: int = 0  #: consecutive failures (a success clears it)
    set_aside_until: float = 0.0  #: monotonic time before which no request goes here
    last_error: str = ""
    served: int = 0  #: successful replies

    def live(self, now: float) -> bool:
        return self.set_aside_until <= now


@dataclass
class Fleet:
    """Least-outstanding routing with failure set-aside over ``endpoints`` (module docstring)."""

    endpoints: Sequence[Endpoint]
    model: str
    set_aside_after: int = 2
    retry_after: float = 30.0
    clock: Callable[[], float] = time.monotonic
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def acquire(self, avoid: Endpoint | None = None) -> Endpoint:
        """The live endpoint with the fewest outstanding requests, now counted as busy; one
        other than ``avoid`` (where a request just failed) while another is live."""
        with self._lock:
            now = self.clock()
            live = [e for e in self.endpoints if e.live(now)]
            if not live:
                raise FleetDownError(self._down(now))
            elsewhere = [e for e in live if e is not avoid]
            chosen = min(elsewhere or live, key=lambda e: e.outstanding)  # min keeps the first of equals
            chosen.outstanding += 1
            return chosen

    def succeeded(self, endpoint: Endpoint) -> None:
        with self._lock:
            endpoint.outstanding -= 1
            endpoint.failures = 0
            endpoint.served += 1

    def failed(self, endpoint: Endpoint, error: str) -> None:
        """A transient failure at ``endpoint``; the ``set_aside_after``-th in a row sets it aside."""
        with self._lock:
            endpoint.outstanding -= 1
            endpoint.failures += 1
            endpoint.last_error = error
            if endpoint.failures >= self.set_aside_after:
                endpoint.set_aside_until = self.clock() + self.retry_after

    def released(self, endpoint: Endpoint) -> None:
        """A request that ended without saying anything of the endpoint (a 4xx: the request's fault)."""
        with self._lock:
            endpoint.outstanding -= 1

    def others_live(self, endpoint: Endpoint) -> bool:
        """Whether a request that failed at ``endpoint`` can go elsewhere at once."""
        with self._lock:
            now = self.clock()
            return any(e is not endpoint and e.live(now) for e in self.endpoints)

    def _down(self, now: float) -> str:
        parts = [
            f"{e.url}: {e.last_error or 'no error recorded'} "
            f"({e.failures} failure(s) in a row, tried again in {max(e.set_aside_until - now, 0.0):.0f} s)"
            for e in self.endpoints
        ]
        return (
            f"no live endpoint serves model {self.model!r}: all {len(self.endpoints)} are set aside after "
            f"{self.set_aside_after} failures in a row; " + "; ".join(parts)
        )
