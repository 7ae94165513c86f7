"""Waiting on a process or a server for as long as it makes progress, not for a fixed time.

A fixed timeout ("fail after 900 s") guards against a hang, but a busy or slow machine
trips it too: nbgrader's reference run failed 17 tests that way at a load of 15-20. Here a
wait fails only when nothing has moved for `stall` seconds: the watched processes used no
CPU time (theirs and their descendants', reaped ones included), printed nothing, and every
other sign of progress given (a log's size, ...) stayed the same. A slow machine still moves
every few seconds; a process blocked for good (a kernel that never answers, a lost
connection, a lock never released) does not. A busy loop counts as progress: the programs
watched here have their own limit for that (nbgrader's cell timeout, the sandbox's CPU
limit).

- `run(command, what=...)`: `subprocess.run` with capture, killed (with everything it
  started) and `Stalled` raised when it stops making progress.
- `communicate(process, what)`: the same for a `Popen` already started.
- `wait(process, what)`: `process.wait()` while its process tree uses CPU time.
- `stop_group(process, what, signs)`: SIGTERM a server's process group, wait while it
  works on stopping, SIGKILL it on a stall, and end what it started that outlived it.
- `wait_for_server(up, what, process, log)`: until a server answers, while it works.
- `wait_until(condition, what, signs)`: poll `condition` while `signs` keep changing (e.g.
  `cpu_of(process.pid)`, `size_of(log)`, `work_below(server.pid)`).
- `keep_trying(attempt, what, signs)`: a step with a timeout of its own (a browser's wait
  for an element, a kernel's message) tried in short slices, again while `signs` change.
- `call(function, what, signs)`: `function()` in a thread (an HTTP request to a server
  that works on it), awaited while `signs` change.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from process_tree import descendants, end, family

STALL_SECONDS = 300.0  # nothing at all moved for this long: hung, on any machine
BUSY_SHARE = 0.02  # CPU time that counts as work: 2% of a core over a stall window (6 s);
# an idle kernel or server ticks along at 0.1-0.3%, a working one under a load of 30 on
# 2 cores still gets 6%
POLL_SECONDS = 0.5  # how often a wait looks whether it is over
READ_SECONDS = 5.0  # how often it reads the signs of progress (at most)
SLICE_SECONDS = 5.0  # how long one try of `keep_trying` waits before the signs are read
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")

Sign = Callable[[], object]  # a reading that changes while the work progresses
T = TypeVar("T")


class Stalled(AssertionError):
    """A watched process or wait made no progress for its `stall` seconds."""


def _ticks(pid: int, own: bool = True) -> int:
    """CPU ticks of `pid` (unless not `own`) and of its reaped children (utime, stime,
    cutime, cstime)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = text[text.rindex(")") + 2 :].split()  # the name, in parentheses, may hold spaces
    return sum(int(value) for value in fields[11 if own else 13 : 15])


def cpu_ticks(pid: int, own: bool = True) -> int:
    """CPU ticks used so far by `pid` (unless not `own`) and every process below it,
    reaped ones included."""
    return sum(_ticks(p, own or p != pid) for p in descendants(pid))


class CpuSign:
    """A sign of progress in CPU ticks: it moves only when at least `least` ticks were used
    since it last moved, so what idles (a kernel's heartbeat, a server's polling) never
    keeps a wait alive, while work on a slow or busy machine does."""

    def __init__(self, read: Callable[[], int]) -> None:
        self.read = read
        self.least = 1  # set by the Watch from its stall window

    def __call__(self) -> int:
        return self.read()


def cpu_of(pid: int) -> CpuSign:
    """A sign of progress: the CPU time of `pid`'s process tree."""
    return CpuSign(lambda: cpu_ticks(pid))


def work_below(pid: int) -> CpuSign:
    """A sign of progress for a server that polls while idle (its own CPU time would grow
    forever): the CPU time of the processes it started (workers, kernels, a proxy)."""
    return CpuSign(lambda: cpu_ticks(pid, own=False))


def size_of(path: Path) -> Sign:
    """A sign of progress: the size of `path` (a log a server appends to), -1 while absent."""

    def size() -> int:
        try:
            return path.stat().st_size
        except OSError:
            return -1

    return size


