"""A real JupyterHub with the class check service, and students' kernels that use it.

`CheckHub.start(root, learners)` writes a hub config (its own free loopback ports, the
course's configurable-http-proxy, users who exist only in the hub: the test creates them
and their API tokens through the hub's REST API as an admin service), adds the check
service with the class hook (`checks.hub.add_check_service`) and starts
`jupyterhub`. `StudentsEnvironment` is what a class gives students: a fresh venv holding
the answer-free `autograder` and `autograd_lessons` (`learner_package.install`), with
the course environment's third-party packages reachable through a folder of links (not
the course's own package, nor its editable-install hooks). `StudentKernel` is an IPython
kernel of that environment with a learner's token, as a hub server's kernel has.
`student_account()` makes an ordinary account for the test, and `search_as(account, ...)`
reads, as that account, every file it can under some folders, looking for answer text
(`answer_texts()`: what only the answer key holds).
Used by tests/checks/test_check_service.py and benchmarks/check_latency.py.
"""

from __future__ import annotations

import ast
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any

import nbformat
import process_tree
import stall_guard
from ports import free_port

REPO = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)
PROXY = REPO / "deploy" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
COURSE_OWN = ("__editable__", "backward_course", "autograder", "autograd_lessons")

CONFIG = """\
import sys
from autograder.checks.hub import add_check_service

c = get_config()
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.pid_file = {pid_file!r}
c.JupyterHub.db_url = "sqlite:///{root}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{root}/cookie_secret"
c.JupyterHub.authenticator_class = "dummy"  # users exist only in the hub (REST API)
c.Authenticator.allow_all = True
c.JupyterHub.services = [{{"name": "test-admin", "api_token": {admin_token!r}}}]
c.JupyterHub.load_roles = [
    {{"name": "test-admin", "scopes": ["admin:users", "tokens"], "services": ["test-admin"]}}
]
add_check_service(c, sys.executable, {service_port}, options={options!r})
"""


