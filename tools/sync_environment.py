"""Write environment.yml (conda, Binder) from the pins in pyproject.toml: one source of truth.

`--check` changes nothing and exits 1 if environment.yml differs from what this writes.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEADER = """\
# Generated from pyproject.toml by `make environment.yml`; do not edit by hand.
# tests/repository/test_environment.py fails when this file and pyproject.toml disagree.
# Binder and conda users: `conda env create -f environment.yml`.
"""

TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
"""PyTorch's own index of CPU builds (`torch==2.13.0` admits its `2.13.0+cpu`)."""


def pinned_requirements(pyproject: Path) -> list[str]:
    """Every requirement pyproject.toml pins: runtime first, then the dev extra."""
    project = tomllib.loads(pyproject.read_text())["project"]
    return list(project["dependencies"]) + list(project["optional-dependencies"]["dev"])


def render(pyproject: Path) -> str:
    """The text environment.yml must hold."""
    lines = [HEADER + "name: backward-course", "channels:", "  - conda-forge", "dependencies:"]
    lines += ["  - python=3.11", "  - pip", "  - pip:"]
    # PyPI's Linux torch is the CUDA build (several GB); the course runs on the CPU
    lines += [f"      - --extra-index-url {TORCH_CPU_INDEX}"]
    lines += [f"      - {req}" for req in pinned_requirements(pyproject)]
    lines += ["      - --editable .  # the course's own packages: autograd_lessons, autograder"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if environment.yml is stale")
    parser.add_argument(
        "--torch-index", action="store_true", help="print PyTorch's CPU index URL and exit"
    )
    args = parser.parse_args(argv)
    if args.torch_index:
        print(TORCH_CPU_INDEX)
        return 0
    text = render(REPO / "pyproject.toml")
    target = REPO / "environment.yml"
    if args.check:
        if not target.exists() or target.read_text() != text:
            print("environment.yml is out of date: run `make environment.yml`")
            return 1
        return 0
    target.write_text(text)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
