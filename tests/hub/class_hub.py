"""A real class on this machine for the end-to-end test: local users, `make class`'s hub.

`ClassHub.start()` (as root) creates an instructor and students as local accounts with
random passwords, a course owned by the instructor (one assignment, nbgrader's exchange
in a temporary folder and a PostgreSQL gradebook set through the course's untracked
site_config.py; the server is tests/pg_server.py's, with password authentication and the
password in the instructor's ~/.pgpass, as `make postgres` sets one up; with
CLASS_HUB_GRADEBOOK=sqlite, gradebook.db in the course folder instead), readies and
releases the assignment as the instructor, and starts deploy/hub/start_class.py on free
loopback ports, with the students' environment (which the hub builds, as `make class`
does) kept between runs in `STUDENT_ENV` (the pinned stack takes minutes to install;
serve.py refreshes the course's packages in it every start). That environment holds the
students' config (this run's exchange), so one run at a time uses it: `start()` waits for
its lock (`student_env_lock`), held until `stop()`; a second run on the machine waits for
the first instead of sending its students' hand-ins to the first one's exchange. `stop()`
stops the hub (which stops every user's server), deletes the accounts with their homes,
and the folder.

This machine's Python lives under /root, which other users cannot enter; a real class
builds the venv from a Python every user can run (serve.py refuses otherwise). Here the
hub, and every command run as a class member, run in a private mount namespace in which
/root is passable and holds only that interpreter (`REACH_PYTHON`); nothing changes
outside it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import process_tree  # tests/ (conftest.py puts it on the path)
import stall_guard
from class_privacy import roster_group_name  # deploy/hub (on the path, as for the tests)
from page_steps import new_context, patiently
from ports import free_port

from autograder.sandbox.workers import v1_hierarchies

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from playwright.sync_api import Browser, Page

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
ASSIGNMENT = "03_a_neuron_by_hand"
COURSE_ID = "backward-hubtest"
# The gradebook: a PostgreSQL server (as a shared class runs it), or with
# CLASS_HUB_GRADEBOOK=sqlite gradebook.db in the course folder (the pytest suite's
# gradebook: tests/service/test_grading_service.py, tests/service/test_handins.py and others).
GRADEBOOKS = ("postgresql", "sqlite")
GRADEBOOK = os.environ.get("CLASS_HUB_GRADEBOOK", "postgresql")
if GRADEBOOK not in GRADEBOOKS:
    raise RuntimeError(f"CLASS_HUB_GRADEBOOK={GRADEBOOK!r}: one of {', '.join(GRADEBOOKS)}")
POSTGRES = GRADEBOOK == "postgresql"
PROFILES = ("ada", "ben", "dee")  # the sample class's: right, wrong, blank
STUDENT_ENV = Path("/var/tmp/autograder-hubtest-students")

REACH_PYTHON = """\
set -e
real="$1"; hold="$2"; shift 2
mount --bind "$real" "$hold"
mount -t tmpfs -o mode=0711 tmpfs /root
mkdir -p "$real"
mount --bind "$hold" "$real"
exec "$@"
"""


def interpreter_home() -> Path | None:
    """The Python installation under /root that others must reach (None: not needed)."""
    real = Path(os.path.realpath(VENV_BIN / "python"))
    if not str(real).startswith("/root/"):
        return None
    return real.parent.parent  # .../versions/3.11.7


@contextlib.contextmanager
def student_env_lock() -> Iterator[None]:
    """Hold `STUDENT_ENV` for this run alone (an flock on a file beside it, released when
    the process ends however it ends); waits for another run to finish for as long as that
    run (the pid it wrote in the file, with the hub and services it started) works."""
    path = STUDENT_ENV.with_name(STUDENT_ENV.name + ".lock")
    with open(path, "a+") as lock:

        def holder() -> str:
            lock.seek(0)
            return lock.read().strip() or "unknown"

        def taken() -> bool:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                return False

        if not taken():
            print(f"waiting for another class hub test (pid {holder()}) to release "
                  f"{STUDENT_ENV}", file=sys.stderr, flush=True)  # fmt: skip
            other = stall_guard.CpuSign(
                lambda: stall_guard.cpu_ticks(int(h)) if (h := holder()).isdigit() else 0
            )
            stall_guard.wait_until(
                taken, f"another class hub test holding {STUDENT_ENV} ({path})", [other]
            )
        lock.truncate(0)
        lock.write(str(os.getpid()))
        lock.flush()
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@dataclass
class ClassHub:
    root: Path
    instructor: str
    students: list[str]
    passwords: dict[str, str] = field(default_factory=dict)
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    created: list[str] = field(default_factory=list)  # accounts this run made (and removes)
    db_url: str = ""  # the gradebook, as the class's programs reach it (password: .pgpass)
    db_password: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    resources: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    @property
    def root_db_url(self) -> str:
        """The gradebook's URL with its password (the test's own queries, as root)."""
        if not self.db_url:
            return f"sqlite:///{self.course / 'gradebook.db'}"
        return self.db_url.replace("grader@", f"grader:{self.db_password}@")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def course(self) -> Path:
        return self.root / "course"

    @property
    def exchange(self) -> Path:
        return self.root / "exchange"

    def wrap(self, command: list[str]) -> list[str]:
        """`command` in a namespace where class members can run the venv's Python."""
        home = interpreter_home()
        if home is None:
            return command
        hold = self.root / "python-hold"
        hold.mkdir(exist_ok=True)
        script = self.root / "reach_python.sh"
        script.write_text(REACH_PYTHON)
        return [
            "unshare", "--mount", "--propagation", "private",
            "sh", str(script), str(home), str(hold), *command,
        ]  # fmt: skip

    def bin_of(self, user: str) -> Path:
        """The venv `user` runs: the course's for the instructor, the students' for others."""
        return VENV_BIN if user == self.instructor else STUDENT_ENV / "bin"

    def user_command(self, user: str, *command: str) -> list[str]:
        """`command` as `user` (login environment, their venv on PATH); runuser forks it."""
        home = pwd.getpwnam(user).pw_dir
        path = f"PATH={self.bin_of(user)}:/usr/bin:/bin"
        env = ["env", "-i", f"HOME={home}", f"USER={user}", path, "LANG=C.UTF-8"]
        return self.wrap(["runuser", "-u", user, "--", *env, *command])

    def as_user(
        self, user: str, *command: str, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run a command as `user` (login environment, the venv on PATH)."""
        if cwd is None:  # the course folder is the instructor's alone
            cwd = self.course if user == self.instructor else Path(pwd.getpwnam(user).pw_dir)
        return stall_guard.run(
            self.user_command(user, *command), cwd=cwd, capture_output=True, text=True
        )

    def start_as(self, user: str, *command: str) -> subprocess.Popen[str]:
        """Start a long-running command as `user` in the course folder, its output (stdout
        and stderr) piped line by line. Stop it with `signal_command`, not the Popen's pid
        (runuser would answer a signal by killing the command two seconds later)."""
        return subprocess.Popen(
            self.user_command(user, *command),
            cwd=self.course,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            start_new_session=True,
        )

    @staticmethod
    def signal_command(process: subprocess.Popen[str], signum: int) -> None:
        """Send `signum` to the command `start_as` started (runuser's child; the Popen's pid
        is runuser, which `wrap` execs into)."""
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        pids = children.read_text().split() if children.exists() else []
        assert len(pids) == 1, f"runuser {process.pid} has children {pids}, not one command"
        os.kill(int(pids[0]), signum)

    def check_as(self, user: str, *command: str) -> str:
        done = self.as_user(user, *command)
        assert done.returncode == 0, f"{' '.join(command)} as {user}:\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    @classmethod
    def start(cls) -> ClassHub:
        assert os.geteuid() == 0, "the class hub test runs as root (it creates users)"
        root = Path(tempfile.mkdtemp(prefix="class-hub-"))
        root.chmod(0o755)
        tag = secrets.token_hex(3)
        # accounts of this run alone (named after the sample class's profiles they play;
        # their answered notebooks are written for their own numbers: `answered`)
        hub = cls(root, f"bch{tag}-teacher", [f"{p}{tag}" for p in PROFILES])
        try:
            hub.resources.enter_context(student_env_lock())
            if POSTGRES:
                from pg_server import running_postgres

                hub.db_url = hub.resources.enter_context(running_postgres(hub.db_password))
            hub._create_users()
            hub._create_course()
            hub._start_hub()
            hub._release()
        except BaseException:
            hub.stop()
            raise
        return hub

    def answered(self, user: str, profile: str) -> Path:
        """The notebook the sample class's `profile` hands in, answered with `user`'s own
        numbers (tools/make_sample_class.py writes it as for the sample class)."""
        import dataclasses
        import importlib.util

        import nbformat

        spec = importlib.util.spec_from_file_location(
            "make_sample_class", REPO / "tools" / "make_sample_class.py"
        )
        assert spec is not None and spec.loader is not None
        sample = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sample)
        student = next(s for s in sample.STUDENTS if s.name == profile)
        release = nbformat.read(REPO / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
        notebook = sample.submission(release, ASSIGNMENT, dataclasses.replace(student, name=user))
        path = self.root / "answers" / f"{user}.ipynb"
        path.parent.mkdir(exist_ok=True)
        path.parent.chmod(0o755)
        nbformat.write(notebook, path)
        path.chmod(0o644)
        return path

    def _create_users(self) -> None:
        for user in [self.instructor, *self.students]:
            try:
                pwd.getpwnam(user)
            except KeyError:
                pass
            else:
                raise RuntimeError(f"a local account {user!r} exists already: the test needs it")
            subprocess.run(["useradd", "-m", "-s", "/bin/bash", user], check=True)
            self.created.append(user)
            self.passwords[user] = secrets.token_urlsafe(12)
            subprocess.run(
                ["chpasswd"], input=f"{user}:{self.passwords[user]}\n", text=True, check=True
            )

    def _create_course(self) -> None:
        course = self.course
        (course / "solutions").mkdir(parents=True)
        shutil.copytree(REPO / "solutions" / ASSIGNMENT, course / "solutions" / ASSIGNMENT)
        shutil.copy(REPO / "nbgrader_config.py", course)
        (course / "site_config.py").write_text(
            "c = get_config()\n"
            f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
            f"c.Exchange.root = {str(self.exchange)!r}\n"
            f"c.Sandbox.cgroup_parent = {self.cgroup_name()!r}\n"
        )
        if self.db_url:
            self._postgres_gradebook()
        self._delegate_cgroups()
        subprocess.run(["chown", "-R", self.instructor, str(course)], check=True)

    def _postgres_gradebook(self) -> None:
        """The course's gradebook on the PostgreSQL server; its password in the
        instructor's ~/.pgpass (as `make postgres` leaves it)."""
        with open(self.course / "site_config.py", "a") as site:
            site.write(f"c.CourseDirectory.db_url = {self.db_url!r}\n")
        account = pwd.getpwnam(self.instructor)
        pgpass = Path(account.pw_dir) / ".pgpass"
        host_port_db = self.db_url.split("@")[1].replace("/", ":")
        pgpass.write_text(f"{host_port_db}:grader:{self.db_password}\n")
        os.chown(pgpass, account.pw_uid, account.pw_gid)
        pgpass.chmod(0o600)

    def cgroup_name(self) -> str:
        return f"/autograder-{self.instructor}"

    def cgroup_dirs(self) -> list[Path]:
        return [Path("/sys/fs/cgroup") / c / self.cgroup_name()[1:] for c in v1_hierarchies()]

    def _delegate_cgroups(self) -> None:
        """What an administrator does once for the grader's account (the sandbox's limits
        per notebook need cgroups the grader may create): a subtree of their own."""
        for folder in self.cgroup_dirs():
            folder.mkdir(parents=True, exist_ok=True)
            subprocess.run(["chown", "-R", self.instructor, str(folder)], check=True)

    def _start_hub(self) -> None:
        self.port = free_port()
        log = open(self.root / "hub.log", "wb")  # noqa: SIM115 (closed with the process)
        command = [
            str(VENV_BIN / "python"), str(REPO / "deploy" / "hub" / "start_class.py"),
            "--instructor", self.instructor, "--course-dir", str(self.course),
            "--state", str(self.root / "state"), "--port", str(self.port),
            "--hub-port", str(free_port()), "--proxy-api-port", str(free_port()),
            "--student-env", str(STUDENT_ENV), "--users", *self.students,
        ]  # fmt: skip
        self.process = subprocess.Popen(
            self.wrap(command), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

        def up() -> bool:
            assert self.process.poll() is None, f"the hub exited:\n{self.log()}"
            try:
                with urllib.request.urlopen(f"{self.url}/hub/login", timeout=5) as response:
                    return bool(response.status == 200)
            except OSError:
                return False

        # a first run installs the students' stack: a long wait, its processes busy
        what, written = "the class hub, starting", self.root / "hub.log"
        stall_guard.wait_for_server(up, what, self.process, written)

    def signs(self) -> list[stall_guard.Sign]:
        """The class's work: what the hub started (users' servers and kernels, the proxy,
        the check service) using CPU time, the hub's log growing."""
        assert self.process is not None
        return [
            stall_guard.work_below(self.process.pid),
            stall_guard.size_of(self.root / "hub.log"),
        ]

    def patiently(self, step: Callable[[float], T], what: str, *more: stall_guard.Sign) -> T:
        """`step(timeout_ms)`, a Playwright wait on the class's work, for as long as the
        class (and `more`) works (page_steps.patiently)."""
        return patiently(step, what, [*self.signs(), *more])

    def _release(self) -> None:
        """`make assign` and `nbgrader release_assignment`, as the instructor."""
        python = str(VENV_BIN / "python")
        self.check_as(self.instructor, python, "-m", "autograder.authoring.release", "--assign",
                      "--repo", str(self.course), ASSIGNMENT)  # fmt: skip
        self.check_as(self.instructor, "nbgrader", "release_assignment", ASSIGNMENT)

    def log(self) -> str:
        path = self.root / "hub.log"
        return path.read_text(errors="replace")[-6000:] if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None:  # the hub stops its users' servers
            stopping = "the class hub, stopping"
            if left := stall_guard.stop_group(self.process, stopping, self.signs()):
                print(f"the class hub left processes running, killed: {left}", file=sys.stderr)
            # a hub that exited by itself left its proxy running: its pid file names it
            proxy_pid_file = self.root / "state" / "hub" / "proxy.pid"
            marks = process_tree.proxy_marks(self.port)
            if proxy := process_tree.end_recorded(proxy_pid_file, *marks):
                print(f"the class hub left its proxy running, killed: {proxy}", file=sys.stderr)
        for user in self.created:
            deadline = time.monotonic() + 120
            while True:
                done = subprocess.run(["userdel", "-r", user], capture_output=True, text=True)
                if done.returncode in (0, 6):  # deleted, or never created
                    break
                if time.monotonic() > deadline:  # said, not raised: the rest is cleaned up
                    print(f"userdel {user} kept failing: {done.stderr}", file=sys.stderr)
                    break
                time.sleep(0.5)  # a process of theirs is still exiting
        # the roster's group `make class` made (class_privacy.roster_group)
        subprocess.run(["groupdel", roster_group_name(COURSE_ID)], capture_output=True)
        for folder in self.cgroup_dirs():  # cgroups are removed leaves first, with rmdir
            for child in sorted(folder.glob("**/"), key=lambda p: -len(p.parts)):
                with contextlib.suppress(OSError):
                    child.rmdir()
        shutil.rmtree(self.root, ignore_errors=True)
        self.resources.close()  # the PostgreSQL server


def log_in(browser: Browser, hub: ClassHub, user: str) -> Page:
    """A new browser context logged in to the hub as `user`, on their JupyterLab."""
    context = new_context(browser, viewport={"width": 1300, "height": 900})
    page = context.new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub.passwords[user])
    page.click("#login_submit")
    hub.patiently(
        lambda ms: page.wait_for_selector(".jp-LabShell", timeout=ms), f"{user}'s JupyterLab"
    )
    return page
