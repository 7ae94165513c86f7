"""The check service in a class hub's config: one call from jupyterhub_config.py.

`add_check_service(c, ...)` makes the hub start the service (as the instructor, from the
course's environment), lets every user's server token use it (the `user` role and the
servers' token scopes gain `access:services!service=checks`), and tells every server
where it is (AUTOGRADER_CHECKS_URL, which kernels inherit). Servers reach it directly on
the loopback address, not through the proxy: one hop less per check.
"""

from __future__ import annotations

from typing import Any

SERVICE = "checks"
ACCESS = f"access:services!service={SERVICE}"
STARTUP_TIMEOUT = 300  # s the hub waits for the service: it warms up (PyTorch, every
# exercise, SymPy) before it listens, which took over JupyterHub's 30 s on a busy machine
URL_VARIABLE = "AUTOGRADER_CHECKS_URL"  # read by autograder_client in the kernel
SERVER_SCOPES = ["users:activity!user", "access:servers!server", ACCESS]  # JupyterHub's
# `server` role plus the service


def service_url(port: int) -> str:
    """Where the service listens (the hub's proxy also routes /services/checks/ to it)."""
    return f"http://127.0.0.1:{port}"


def add_check_service(
    c: Any,
    python: str,
    port: int,
    user: str | None = None,
    course_dir: str | None = None,
    options: list[str] | None = None,
) -> None:
    """Add the check service to the hub config `c`; `python` runs it, as `user` if given,
    with the numbers of the course in `course_dir` (its id and secret) if given, and the
    service's command-line `options` (its limits, e.g. ["--deadline", "5"])."""
    command = [python, "-m", "autograder.checks.server", *(options or [])]
    service: dict[str, Any] = {
        "name": SERVICE,
        "url": service_url(port),
        "command": command + (["--course-dir", course_dir] if course_dir else []),
        "timeout": STARTUP_TIMEOUT,
    }
    if user:
        service["user"] = user
    # append/update: `c` may hold these already, or not yet (traitlets' lazy values)
    c.JupyterHub.services.append(service)
    c.JupyterHub.load_roles.append({"name": "user", "scopes": ["self", ACCESS]})
    c.Spawner.server_token_scopes = SERVER_SCOPES
    c.Spawner.environment.update({URL_VARIABLE: f"{service_url(port)}/services/{SERVICE}/"})
