"""`make class`: JupyterHub for this course on one machine (run as root).

Checks what a class needs, prepares it, then runs JupyterHub with
deploy/hub/jupyterhub_config.py:
- the instructor is a local account that owns the course directory (default: this
  repository), which is made theirs alone (0700); their server opens there, with formgrader,
  on the course's own `.venv`;
- students run the students' environment (student_env.py; default /opt/<course id>-env),
  apart from the course folder, which holds no answer: their checks go to the course's
  check service (autograder/checks, run by the hub as the instructor), and each home is
  made private (privacy.py);
- nbgrader's exchange is the course config's `c.Exchange.root` (set it in the untracked
  site_config.py; default /srv/nbgrader/exchange), laid out with nbgrader's modes and
  sticky bits (privacy.py);
- the hub's own files (database, cookie secret, the instructor's Jupyter config) live in
  the state folder (default /var/lib/autograder-class/<course id>), outside the course
  folder, so `sudo make class` leaves no root-owned file in it.
Exit status: 2 when a requirement is missing (the message says which), else JupyterHub's.
"""

from __future__ import annotations

import argparse
import os
import pwd
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.dont_write_bytecode = True  # run as root: no root-owned __pycache__ in the course

from class_privacy import (  # noqa: E402
    ClassError,
    closed_to_others,
    exchange_layout,
    private_course,
    private_homes,
    roster_group,
    secret_problem,
)
from class_student_env import ensure_student_env  # noqa: E402

from autograder.checks.ports import free_port  # noqa: E402
from autograder.core.givens import SECRET_FILE, SecretError, read_secret  # noqa: E402
from autograder.sandbox.settings import CourseConfigError  # noqa: E402

VENV_BIN = Path(sys.executable).parent
DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"
STATE_ROOT = Path("/var/lib/autograder-class")
LOGIN_UIDS = range(1000, 60000)  # Debian's UID_MIN..UID_MAX: people, not services


def course_settings(course_dir: Path) -> tuple[str, str]:
    """(course id, exchange root) as the course's nbgrader config (with site settings) says."""
    from autograder.grading.runner import load_config

    config = load_config(course_dir)
    course_id = str(config.CourseDirectory.get("course_id", ""))
    if not course_id:
        raise ClassError(f"{course_dir}/nbgrader_config.py sets no CourseDirectory.course_id")
    return course_id, str(config.Exchange.get("root", DEFAULT_EXCHANGE))


def base_python() -> Path:
    """The interpreter the course's venv was made from (the students' venv is too)."""
    return Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))


def check_python_for_all(python: Path) -> None:
    """Refuse, before building anything, a Python some user cannot run."""
    for path in (python, Path(os.path.realpath(python))):
        blocked = closed_to_others(path)
        if blocked is not None:
            raise ClassError(
                f"users cannot run the Python {path}: {blocked} is closed to others. Use a "
                "Python every user can run (Debian's /usr/bin/python3, or one under /opt): "
                "`make clean && sudo make class PYTHON=/usr/bin/python3 INSTRUCTOR=...`"
            )


def class_members(args: argparse.Namespace) -> list[str]:
    """Who logs in: --users and the instructor, else every local login account."""
    if args.users:
        return [*args.users, args.instructor]
    return [a.pw_name for a in pwd.getpwall() if a.pw_uid in LOGIN_UIDS]


