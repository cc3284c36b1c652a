"""Refs (0): branches, remote branches, tags and the stash list, as `git
for-each-ref` sorts them, each with its commit, date and ahead/behind HEAD;
Enter opens the ref's history, `l` its reflog.

Rows are read in a thread worker that ends in a ``Loaded`` message; the
ahead/behind counts in a second one that posts a ``Counted`` message per
ref and is cancelled when the screen is left (each count is bounded: past
10,000 commits on a side the row shows ">10k").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.message import Message
from textual.widgets import Label

from packscope.core.face import PackscopeError
from packscope.inspector.plural import count
from packscope.inspector.refs_model import RefEntry, RefsSnapshot
from packscope.inspector.safe_text import literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.widgets.virtual_list import ListSource, VirtualList

if TYPE_CHECKING:
    from collections.abc import Callable

    from packscope.core.face import ReflogLine

COUNT_LIMIT = 10_000
KIND_STYLE = {"branch": "green", "remote": "red", "tag": "yellow", "stash": "magenta", "other": "blue"}

HELP = """
Every ref `git for-each-ref` lists — branches, remote branches, tags, other
refs under refs/ — in its order (by name), then the stash list (the
entries of refs/stash's reflog, newest first).  `*` marks the branch HEAD
is on.

Each row: the ref's short name, its commit's abbreviated id (an annotated
tag is peeled to the commit it names), the commit's date (under 100
columns the date is left out and long names are cut, so the subject
still shows), how many commits
HEAD has that the ref lacks (↑, ahead) and the ref has that HEAD lacks (↓,
behind) — what `git rev-list --count --left-right HEAD...REF` prints — and
the subject.  The counts fill in from a background walk; a side past
10,000 commits shows ">10k" (the walk stops there).

