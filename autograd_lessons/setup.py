"""``setup_notebook()``: the first code cell of every lesson.

It prints nothing when all is well (so executed notebooks stay identical from run
to run) and one warning line per problem otherwise.
"""

from __future__ import annotations

import sys

import matplotlib
import torch

__all__ = ["PINNED", "setup_notebook", "version_problems"]

# The versions the course's printed numbers were produced with (pyproject.toml pins).
PINNED = {"python": "3.11", "torch": "2.13", "ipywidgets": "8", "matplotlib": "3.11"}


def _same_release(version: str, pinned: str) -> bool:
    """True when ``version`` (e.g. ``2.13.0+cpu``) starts with the ``pinned`` release."""
    parts = version.split("+")[0].split(".")
    wanted = pinned.split(".")
    return parts[: len(wanted)] == wanted


def version_problems() -> list[str]:
    """One sentence per installed version that differs from the course's pins."""
    import ipywidgets

    installed = {
        "python": ".".join(str(part) for part in sys.version_info[:3]),
        "torch": torch.__version__,
        "ipywidgets": ipywidgets.__version__,
        "matplotlib": matplotlib.__version__,
    }
    return [
        f"this course was tested with {name} {PINNED[name]}, you have {version}: "
        "numbers and widgets may differ slightly"
        for name, version in installed.items()
        if not _same_release(str(version), PINNED[name])
    ]


def setup_notebook(seed: int = 0) -> torch.device:
    """Seed PyTorch, set plot defaults, check versions silently; return the device to use.

    The device is ``cuda`` when a GPU is available, else ``cpu``; assign it
    (``device = setup_notebook()``) rather than displaying it, so the output does
    not depend on the machine.
    """
    torch.manual_seed(seed)
    matplotlib.rcParams.update(
        {"figure.figsize": (6.0, 3.6), "figure.dpi": 100, "savefig.dpi": 100, "font.size": 11}
    )
    for problem in version_problems():
        print(f"⚠ warning: {problem}")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
