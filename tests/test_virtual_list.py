"""The virtual list draws each row with its own style: a row that is styled
as a whole (``Text(..., style=...)``, as ``safe_text.literal`` makes it)
keeps that colour, and spans inside it still win over it."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from packscope.inspector.widgets.virtual_list import ListSource, VirtualList


class _ListApp(App):
    def __init__(self, rows: list[Text]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        yield VirtualList(ListSource(self.rows), id="list")


def _colours(strip) -> list[tuple[str, str | None]]:
    return [(seg.text, seg.style.color.name if seg.style and seg.style.color else None) for seg in strip]


@pytest.mark.asyncio
async def test_a_row_styled_as_a_whole_keeps_its_colour_under_its_spans():
    row = Text("+added line", style="green")
    row.stylize("red", 0, 1)  # a span over the whole-row style
    plain = Text("-removed line", style="red")  # no span at all: the style is the row's only colour
    app = _ListApp([Text("cursor row"), row, plain])
    async with app.run_test(size=(40, 5)) as pilot:
        await pilot.pause()
        vlist = app.query_one(VirtualList)
        colours = _colours(vlist.render_line(1))
        assert ("+", "red") in colours
        assert ("added line", "green") in colours
        assert ("-removed line", "red") in _colours(vlist.render_line(2))
