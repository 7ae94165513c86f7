"""The check service against a hostile student, each defence tried on the real service
(run by a real JupyterHub, tokens the hub made and the hub's own answers on them):
nothing of a body is read before the token is checked and the learner admitted; a
refused token is not asked about again at once; one check in flight per learner, a rate
limit and a bound on bodies read at once, each refusal saying why; a check past its
deadline is stopped, its judge replaced and the learner told (through the learner's own
client); header, idle and body timeouts; a cap on connections that makes room by closing
the longest-waiting idle one; an accept loop that neither dies nor spins when the file
descriptors run out.

Nothing here depends on the machine's speed: limits are generous (a deadline of 1 CPU-second
for a check that takes about 15 here; a socket waits up to a minute for the service's own
timers of 3 and 10 s, which a slow machine does not lengthen), a wait on the service's work
lasts while the hub and the service work (stall_guard), and the assertions are on what the
service did. The attacks' figures (an honest class's
latency and the service's memory under all of them at once): benchmarks/check_attacks.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import threading
import time
import urllib.error
from collections.abc import Callable, Iterator
from pathlib import Path

import process_tree
import pytest
import stall_guard
from check_hub import CheckHub

pytestmark = pytest.mark.processes  # every test here runs a hub and the service

NEURON = "03_a_neuron_by_hand"
CHECK = {"exercise": NEURON, "names": ["h"], "cells": ["h = 1.0"]}
PATIENCE = 60.0  # s the tests wait for what the service does within a few seconds
STRICT = {
    "deadline": "1", "cool-down": "600", "burst": "5", "per-minute": "0.01",
    "header-timeout": "3", "body-timeout": "10", "body-budget": str(3 << 20),
}  # fmt: skip
CROWDED = {"max-connections": "40", "header-timeout": "600", "processes": "2"}


def as_options(limits: dict[str, str]) -> list[str]:
    return [part for name, value in limits.items() for part in (f"--{name}", value)]


def started(root: Path, learners: list[str], limits: dict[str, str]) -> Iterator[CheckHub]:
    hub = CheckHub.start(root, learners, options=as_options(limits))
    try:
        yield hub
    finally:
        hub.stop()


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CheckHub]:
    """A hub whose service has tight limits (STRICT): each test its own learners."""
    learners = ["ada", "bea", "cy", "dora", "eve", "finn", "gus", "hugo", "ivy", "jo"]
    yield from started(tmp_path_factory.mktemp("strict"), learners, STRICT)


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CheckHub]:
    """A hub whose service holds at most 40 connections and times none out soon."""
    yield from started(tmp_path_factory.mktemp("crowded"), ["ada", "ben"], CROWDED)


def service_pid(hub: CheckHub) -> int:
    """The service's first process (HTTP, the hub's questions), the judges' parent."""
    parents = process_tree.parents()
    for pid in process_tree.descendants(hub.process.pid, parents):
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            if (
                b"checks.server" in command
                and b"checks.server" not in Path(f"/proc/{parents[pid]}/cmdline").read_bytes()
            ):
                return pid
    raise AssertionError("no check service running")


def judges(hub: CheckHub) -> set[int]:
    parent = service_pid(hub)
    return {pid for pid, its_parent in process_tree.parents().items() if its_parent == parent}


def refusal(hub: CheckHub, action: str, body: object, token: str) -> tuple[int, str]:
    """(status, error) of a request the service must refuse."""
    with pytest.raises(urllib.error.HTTPError) as refused:
        hub.ask(action, body, token, url=hub.direct_checks_url)  # type: ignore[arg-type]
    return refused.value.code, str(json.loads(refused.value.read())["error"])


def connect(hub: CheckHub) -> socket.socket:
    made = socket.create_connection(("127.0.0.1", hub.service_port), timeout=PATIENCE)
    return made


