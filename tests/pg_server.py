"""A throwaway PostgreSQL server from Debian's `postgresql` package, for tests.

`running_postgres()` runs initdb and pg_ctl in a fresh directory, listening on 127.0.0.1
(a free port) and a Unix socket in that directory, with trust authentication for a
`grader` role; it yields the URL of an empty `gradebook` database and stops and deletes
the server afterwards. PostgreSQL refuses to run as root, so under root the server runs
as the unprivileged `nobody` (the data directory is made theirs).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ports import free_port

SERVER_USER = "nobody"


def postgres_bin() -> Path:
    """Debian's PostgreSQL binaries (the newest installed major version)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    if not found:
        raise RuntimeError(
            "PostgreSQL is not installed: run `bash tools/install_system_packages.sh` "
            "(apt-get install postgresql)"
        )
    return Path(found[-1]).parent


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command


@contextmanager
def running_postgres(password: str | None = None) -> Iterator[str]:
    """Start a server; yield `postgresql://grader@127.0.0.1:<port>/gradebook`."""
    binaries = postgres_bin()
    home = Path(tempfile.mkdtemp(prefix="pg-gradebook-"))
    home.chmod(0o755)
    data = home / "data"
    port = free_port()
    if os.geteuid() == 0:
        shutil.chown(home, SERVER_USER)

    env = {**os.environ, "PGPASSWORD": password} if password else None

    def run(*args: object) -> None:
        command = _as_server_user([str(a) for a in args])
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            log = (home / "log").read_text() if (home / "log").exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}{done.stdout}{log}")

    try:
        auth = ["--auth=trust"]
        if password:
            secret = home / "password"
            secret.write_text(password)
            if os.geteuid() == 0:
                shutil.chown(secret, SERVER_USER)
            auth = ["--auth=scram-sha-256", f"--pwfile={secret}"]
        run(binaries / "initdb", "-D", data, "-U", "grader", *auth, "-E", "UTF8")
        options = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={home}"
        run(binaries / "pg_ctl", "-D", data, "-o", options, "-l", home / "log", "-w", "start")
        run(binaries / "createdb", "-h", "127.0.0.1", "-p", port, "-U", "grader", "gradebook")
        yield f"postgresql://grader@127.0.0.1:{port}/gradebook"
    finally:
        if (data / "postmaster.pid").exists():
            run(binaries / "pg_ctl", "-D", data, "-m", "fast", "-w", "stop")
        shutil.rmtree(home, ignore_errors=True)
