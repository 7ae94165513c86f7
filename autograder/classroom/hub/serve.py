"""`make class`: JupyterHub for this course on one machine (run as root).

Checks what a class needs, prepares it, then runs JupyterHub with
autograder/classroom/hub/jupyterhub_config.py:
- the instructor is a local account that owns the course directory (default: this
  repository); their server opens there, with formgrader;
- nbgrader's exchange is the course config's `c.Exchange.root` (set it in the untracked
  site_config.py; default /srv/nbgrader/exchange), created world-writable as nbgrader needs;
- students' servers get the course id and exchange (and no formgrader) from a Jupyter
  config folder written under the state directory (default: .class/ in the repository).
Exit status: 2 when a requirement is missing (the message says which), else JupyterHub's.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import stat
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
VENV_BIN = Path(sys.executable).parent
DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"
STUDENT_HIDDEN_LAB_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"]


class ClassError(Exception):
    """A requirement of the class server is not met."""


def course_settings(course_dir: Path) -> tuple[str, str]:
    """(course id, exchange root) as the course's nbgrader config (with site settings) says."""
    sys.path.insert(0, str(REPO))
    from autograder.grading.runner import load_config

    config = load_config(course_dir)
    course_id = str(config.CourseDirectory.get("course_id", ""))
    if not course_id:
        raise ClassError(f"{course_dir}/nbgrader_config.py sets no CourseDirectory.course_id")
    return course_id, str(config.Exchange.get("root", DEFAULT_EXCHANGE))


def world_traversable(path: Path) -> Path | None:
    """The first folder on the way to `path` that other users cannot enter, if any."""
    for folder in [*reversed(path.parents), path]:
        if not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def write_role_configs(state: Path, course_id: str, exchange: str, course_dir: Path) -> None:
    """The Jupyter config folders the hub hands each role (JUPYTER_CONFIG_PATH)."""
    common = f"c = get_config()\nc.CourseDirectory.course_id = {course_id!r}\n"
    common += f"c.Exchange.root = {exchange!r}\n"
    student = state / "jupyter" / "student"
    (student / "labconfig").mkdir(parents=True, exist_ok=True)
    (student / "nbgrader_config.py").write_text(common)
    (student / "jupyter_server_config.json").write_text(
        json.dumps(
            {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": False}}}
        )
    )
    (student / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {name: True for name in STUDENT_HIDDEN_LAB_PLUGINS}})
    )
    instructor = state / "jupyter" / "instructor"
    instructor.mkdir(parents=True, exist_ok=True)
    (instructor / "nbgrader_config.py").write_text(
        common + f"c.CourseDirectory.root = {str(course_dir)!r}\n"
    )
    for folder in [state, state / "jupyter", student, student / "labconfig", instructor]:
        folder.chmod(0o755)


def prepare(args: argparse.Namespace) -> dict[str, str]:
    """Check and prepare everything; the environment JupyterHub's config reads."""
    if os.geteuid() != 0:
        raise ClassError(
            "JupyterHub starts each user's server as that user, so it runs as root: "
            "`sudo make class INSTRUCTOR=...`"
        )
    try:
        teacher = pwd.getpwnam(args.instructor)
    except KeyError:
        raise ClassError(f"no local account {args.instructor!r} for the instructor") from None
    course = args.course_dir.resolve()
    if not (course / "nbgrader_config.py").is_file():
        raise ClassError(f"{course} is not a course directory (no nbgrader_config.py)")
    if course.stat().st_uid != teacher.pw_uid:
        raise ClassError(
            f"the instructor {args.instructor} must own the course directory {course}: "
            f"`chown -R {args.instructor} {course}` (or --course-dir a copy they own)"
        )
    for python in (VENV_BIN / "python", Path(os.path.realpath(VENV_BIN / "python"))):
        blocked = world_traversable(python)
        if blocked is not None:
            raise ClassError(
                f"users cannot run the course's Python {python}: {blocked} is closed to others. "
                "Build the venv from a Python every user can run (e.g. under /usr or /opt): "
                "`make clean && make class PYTHON=/opt/python3.11/bin/python3`"
            )
    proxy = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
    if not proxy.exists():
        raise ClassError(
            "configurable-http-proxy is missing: `npm ci --prefix autograder/classroom/hub`"
        )
    course_id, exchange = course_settings(course)
    Path(exchange).mkdir(parents=True, exist_ok=True)
    Path(exchange).chmod(0o777)  # nbgrader's exchange: every user writes their inbound copy
    state = args.state.resolve()
    state.mkdir(parents=True, exist_ok=True)
    write_role_configs(state, course_id, exchange, course)
    print(f"class {course_id}: exchange {exchange}, instructor {args.instructor} on {course}")
    return {
        "CLASS_STATE": str(state),
        "CLASS_VENV_BIN": str(VENV_BIN),
        "CLASS_INSTRUCTOR": args.instructor,
        "CLASS_COURSE_DIR": str(course),
        "CLASS_IP": args.ip,
        "CLASS_PORT": str(args.port),
        "CLASS_HUB_PORT": str(args.hub_port),
        "CLASS_PROXY_API_PORT": str(args.proxy_api_port),
        "CLASS_USERS": " ".join(args.users or []),
        "CLASS_CHECKS_PORT": str(args.checks_port or ""),  # the check service (issue 20)
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instructor", required=True, help="local account of the instructor")
    parser.add_argument("--course-dir", type=Path, default=REPO, help="default: this repository")
    parser.add_argument("--state", type=Path, default=REPO / ".class", help="hub's own files")
    parser.add_argument("--ip", default="127.0.0.1", help="address to serve on (default loopback)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--hub-port", type=int, default=8081)
    parser.add_argument("--proxy-api-port", type=int, default=8001)
    parser.add_argument("--users", nargs="*", help="only these may log in (default: any local)")
    parser.add_argument(
        "--checks-port", type=int, default=0,
        help="run the check service on this loopback port (classroom/checks; default: off)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    try:
        env = prepare(args)
    except ClassError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    os.chdir(env["CLASS_STATE"])
    hub = VENV_BIN / "jupyterhub"
    command = [str(hub), "-f", str(HERE / "jupyterhub_config.py")]
    os.execve(hub, command, {**os.environ, **env, "PATH": f"{VENV_BIN}:{os.environ['PATH']}"})
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