def head(token: str | None, length: int, action: str = "check") -> bytes:
    """A request's headers, up to the blank line, that promise a body of `length` bytes."""
    lines = [f"POST /services/checks/api/{action} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"Content-Length: {length}"] + ([f"Authorization: token {token}"] if token else [])
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def response(connection: socket.socket) -> tuple[int, bytes]:
    """(status, everything read) once the service has closed the connection."""
    read = b""
    while part := connection.recv(65536):
        read += part
    return int(read.split(b" ", 2)[1]), read


def closed_by_service(connection: socket.socket) -> bool:
    """Whether the service closes `connection` (waiting up to PATIENCE)."""
    try:
        return connection.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def wait_for(hub: CheckHub, condition: Callable[[], bool], what: str) -> None:
    """Until `condition()` holds (polled, while the hub and the service work)."""
    stall_guard.wait_until(condition, what, hub.signs())


def admitted_first(hub: CheckHub, learner: str) -> None:
    """Wait until a request just sent with `learner`'s token, new to the service, is sure
    to be admitted before any request sent after this: the hub has answered whose token
    it is (its log says so), and another token's question can only be answered after,
    another with the same token waits for the same answer and comes second."""
    wait_for(hub, lambda: f"/hub/api/user ({learner}@" in hub.log(whole=True), "the hub's answer")


def hub_refusals(hub: CheckHub) -> int:
    """How many times the hub said no to the service's question on a token (its log)."""
    return hub.log(whole=True).count("403 GET /hub/api/user (@")


# --- before the body ------------------------------------------------------------------


def test_no_body_is_read_before_the_token_is_checked(strict: CheckHub) -> None:
    """A request that promises 4 MB, with no token or a made-up one, is refused (403) from
    its headers: the answer comes though not a byte of the body was sent, and the
    connection is closed, so the body is never read."""
    for token in [None, "made-up-token"]:
        with connect(strict) as connection:
            connection.sendall(head(token, 4 << 20))
            status, read = response(connection)
        assert status == 403, read
        assert b"no hub token" in read or b"does not know this token" in read, read


def test_a_made_up_token_costs_the_hub_one_question(strict: CheckHub) -> None:
    """The hub's no is remembered: the same made-up token sent 10 times is asked about
    once. The hub's log counts its noes; another made-up token, sent last, is one asked
    about: once its no is in the log, so is every no before it (a test before this one
    may add one that came late: at most 3 in all, where 11 would be asked without)."""
    before = hub_refusals(strict)
    for _ in range(10):
        status, error = refusal(strict, "exercise", {"exercise": NEURON}, "made-up-once")
        assert (status, error) == (403, "the hub does not know this token")
    refusal(strict, "exercise", {"exercise": NEURON}, "made-up-last")
    wait_for(strict, lambda: hub_refusals(strict) >= before + 2, "the hub's noes, logged")
    assert hub_refusals(strict) - before <= 3
    strict.ask("exercise", {"exercise": NEURON}, strict.tokens["ada"], url=strict.direct_checks_url)


def test_a_check_larger_than_the_service_reads_is_refused_from_its_headers(
    strict: CheckHub,
) -> None:
    with connect(strict) as connection:
        connection.sendall(head(strict.tokens["ada"], 5 << 20))
        status, read = response(connection)
    assert status == 413 and b"more than the 4 MB the service reads" in read, read


# --- one at a time, so many a minute, so many bytes at once ---------------------------


def test_one_check_in_flight_per_learner_and_a_body_timeout(strict: CheckHub) -> None:
    """bea's first check is admitted but its body never completes: her second is refused
    while it lasts, with the reason; the service gives up on the body (body timeout),
    and bea checks again."""
    token = strict.tokens["bea"]
    with connect(strict) as hanging:
        hanging.sendall(head(token, 1000) + b'{"exercise": ')
        admitted_first(strict, "bea")
        assert refusal(strict, "check", CHECK, token) == (
            429,
            "another check of yours is still being judged (one at a time): run this cell "
            "again once it has answered",
        )
        [verdict] = strict.ask("check", CHECK, strict.tokens["cy"], url=strict.direct_checks_url)[
            "verdicts"
        ]  # another learner meanwhile
        assert closed_by_service(hanging)
    answer = strict.ask("check", CHECK, token, url=strict.direct_checks_url)
    assert answer["verdicts"][0]["passed"] is False  # judged: h = 1.0 is not bea's h


def test_a_check_abandoned_before_its_body_leaves_nothing_in_flight(strict: CheckHub) -> None:
    """ivy's kernel gives up before sending its body (while the hub is asked whose its
    token is): nothing of that request stays in flight, and her next check is judged
    (retried while the service has not yet seen the connection close: "still being
    judged" meanwhile, never for good)."""
    token = strict.tokens["ivy"]
    with connect(strict) as abandoned:
        abandoned.sendall(head(token, 1000) + b"{")
    watch = stall_guard.Watch("ivy's check, judged", strict.signs())
    while True:
        try:
            answer = strict.ask("check", CHECK, token, url=strict.direct_checks_url)
            break
        except urllib.error.HTTPError as refused:
            assert refused.code == 429, refused.read()
            watch.check()
            time.sleep(0.2)
    assert answer["verdicts"][0]["passed"] is False


def test_a_learner_sending_too_many_checks_is_told_when_to_check_again(strict: CheckHub) -> None:
    token = strict.tokens["dora"]
    for _ in range(int(STRICT["burst"])):
        strict.ask("check", CHECK, token, url=strict.direct_checks_url)
    status, error = refusal(strict, "check", CHECK, token)
    assert status == 429 and error.startswith("too many checks: 5 one after another"), error
    assert "your next check is taken in" in error
    strict.ask("check", CHECK, strict.tokens["eve"], url=strict.direct_checks_url)  # not eve


def test_bodies_read_at_once_are_bounded(strict: CheckHub) -> None:
    """With 2 MB of one learner's body being read, another's 2 MB check does not fit in
    the 3 MB budget (503, why); a small check still does."""
    with connect(strict) as reading:
        reading.sendall(head(strict.tokens["finn"], 2 << 20) + b"{")
        admitted_first(strict, "finn")
        with connect(strict) as second:
            second.sendall(head(strict.tokens["gus"], 2 << 20))
            status, read = response(second)
        assert status == 503 and b"reading too many large checks at once" in read, read
        strict.ask("check", CHECK, strict.tokens["gus"], url=strict.direct_checks_url)


# --- the deadline ---------------------------------------------------------------------


def heavy_check() -> dict[str, object]:
    """A check within the caps (2.1 MB, 30 cells of plain assignments) that keeps a judge
    busy for about 15 CPU-seconds on a machine of 2026 (the issue's attack)."""
    cell = "\n".join(f"v{i} = {i} * 2.0 + 1" for i in range(3000))
    return {"exercise": NEURON, "names": ["h"], "cells": [cell] * 30}


def test_a_check_past_its_deadline_is_stopped_and_the_learner_told(
    strict: CheckHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hugo's heavy check, through the learner's own client: "Not checked" with the
    reason; the judge that worked on it is killed and replaced; hugo waits his
    cool-down, told so; another learner is judged as before."""
    import autograder_client

    before = judges(strict)
    monkeypatch.setenv("AUTOGRADER_CHECKS_URL", strict.direct_checks_url)
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", strict.tokens["hugo"])
    monkeypatch.setenv("AUTOGRADER_CHECKS_TIMEOUT", str(PATIENCE))
    with pytest.raises(autograder_client.CheckUnavailable) as stopped:
        autograder_client.ask("check", heavy_check())
    message = str(stopped.value)
    assert message.startswith(
        "⚠ Not checked: the check took more than 1 s of the judge's time (or too long in all) "
        "and was stopped"
    )
    assert "your next check is taken in 600 s" in message
    after = judges(strict)
    assert len(after) == len(before) and len(before - after) == 1, (before, after)
    assert not Path(f"/proc/{(before - after).pop()}").exists()  # killed, and reaped
    with pytest.raises(autograder_client.CheckUnavailable) as waiting:
        autograder_client.ask("check", CHECK)
    assert "took more than the 1 s a check may take and was stopped; your next check is " \
        "taken in" in str(waiting.value)  # fmt: skip
    answer = strict.ask("check", CHECK, strict.tokens["ada"], url=strict.direct_checks_url)
    assert answer["verdicts"][0]["passed"] is False


# --- connections ----------------------------------------------------------------------


def test_idle_connections_and_unfinished_headers_are_closed(strict: CheckHub) -> None:
    """A connection that sends nothing, one that stops in the middle of its headers, and
    one kept alive after an answered request: the service closes each (3 s here)."""
    with connect(strict) as silent, connect(strict) as half, connect(strict) as kept:
        half.sendall(b"POST /services/checks/api/check HTTP/1.1\r\nHost: 127")
        body = json.dumps({"exercise": NEURON}).encode()
        kept.sendall(head(strict.tokens["ada"], len(body), "exercise") + body)
        status, read = response(kept)  # the answer, then the close (no timeout here)
        assert status == 200 and b'"givens"' in read, read
        assert closed_by_service(silent) and closed_by_service(half)


def test_headers_in_pieces_are_read_on_until_complete(strict: CheckHub) -> None:
    """Headers that arrive a few bytes at a time are read on until complete (the service
    reads them before tornado does), and the check is answered."""
    body = json.dumps({"exercise": NEURON}).encode()
    request = head(strict.tokens["jo"], len(body), "exercise") + body
    with connect(strict) as slow:
        for start in range(0, len(request), 40):
            slow.sendall(request[start : start + 40])
            time.sleep(0.05)
        status, read = response(slow)
    assert status == 200 and b'"givens"' in read, read


def test_headers_that_never_end_are_closed(crowded: CheckHub) -> None:
    """Headers past what any request sends (16 KB) are closed (here the header timeout is
    600 s: the size closed it), and nothing else is read of them."""
    with connect(crowded) as endless:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            endless.sendall(b"POST /services/checks/api/check HTTP/1.1\r\n")
            for _ in range(20):
                endless.sendall(b"X-Padding: " + b"p" * 1000 + b"\r\n")
        assert closed_by_service(endless)


def half_headers(hub: CheckHub, count: int) -> list[socket.socket]:
    """`count` connections each stopped in the middle of its request's headers."""
    made = []
    for _ in range(count):
        connection = connect(hub)
        connection.sendall(b"POST /services/checks/api/check HTTP/1.1\r\nHost: 127")
        made.append(connection)
    return made


def open_sockets(pid: int) -> int:
    return sum(target.startswith("socket:") for target in process_tree.descriptors(pid).values())


def test_the_connection_cap_makes_room_for_learners(crowded: CheckHub) -> None:
    """60 unfinished headers against a cap of 40 (none timed out: 600 s): the longest
    waiting are closed to make room, the service holds no more than its cap, and a
    learner's check is answered."""
    pid = service_pid(crowded)
    held = half_headers(crowded, 60)
    try:
        answer = crowded.ask("check", CHECK, crowded.tokens["ada"], url=crowded.direct_checks_url)
        assert answer["verdicts"]
        for connection in held:
            connection.settimeout(0.2)
        closed = [i for i, c in enumerate(held) if closed_by_service(c)]
        assert len(closed) >= 20, closed
        assert closed == list(range(len(closed))), closed  # the oldest first
        assert open_sockets(pid) <= 40 + 10  # its cap, its listening socket, judges, hub
    finally:
        for connection in held:
            connection.close()


def lowest_free_descriptor(pid: int) -> int:
    """The descriptor the process `pid` would open next: with its limit there, none."""
    used = set(process_tree.descriptors(pid))
    return next(n for n in range(len(used) + 1) if n not in used)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def file_limit(pid: int, soft: int) -> Iterator[None]:
    """The process `pid` may open no descriptor past `soft` meanwhile."""
    before = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, before[1]))
    try:
        yield
    finally:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, before)


