"""The snapshot masking (tests/snapshot_mask.py): a pack named and sized
otherwise — as another git or zlib would write it — renders to the same
masked SVG, while a change to what the UI says does not.  (The SVG's
geometry is kept: a value of another width where nothing pads it, such
as an offset at a row's end with more digits, still shows.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.snapshot_mask import mask_svg, mask_text

SNAPSHOTS = Path(__file__).resolve().parent / "__snapshots__"


class _Row(App):
    """One Packs-like row: rank, pack name, objects, size, then the filter's offset."""

    def __init__(self, name: str, size: str, offset: int, label: str = "objects") -> None:
        super().__init__()
        self.row = f"   0 pack-{name}  180 {label} {size:>9} holds 506c81f9a5a9 @{offset}"

    def compose(self) -> ComposeResult:
        yield Static(self.row, markup=False)


async def _svg(app: App) -> str:
    async with app.run_test(size=(100, 3)) as pilot:
        await pilot.pause()
        return app.export_screenshot()


@pytest.mark.asyncio
async def test_another_pack_name_size_and_offset_mask_to_the_same_snapshot():
    ours = mask_svg(await _svg(_Row("68ef3f94aac1bf0f01abecaafd82cb2a200f2944", "12.4 KiB", 12)))
    theirs = mask_svg(await _svg(_Row("0b5c2f1e9d8a7766554433221100ffeeddccbbaa", "9.8 KiB", 97)))
    # (Textual numbers its CSS classes per export: compared as the plugin does)
    norm = lambda s: re.sub(r"\bterminal-\d+-", "terminal-", s)  # noqa: E731
    assert norm(ours) == norm(theirs)
    assert "pack-‹name›" in ours and "‹size›" in ours and "@‹offset›" in ours
    assert "506c81f9a5a9" in ours  # object ids stay: the fixtures fix them


@pytest.mark.asyncio
async def test_a_changed_label_still_changes_the_masked_snapshot():
    ours = mask_svg(await _svg(_Row("68ef3f94aac1bf0f01abecaafd82cb2a200f2944", "12.4 KiB", 12)))
    changed = mask_svg(await _svg(_Row("68ef3f94aac1bf0f01abecaafd82cb2a200f2944", "12.4 KiB", 12, "entries")))
    norm = lambda s: re.sub(r"\bterminal-\d+-", "terminal-", s)  # noqa: E731
    assert norm(ours) != norm(changed)


def test_sizes_in_words_and_columns_are_masked_and_counts_are_not():
    assert mask_text("beyond its 8492 bytes; 180 entries") == "beyond its ‹size›; 180 entries"
    assert mask_text("packs 1 (180 objects, 12.4 KiB); 0B held") == "packs 1 (180 objects, ‹size›); ‹size› held"
    assert mask_text("pack-75a3203630948bcd708895a96001bfe93… bucket 5a") == "pack-‹name› bucket 5a"
    assert (
        mask_text("holds 7d552edf3b58 @2,419, 0b5c2f1e9d8a @4,9")
        == "holds 7d552edf3b58 @‹offset›, 0b5c2f1e9d8a @‹offset›"
    )


def test_the_stored_snapshots_hold_no_pack_name_or_size():
    svgs = sorted(SNAPSHOTS.glob("*/*.svg"))
    assert svgs
    for svg in svgs:
        text = svg.read_text().replace("&#160;", " ")
        assert not re.search(r"pack-[0-9a-f]{6}", text), svg.name
        assert not re.search(r"\d (?:B|KiB|MiB|bytes)\b", text), svg.name
