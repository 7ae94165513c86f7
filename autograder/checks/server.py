"""The check service: a JupyterHub service answering learners' checks over HTTP.

`POST {prefix}api/<action>` with a JSON body (see `judging`) and the learner's hub token
(`Authorization: token $JUPYTERHUB_API_TOKEN`, which every kernel of a hub server
inherits). The hub says whose token it is (`tokens.TokenOwners`: its yes remembered for a
minute, its no for seconds) and whether it may use this service
(`access:services!service=<name>`); the request's body never names the learner, and is
not read before then, nor before the learner is admitted (`admission.Gate`: one check in
flight each, a rate limit). Answers are JSON: the protocol's answer (200), else
{"error": why}: a request it cannot answer (400), a refusal (403), too large (413), not
now (429), busy or no judge (503), stopped at its deadline (504).

Run by the hub as a managed service (`hub.add_check_service`), which passes its URL, API
token and prefix in JUPYTERHUB_* variables. One process serves HTTP (`connections.CheckServer`:
bounded connections, timeouts) and asks the hub (asynchronously: its event loop never
judges), and a pool of judges, forked after the warm-up (PyTorch, every exercise) so none
pays for it, judges the bodies. A judge that has spent `YIELD_AFTER` seconds of CPU on one
request (more than any honest check takes) is niced, so judges of other checks go first,
and replaced once it answers; one that has spent `Limits.deadline` seconds of CPU on one
request (its own time, whatever else the machine runs) is killed and replaced, and the
learner told. Nothing is stored and bodies are not logged.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import os
import pickle
import re
import secrets
import signal
import socket
import struct
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from jupyterhub.services.auth import HubAuth
from nbgrader.coursedir import CourseDirectory
from tornado import web

from autograder.checks.admission import Admission, Gate, Limits, Refused
from autograder.checks.connections import CheckServer, connection_cap
from autograder.checks.judging import BadRequest, Judging
from autograder.checks.tokens import Model, TokenOwners
from autograder.core.givens import PUBLIC, SecretError
from autograder.diagnosis.references import EXERCISES, stored_in
from autograder.grading.trusted import course_site
from autograder.sandbox.settings import CourseConfigError
from autograder.sandbox.workers import STATE_DIR, load_config

PR_SET_PDEATHSIG = 1
SPARE_JUDGES = 2  # judges beyond two per core: slow checks hold some, quick ones go on
WATCHED_EVERY = 0.2  # s between looks at a busy judge's CPU time
YIELD_AFTER = 0.5  # CPU s on one request (honest checks take hundredths): then niced
NICENESS = 10  # a niced judge gets about a tenth of what a judge beside it gets
WAITED = 30.0  # s in all a check may take: the learner's client waits this long
TICKS = os.sysconf("SC_CLK_TCK")

FRAME = struct.Struct("!I")  # length of each pickled message between service and judges


def _judge(judging: Judging, action: str, user: str, body: bytes) -> tuple[int, bytes]:
    """(HTTP status, JSON answer) for one request's body from `user`."""
    try:
        answer = judging.answer(action, user, json.loads(body or b"{}"))
    except (BadRequest, ValueError, TypeError, KeyError, AttributeError) as error:
        return 400, json.dumps({"error": str(error)[:400] or type(error).__name__}).encode()
    return 200, json.dumps(answer).encode()


def _die_with_parent() -> None:
    """A judge ends when the service's first process does (the hub stops that one)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() == 1:  # the parent ended before prctl took effect
        os._exit(0)


def _close_all_but(channel: int) -> None:
    """Close every descriptor but the standard three and `channel`: a judge forked to
    replace one that died would otherwise hold the service's listening socket and every
    learner's open connection (nothing uses them; Python's objects for them are never
    closed again, the judge ends with os._exit)."""
    os.closerange(3, channel)
    os.closerange(channel + 1, os.sysconf("SC_OPEN_MAX"))


def _receive(channel: socket.socket) -> Any:
    """One framed message from `channel` (blocking), or None at its end."""
    header = channel.recv(FRAME.size, socket.MSG_WAITALL)
    if len(header) < FRAME.size:
        return None
    (size,) = FRAME.unpack(header)
    data = channel.recv(size, socket.MSG_WAITALL)
    return pickle.loads(data) if len(data) == size else None


def _judge_forever(judging: Judging, channel: socket.socket) -> None:
    """A judge's life: answer each (action, user, body) from the service, in turn."""
    _die_with_parent()
    while (message := _receive(channel)) is not None:
        answer = pickle.dumps(_judge(judging, *message))
        channel.sendall(FRAME.pack(len(answer)) + answer)
    os._exit(0)