def test_accepting_outlives_running_out_of_descriptors(crowded: CheckHub) -> None:
    """The service's file limit lowered under it (as if something else had taken the
    descriptors): idle connections are closed to make room and a learner is answered;
    with none left to close, it stops accepting for a while instead of spinning (its CPU
    and its log say so), and answers the waiting learner once descriptors are back."""
    pid, token = service_pid(crowded), crowded.tokens["ben"]
    crowded.ask("check", CHECK, token, url=crowded.direct_checks_url)  # the token known
    before = open_sockets(pid)
    held = half_headers(crowded, 30)
    try:
        # most accepted: the header timeout may close the first ones on a slow start
        wait_for(crowded, lambda: open_sockets(pid) >= before + 20, "20 connections accepted")
        with file_limit(pid, lowest_free_descriptor(pid)):
            answer = crowded.ask("check", CHECK, token, url=crowded.direct_checks_url)
            assert answer["verdicts"]
        assert "out of file descriptors" in crowded.log(whole=True)
    finally:
        for connection in held:
            connection.close()
    answers: list[dict[str, object]] = []
    lines = crowded.log(whole=True).count("out of file descriptors")
    with file_limit(pid, 8):  # fewer than it holds: nothing can be opened
        spent = cpu_seconds(pid)
        asking = threading.Thread(
            target=lambda: answers.append(
                crowded.ask("check", CHECK, token, url=crowded.direct_checks_url)
            )
        )
        asking.start()
        time.sleep(3)
        spent = cpu_seconds(pid) - spent
        paused = crowded.log(whole=True).count("out of file descriptors") - lines
    stall_guard.wait_until(lambda: not asking.is_alive(), "ben's check", crowded.signs())
    assert 1 <= paused <= 3 / 0.5 + 2, paused  # at most one a pause, not a spin
    assert spent < 1.5, spent  # a spinning loop takes whatever CPU there is
    assert answers and answers[0]["verdicts"], answers