def _limit_files(soft: int) -> None:
    """In a child before exec: at most `soft` open descriptors (the hard limit kept)."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@dataclass
class CheckHub:
    root: Path
    port: int
    service_port: int
    admin_token: str
    process: subprocess.Popen[bytes]
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def checks_url(self) -> str:
        """The service through the hub's proxy (what a browser would use)."""
        return f"{self.url}/services/checks/"

    @property
    def direct_checks_url(self) -> str:
        """The service as servers reach it (AUTOGRADER_CHECKS_URL in the class hub)."""
        return f"http://127.0.0.1:{self.service_port}/services/checks/"

    @classmethod
    def start(
        cls,
        root: Path,
        learners: list[str],
        options: list[str] | None = None,
        file_limit: int | None = None,
        service_port: int | None = None,
    ) -> CheckHub:
        """The hub, its check service run with `options` (its limits), each with at most
        `file_limit` open descriptors if given (the soft limit, as many systems' 1024); the
        service on `service_port` if given, else on a free one."""
        root.mkdir(parents=True, exist_ok=True)
        port, admin = free_port(), secrets.token_hex(16)
        service_port = service_port or free_port()
        config = CONFIG.format(
            port=port, hub_port=free_port(), proxy_api_port=free_port(), proxy=str(PROXY),
            pid_file=str(root / "proxy.pid"), root=root, admin_token=admin,
            service_port=service_port, options=options or [],
        )  # fmt: skip
        (root / "jupyterhub_config.py").write_text(config)
        log = open(root / "hub.log", "wb")  # noqa: SIM115 (closed with the process)
        env = {**os.environ, "PATH": f"{VENV / 'bin'}:{os.environ['PATH']}"}
        process = subprocess.Popen(
            [str(VENV / "bin" / "jupyterhub"), "-f", str(root / "jupyterhub_config.py")],
            cwd=root, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            preexec_fn=None if file_limit is None else lambda: _limit_files(file_limit),
        )  # fmt: skip
        hub = cls(root, port, service_port, admin, process)
        try:
            hub._wait_up()
            hub.api("POST", "/users", {"usernames": learners})
            for name in learners:
                hub.tokens[name] = hub.new_token(name)
        except BaseException:
            hub.stop()
            raise
        return hub

    def _wait_up(self) -> None:
        """Until the service refuses a request without a token, in its own words, both
        through the proxy and at its own port. Anything else answering at the service's
        port (a server that took the port meant for it) fails the start at once."""
        from autograder.checks.server import NO_TOKEN

        def refused_by_the_service(url: str | None) -> bool:
            try:
                self.ask("exercise", {}, token="", url=url)
            except urllib.error.HTTPError as error:
                body = error.read()
                if (
                    error.code == 403
                    and body.startswith(b"{")
                    and json.loads(body).get("error") == NO_TOKEN
                ):
                    return True
                answer = f"{error.code} {body[:300]!r}"
            except OSError:
                return False  # nothing listens there yet
            except ValueError as error:
                answer = f"an answer that is not JSON: {error}"
            else:
                raise AssertionError("the check service answered a request without a token")
            if url is None:
                return False  # the hub's own answer, before its proxy routes to the service
            raise AssertionError(f"not the check service at {url}: {answer}\n{self.log()}")

        def up() -> bool:
            assert self.process.poll() is None, f"the hub exited:\n{self.log()}"
            return all(refused_by_the_service(url) for url in (self.direct_checks_url, None))

        log = self.root / "hub.log"
        stall_guard.wait_for_server(up, "the check hub, starting", self.process, log)

    def api(self, method: str, path: str, body: object = None) -> Any:
        """The hub's REST API as the admin service."""
        request = urllib.request.Request(
            f"{self.url}/hub/api{path}",
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.admin_token}"},
            method=method,
        )

        def answer() -> Any:
            with urllib.request.urlopen(request) as response:
                return json.loads(response.read() or b"null")

        return stall_guard.call(answer, f"the hub's API: {method} {path}", self.signs())

    def signs(self) -> list[stall_guard.Sign]:
        """The hub's work: what it started (the proxy, the service and its judges) using
        CPU time, its log growing."""
        return [
            stall_guard.work_below(self.process.pid),
            stall_guard.size_of(self.root / "hub.log"),
        ]

    def new_token(self, name: str, scopes: list[str] | None = None) -> str:
        from autograder.checks.hub import ACCESS

        body = {"scopes": [ACCESS] if scopes is None else scopes, "note": "check test"}
        return str(self.api("POST", f"/users/{name}/tokens", body)["token"])

    def ask(
        self, action: str, request: dict[str, Any], token: str, url: str | None = None
    ) -> dict[str, Any]:
        """One protocol request with `token` (through the proxy unless `url`)."""
        message = urllib.request.Request(
            f"{url or self.checks_url}api/{action}",
            data=json.dumps(request).encode(),
            headers={"Authorization": f"token {token}"},
            method="POST",
        )

        def answer() -> dict[str, Any]:
            with urllib.request.urlopen(message) as response:
                answered: dict[str, Any] = json.loads(response.read())
                return answered

        return stall_guard.call(answer, f"the check service: {action}", self.signs())

    def log(self, whole: bool = False) -> str:
        """The hub's log (its services' too): its end, or `whole`."""
        path = self.root / "hub.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return text if whole else text[-6000:]

    def stop(self) -> None:
        """Stop the hub, and whatever it started that its own clean-up left running."""
        left = stall_guard.stop_group(self.process, "the check hub, stopping", self.signs())
        if left:  # its proxy and its service run in sessions of their own
            print(f"the check hub left processes running, killed: {left}", file=sys.stderr)
        # a hub that exited by itself (its service could not start) left its proxy running
        if proxy := process_tree.end_recorded(
            self.root / "proxy.pid", *process_tree.proxy_marks(self.port)
        ):
            print(f"the check hub left its proxy running, killed: {proxy}", file=sys.stderr)


@dataclass
class StudentsEnvironment:
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "venv" / "bin" / "python"

    @property
    def site_packages(self) -> Path:
        return next((self.root / "venv" / "lib").glob("python*/site-packages"))

    @classmethod
    def build(cls, root: Path) -> StudentsEnvironment:
        from autograder.checks.learner_package import install

        venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        env = cls(root)
        links = root / "third_party"
        links.mkdir()
        course_site = next((VENV / "lib").glob("python*/site-packages"))
        for entry in course_site.iterdir():
            if entry.name.startswith(COURSE_OWN) or entry.suffix == ".pth":
                continue
            (links / entry.name).symlink_to(entry)
        (env.site_packages / "third_party.pth").write_text(f"{links}\n")
        install(env.site_packages)
        return env