class Watch:
    """Notes when `signs` last changed; `check()` raises `Stalled` after `stall` s without."""

    def __init__(self, what: str, signs: Sequence[Sign], stall: float = STALL_SECONDS) -> None:
        self.what, self.signs, self.stall = what, list(signs), stall
        self.started = self.moved = self.read = time.monotonic()
        for sign in self.signs:
            if isinstance(sign, CpuSign):
                sign.least = max(1, round(stall * BUSY_SHARE * TICKS_PER_SECOND))
        self.last = [sign() for sign in self.signs]
        # reading a process tree's CPU time scans /proc (milliseconds): a few times a
        # stall window is plenty
        self.every = min(READ_SECONDS, stall / 5)

    def stalled(self) -> bool:
        """Read the signs (at most every `self.every` s); True when none has changed for
        `stall` seconds."""
        now = time.monotonic()
        if now - self.read >= self.every:
            readings, self.read = [sign() for sign in self.signs], now
            if any(map(self._moved, self.signs, readings, self.last)):
                self.last, self.moved = readings, now
        return now - self.moved >= self.stall

    @staticmethod
    def _moved(sign: Sign, reading: object, last: object) -> bool:
        if isinstance(sign, CpuSign):
            return (
                isinstance(reading, int)
                and isinstance(last, int)
                and (
                    reading - last >= sign.least or reading < last  # fewer: another process tree
                )
            )
        return reading != last

    def message(self, detail: str = "") -> str:
        waited = time.monotonic() - self.started
        return (
            f"{self.what}: no progress for {self.stall:g} s (under {BUSY_SHARE:.0%} of a "
            f"core's CPU time used, nothing printed or written), given up after {waited:.0f} s "
            f"in all{detail}"
        )

    def check(self) -> None:
        if self.stalled():
            raise Stalled(self.message())


def wait_until(
    condition: Callable[[], T], what: str, signs: Sequence[Sign], stall: float = STALL_SECONDS
) -> T:
    """Poll `condition` until it returns something true, and return that; `Stalled` when
    `signs` stay the same for `stall` seconds first."""
    watch = Watch(what, signs, stall)
    while not (result := condition()):
        watch.check()
        time.sleep(POLL_SECONDS / 2)
    return result


def keep_trying(
    attempt: Callable[[float], T],
    what: str,
    signs: Sequence[Sign],
    not_yet: tuple[type[BaseException], ...] = (AssertionError,),
    stall: float = STALL_SECONDS,
    slice: float = SLICE_SECONDS,
) -> T:
    """`attempt(seconds)`, a step that waits up to `seconds` for something and raises one
    of `not_yet` when it has not come, tried again for as long as `signs` change; its
    result. `Stalled`, with the last attempt's error, when they stay the same for `stall`
    seconds first."""
    watch = Watch(what, signs, stall)
    while True:
        try:
            return attempt(min(slice, stall))
        except Stalled:
            raise
        except not_yet as error:
            if watch.stalled():
                raise Stalled(watch.message(f"\n--- the last try: {error}")) from error


def call(
    function: Callable[[], T], what: str, signs: Sequence[Sign], stall: float = STALL_SECONDS
) -> T:
    """`function()` (a request a server works on) in a thread of its own, awaited while
    `signs` change; its result or its exception. `Stalled` when they stay the same for
    `stall` seconds first (the thread is left to end on its own)."""
    outcome: list[tuple[bool, Any]] = []

    def run_it() -> None:
        try:
            outcome.append((True, function()))
        except BaseException as error:  # handed to the caller
            outcome.append((False, error))

    thread = threading.Thread(target=run_it, name=what, daemon=True)
    thread.start()
    watch = Watch(what, signs, stall)
    while not outcome:
        watch.check()
        thread.join(POLL_SECONDS)
    done, value = outcome[0]
    if not done:
        raise value
    result: T = value
    return result


def wait(
    process: subprocess.Popen[Any],
    what: str,
    signs: Sequence[Sign] | None = None,
    stall: float = STALL_SECONDS,
) -> int:
    """`process.wait()` while `signs` (default: its process tree's CPU time) change; its
    exit code. `Stalled` (the process left running) when they stop first."""
    signs = [cpu_of(process.pid)] if signs is None else signs
    wait_until(lambda: process.poll() is not None, what, signs, stall)
    return process.wait()


