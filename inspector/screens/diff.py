"""One file's diff (opened from a Commit screen's changed files): the patch
as ``git diff -M100%`` prints it, in a virtual list."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Label

from packscope.core.face import PackscopeError
from packscope.inspector.commit_text import name_text
from packscope.inspector.safe_text import literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.widgets.virtual_list import ListSource, VirtualList

HELP = """
One file's change, as `git diff -M` prints it between the commit and the
parent named in the title: the `diff --git` header, mode lines, the
`index` line, then the hunks (`@@ -old +new @@` with 3 lines of context;
removed lines red, added lines green; tabs laid out as spaces to the next
8-column stop, as in the file).  A binary file is said as git says
it ("Binary files … differ"); a diff longer than 5,000 lines is cut, with
a note where it stops.  A rename or copy the Commit screen found (R087:
87% similar) shows git's `similarity index`, `rename from` / `rename to`
lines, then the changes between the old and the new file.

Every diff has a budget: a file larger than 512 KB (either side), or whose
diff takes more than 3 s, is not shown unasked — the screen says what it
skipped and why; Enter computes it anyway (as long as it takes; leaving the
screen stops it).

`v` toggles a split (side-by-side) view: the old file on the left, the
new on the right, each line with its number; removed and added lines
paired row by row, context on both sides.  Lines longer than their half
are cut (…).  Below 60 columns the split view does not fit: the diff
stays unified.

] and [ open the next and the previous changed file of the same commit;
Esc goes back to the commit.
"""

MAX_LINES = 5000
SPLIT_MIN_WIDTH = 60  # narrower, each side would show too little of its lines


TAB_SIZE = 8  # a hunk line's tabs as spaces (blame and the combined diff show them so too)


def expand_body(s: str) -> str:
    """A hunk line with the tabs of its body (after the one-column ``+``,
    ``-`` or space prefix) laid out as spaces, from the body's own start:
    aligned as in the file, not spelled ``\\t`` as a control character."""
    return s[:1] + s[1:].expandtabs(TAB_SIZE) if "\t" in s else s


def _line_text(raw: bytes, in_hunks: bool) -> Text:
    s = raw.decode("utf-8", "replace")
    if not in_hunks:
        return literal(s, "bold")
    if s.startswith((" ", "+", "-")):
        s = expand_body(s)
    if s.startswith("@@"):
        return literal(s, "cyan")
    if s.startswith("+"):
        return literal(s, "green")
    if s.startswith("-"):
        return literal(s, "red")
    if s.startswith("["):
        return literal(s, "italic yellow")
    if s.startswith("\\"):
        return literal(s, "dim")
    return literal(s)


class DiffScreen(PackscopeScreen):
    HELP = HELP
    TAB = "history"
    DEFAULT_CSS = """
    #diff-title { height: 1; padding: 0 1; }
    #diff-list { padding: 0 1; }
    """
    BINDINGS = [
        Binding("right_square_bracket", "step(1)", "Next file", id="diff.next-file"),
        Binding("left_square_bracket", "step(-1)", "Previous file", id="diff.previous-file"),
        Binding("v", "toggle_split", "Split/unified", id="diff.split"),
    ]

    def __init__(self, commit: bytes, parent: bytes | None, changes: list, index: int) -> None:
        super().__init__()
        self.commit = commit
        self.parent_commit = parent
        self.changes = changes
        self.index = index
        self.lines: list[bytes] | None = None
        self.error: str | None = None
        self.skipped: str | None = None  # why the diff was not computed (over a budget)
        self.forced = False  # Enter asked for it past the budget
        self.split = False  # side by side (v)
        self._split_width = 0  # the width the split rows were laid out for

    @property
    def change(self):
        return self.changes[self.index]

    def compose_body(self) -> ComposeResult:
        yield Label("", id="diff-title", markup=False)
        yield VirtualList(width=400, id="diff-list")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(VirtualList).focus()
        self.update_title()
        self.load()

    @work(thread=True, exclusive=True, group="diff-load")
    def load(self) -> None:
        from textual.worker import get_current_worker

        from packscope.core.face import CancelledError
        from packscope.inspector.commit_changes_model import (
            DIFF_BUDGET_SECONDS,
            OverBudget,
            over_budget,
            patch_text,
        )

        worker = get_current_worker()
        index, forced = self.index, self.forced
        change = self.changes[index]
        lines: list[bytes] = []
        error = skipped = None
        try:
            skipped = None if forced else over_budget(self.app.core, change)
            if skipped is None:
                lines = patch_text(
                    self.app.core,
                    change,
                    MAX_LINES,
                    cancelled=lambda: worker.is_cancelled,
                    seconds=None if forced else DIFF_BUDGET_SECONDS,
                )
        except OverBudget:
            skipped = f"it took more than the {DIFF_BUDGET_SECONDS:g} s budget"
        except CancelledError:
            return  # the screen was left, or another file asked for
        except PackscopeError as e:
            error = e.message + (f" [{e.location()}]" if e.location() else "")
        if not worker.is_cancelled:
            self.app.call_from_thread(self._loaded, index, lines, error, skipped)

    def _loaded(self, index: int, lines: list[bytes], error: str | None, skipped: str | None = None) -> None:
        if index != self.index or not self.is_mounted:
            return
        self.lines, self.error, self.skipped = lines, error, skipped
        self._show_rows()

    def _show_rows(self) -> None:
        lines, error, skipped = self.lines or [], self.error, self.skipped
        rows = []
        width = self._split_fits()
        if self.split and width:
            from packscope.inspector.split_view import split_texts

            rows = split_texts(lines, width)
            self._split_width = width
        else:
            in_hunks = False
            for raw in lines:
                in_hunks = in_hunks or raw.startswith((b"@@", b"Binary files "))
                rows.append(_line_text(raw, in_hunks))
        if skipped:
            name = name_text(self.change.path)
            rows.append(literal(f"diff of {name} skipped: {skipped} — press Enter to compute it anyway", "yellow"))
        if error:
            rows.append(literal(f"cannot read: {error}", "red"))
        self.query_one(VirtualList).set_source(ListSource(rows))
        self.update_title()

    def _split_fits(self) -> int:
        """The width a split view has (0: too narrow for one)."""
        width = self.query_one(VirtualList).scrollable_content_region.width or self.size.width - 2
        return width if width >= SPLIT_MIN_WIDTH else 0

    def action_toggle_split(self) -> None:
        if not self.split and not self._split_fits():
            self.notify(f"too narrow for a split view (under {SPLIT_MIN_WIDTH} columns)", timeout=3)
            return
        self.split = not self.split
        if self.lines is not None:
            self._show_rows()
        self.update_title()

    def on_resize(self, event) -> None:
        super().on_resize(event)
        if self.split and self.lines is not None and self._split_fits() != self._split_width:
            self._show_rows()  # each side takes half of the new width (or unified, if too narrow)
            self.update_title()

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        """Enter on a skipped diff: compute it, past the budget."""
        if self.skipped and not self.forced:
            self.forced, self.skipped, self.lines = True, None, None
            self.query_one(VirtualList).set_source(
                ListSource([literal("computing the diff past its budget…", "italic")])
            )
            self.update_title()
            self.load()

    def update_title(self) -> None:
        c = self.change
        t = Text("Diff ", style="bold")
        t.append(f"{self.index + 1}/{len(self.changes)} ", style="dim")
        t.append(c.name_status + " ", style="bold magenta")
        if c.status == "R":
            t.append_text(literal(name_text(c.old_path) + " → ", "bold"))
        t.append_text(literal(name_text(c.path), "bold"))
        t.append("  ")
        t.append(self.commit.hex()[:10], style="yellow")
        t.append(" vs ", style="dim")
        t.append(self.parent_commit.hex()[:10] if self.parent_commit else "the empty tree", style="yellow")
        if self.lines is None:
            t.append("  computing…" if self.forced else "  reading…", style="italic")
        elif self.skipped:
            t.append("  skipped (over budget)", style="yellow")
        else:
            n = len(self.lines)
            t.append(f"  {n:,} line{'s' if n != 1 else ''}", style="dim")
        if self.split:
            t.append("  split" if self._split_fits() else "  split (too narrow: unified)", style="dim")
        self.query_one("#diff-title", Label).update(t)

    def action_step(self, direction: int) -> None:
        i = self.index + direction
        if not 0 <= i < len(self.changes):
            self.notify("no next file" if direction > 0 else "no previous file", timeout=2)
            return
        self.index, self.lines, self.error, self.skipped, self.forced = i, None, None, None, False
        self.query_one(VirtualList).set_source(ListSource([]))
        self.update_title()
        self.load()

    def current_id(self) -> str | None:
        c = self.change
        oid = c.new_oid or c.old_oid
        return oid.hex() if oid else None