def write_instructor_config(folder: Path, course: Path) -> None:
    """The instructor's Jupyter config folder (JUPYTER_CONFIG_PATH of their server): the
    course's own nbgrader config, with its site settings (course id, exchange, gradebook
    URL), so formgrader and the Assignments tab see the course as nbgrader does in it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(
        f"c = get_config()\nload_subconfig({str(course / 'nbgrader_config.py')!r})\n"
    )


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
    problem = secret_problem(course, teacher.pw_uid)
    if problem:
        raise ClassError(f"{problem}: `chown {args.instructor} {course / SECRET_FILE}`")
    python = args.python or base_python()
    check_python_for_all(python)
    proxy = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
    if not proxy.exists():
        raise ClassError("configurable-http-proxy is missing: `npm ci --prefix deploy/hub`")
    members = class_members(args)
    for user in members:
        try:
            pwd.getpwnam(user)
        except KeyError:
            raise ClassError(f"no local account {user!r} (named in --users)") from None
    course_id, exchange = course_settings(course)
    exchange_layout(Path(exchange), course_id, args.instructor, roster_group(course_id, members))
    for line in [private_course(course, teacher.pw_uid), *private_homes(members)]:
        if line:
            print(f"made private: {line}")
    env = (args.student_env or Path(f"/opt/{course_id}-env")).absolute()
    if env == course or course in env.parents:
        raise ClassError(f"the students' environment {env} must be outside the course folder")
    ensure_student_env(env, python, course_id, exchange, source=Path(sys.prefix))
    state = (args.state or STATE_ROOT / course_id).absolute()
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o711)  # the hub's files: root's; the instructor's config folder: theirs
    (state / "hub").mkdir(mode=0o700, exist_ok=True)
    (state / "hub").chmod(0o700)
    instructor_config = state / "instructor"
    write_instructor_config(instructor_config, course)
    for path in [instructor_config, *instructor_config.iterdir()]:
        os.chown(path, teacher.pw_uid, teacher.pw_gid)
    instructor_config.chmod(0o700)
    print(
        f"class {course_id}: exchange {exchange}, instructor {args.instructor} on {course}, "
        f"students on {env}"
    )
    return {
        "CLASS_STATE": str(state / "hub"),
        "CLASS_INSTRUCTOR_CONFIG": str(instructor_config),
        "CLASS_VENV_BIN": str(VENV_BIN),
        "CLASS_STUDENT_BIN": str(env / "bin"),
        "CLASS_INSTRUCTOR": args.instructor,
        "CLASS_COURSE_DIR": str(course),
        "CLASS_IP": args.ip,
        "CLASS_PORT": str(args.port),
        "CLASS_HUB_PORT": str(args.hub_port),
        "CLASS_PROXY_API_PORT": str(args.proxy_api_port),
        "CLASS_USERS": " ".join(args.users or []),
        "CLASS_CHECKS_PORT": str(args.checks_port or free_port()),  # the check service
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--instructor", required=True, help="local account of the instructor")
    parser.add_argument("--course-dir", type=Path, default=REPO, help="default: this repository")
    parser.add_argument(
        "--state", type=Path, help="hub's own files (default /var/lib/autograder-class/<course>)"
    )
    parser.add_argument(
        "--student-env", type=Path, help="students' venv (default /opt/<course id>-env)"
    )
    parser.add_argument(
        "--python", type=Path, help="builds the students' venv (default: the course venv's)"
    )
    parser.add_argument("--ip", default="127.0.0.1", help="address to serve on (default loopback)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--hub-port", type=int, default=8081)
    parser.add_argument("--proxy-api-port", type=int, default=8001)
    parser.add_argument("--users", nargs="*", help="only these may log in (default: any local)")
    parser.add_argument(
        "--checks-port", type=int, default=0,
        help="loopback port of the check service (autograder/checks; default: a free one below "
        "the ephemeral range, where no kernel or connection takes it meanwhile)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    try:
        read_secret(args.course_dir.resolve())  # every student's key comes from it
        env = prepare(args)
    except (ClassError, SecretError, CourseConfigError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    os.chdir(env["CLASS_STATE"])
    hub = VENV_BIN / "jupyterhub"
    command = [str(hub), "-f", str(HERE / "jupyterhub_config.py")]
    os.execve(hub, command, {**os.environ, **env, "PATH": f"{VENV_BIN}:{os.environ['PATH']}"})
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