def _cpu_seconds(pid: int) -> float:
    """User and system CPU seconds the process `pid` has spent (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


class DeadlinePassed(Exception):
    """A judge worked on one request longer than its deadline: it was killed, replaced."""


class Judges:
    """Processes forked from the warmed-up service, each judging one request at a time;
    the service's event loop only passes bodies and answers to them (a few microseconds
    of its time per check, through a socket pair each). A judge that dies (killed, out
    of memory) is replaced, and its request gets a 503; one past `limits.deadline` seconds
    of CPU on a request is killed and replaced (DeadlinePassed)."""

    def __init__(self, judging: Judging, processes: int, limits: Limits | None = None) -> None:
        self.judging = judging
        self.processes = processes
        self.limits = limits or Limits()
        self.pids: dict[socket.socket, int] = {}  # the service's end of each judge's pair
        self.stopped = 0  # judges killed at their deadline
        self.niced: set[int] = set()  # judges past YIELD_AFTER on their request
        self.replaced: set[int] = set()  # niced judges whose place a new judge took
        for _ in range(processes):
            self._fork()
        self._idle: asyncio.Queue[socket.socket] | None = None

    def _fork(self) -> socket.socket:
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the judge: it keeps nothing open but its own channel
            try:
                for channel in [ours, *self.pids]:
                    channel.close()
                _close_all_but(theirs.fileno())
                _judge_forever(self.judging, theirs)
            finally:
                os._exit(0)
        theirs.close()
        # asyncio's sock_* calls on a blocking socket block the whole event loop until the
        # judge answers (every other request waits, and no deadline can fire)
        ours.setblocking(False)
        self.pids[ours] = pid
        return ours

    async def judge(self, action: str, user: str, body: bytes) -> tuple[int, bytes]:
        """The answer of the next free judge."""
        if self._idle is None:
            self._idle = asyncio.Queue()
            for channel in self.pids:
                self._idle.put_nowait(channel)
        channel = await self._idle.get()
        pid = self.pids[channel]
        exchange = asyncio.ensure_future(self._exchange(channel, (action, user, body)))
        try:
            answer: tuple[int, bytes] = await self._within_deadline(pid, exchange)
        except BaseException as error:
            # its answer may still come: no later request may read it, so a new judge
            self._retire(channel)
            if isinstance(error, TimeoutError):
                self.stopped += 1
                raise DeadlinePassed from None
            if isinstance(error, OSError | EOFError | pickle.UnpicklingError):
                return 503, json.dumps({"error": "a judge stopped: check again"}).encode()
            raise
        if pid in self.niced:  # a fresh judge, at the usual priority
            self._retire(channel)
        else:
            self._idle.put_nowait(channel)
        return answer

    def _retire(self, channel: socket.socket) -> None:
        """End the judge on `channel`; a new one takes its place unless one already has."""
        replaced = self.pids[channel] in self.replaced
        self._bury(channel)
        if not replaced:
            self._put_fresh()

    def _put_fresh(self) -> None:
        assert self._idle is not None
        self._idle.put_nowait(self._fork())

    def _yield(self, pid: int) -> None:
        """The judge `pid` works on a heavy check: it goes last, and while it does, a new
        judge (up to twice `processes` in all) takes checks in its place."""
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, NICENESS)
        self.niced.add(pid)
        if len(self.pids) < 2 * self.processes:
            self.replaced.add(pid)
            self._put_fresh()

    async def _within_deadline(self, pid: int, exchange: asyncio.Future[Any]) -> Any:
        """`exchange`'s result; TimeoutError once the judge `pid` has spent more than
        `limits.deadline` CPU seconds on it (CPU, not the clock: a busy machine slows a
        check, it does not make it cost more), or WAITED seconds in all (the learner's
        kernel has stopped waiting)."""
        started, until = _cpu_seconds(pid), time.monotonic() + WAITED
        try:
            while True:
                done, _ = await asyncio.wait({exchange}, timeout=WATCHED_EVERY)
                if done:
                    return exchange.result()
                spent = _cpu_seconds(pid) - started
                if spent > self.limits.deadline or time.monotonic() > until:
                    raise TimeoutError
                if spent > YIELD_AFTER and pid not in self.niced:
                    self._yield(pid)
        finally:
            exchange.cancel()

    def _bury(self, channel: socket.socket) -> None:
        pid = self.pids.pop(channel)
        self.niced.discard(pid)
        self.replaced.discard(pid)
        channel.close()
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)

    @staticmethod
    async def _exchange(channel: socket.socket, message: tuple[str, str, bytes]) -> Any:
        loop = asyncio.get_running_loop()
        data = pickle.dumps(message)
        await loop.sock_sendall(channel, FRAME.pack(len(data)) + data)
        header = await _read_exactly(loop, channel, FRAME.size)
        return pickle.loads(await _read_exactly(loop, channel, FRAME.unpack(header)[0]))

    def shutdown(self) -> None:
        """Stop every judge (each reads the end of its channel and exits)."""
        for channel in list(self.pids):
            self._bury(channel)


async def _read_exactly(
    loop: asyncio.AbstractEventLoop, channel: socket.socket, size: int
) -> bytes:
    parts, left = [], size
    while left:
        part = await loop.sock_recv(channel, left)
        if not part:
            raise EOFError("the judge closed its end")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


@web.stream_request_body
class ActionHandler(web.RequestHandler):
    """One protocol action for the learner the hub identifies: who it is and whether they
    are admitted are settled from the headers, before the body is read."""

    SUPPORTED_METHODS = ("POST",)

    def initialize(
        self, hub_auth: HubAuth, owners: TokenOwners, judges: Judges, gate: Gate
    ) -> None:
        self.hub_auth = hub_auth
        self.owners = owners
        self.judges = judges
        self.gate = gate
        self.admission: Admission | None = None
        self.judging = False
        self.chunks: list[bytes] = []

    def check_xsrf_cookie(self) -> None:
        """Token-authenticated API: no cookies, so no cross-site forgery to guard against."""

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.finish({"error": self._reason})

    async def _learner(self) -> str:
        token = self.hub_auth.get_token(self, in_cookie=False)
        if not token:
            raise web.HTTPError(403, reason=NO_TOKEN)
        model = await self.owners.owner(token)
        if not model:
            raise web.HTTPError(403, reason="the hub does not know this token")
        if model.get("kind", "user") != "user":
            raise web.HTTPError(403, reason="only learners have numbers to check")
        if not self.hub_auth.check_scopes(self.hub_auth.access_scopes, model):
            raise web.HTTPError(403, reason=f"{model['name']} may not use the check service")
        return str(model["name"])

    async def prepare(self) -> None:
        """Whose request, and whether it is taken now: before a byte of the body is read."""
        action = self.path_args[0] if self.path_args else ""
        if action not in self.judges.judging.actions:
            valid = ", ".join(self.judges.judging.actions)
            raise web.HTTPError(400, reason=f"no action {action[:40]!r}; valid: {valid}")
        user = await self._learner()
        length = self.request.headers.get("Content-Length")
        limits = self.gate.limits
        try:
            size = int(length) if length is not None else limits.max_body
            self.admission = self.gate.admit(user, max(0, size))
        except ValueError:
            raise web.HTTPError(400, reason="the Content-Length is not a number") from None
        except Refused as refused:
            raise web.HTTPError(refused.status, reason=refused.reason) from None
        connection = self.request.connection
        if connection is not None:
            connection.set_max_body_size(limits.max_body)  # type: ignore[attr-defined]
            connection.set_body_timeout(limits.body_timeout)  # type: ignore[attr-defined]

    def data_received(self, chunk: bytes) -> None:
        self.chunks.append(chunk)

    async def post(self, action: str) -> None:
        assert self.admission is not None  # admitted in prepare
        body, self.chunks = b"".join(self.chunks), []
        self.gate.done_reading(self.admission)
        self.judging = True
        try:
            status, answer = await self.judges.judge(action, self.admission.user, body)
        except DeadlinePassed:
            why = self.gate.stopped(self.admission.user)
            status, answer = 504, json.dumps({"error": why}).encode()
        finally:
            self.gate.release(self.admission)
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(answer)

    def on_finish(self) -> None:
        if self.admission is not None:
            self.gate.release(self.admission)

    def on_connection_close(self) -> None:
        """Gone before its answer: a request whose body was still being read is released
        (one with a judge is released when the judge answers, not before); one still being
        admitted ends in on_finish (tornado fails its body, which never comes)."""
        super().on_connection_close()
        if self.admission is not None and not self.judging:
            self.gate.release(self.admission)


NO_TOKEN = "no hub token: this kernel is not a hub server's"
TOKEN_HEADER = re.compile(rb"^authorization:[ \t]*(?:token|bearer)[ \t]+\S", re.I | re.M)


def no_token_answer(headers: bytes) -> bytes | None:
    """The 403 for a request whose headers (start line included) carry no hub token where
    `HubAuth.get_token` looks (the Authorization header, a `token` URL parameter): sent
    from the connections' doorway, before tornado sees the request; else None."""
    target = headers.split(b"\r\n", 1)[0].split(b" ")[1:2]
    if TOKEN_HEADER.search(headers) or (target and b"token=" in target[0]):
        return None
    body = json.dumps({"error": NO_TOKEN}).encode()
    return (
        b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json; charset=UTF-8\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
    )