def stop_group(
    process: subprocess.Popen[Any], what: str, signs: Sequence[Sign] | None = None
) -> list[int]:
    """Stop `process` (a group leader, as a server started with `start_new_session`) and
    everything it started: SIGTERM its group, wait while `signs` change (it stops what it
    runs: as long as it works on it), SIGKILL the group on a stall, then kill what of its
    family is still running (servers it started in sessions of their own). The pids killed
    that way; nothing when it had already exited."""
    if process.poll() is not None:
        return []
    started = family(process.pid)
    os.killpg(process.pid, signal.SIGTERM)
    try:
        wait(process, what, signs)
    except Stalled:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return end(started)


def wait_for_server(
    up: Callable[[], bool],
    what: str,
    process: subprocess.Popen[Any],
    log: Path,
    stall: float = STALL_SECONDS,
) -> None:
    """Poll `up()` while the server's `log` grows or the processes it started use CPU time
    (installing, starting a proxy...); `Stalled`, with the log's end, when neither moves."""
    try:
        wait_until(up, what, [size_of(log), work_below(process.pid)], stall)
    except Stalled as stalled:
        tail = log.read_text(errors="replace")[-6000:] if log.exists() else ""
        raise Stalled(f"{stalled}\n--- {log}\n{tail}") from None


def _drain(stream: Any, into: list[bytes]) -> None:
    descriptor = stream.fileno()
    while chunk := os.read(descriptor, 65536):
        into.append(chunk)
    stream.close()


def _feed(stream: Any, data: str | bytes | None) -> None:
    """Write `data` to a process's stdin and close it (it may have exited already)."""
    payload = memoryview(data.encode() if isinstance(data, str) else data or b"")
    with contextlib.suppress(BrokenPipeError):
        while payload:
            payload = payload[os.write(stream.fileno(), payload) :]
    with contextlib.suppress(BrokenPipeError):
        stream.close()


def _decoded(stream: Any, chunks: list[bytes]) -> str | bytes:
    data = b"".join(chunks)
    if not isinstance(stream, io.TextIOWrapper):
        return data
    text = data.decode(stream.encoding, stream.errors or "strict")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def communicate(
    process: subprocess.Popen[Any],
    what: str,
    stall: float = STALL_SECONDS,
    input: str | bytes | None = None,
    signs: Sequence[Sign] = (),
) -> tuple[Any, Any]:
    """`process.communicate(input)` for as long as the process (or any of `signs`) makes
    progress; else it and everything it started are killed and `Stalled` says so, with the
    last of its output."""
    streams = [s for s in (process.stdout, process.stderr) if s is not None]
    chunks: dict[int, list[bytes]] = {id(s): [] for s in streams}
    readers = [
        threading.Thread(target=_drain, args=(s, chunks[id(s)]), daemon=True) for s in streams
    ]
    if process.stdin is not None:
        readers.append(threading.Thread(target=_feed, args=(process.stdin, input), daemon=True))
    for reader in readers:
        reader.start()

    def printed() -> int:
        return sum(len(chunk) for parts in chunks.values() for chunk in parts)

    watch = Watch(what, [cpu_of(process.pid), printed, *signs], stall)
    while (busy := [r for r in readers if r.is_alive()]) or process.poll() is None:
        if watch.stalled():
            end(family(process.pid))
            process.wait()
            tail = b"".join(b"".join(parts) for parts in chunks.values())[-4000:]
            raise Stalled(watch.message(f"\n--- its last output\n{tail.decode(errors='replace')}"))
        if busy:
            busy[0].join(POLL_SECONDS)
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(POLL_SECONDS)
    out, err = (
        _decoded(stream, chunks[id(stream)]) if stream is not None else None
        for stream in (process.stdout, process.stderr)
    )
    return out, err


def run(
    command: Sequence[str | os.PathLike[str]],
    what: str | None = None,
    stall: float = STALL_SECONDS,
    input: str | bytes | None = None,
    capture_output: bool = False,
    check: bool = False,
    **popen: Any,
) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run(command, ...)` without a timeout: `Stalled` (its processes killed)
    when it makes no progress for `stall` seconds."""
    if capture_output:
        popen["stdout"] = popen["stderr"] = subprocess.PIPE
    if input is not None:
        popen["stdin"] = subprocess.PIPE
    with subprocess.Popen(command, **popen) as process:
        label = what or f"`{' '.join(str(part) for part in command)}`"
        out, err = communicate(process, label, stall, input)
    result = subprocess.CompletedProcess(command, process.returncode, out, err)
    if check:
        result.check_returncode()
    return result
