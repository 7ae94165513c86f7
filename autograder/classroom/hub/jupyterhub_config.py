"""JupyterHub for a class on one machine; started by `make class` (`serve.py` beside it).

Local system users log in with their password (PAM). Every user's server is this
course's virtual environment (its `jupyterhub-singleuser`, JupyterLab and nbgrader);
students see the Assignments tab, the instructor's server opens on the course
directory with formgrader. serve.py passes the settings in CLASS_* environment variables
and writes the per-role Jupyter config folders under the state directory.
"""

import os
from pathlib import Path

c = get_config()  # noqa: F821  (provided by traitlets when JupyterHub loads this file)

HERE = Path(__file__).resolve().parent
STATE = Path(os.environ["CLASS_STATE"])
VENV_BIN = Path(os.environ["CLASS_VENV_BIN"])
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

# Every user runs the course's environment, as themselves.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(VENV_BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
c.Spawner.environment = {"PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin"}


def per_role(spawner):  # type: ignore[no-untyped-def]
    """The instructor's server opens on the course (formgrader); students' on their home.
    With a course secret (`autograder secret`), each student gets their own key alone."""
    from autograder.core.givens import Site, read_secret
    from autograder.learner.identity import KEY_VARIABLE

    name = spawner.user.name
    role = "instructor" if name == INSTRUCTOR else "student"
    spawner.environment["JUPYTER_CONFIG_PATH"] = str(STATE / "jupyter" / role)
    if role == "instructor":
        spawner.notebook_dir = COURSE_DIR
    key = Site(secret=read_secret(Path(COURSE_DIR))).learner_key(name)
    if key is not None and role == "student":
        spawner.environment[KEY_VARIABLE] = f"{name}:{key}"


c.Spawner.pre_spawn_hook = per_role


# --- The check service (issue 20): learners' checks judged here, where the answer key is.
# Kept in this one block; everything else is in autograder/classroom/checks/.
if os.environ.get("CLASS_CHECKS_PORT"):
    from autograder.classroom.checks.hub import add_check_service

    add_check_service(
        c, str(VENV_BIN / "python"), int(os.environ["CLASS_CHECKS_PORT"]), INSTRUCTOR, COURSE_DIR
    )