HUB_QUESTIONS = 4  # asked at once: a class's first checks reuse a few connections to the
# hub instead of opening one each


def hub_owners(hub_auth: HubAuth) -> TokenOwners:
    """Token owners asked of the hub through `hub_auth` (its own unbounded cache unused)."""
    asking = asyncio.Semaphore(HUB_QUESTIONS)

    async def ask_hub(token: str) -> Model | None:
        async with asking:
            model: Model | None = await hub_auth.user_for_token(token, use_cache=False, sync=False)
        return model

    return TokenOwners(ask_hub)


def make_app(hub_auth: HubAuth, judges: Judges, prefix: str) -> web.Application:
    """The service's tornado application, under `prefix` (e.g. /services/checks/)."""
    route = prefix.rstrip("/") + r"/api/([a-z]+)"
    handlers = {
        "hub_auth": hub_auth,
        "owners": hub_owners(hub_auth),
        "judges": judges,
        "gate": Gate(judges.limits),
    }
    return web.Application([(route, ActionHandler, handlers)], log_function=lambda _: None)


def warm_up(judging: Judging) -> None:
    """Import and compile what every check needs (PyTorch, each exercise's program, and
    what explains a wrong answer: SymPy), so no learner's first check pays for it (a
    judge forked without it took 1.5 s for its first wrong answer); the forked judges
    inherit it all."""
    for exercise in EXERCISES:
        about = judging.answer("exercise", "warm-up", {"exercise": exercise})
        wrong = [f"{name} = 1.0" for name in about["hand_parts"] if name.isidentifier()]
        judging.answer("check", "warm-up", {"exercise": exercise, "cells": ["x = 1", *wrong]})


