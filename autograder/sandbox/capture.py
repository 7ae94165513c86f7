"""What a notebook prints and displays, captured in nbformat shape within a byte budget.

Runs in each notebook's child: `CapturedStream` stands in for sys.stdout and sys.stderr,
and `build_shell` makes the pristine IPython shell (built once in the template process,
before any notebook) whose displays, results and errors go to `RECORDER`.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from typing import Any

from autograder.sandbox.framing import OUTPUT_DEPTH, nesting_depth
from autograder.sandbox.isolation import DEFAULT_LIMITS


class Recorder:
    """Collects one cell's outputs in nbformat shape, within a byte budget for the notebook."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.truncated = False
        self.outputs: list[dict[str, Any]] = []

    def _admit(self, size: int) -> bool:
        if self.used + size > self.budget:
            if not self.truncated:
                self.truncated = True
                self.outputs.append(
                    {
                        "output_type": "stream",
                        "name": "stderr",
                        "text": "[output limit reached: further output is not recorded]\n",
                    }
                )
            return False
        self.used += size
        return True

    def stream(self, name: str, text: str) -> None:
        if not text or not self._admit(len(text.encode("utf-8", "replace"))):
            return
        last = self.outputs[-1] if self.outputs else None
        if last and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})

    def add(self, output: dict[str, Any]) -> None:
        try:
            size = len(json.dumps(output, default=str))
        except (TypeError, ValueError, RecursionError):
            return
        if nesting_depth(output) > OUTPUT_DEPTH:
            note = f"[an output nested deeper than {OUTPUT_DEPTH} levels is not recorded]\n"
            self.stream("stderr", note)
        elif self._admit(size):
            self.outputs.append(output)

    def take(self) -> list[dict[str, Any]]:
        outputs, self.outputs = self.outputs, []
        return outputs


RECORDER = Recorder(int(DEFAULT_LIMITS["max_output_bytes"]))


class CapturedStream(io.TextIOBase):
    """sys.stdout / sys.stderr replacement that records stream outputs."""

    def __init__(self, name: str) -> None:
        self.name_ = name

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        RECORDER.stream(self.name_, text)
        return len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


def build_shell() -> Any:
    """A pristine IPython shell whose displays, results and errors go to RECORDER."""
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets import Type
    from traitlets.config import Config

    class CapturedDisplayPublisher(DisplayPublisher):  # type: ignore[misc]
        def publish(self, data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> None:
            RECORDER.add({"output_type": "display_data", "data": data, "metadata": metadata or {}})

        def clear_output(self, wait: bool = False) -> None:
            RECORDER.outputs = []

    class CapturedDisplayHook(DisplayHook):  # type: ignore[misc]
        def write_output_prompt(self) -> None:
            pass

        def write_format_data(self, format_dict: Any, md_dict: Any = None) -> None:
            RECORDER.add(
                {
                    "output_type": "execute_result",
                    "execution_count": getattr(self.shell, "execution_count", None),
                    "data": format_dict,
                    "metadata": md_dict or {},
                }
            )

        def finish_displayhook(self) -> None:
            pass

    class GradingShell(InteractiveShell):  # type: ignore[misc]
        display_pub_class = Type(CapturedDisplayPublisher)
        displayhook_class = Type(CapturedDisplayHook)

        def enable_gui(self, gui: Any = None) -> None:
            pass  # inline plots only: there is no event loop to integrate with

        @contextlib.contextmanager
        def _tee(self, channel: str) -> Iterator[None]:
            yield  # IPython would keep every byte printed in its history: RECORDER keeps it

        def _showtraceback(self, etype: Any, evalue: Any, stb: Any) -> None:
            try:
                message = str(evalue)
            except Exception:
                message = "<exception whose str() failed>"
            RECORDER.add(
                {
                    "output_type": "error",
                    "ename": getattr(etype, "__name__", "Error"),
                    "evalue": message,
                    "traceback": [str(line) for line in stb],
                }
            )

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.InteractiveShell.colors = "nocolor"
    config.InteractiveShell.autoindent = False
    # No `%matplotlib inline` here: MPLBACKEND names the inline backend, which sets itself
    # up in this shell when a notebook first imports pyplot. The graded notebooks do not
    # plot, and importing matplotlib in every worker cost about half a second of start-up.
    return GradingShell.instance(config=config)
