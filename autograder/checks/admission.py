"""Which checks the service takes, and how long it gives each: its limits, and the gate a
learner's request passes once the hub has said whose it is, before its body is read.

A learner has one check in flight at a time, sends at most `burst` at once and then
`per_minute` a minute, and after a check stopped at its deadline waits `cool_down`
seconds. The bodies being read at once, all learners together, hold at most
`body_budget` bytes. Each refusal is a `Refused` whose text a learner reads in the kernel
("⚠ Not checked: <text>.").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

MIB = 1 << 20
KEPT_LEARNERS = 10_000  # rate counts kept at most (a learner whose count is full is dropped)


@dataclass(frozen=True)
class Limits:
    """The service's limits (each a `--option` of the service, e.g. --per-minute)."""

    deadline: float = 5.0  # CPU s of a judge's work on one check: then it is killed, replaced
    cool_down: float = 30.0  # s a learner waits after a check stopped at its deadline
    burst: int = 120  # checks a learner may send one after another ...
    per_minute: float = 120.0  # ... and then this many a minute
    max_body: int = 4 * MIB  # bytes of one request
    body_budget: int = 64 * MIB  # bytes of the bodies being read at once, all learners
    header_timeout: float = 10.0  # s for a request's headers, and an idle connection's life
    body_timeout: float = 30.0  # s to read a request's body
    max_connections: int = 1000  # open at once (fewer under a low file limit: connections)

    @classmethod
    def options(cls) -> dict[str, tuple[type, Any]]:
        """Option name (e.g. `per-minute`) -> (type, default) of every limit."""
        made = cls()
        return {
            f.name.replace("_", "-"): (type(getattr(made, f.name)), getattr(made, f.name))
            for f in fields(cls)
        }


class Refused(Exception):
    """A request the service does not take now: its HTTP status and the learner's reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class Admission:
    """One admitted request: its learner and the body bytes it holds of the budget."""

    user: str
    size: int
    released: bool = field(default=False)


class Gate:
    """Admits a learner's request or refuses it, with the reason (see the module)."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self.in_flight: set[str] = set()
        self.reading = 0  # bytes of the budget held by admitted requests
        self._allowance: dict[str, tuple[float, float]] = {}  # learner -> (checks, when)
        self._paused_until: dict[str, float] = {}  # learner -> end of their cool-down

    def _checks_left(self, user: str, now: float) -> float:
        checks, when = self._allowance.get(user, (float(self.limits.burst), now))
        refilled = checks + (now - when) * self.limits.per_minute / 60
        return min(float(self.limits.burst), refilled)

    def admit(self, user: str, size: int) -> Admission:
        """Admit `user`'s request of `size` body bytes (at most `max_body`), or Refused."""
        limits, now = self.limits, self.clock()
        if size > limits.max_body:
            raise Refused(
                413,
                f"this check sends {size / MIB:.1f} MB, more than the {limits.max_body / MIB:g} "
                "MB the service reads: restart the kernel and run the notebook from the top",
            )
        paused = self._paused_until.get(user, 0.0) - now
        if paused > 0:
            raise Refused(
                429,
                f"your check before this one took more than the {limits.deadline:g} s a check may "
                f"take and was stopped; your next check is taken in {paused:.0f} s",
            )
        self._paused_until.pop(user, None)
        if user in self.in_flight:
            raise Refused(
                429,
                "another check of yours is still being judged (one at a time): run this cell "
                "again once it has answered",
            )
        left = self._checks_left(user, now)
        if left < 1:
            wait = (1 - left) * 60 / limits.per_minute
            raise Refused(
                429,
                f"too many checks: {limits.burst} one after another, then "
                f"{limits.per_minute:g} a minute; your next check is taken in {wait:.0f} s",
            )
        if self.reading + size > limits.body_budget:
            raise Refused(
                503,
                "the check service is reading too many large checks at once: run this cell "
                "again in a moment",
            )
        self._allowance[user] = (left - 1, now)
        if len(self._allowance) > KEPT_LEARNERS:
            self._forget_full(now)
        self.in_flight.add(user)
        self.reading += size
        return Admission(user, size)

    def done_reading(self, admission: Admission) -> None:
        """The body is read (and handed to a judge): its bytes go back to the budget."""
        self.reading -= admission.size
        admission.size = 0

    def release(self, admission: Admission) -> None:
        """The request is answered or gone: its learner may check again (once only)."""
        if admission.released:
            return
        admission.released = True
        self.done_reading(admission)
        self.in_flight.discard(admission.user)

    def stopped(self, user: str) -> str:
        """`user`'s check was stopped at its deadline: their cool-down starts; the reason."""
        limits = self.limits
        self._paused_until[user] = self.clock() + limits.cool_down
        return (
            f"the check took more than {limits.deadline:g} s of the judge's time (or too long in "
            f"all) and was stopped; your next check "
            f"is taken in {limits.cool_down:g} s (if your kernel has run a great many cells, "
            "restart it and run the notebook from the top)"
        )

    def _forget_full(self, now: float) -> None:
        """Drop learners whose allowance is full again (the same as never seen)."""
        for user in [u for u in self._allowance if self._checks_left(u, now) >= self.limits.burst]:
            del self._allowance[user]
        for user in [u for u, until in self._paused_until.items() if until <= now]:
            del self._paused_until[user]