async def serve(judges: Judges, host: str, port: int, prefix: str) -> None:
    """Answer checks on `host`:`port` until cancelled."""
    limits = judges.limits
    server = CheckServer(
        make_app(HubAuth(), judges, prefix),
        max_body_size=limits.max_body,
        idle_connection_timeout=limits.header_timeout,
        body_timeout=limits.body_timeout,
    )
    cap = connection_cap(limits.max_connections, kept_open=2 * judges.processes)
    server.serve_on(port, host, cap, limits.header_timeout, no_token_answer)
    print(f"check service: at most {cap} connections", flush=True)
    await asyncio.Event().wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("JUPYTERHUB_SERVICE_URL"))
    parser.add_argument("--prefix", default=os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/"))
    parser.add_argument(
        "--processes",
        type=int,
        default=2 * (os.cpu_count() or 1) + SPARE_JUDGES,
        help=f"judges (default: two per core and {SPARE_JUDGES})",
    )
    for option, (kind, default) in Limits.options().items():
        parser.add_argument(f"--{option}", type=kind, default=default, help=f"(default {default})")
    parser.add_argument(
        "--course-dir", help="the course whose numbers learners get (default: the public seed)"
    )
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("no --url and no JUPYTERHUB_SERVICE_URL: the hub starts this service")
    where = urlparse(args.url)
    site, kept = PUBLIC, contextlib.ExitStack()
    if args.course_dir:  # the course's id and secret: the same numbers as the grader's
        course = Path(args.course_dir)
        try:
            site = course_site(CourseDirectory(config=load_config(course)))
        except (CourseConfigError, SecretError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        # reference values computed once, by the grader or by the service, for both
        kept.enter_context(stored_in(course / STATE_DIR / "references"))
    judging = Judging(secrets.token_bytes(32), site)  # one secret: any judge unseals any seal
    warm_up(judging)
    # the warmed-up heap (PyTorch, every exercise) stays out of the collector's full scans,
    # here and in the forked judges: one such scan stalled a whole round of checks
    gc.collect()
    gc.freeze()
    limits = Limits(**{f.name: getattr(args, f.name) for f in fields(Limits)})
    judges = Judges(judging, max(1, args.processes), limits)
    print(f"check service on {args.url}, {judges.processes} judges", flush=True)
    with kept:
        try:
            asyncio.run(serve(judges, where.hostname or "127.0.0.1", where.port or 80, args.prefix))
        finally:
            judges.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
