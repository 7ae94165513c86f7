"""`make class` from a built course venv: the students' environment, before and after.

Most of the time from a built `.venv` to a running hub goes into building the students'
environment (deploy/hub/class_student_env.py). This builds it twice, into fresh folders,
from this venv's Python, in the same run:

- baseline: pip installs the pinned stack (torch from its wheel, then everything else
  with constraints.txt), as `make class` did before;
- clone: the runtime distributions of this built venv are copied (clone_stack), then
  `pip check`ed.

Both then get the same answer-free packages and config. It prints each time and the ratio,
and fails (exit 1) when the two environments do not hold the same pinned distributions.

    .venv/bin/python benchmarks/class_start.py [--keep]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "deploy" / "hub"))

from class_student_env import ensure_student_env, pins  # noqa: E402
from start_class import base_python  # noqa: E402

COURSE_ID = "backward-course"
EXCHANGE = "/srv/nbgrader/exchange"


def distributions(env: Path) -> dict[str, str]:
    """name -> version of every distribution in the venv `env`."""
    listed = subprocess.run(
        [str(env / "bin" / "python"), "-m", "pip", "list", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    ).stdout
    return {d["name"].lower().replace("_", "-"): d["version"] for d in json.loads(listed)}


def build(env: Path, source: Path | None) -> float:
    """Seconds to build the students' environment at `env` (cloned from `source`)."""
    start = time.perf_counter()
    ensure_student_env(env, base_python(), COURSE_ID, EXCHANGE, source=source)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep both environments")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="class-start-"))
    try:
        baseline = build(folder / "pip-env", None)
        cloned = build(folder / "clone-env", Path(sys.prefix))
        if not (folder / "clone-env" / ".course-stack").is_file():
            print("the clone did not happen (see above): no figure", file=sys.stderr)
            return 1
        by_pip, by_clone = distributions(folder / "pip-env"), distributions(folder / "clone-env")
        pinned = {name.replace("_", "-") for name in pins()}
        differ = {
            name: (by_pip.get(name), by_clone.get(name))
            for name in (set(by_pip) | set(by_clone)) & pinned
            if by_pip.get(name) != by_clone.get(name)
        }
        unpinned = {
            name: (by_pip.get(name), by_clone.get(name))
            for name in (set(by_pip) | set(by_clone)) - pinned
            if by_pip.get(name) != by_clone.get(name)
        }
        print(f"students' environment, pip install (baseline): {baseline:7.1f} s")
        print(f"students' environment, cloned from the venv:   {cloned:7.1f} s")
        print(f"speed-up: {baseline / cloned:.1f}x ({len(by_clone)} distributions)")
        if unpinned:
            print(f"unpinned, as each installer took them (pip-env, clone-env): {unpinned}")
        if differ:
            print(f"pinned distributions that differ (pip-env, clone-env): {differ}")
            return 1
        return 0
    finally:
        if args.keep:
            print(f"kept: {folder}")
        else:
            subprocess.run(["rm", "-rf", str(folder)], check=False)


if __name__ == "__main__":
    sys.exit(main())
