"""Drawing a learner's given values: deterministic from the installation (`Site`), the
exercise and the learner's identity (same learner, same numbers, within an installation), or
fresh for practice. Only the standard library (no PyTorch), so it is fast.

Whose numbers are whose depends on the `Site`:
- the public seed (`PUBLIC`: the repository's course id, no secret) for self-study, offline;
- a site's own course id (nbgrader's `CourseDirectory.course_id`): other numbers than any
  other installation's, though anyone who knows the course id can compute them;
- a site's secret, which only the instructor's side holds (`.autograder/givens_secret`):
  each learner's numbers come from their key, HMAC(secret, learner), which the instructor's
  side computes and may hand to that learner alone (`AUTOGRADER_LEARNER_KEY`): no one can
  compute another learner's numbers.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import random
import secrets
from dataclasses import dataclass
from pathlib import Path

from autograder.core.spec import ExerciseSpec

COURSE_ID = "backward-course"
"""The repository's nbgrader course id: the public seed's (self-study, the sample class)."""
MAX_DRAWS = 10_000


@dataclass(frozen=True)
class Site:
    """The installation whose numbers are drawn: its course id and its secret ('': none)."""

    course_id: str = COURSE_ID
    secret: str = ""

    def learner_key(self, learner: str) -> str | None:
        """`learner`'s key (None without a secret): all a learner needs for their numbers."""
        if not self.secret:
            return None
        return hmac.new(self.secret.encode(), learner.encode(), hashlib.sha256).hexdigest()


PUBLIC = Site()


def seed(exercise: str, learner: str, site: Site = PUBLIC, key: str | None = None) -> int:
    """The learner's seed for `exercise`: from the learner's key (given, or from the site's
    secret), else from the site's course id, the assignment and the learner."""
    key = key or site.learner_key(learner)
    text = f"{key}\0{exercise}" if key else f"{site.course_id}\0{exercise}\0{learner}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


_POOLS: dict[str, list[tuple[str, list[float]]]] = {}


def draw(spec: ExerciseSpec, rng: random.Random) -> dict[str, float]:
    """Given values drawn with `rng` until every constraint holds (never the lesson's)."""
    pools = _POOLS.get(spec.name)
    if pools is None:
        pools = [(g.name, [c for c in g.choices if c != g.lesson]) for g in spec.givens]
        _POOLS[spec.name] = pools
    tests = [test for _, test in spec.constraints]
    choice = rng.choice
    for _ in range(MAX_DRAWS):
        values = {name: choice(pool) for name, pool in pools}
        if all(test(values) for test in tests):
            return {**values, **spec.constants}
    raise RuntimeError(f"{spec.name}: no draw met the constraints in {MAX_DRAWS} tries")


SECRET_FILE = Path(".autograder") / "givens_secret"
"""Where a course keeps its secret: the grader's private state, never released."""


class SecretError(ValueError):
    """The course has a secret that this process cannot use: numbers drawn without it
    would be every learner's wrong ones, so nothing is drawn (the message says why)."""


def read_secret(course_root: Path) -> str:
    """The course's secret ('' when it has none); SecretError when it has one that cannot
    be read (another owner, a folder, not text) or is empty."""
    path = course_root / SECRET_FILE
    try:
        secret = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        if not path.is_symlink():
            return ""
        raise SecretError(
            f"the course's secret {path} is a link to a file that is not there: every "
            "learner's numbers come from it. Restore the file it named"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "it is not ASCII text"
        fix = (
            "Run this as the user who owns it (who ran `autograder secret`)"
            if isinstance(error, PermissionError)
            else "Restore it from a backup; a new one changes every learner's numbers"
        )
        raise SecretError(
            f"the course's secret {path} cannot be read ({reason}): every learner's numbers "
            f"come from it. {fix}"
        ) from None
    if not secret:
        raise SecretError(
            f"the course's secret {path} is empty: every learner's numbers come from it. "
            "Restore it from a backup; deleting it changes every learner's numbers"
        )
    return secret


def create_secret(course_root: Path) -> Path:
    """Create the course's secret once (mode 0600, in a 0700 folder); FileExistsError if
    it exists: a new secret would change every learner's numbers. Written whole to a
    temporary file first, then linked into place: never a half-written secret."""
    path = course_root / SECRET_FILE
    if path.parent.is_symlink() or path.parent.exists() and not path.parent.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path.parent))
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    if path.exists() or path.is_symlink():
        raise FileExistsError(errno.EEXIST, "exists", str(path))
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as file:
            file.write(secrets.token_hex(32) + "\n")
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)  # never replaces one another run made meanwhile
        except FileExistsError:
            raise FileExistsError(errno.EEXIST, "exists", str(path)) from None
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
            # no hard links on this file system: claim the name, then write it whole
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as file:
                file.write(temporary.read_bytes())
    finally:
        temporary.unlink(missing_ok=True)
    return path
