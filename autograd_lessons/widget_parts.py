"""What every widget of the course is made of: a picture shown in one update, a still
picture for stored notebooks, a slider.

``show_picture`` replaces an ``ipywidgets.Output``'s content in one step (one ``outputs``
change rather than a clear followed by a display), so it never flickers or jumps, and it
works without a kernel, which lets tests check it.
"""

from __future__ import annotations

import base64
import html
from typing import Any

import ipywidgets as widgets

from .pictures import Picture


def img_html(png: str, alt: str) -> str:
    """An ``<img>`` of base64 ``png`` carrying its text alternative (read by screen readers)."""
    return f'<img src="data:image/png;base64,{png}" alt="{html.escape(alt)}">'


def show_picture(output: widgets.Output, picture: Picture, description: str) -> None:
    """Replace what ``output`` shows with ``picture``, in a single update.

    The picture goes out as HTML (an ``<img>`` with ``description`` as its ``alt``)
    and, for text-only front ends, as ``description`` alone.
    """
    png = base64.b64encode(picture.png()).decode("ascii")
    output.outputs = (
        {
            "output_type": "display_data",
            "data": {"text/html": img_html(png, description), "text/plain": description},
            "metadata": {},
        },
    )


STILL_NOTE = (
    "A still picture of this widget as it starts. Run the lesson's cells from the top "
    "(Run › Run All Cells) to move it."
)


class StillBox(widgets.VBox):  # type: ignore[misc]  # ipywidgets is untyped
    """A ``VBox`` that also carries a still picture of its first state in its display data.

    A notebook stored with outputs but without widget state cannot show a live widget:
    JupyterLab writes "Error displaying widget: model not found", GitHub ``VBox(...)``.
    Each display of this box therefore also holds ``text/html`` (the read-out and the
    picture, with a text alternative), ``image/png`` and ``text/plain`` (the text
    alternative). A live kernel's front end shows the widget; the stored notebook,
    once the widget view is stripped (``tools/clean_notebooks.py``), shows the still.
    """

    def __init__(self, children: list[widgets.Widget], still: dict[str, str]) -> None:
        super().__init__(children)
        self.still = still

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        bundle: dict[str, Any] | None = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle.update(self.still)
        return bundle


def still_of(readout_html: str, picture: Picture, alt: str) -> dict[str, str]:
    """The display data of a widget's still: read-out, picture and text alternative."""
    png = base64.b64encode(picture.png()).decode("ascii")
    page = (
        f'<div class="widget-still">{readout_html}{img_html(png, alt)}'
        f"<p><em>{html.escape(STILL_NOTE)}</em></p></div>"
    )
    return {"text/html": page, "image/png": png, "text/plain": f"{alt}\n({STILL_NOTE})"}


def slider(description: str, value: float, limits: tuple[float, float]) -> widgets.FloatSlider:
    return widgets.FloatSlider(
        value=value,
        min=limits[0],
        max=limits[1],
        step=0.5,
        description=description,
        continuous_update=True,
        readout_format=".1f",
    )
