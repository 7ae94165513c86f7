"""The check service: a JupyterHub service answering learners' checks over HTTP.

`POST {prefix}api/<action>` with a JSON body (see `judging`) and the learner's hub token
(`Authorization: token $JUPYTERHUB_API_TOKEN`, which every kernel of a hub server
inherits). The hub says whose token it is (`HubAuth.user_for_token`, cached for a few
minutes) and whether it may use this service (`access:services!service=<name>`); the
request's body never names the learner. Answers are JSON: the protocol's answer (200),
{"error"} for a request it cannot answer (400), or a refusal (403).

Run by the hub as a managed service (`hub.add_check_service`), which passes its URL, API
token and prefix in JUPYTERHUB_* variables. It warms up (PyTorch, every exercise) before
it listens, then forks one worker per core sharing the socket: a check costs a few ms of
CPU (reading the answer cells), and a class checks at once. Nothing is stored and bodies
are not logged.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import secrets
import signal
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from jupyterhub.services.auth import HubAuth
from nbgrader.coursedir import CourseDirectory
from tornado import web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.process import fork_processes

from autograder.classroom.checks.judging import BadRequest, Judging
from autograder.core.givens import PUBLIC
from autograder.feedback.references import EXERCISES
from autograder.grading.trusted import course_site
from autograder.sandbox.workers import load_config

MAX_BODY = 4 << 20
PR_SET_PDEATHSIG = 1


class ActionHandler(web.RequestHandler):
    """One protocol action for the learner the hub identifies."""

    def initialize(self, hub_auth: HubAuth, judging: Judging) -> None:
        self.hub_auth = hub_auth
        self.judging = judging

    def check_xsrf_cookie(self) -> None:
        """Token-authenticated API: no cookies, so no cross-site forgery to guard against."""

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.finish({"error": self._reason})

    async def _learner(self) -> str:
        token = self.hub_auth.get_token(self, in_cookie=False)
        if not token:
            raise web.HTTPError(403, reason="no hub token: this kernel is not a hub server's")
        model = await self.hub_auth.user_for_token(token, sync=False)
        if not model:
            raise web.HTTPError(403, reason="the hub does not know this token")
        if model.get("kind", "user") != "user":
            raise web.HTTPError(403, reason="only learners have numbers to check")
        if not self.hub_auth.check_scopes(self.hub_auth.access_scopes, model):
            raise web.HTTPError(403, reason=f"{model['name']} may not use the check service")
        return str(model["name"])

    async def post(self, action: str) -> None:
        user = await self._learner()
        try:
            request = json.loads(self.request.body or b"{}")
            answer = self.judging.answer(action, user, request)
        except (BadRequest, ValueError, TypeError, KeyError, AttributeError) as error:
            raise web.HTTPError(400, reason=str(error)[:400] or type(error).__name__) from None
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(answer))


def make_app(hub_auth: HubAuth, judging: Judging, prefix: str) -> web.Application:
    """The service's tornado application, under `prefix` (e.g. /services/checks/)."""
    route = prefix.rstrip("/") + r"/api/([a-z]+)"
    return web.Application(
        [(route, ActionHandler, {"hub_auth": hub_auth, "judging": judging})],
        log_function=lambda handler: None,
    )


def warm_up(judging: Judging) -> None:
    """Import and compile what every check needs (PyTorch, each exercise's program), so no
    learner's first check pays for it; forked workers inherit it all."""
    for exercise in EXERCISES:
        judging.answer("exercise", "warm-up", {"exercise": exercise})
        judging.answer("check", "warm-up", {"exercise": exercise, "cells": ["x = 1"]})


def _die_with_parent() -> None:
    """A forked worker ends when the service's first process does (the hub stops that one)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() == 1:  # the parent ended before prctl took effect
        os._exit(0)


async def serve(sockets: list[socket.socket], judging: Judging, prefix: str) -> None:
    """Answer checks on `sockets` until cancelled."""
    server = HTTPServer(make_app(HubAuth(), judging, prefix), max_body_size=MAX_BODY)
    server.add_sockets(sockets)
    await asyncio.Event().wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("JUPYTERHUB_SERVICE_URL"))
    parser.add_argument("--prefix", default=os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/"))
    parser.add_argument(
        "--processes", type=int, default=os.cpu_count() or 1, help="default: one per core"
    )
    parser.add_argument(
        "--course-dir", help="the course whose numbers learners get (default: the public seed)"
    )
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("no --url and no JUPYTERHUB_SERVICE_URL: the hub starts this service")
    where = urlparse(args.url)
    sockets = bind_sockets(where.port or 80, where.hostname or "127.0.0.1")
    site = PUBLIC
    if args.course_dir:  # the course's id and secret: the same numbers as the grader's
        site = course_site(CourseDirectory(config=load_config(Path(args.course_dir))))
    judging = Judging(secrets.token_bytes(32), site)  # one secret: any worker unseals any seal
    warm_up(judging)
    print(f"check service on {args.url}, {args.processes} processes", flush=True)
    if args.processes > 1:
        parent = os.getpid()
        fork_processes(args.processes)
        if os.getpid() != parent:
            _die_with_parent()
    asyncio.run(serve(sockets, judging, args.prefix))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
