#!/usr/bin/env python3
"""learner-keys: the Kubernetes Secret that gives each student's pod its learner key.

`make class` puts each student's key, HMAC(course secret, login), in that student's server
environment (AUTOGRADER_LEARNER_KEY, `autograder secret --help`). On Kubernetes the
student profile (values.yaml) reads it from the Secret `learner-keys`, key `{username}`,
which KubeSpawner fills in with the login: each pod gets its own entry, no other. This
prints that Secret (JSON, for `kubectl apply -f -`): one entry per login of the roster,
each "<login>:<key>", computed from the course's secret by the grader's own
`Site.learner_key`. Run it where the course is, the instructor's pod (README):

    kubectl exec -n backward-course jupyter-alice -- \\
      python /opt/backward-course/deploy/kubernetes/learner_keys.py \\
      --course-dir /home/jovyan/course --roster /etc/backward-course/roster.txt \\
      | kubectl apply -n backward-course -f -

Exit status 2, nothing printed, when the course has no secret (`autograder secret` first:
without one every learner's numbers come from the course id, and a Kubernetes class
gives out keys), the secret cannot be read, or a login is not one the exchange gate
accepts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the exchange gate beside it

from exchange_gate import LOGIN  # noqa: E402

from autograder.core.givens import SecretError, Site, read_secret  # noqa: E402
from autograder.learner.identity import KEY_VARIABLE  # noqa: E402

SECRET_NAME = "learner-keys"
PART_OF = "backward-course"


class KeysError(ValueError):
    """Why no Secret was written (one line)."""


def roster_logins(text: str) -> list[str]:
    """The roster's logins, one a line (blank lines and # comments skipped)."""
    logins = [line.split("#")[0].strip() for line in text.splitlines()]
    logins = [login for login in logins if login]
    for login in logins:
        if not LOGIN.match(login):
            raise KeysError(f"roster: {login!r} is not a login KubeSpawner leaves unchanged")
    if not logins:
        raise KeysError("roster: no login in it")
    return sorted(set(logins))


def learner_keys_secret(course_dir: Path, logins: list[str]) -> dict[str, object]:
    """The Secret manifest with each login's "<login>:<key>"."""
    try:
        site = Site(secret=read_secret(course_dir))
    except SecretError as error:
        raise KeysError(str(error)) from None
    entries = {}
    for login in logins:
        key = site.learner_key(login)
        if key is None:
            raise KeysError(
                f"{course_dir} has no secret: run `autograder secret` in it first (each "
                f"student's pod needs its key, {KEY_VARIABLE})"
            )
        entries[login] = f"{login}:{key}"
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET_NAME, "labels": {"app.kubernetes.io/part-of": PART_OF}},
        "type": "Opaque",
        "stringData": entries,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--course-dir", type=Path, required=True, help="the course folder")
    parser.add_argument("--roster", type=Path, required=True, help="one login per line")
    args = parser.parse_args(argv)
    try:
        logins = roster_logins(args.roster.read_text(encoding="utf-8"))
        secret = learner_keys_secret(args.course_dir, logins)
    except (KeysError, OSError) as error:
        reason = f"{error.filename}: {error.strerror}" if isinstance(error, OSError) else error
        print(f"error: {reason}", file=sys.stderr)
        return 2
    print(json.dumps(secret, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