class StudentKernel:
    """An IPython kernel of the students' environment, as `learner`'s hub server starts it."""

    def __init__(self, environment: StudentsEnvironment, token: str, checks_url: str) -> None:
        self.environment = environment
        self.env = {
            "PATH": f"{environment.python.parent}:/usr/bin:/bin",
            "HOME": str(environment.root),
            "LANG": "C.UTF-8",
            "JUPYTERHUB_API_TOKEN": token,
            "AUTOGRADER_CHECKS_URL": checks_url,
            "MPLBACKEND": "agg",
        }

    def __enter__(self) -> StudentKernel:
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager

        specs = self.environment.root / "kernels"
        spec = specs / "students"
        if not spec.exists():
            spec.mkdir(parents=True)
            argv = [str(self.environment.python), "-m", "ipykernel_launcher"]
            argv += ["-f", "{connection_file}"]
            (spec / "kernel.json").write_text(
                json.dumps({"argv": argv, "display_name": "students", "language": "python"})
            )
        # on Unix sockets in a folder of its own: TCP ports picked free can be taken by a
        # process side by side before the kernel binds them (nbgrader_course.py)
        self.sockets = tempfile.TemporaryDirectory(prefix="kernel-")
        self.manager = KernelManager(
            kernel_name="students",
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(specs)]),
            transport="ipc",
            ip=f"{self.sockets.name}/k",
        )
        home = self.environment.root / "home"  # a student's kernel runs in their folder
        home.mkdir(exist_ok=True)
        self.manager.start_kernel(env=self.env, cwd=str(home))
        self.client = self.manager.blocking_client()
        self.client.start_channels()

        def ready() -> bool:
            try:
                self.client.wait_for_ready(timeout=stall_guard.POLL_SECONDS)
            except RuntimeError:  # no answer yet
                return False
            return True

        kernel = stall_guard.cpu_of(self.manager.provisioner.pid)
        stall_guard.wait_until(ready, "the students' kernel, starting", [kernel])
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
        self.sockets.cleanup()

    def run(self, code: str) -> tuple[str, str | None]:
        """(what the cell printed, the error's text or None); `Stalled` when the kernel
        neither answers nor computes for `stall_guard.STALL_SECONDS`."""
        msg_id = self.client.execute(code, store_history=True)
        printed, error = [], None
        kernel = stall_guard.cpu_of(self.manager.provisioner.pid)
        watch = stall_guard.Watch(f"the students' kernel, running:\n{code[:300]}", [kernel])
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=stall_guard.POLL_SECONDS)
            except Empty:
                watch.check()
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                printed.append(content["text"])
            elif kind == "error":
                error = f"{content['ename']}: {content['evalue']}"
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(printed), error


def answer_texts() -> list[str]:
    """Text only the answer key holds: the solutions' answer blocks (those longer than a
    lesson's one-line formula), and the specs' strings (mistakes, references, programs)
    that the released exercises do not show."""
    released = " ".join(p.read_text() for p in (REPO / "exercises").rglob("*.ipynb"))
    found: set[str] = set()
    for nb in (REPO / "solutions").glob("*/*.ipynb"):
        for cell in nbformat.read(nb, as_version=4).cells:
            source = cell.source if cell.cell_type == "code" else ""
            for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", source, re.S):
                if block.strip().count("\n") >= 1 or len(block.strip()) >= 30:
                    found.add(block.strip())
    spec_files = [*(REPO / "autograder" / "specs").glob("*.py")]
    spec_files += [*(REPO / "autograder" / "answers").glob("*.py")]
    for path in spec_files:
        tree = ast.parse(path.read_text())
        docstrings = {
            ast.get_docstring(n, clean=False)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                if (
                    len(text) >= 25
                    and text not in docstrings
                    and json.dumps(text, ensure_ascii=False)[1:-1] not in released
                ):
                    found.add(text)
            if isinstance(node, ast.FunctionDef) and len(node.name) >= 12:
                found.add(f"def {node.name}(")
    return sorted(found)


@contextmanager
def student_account() -> Iterator[str]:
    """An ordinary account made for the test (no home, no login shell); removed after."""
    name = "agstu" + secrets.token_hex(3)
    subprocess.run(
        ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True
    )
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=False)


# Run by Debian's own Python as the account (the course's Python may sit where it cannot
# go): argv[1] is a JSON file of the needles, the rest are folders. Walks each without
# following links, reads every regular file it may (at most MAX_READ bytes of each), and
# prints {"found": {path: [needles]}, "read": files read, "refused": files it could not}.
SEARCH = r"""
import json, os, sys
MAX_READ = 64 << 20
needles = [n.encode() for n in json.load(open(sys.argv[1]))]
found, read, refused = {}, 0, 0
for root in sys.argv[2:]:
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            try:
                with open(path, "rb") as f:
                    data = f.read(MAX_READ)
            except OSError:
                refused += 1
                continue
            read += 1
            hits = [n.decode()[:60] for n in needles if n in data]
            if hits:
                found[path] = hits
print(json.dumps({"found": found, "read": read, "refused": refused}))
"""


def search_as(account: str, needles: list[str], roots: list[Path]) -> dict[str, Any]:
    """What `account` finds of `needles` in the files it can read under `roots`."""
    with open_folder() as shared:
        wanted = shared / "needles.json"
        wanted.write_text(json.dumps(needles))
        wanted.chmod(0o644)
        done = stall_guard.run(
            ["runuser", "-u", account, "--", "/usr/bin/python3", "-I", "-c", SEARCH,
             str(wanted), *map(str, roots)],
            capture_output=True, text=True, cwd="/",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@contextmanager
def open_folder() -> Iterator[Path]:
    """A new folder every account may read (root's, under /var/tmp); removed after."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="checks-", dir="/var/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
