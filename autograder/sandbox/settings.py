"""The sandbox's settings (`c.Sandbox.*` in nbgrader_config.py) and who it runs as.

Identity: graded as root, the worker runs as an unprivileged user (`Sandbox.user`,
default `nobody`); graded as an ordinary user, as that user. Either way its user
namespace maps to that unprivileged uid, never to root.
"""

from __future__ import annotations

import os
import pwd
import traceback
from dataclasses import dataclass
from pathlib import Path

from traitlets import Bool, Enum, Float, Int, Unicode
from traitlets.config import Config, Configurable
from traitlets.config.loader import PyFileConfigLoader

STATE_DIR = ".autograder"  # the grader's own state in the course folder (markers, logs)


class CourseConfigError(ValueError):
    """The course's nbgrader configuration cannot be read; the message names the file."""


def config_files(course_dir: Path) -> set[Path]:
    """The files a course's configuration is read from: nbgrader_config.py and its site
    config (NBGRADER_SITE_CONFIG, or site_config.py beside it)."""
    site = os.environ.get("NBGRADER_SITE_CONFIG") or str(course_dir / "site_config.py")
    return {(course_dir / "nbgrader_config.py").resolve(), Path(site).resolve()}


def where_it_failed(error: BaseException, course_dir: Path) -> str:
    """`file, line N` of the configuration file an error arose in (the innermost frame
    in one), or nbgrader_config.py itself."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}, line {error.lineno}"
    ours = config_files(course_dir)
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if Path(frame.filename).resolve() in ours
    ]
    if frames:
        return f"{frames[-1].filename}, line {frames[-1].lineno}"
    return str(course_dir / "nbgrader_config.py")


def load_config(course_dir: Path) -> Config:
    """The course's nbgrader configuration, rooted at `course_dir` (the sandbox's limits
    are in it, so a worker can be started before nbgrader itself is imported).
    CourseConfigError names the file and line where reading it failed."""
    config = Config()
    path = course_dir / "nbgrader_config.py"
    if path.exists():
        try:
            config = PyFileConfigLoader(path.name, path=str(course_dir)).load_config()
        except Exception as error:
            what = error.msg if isinstance(error, SyntaxError) else error
            where = where_it_failed(error, course_dir)
            raise CourseConfigError(
                f"the course's configuration cannot be read: {where}: "
                f"{type(error).__name__}: {what}"
            ) from None
    config.CourseDirectory.root = str(course_dir)
    if "db_url" not in config.CourseDirectory:
        config.CourseDirectory.db_url = f"sqlite:///{course_dir / 'gradebook.db'}"
    return config


def worker_log_dir(course_dir: Path) -> Path:
    """Where the execution workers of a course write their stderr."""
    return course_dir / STATE_DIR / "logs"


class SandboxUnavailable(RuntimeError):
    """Grading would have to run learner code unconfined or unlimited; refuse."""


class Sandbox(Configurable):  # type: ignore[misc]
    """Limits for each notebook's execution (configure as c.Sandbox.<name>)."""

    enabled = Bool(True, help="Run submissions in bubblewrap. False is unsafe.").tag(config=True)
    cpu_seconds = Float(
        120.0,
        help="CPU time a whole notebook's processes may spend together, seconds: counted by "
        "its cgroup, so a busy machine does not use it up (each process is also held to it "
        "by an rlimit, the only CPU limit when cgroups are off).",
    ).tag(config=True)
    wall_seconds = Float(
        300.0,
        help="Wall time for a whole notebook, seconds: stops a notebook that waits (sleeps, "
        "blocks) rather than computes. Keep it well above cpu_seconds / cpus, so that a "
        "busy machine's slowness does not time honest notebooks out.",
    ).tag(config=True)
    cpus = Float(1.0, help="CPU share of a notebook's processes together, in cores.").tag(
        config=True
    )
    memory_mb = Float(
        2048.0, help="Memory a notebook's processes together may add (in-memory files too), MiB."
    ).tag(config=True)
    max_processes = Int(64, help="Processes and threads of a notebook together.").tag(config=True)
    max_output_bytes = Int(4_000_000, help="Output recorded per notebook, bytes.").tag(config=True)
    max_file_mb = Float(64.0, help="Largest file a notebook may write, MiB.").tag(config=True)
    scratch_mb = Float(256.0, help="Size of each private writable filesystem, MiB.").tag(
        config=True
    )
    bwrap = Unicode("bwrap", help="The bubblewrap executable.").tag(config=True)
    user = Unicode(
        "nobody",
        help="Graded as root: the unprivileged user the sandbox runs as (a dedicated account "
        "is best). Ignored when grading as an ordinary user.",
    ).tag(config=True)
    cgroup_parent = Unicode(
        "",
        help="cgroup under which per-notebook groups are made: '/autograder-grader' is that "
        "path under each v1 controller's mount, or under the cgroup v2 mount (delegated to "
        "the grading user); a relative path is under the grader's own cgroup. Default: the "
        "grader's own cgroup.",
    ).tag(config=True)
    cgroup_version = Enum(
        ["auto", "1", "2"],
        "auto",
        help="Which cgroup interface enforces the limits: 'auto' uses v1 where its memory, "
        "pids and cpu controllers are mounted (hybrid machines), else v2.",
    ).tag(config=True)
    require_cgroups = Bool(
        True,
        help="Refuse to grade when per-notebook memory/CPU/process limits cannot be enforced "
        "with cgroups. False keeps only per-process rlimits (weaker).",
    ).tag(config=True)

    def limits(self) -> dict[str, float]:
        """The limits as sent to the execution worker."""
        names = (
            "wall_seconds",
            "cpu_seconds",
            "memory_mb",
            "max_processes",
            "max_output_bytes",
            "max_file_mb",
            "scratch_mb",
        )
        return {name: float(getattr(self, name)) for name in names}


@dataclass(frozen=True)
class Identity:
    """Who the sandbox runs as on the host (None: the grader's own, unprivileged, user)."""

    uid: int | None = None
    gid: int | None = None

    @property
    def host_uid(self) -> int:
        return os.geteuid() if self.uid is None else self.uid


def sandbox_identity(sandbox: Sandbox) -> Identity:
    """The unprivileged identity outside the sandbox; SandboxUnavailable if there is none."""
    if os.geteuid() != 0:
        return Identity()
    try:
        entry = pwd.getpwnam(sandbox.user)
    except KeyError:
        raise SandboxUnavailable(
            f"grading as root needs an unprivileged user for the sandbox; {sandbox.user!r} "
            "does not exist (set c.Sandbox.user, e.g. `useradd --system autograder-sandbox`)"
        ) from None
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise SandboxUnavailable(f"c.Sandbox.user {sandbox.user!r} is root; choose another user")
    return Identity(entry.pw_uid, entry.pw_gid)