Enter (or h) opens the ref's history (History, starting at the ref); on a
stash entry (`stash@{n}: WIP on main: …`, as `git stash list` prints it)
Enter opens the stash's commit, h its history.  `l`
opens the ref's reflog as `git reflog show REF` lists it, `L` HEAD's (as
`git reflog`); Enter there opens the entry's commit.
"""


def count_text(e: RefEntry) -> Text:
    if e.commit is None:
        return Text("".rjust(13))
    if e.ahead is None or e.behind is None:
        return Text("…".rjust(13), style="dim")

    def one(n: int, exact: bool) -> str:
        if exact:
            return str(n)
        # the walk stopped at its bound: this side is past it, or not known
        return ">10k" if n >= COUNT_LIMIT else "?"

    t = Text()
    body = f"↑{one(e.ahead, e.ahead_exact)} ↓{one(e.behind, e.behind_exact)}"
    style = "dim" if e.ahead == 0 and e.behind == 0 else ""
    t.append(body.rjust(13), style=style)
    return t


def uncounted(snapshot: RefsSnapshot) -> list[int]:
    """The rows whose ahead/behind is still to count."""
    return [i for i, e in enumerate(snapshot.entries) if e.commit is not None and e.ahead is None]


def carry_counts(old: RefsSnapshot, new: RefsSnapshot) -> None:
    """Counts of the last read kept for refs that still name the same commit
    (HEAD unchanged): a repack, or coming back to the screen, does not move
    refs, so their counts are not walked again."""
    known: dict[tuple[str, bytes | None], RefEntry] = {
        (e.name, e.commit): e
        for e in old.entries
        if e.commit is not None and e.ahead is not None and e.behind is not None
    }
    for e in new.entries:
        k = known.get((e.name, e.commit))
        if k is not None:
            e.ahead, e.behind = k.ahead, k.behind
            e.ahead_exact, e.behind_exact = k.ahead_exact, k.behind_exact


class _RefsSource(ListSource):
    search_hint = "ref name or subject"

    def __init__(self, snapshot: RefsSnapshot, abbrev_len: int = 10, room: Callable[[], int] = lambda: 0) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.width = min(40, max((len(e.short) for e in snapshot.entries), default=10))
        self.room = room  # the list's width now (0: not known)

    def columns(self) -> tuple[int, bool]:
        """(name width, date shown): on a narrow terminal (under 100
        columns) the name column gives way (a fifth of the row, 12 at
        least) and the date goes, so the subject still shows."""
        room = self.room()
        if not room or room >= 100:
            return self.width, True
        return min(self.width, max(12, room // 5)), False

    def row_count(self) -> int:
        return len(self.snapshot.entries)

    def row_text(self, row: int) -> Text:
        e = self.snapshot.entries[row]
        t = Text()
        head = e.kind == "branch" and e.short == self.snapshot.head_name
        t.append("* " if head else "  ", style="bold green")
        t.append(e.kind[:6].ljust(7), style="dim")
        width, dated = self.columns()
        short = e.short if len(e.short) <= width else e.short[: width - 1] + "…"
        t.append_text(literal(short.ljust(width), KIND_STYLE.get(e.kind, "")))
        t.append(" ")
        if e.error:
            t.append_text(literal(f"cannot read: {e.error}", "red"))
            return t
        shown = e.commit if e.commit is not None else e.oid
        t.append(shown.hex()[:10], style="yellow")
        t.append(f" {e.date:<10} " if dated else " ", style="dim")
        t.append_text(count_text(e))
        t.append("  ")
        t.append_text(literal(e.subject))
        return t

    def find(self, query: str) -> list[int]:
        q = query.lower()
        return [i for i, e in enumerate(self.snapshot.entries) if q in e.short.lower() or q in e.subject.lower()]


class RefsList(VirtualList):
    pass


class RefsScreen(PackscopeScreen):
    HELP = HELP
    TAB = "refs"
    DEFAULT_CSS = """
    #refs-title { height: 1; padding: 0 1; }
    #refs-list { padding: 0 1; }
    """
    BINDINGS = [
        Binding("l", "reflog", "Reflog", id="refs.reflog"),
        Binding("h", "history", "History", id="refs.history"),
        Binding("L", "head_reflog", "HEAD's reflog", id="refs.head-reflog"),
    ]

    class Loaded(Message):
        """The rows were read (or could not be: ``error``)."""

        def __init__(self, snapshot: RefsSnapshot | None, error: str = "") -> None:
            super().__init__()
            self.snapshot = snapshot
            self.error = error

    class Counted(Message):
        """Ahead/behind of one row (``row`` of ``snapshot``)."""

        def __init__(self, snapshot: RefsSnapshot, row: int, ahead: int, behind: int, exact: tuple[bool, bool]) -> None:
            super().__init__()
            self.snapshot, self.row, self.ahead, self.behind, self.exact = snapshot, row, ahead, behind, exact

    class CountsDone(Message):
        def __init__(self, snapshot: RefsSnapshot) -> None:
            super().__init__()
            self.snapshot = snapshot

    def __init__(self) -> None:
        super().__init__()
        self.snapshot: RefsSnapshot | None = None
        self.counting = False
        self.reading = False
        self.error = ""

    def compose_body(self) -> ComposeResult:
        yield Label("", id="refs-title", markup=False)
        yield RefsList(width=200, searchable=True, id="refs-list")

    def on_mount(self) -> None:
        super().on_mount()
        self.vlist.focus()
        self.update_title()

    @property
    def vlist(self) -> RefsList:
        return self.query_one(RefsList)

    def _room(self) -> int:
        try:
            return self.vlist.scrollable_content_region.width
        except NoMatches:
            return 0

    def on_resize(self, event) -> None:
        super().on_resize(event)
        if self.snapshot is not None:
            self.vlist.refresh_rows()

    # --- loading ------------------------------------------------------------------

    def refresh_data(self) -> None:
        # R, coming back to the screen, an outside change: read the refs again
        # (once at a time: a resume and the core opening may both ask).
        if self.app.core.ready and not self.reading:
            self.reading = True
            self.load()

    @work(thread=True, exclusive=True, group="refs-load")
    def load(self) -> None:
        from packscope.inspector.refs_model import load_refs

        core = self.app.core
        try:
            snapshot = load_refs(core.bulk, core.lock)
        except (PackscopeError, OSError) as e:  # shown in the title
            self.post_message(self.Loaded(None, getattr(e, "message", str(e))))
            return
        self.post_message(self.Loaded(snapshot))

    def on_refs_screen_loaded(self, message: Loaded) -> None:
        self.reading = False
        self.error = message.error
        if message.snapshot is not None:
            old = self.snapshot
            cursor = self.vlist.cursor
            if old is not None and old.head == message.snapshot.head:
                carry_counts(old, message.snapshot)
            self.snapshot = message.snapshot
            self.vlist.set_source(
                _RefsSource(message.snapshot, room=self._room),
                cursor=min(cursor, max(len(message.snapshot.entries) - 1, 0)),
            )
            if old is None:
                self.vlist.move_to(0)
            if message.snapshot.head is not None and uncounted(message.snapshot):
                self.counting = True
                self.count(message.snapshot)
            else:  # every count carried over from the last read (or nothing to count)
                self._stop_counting()
        self.update_title()

    @work(thread=True, exclusive=True, group="refs-count")
    def count(self, snapshot: RefsSnapshot) -> None:
        from textual.worker import get_current_worker

        from packscope.inspector.refs_model import count_all

        worker = get_current_worker()
        core = self.app.core
        assert snapshot.head is not None

        def found(row: int, ahead: int, behind: int, ahead_exact: bool, behind_exact: bool) -> None:
            self.post_message(self.Counted(snapshot, row, ahead, behind, (ahead_exact, behind_exact)))

        pending = set(uncounted(snapshot))
        n = len(snapshot.entries)

        def next_row() -> int | None:
            # the rows on screen first (from the top one shown), then the rest in order
            try:
                start = int(self.vlist.scroll_y)
            except NoMatches:  # the screen is closing: any row will do
                start = 0
            for i in range(n):
                row = (start + i) % n
                if row in pending:
                    pending.discard(row)
                    return row
            return None

        count_all(
            core.bulk,
            core.lock,
            snapshot.head,
            snapshot.entries,
            found,
            lambda: worker.is_cancelled,
            COUNT_LIMIT,
            next_row,
        )
        if not worker.is_cancelled:
            self.post_message(self.CountsDone(snapshot))

    def on_refs_screen_counted(self, message: Counted) -> None:
        if message.snapshot is not self.snapshot:
            return
        e = message.snapshot.entries[message.row]
        e.ahead, e.behind = message.ahead, message.behind
        e.ahead_exact, e.behind_exact = message.exact
        self.vlist.refresh_rows()

    def on_refs_screen_counts_done(self, message: CountsDone) -> None:
        if message.snapshot is self.snapshot:
            self.counting = False
            self.update_title()

    def _stop_counting(self) -> None:
        self.workers.cancel_group(self, "refs-count")
        self.counting = False

    def on_screen_suspend(self) -> None:
        self._stop_counting()

    def on_unmount(self) -> None:
        self._stop_counting()

    def update_title(self) -> None:
        t = Text("Refs ", style="bold")
        s = self.snapshot
        if self.error:
            t.append_text(literal(f"cannot read the refs: {self.error}", "red"))
        elif s is None:
            t.append("— reading…", style="italic")
        else:
            kinds: dict[str, int] = {}
            for e in s.entries:
                kinds[e.kind] = kinds.get(e.kind, 0) + 1
            t.append("HEAD: ", style="dim")
            t.append_text(literal(s.head_name, "bold green"))
            names = {
                "branch": ("branch", "branches"),
                "remote": ("remote branch", "remote branches"),
                "tag": ("tag", "tags"),
                "stash": ("stash entry", "stash entries"),
            }
            parts = [count(n, *names.get(k, ("other ref", "other refs"))) for k, n in kinds.items()]
            # the counting state before the totals: a narrow title cuts the totals
            t.append("  ahead/behind: ", style="dim")
            t.append("counting…" if self.counting else "done", style="italic" if self.counting else "green")
            t.append("  " + ", ".join(parts), style="dim")
        self.query_one("#refs-title", Label).update(t)

    # --- opening --------------------------------------------------------------------

    def current(self) -> RefEntry | None:
        s = self.snapshot
        if s is None or not s.entries:
            return None
        return s.entries[min(self.vlist.cursor, len(s.entries) - 1)]

    def current_id(self) -> str | None:
        e = self.current()
        return None if e is None else e.oid.hex()

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        e = self.current()
        if e is not None and e.kind == "stash" and e.commit is not None:
            # a stash entry opens its commit (what `git stash show` starts from); h its history
            from packscope.inspector.screens.commit import CommitScreen

            self.app.push_screen(CommitScreen(e.commit))
            return
        self.action_history()

    def action_history(self) -> None:
        e = self.current()
        if e is None:
            return
        if e.commit is None:
            self.notify(f"{e.short} names no commit", severity="warning", timeout=3)
            return
        from packscope.inspector.screens.history import HistoryScreen

        start = e.name if e.kind != "stash" else e.commit.hex()
        self.app.push_screen(HistoryScreen(revs=[start]))

    def action_head_reflog(self) -> None:
        self.app.push_screen(ReflogScreen("HEAD", "HEAD"))

    def action_reflog(self) -> None:
        e = self.current()
        if e is None:
            return
        if e.kind == "stash":
            name, shown = "refs/stash", "stash"
        elif e.reflog is None:
            self.notify(f"{e.short} has no reflog", severity="warning", timeout=3)
            return
        else:
            name, shown = e.name, e.short  # what `git reflog show SHORT` prints (main@{0})
        self.app.push_screen(ReflogScreen(name, shown))


REFLOG_HELP = """
One ref's reflog, newest first, as `git reflog show REF` prints it for
the name the Refs row shows (main, origin/main, v1.0): the abbreviated id
each update set the ref to, `REF@{n}`, and the update's message (commit,
reset, checkout, rename…).  Enter opens that commit.  It is read again on
R and when the repository changes (a commit adds an entry at the top; the
cursor stays on its entry).
"""


class ReflogScreen(PackscopeScreen):
    HELP = REFLOG_HELP
    TAB = "refs"
    DEFAULT_CSS = """
    #reflog-title { height: 1; padding: 0 1; }
    #reflog-list { padding: 0 1; }
    """

    class Loaded(Message):
        def __init__(self, rows: list[tuple[str, ReflogLine]], error: str = "") -> None:
            super().__init__()
            self.rows = rows
            self.error = error

    def __init__(self, ref: str, shown: str) -> None:
        super().__init__()
        self.ref = ref
        self.shown = shown
        self.rows: list[tuple[str, ReflogLine]] | None = None
        self.error = ""
        self._shown = 0  # entries the list showed before the last read
        self.reading = False  # a read under way (a mount and a resume both ask)

    def compose_body(self) -> ComposeResult:
        yield Label("", id="reflog-title", markup=False)
        yield VirtualList(width=200, searchable=True, id="reflog-list")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(VirtualList).focus()
        self.update_title()
        self.refresh_data()

    def refresh_data(self) -> None:
        # R, coming back, an outside change (a commit writes objects and moves
        # the ref): read the reflog again, a small file
        if self.app.core.ready and not self.reading:
            self.reading = True
            self.load()

    @work(thread=True, exclusive=True, group="reflog-load")
    def load(self) -> None:
        from packscope.core.face import StoreAbbreviator, reflog_rows

        core = self.app.core
        session = core.bulk
        try:
            with core.lock:
                lines = reflog_rows(session.repo, self.ref)
                abbrev = StoreAbbreviator(session.store)
                rows = [(abbrev(line.new), line) for line in lines]
        except (PackscopeError, OSError) as e:  # shown in the title
            self.post_message(self.Loaded([], getattr(e, "message", str(e))))
            return
        self.post_message(self.Loaded(rows))

    def on_reflog_screen_loaded(self, message: Loaded) -> None:
        self.reading = False
        fresh = self.rows is None
        self.rows, self.error = message.rows, message.error
        texts = []
        for n, (short, line) in enumerate(message.rows):
            t = Text()
            t.append(short, style="yellow")
            t.append(" ")
            t.append_text(literal(f"{self.shown}@{{{n}}}:", "cyan"))
            t.append(" ")
            t.append_text(literal(line.message.decode("utf-8", "replace")))
            texts.append(t)
        lst = self.query_one(VirtualList)
        # read again: the cursor stays on the entry it was on (new entries come first)
        lst.set_source(ListSource(texts), 0 if fresh else lst.cursor + max(0, len(texts) - self._shown))
        self._shown = len(texts)
        self.update_title()

    def update_title(self) -> None:
        t = Text("Reflog ", style="bold")
        t.append_text(literal(self.shown, "bold cyan"))
        if self.error:
            t.append("  ")
            t.append_text(literal(self.error, "red"))
        elif self.rows is None:
            t.append("  reading…", style="italic")
        else:
            t.append("  " + count(len(self.rows), "entry", "entries"), style="dim")
        self.query_one("#reflog-title", Label).update(t)

    def current_id(self) -> str | None:
        if not self.rows:
            return None
        return self.rows[min(self.query_one(VirtualList).cursor, len(self.rows) - 1)][1].new.hex()

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        if not self.rows or event.row >= len(self.rows):
            return
        from packscope.inspector.screens.commit import CommitScreen

        self.app.push_screen(CommitScreen(self.rows[event.row][1].new))
