"""JupyterHub for a class on one machine; started by `make class` (`serve.py` beside it).

Local system users log in with their password (PAM). Students' servers run the students'
environment (student_env.py: outside the course folder, with their Jupyter config in it,
answer-free: checks are asked of the check service this config adds), with the
Assignments tab; the instructor's server runs the course's own `.venv` and opens
on the course directory, with formgrader. serve.py passes the settings in CLASS_*
environment variables and writes the instructor's Jupyter config folder.
"""

import os
from pathlib import Path

c = get_config()  # noqa: F821  (provided by traitlets when JupyterHub loads this file)

HERE = Path(__file__).resolve().parent
STATE = Path(os.environ["CLASS_STATE"])
VENV_BIN = Path(os.environ["CLASS_VENV_BIN"])
STUDENT_BIN = Path(os.environ["CLASS_STUDENT_BIN"])
INSTRUCTOR_CONFIG = os.environ["CLASS_INSTRUCTOR_CONFIG"]
INSTRUCTOR = os.environ["CLASS_INSTRUCTOR"]
COURSE_DIR = os.environ["CLASS_COURSE_DIR"]

# Loopback only by default; put a TLS-terminating proxy in front for a real class.
c.JupyterHub.bind_url = f"http://{os.environ['CLASS_IP']}:{os.environ['CLASS_PORT']}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ["CLASS_HUB_PORT"])
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ['CLASS_PROXY_API_PORT']}"
c.ConfigurableHTTPProxy.command = [str(HERE / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")

# Who may log in: local accounts (PAM), every one of them unless CLASS_USERS lists them.
c.JupyterHub.authenticator_class = "pam"
users = set(os.environ.get("CLASS_USERS", "").split())
if users:
    c.Authenticator.allowed_users = users | {INSTRUCTOR}
else:
    c.Authenticator.allow_all = True
c.Authenticator.admin_users = {INSTRUCTOR}

# Every user runs as themselves: students the students' environment, on their home.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(STUDENT_BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
c.Spawner.environment = {"PATH": f"{STUDENT_BIN}:/usr/local/bin:/usr/bin:/bin"}


def per_role(spawner):  # type: ignore[no-untyped-def]
    """The instructor's server: the course's venv, opened on the course (formgrader).
    With a course secret (`autograder secret`), each student gets their own key alone."""
    from autograder.core.givens import Site, read_secret
    from autograder.learner.identity import KEY_VARIABLE

    name = spawner.user.name
    if name == INSTRUCTOR:
        spawner.cmd = [str(VENV_BIN / "jupyterhub-singleuser")]
        spawner.environment["PATH"] = f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin"
        spawner.environment["JUPYTER_CONFIG_PATH"] = INSTRUCTOR_CONFIG
        spawner.notebook_dir = COURSE_DIR
        return
    key = Site(secret=read_secret(Path(COURSE_DIR))).learner_key(name)
    if key is not None:
        spawner.environment[KEY_VARIABLE] = f"{name}:{key}"


c.Spawner.pre_spawn_hook = per_role


# --- The check service: students' checks judged here, where the answer key is (their
# environment holds none). Everything else about it is in autograder/checks/.
from autograder.checks.hub import add_check_service  # noqa: E402

add_check_service(
    c, str(VENV_BIN / "python"), int(os.environ["CLASS_CHECKS_PORT"]), INSTRUCTOR, COURSE_DIR
)
