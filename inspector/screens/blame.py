"""Blame: one file at one commit, each line with the commit that last
brought it (opened with `b` on a file in a commit's changed files or tree).

The answers come from core's blame (``packscope.core.history.blame``,
what `packscope blame` prints as git does) in a thread worker that holds
the core lock in short spells and posts a ``Found`` message with each
batch of answered lines and a ``Walked`` message now and then; it ends in
``Done``, and is cancelled when the view is closed.  Lines show as soon as
the file is read; their commits fill in as the walk finds them.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.message import Message
from textual.widgets import Label

from packscope.core.face import CancelledError, PackscopeError
from packscope.inspector.commit_text import decode, name_text
from packscope.inspector.plural import count
from packscope.inspector.safe_text import literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.widgets.virtual_list import VirtualList

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.screen import Screen

    from packscope.core.face import BlameGroup

HOLD_SECONDS = 0.03  # longest hold of the core lock: the UI draws rows meanwhile
FOUND_SECONDS = 0.2  # answers are handed over at most this often (the first at once)

HELP = """
One file at one commit, a row per line: the commit that last brought the
line (as `git blame` finds it: every parent followed, whole-file renames
followed), its author and date, the line number and the line.  A line
whose commit is not found yet shows `…`; the title tells how many lines
are answered and how many commits the walk has looked at.  A `^` before
the id marks a root commit (git's boundary).  When a line came from
another path (a rename), that path shows after the id.

Enter opens the line's commit.  `,` or `<` blames the line's commit's
parent — the file as it was before that commit (under its old name if the
commit renamed it), the cursor near the same line: tig's keys for walking
back through a line's history.  Esc goes back (one blame at a time).
"""


class BlameLine:
    """What a row shows once answered."""

    __slots__ = ("commit", "orig", "path")

    def __init__(self, commit: bytes, path: bytes, orig: int) -> None:
        self.commit = commit
        self.path = path
        self.orig = orig


class _Source:
    search_hint = "text, author or commit id"

    def __init__(self, screen: BlameScreen) -> None:
        self.screen = screen

    def row_count(self) -> int:
        return len(self.screen.lines)

    def row_text(self, row: int) -> Text:
        return self.screen.row_text(row)

    def find(self, query: str) -> list[int]:
        s = self.screen
        q = query.lower()
        out = []
        for i, line in enumerate(s.lines):
            a = s.answers[i]
            who = s.facts.get(a.commit) if a is not None else None
            if (
                q in decode(line).lower()
                or (a is not None and a.commit.hex().startswith(q))
                or (who is not None and q in who[0].lower())
            ):
                out.append(i)
        return out


class BlameScreen(PackscopeScreen):
    HELP = HELP
    TAB = "history"
    DEFAULT_CSS = """
    #blame-title { width: 1fr; height: 1; padding: 0 1; }
    #blame-list { padding: 0 1; }
    """

    BINDINGS = [
        Binding("comma,less_than_sign", "blame_parent", "Blame parent", id="blame.parent"),
    ]

    class Started(Message):
        def __init__(self, lines: list[bytes]) -> None:
            super().__init__()
            self.lines = lines

    class Found(Message):
        def __init__(
            self,
            groups: list[BlameGroup],
            facts: dict[bytes, tuple[str, str, str]],
            previous: dict[tuple[bytes, bytes], tuple[bytes, bytes] | None],
        ) -> None:
            super().__init__()
            self.groups = groups
            self.facts = facts
            self.previous = previous

    class Walked(Message):
        def __init__(self, commits: int) -> None:
            super().__init__()
            self.commits = commits

    class Done(Message):
        def __init__(self, error: str = "", boundaries: frozenset[bytes] = frozenset()) -> None:
            super().__init__()
            self.error = error
            self.boundaries = boundaries

    def __init__(self, commit: bytes, path: bytes, line: int = 0, *, commit_screen: Callable[[bytes], Screen]) -> None:
        """``commit_screen(oid)``: the screen Enter opens for a line's commit
        (the Commit screen, handed in by the screen that opens this one:
        screens/commit.py imports this module, not the reverse)."""
        super().__init__()
        self.commit_screen = commit_screen
        self.commit = commit
        self.path = path
        self.start_line = line
        self.lines: list[bytes] = []
        self.answers: list[BlameLine | None] = []
        self.facts: dict[bytes, tuple[str, str, str]] = {}  # commit -> (author, date, subject)
        self.previous: dict[tuple[bytes, bytes], tuple[bytes, bytes] | None] = {}
        self.boundaries: frozenset[bytes] = frozenset()
        self.answered = 0
        self.walked = 0
        self.done = False
        self.error = ""
        self.started = False
        self.author_width = 8
        self.path_width = 0  # a path column once a line comes from another path (as git blame's)

    def compose_body(self) -> ComposeResult:
        yield Label("", id="blame-title", markup=False)
        yield VirtualList(width=400, searchable=True, id="blame-list")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(VirtualList).focus()
        self.update_title()
        self.refresh_data()

    def refresh_data(self) -> None:
        if not self.started and self.app.core.ready:
            self.started = True
            self.run_blame()

    def on_unmount(self) -> None:
        self.workers.cancel_group(self, "blame")

    # --- the walk -----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="blame")
    def run_blame(self) -> None:
        from textual.worker import get_current_worker

        from packscope.core.face import Blame, WalkSource, format_date_iso, load_mailmap
        from packscope.core.face import blame_commit_facts as commit_facts

        worker = get_current_worker()
        core = self.app.core
        lock = core.lock
        session = core.bulk
        walked = [0]
        told = [time.monotonic()]

        def check() -> None:
            # every few dozen commits, inside the walk (this thread holds the lock once)
            if worker.is_cancelled:
                raise CancelledError("blame cancelled")
            now = time.monotonic()
            if now - told[0] >= FOUND_SECONDS and b.examined != walked[0]:
                # a long stretch of history with no line answered: the title still moves
                told[0] = now
                walked[0] = b.examined
                self.post_message(self.Walked(b.examined))
            lock.release()
            time.sleep(0)
            lock.acquire()

        source = None
        try:
            with lock:
                source = WalkSource.open(session.repo, session.store, refs=session.refs)
                mailmap = load_mailmap(session.repo, session.objects, session.refs)
                b = Blame(session.objects, source=source, check=check)
                b.start(self.commit, self.path)
                lines = b.data.split(b"\n")
                if lines and lines[-1] == b"":
                    lines.pop()
            self.post_message(self.Started(lines))
            it = b.run_started()
            batch: list[BlameGroup] = []
            known: set[bytes] = set()
            handed = 0.0
            done = False
            while not done and not worker.is_cancelled:
                until = time.monotonic() + HOLD_SECONDS
                facts: dict[bytes, tuple[str, str, str]] = {}
                previous: dict[tuple[bytes, bytes], tuple[bytes, bytes] | None] = {}
                with lock:
                    for g in it:
                        batch.append(g)
                        if time.monotonic() > until:
                            break
                    else:
                        done = True
                    for g in batch:
                        previous[(g.commit, g.path)] = b.previous_of(g.commit, g.path)
                        if g.commit not in known:
                            known.add(g.commit)
                            f = commit_facts(session.objects.read(g.commit)[1], g.commit, mailmap.map)
                            facts[g.commit] = (
                                decode(f.author),
                                format_date_iso(f.author_time, f.author_tz.decode("ascii", "replace"))[:10],
                                decode(f.summary),
                            )
                if b.examined != walked[0]:
                    walked[0] = b.examined
                    self.post_message(self.Walked(b.examined))
                now = time.monotonic()
                if batch and (done or now - handed >= FOUND_SECONDS):
                    self.post_message(self.Found(batch, facts, previous))
                    batch, handed = [], now
                elif facts or previous:
                    self.post_message(self.Found([], facts, previous))
            if batch:
                self.post_message(self.Found(batch, {}, {}))
            if not worker.is_cancelled:
                self.post_message(self.Done(boundaries=frozenset(b.boundaries)))
        except CancelledError:
            return
        except (PackscopeError, OSError) as e:
            self.post_message(self.Done(getattr(e, "message", str(e))))
        finally:
            if source is not None:
                with lock:
                    source.close()

    def on_blame_screen_started(self, message: Started) -> None:
        self.lines = message.lines
        self.answers = [None] * len(message.lines)
        lst = self.query_one(VirtualList)
        lst.set_source(_Source(self), min(self.start_line, max(len(self.lines) - 1, 0)))
        self.update_title()

    def on_blame_screen_found(self, message: Found) -> None:
        self.facts.update(message.facts)
        self.previous.update(message.previous)
        for who, _, _ in message.facts.values():
            self.author_width = min(24, max(self.author_width, len(who)))
        for g in message.groups:
            if g.path != self.path:
                widest = max(len(name_text(g.path)), len(name_text(self.path)))
                self.path_width = min(40, max(self.path_width, widest))
            for k in range(g.length):
                if self.answers[g.final_start + k] is None:
                    self.answered += 1
                self.answers[g.final_start + k] = BlameLine(g.commit, g.path, g.orig_start + k)
        self.query_one(VirtualList).refresh_rows()
        self.update_title()

    def on_blame_screen_walked(self, message: Walked) -> None:
        self.walked = message.commits
        self.update_title()

    def on_blame_screen_done(self, message: Done) -> None:
        self.done = True
        self.error = message.error
        self.boundaries = message.boundaries
        self.query_one(VirtualList).refresh_rows()
        self.update_title()

    # --- drawing --------------------------------------------------------------------------

    def columns(self) -> tuple[int, int]:
        """(author, path) column widths for the list's width: as wide as
        their content (author 24, path 40 at most) while the line keeps
        45% of the row (36 columns at least); on a narrow terminal they
        give way (at 80 columns: author 15, or 8 beside a path of 12)."""
        try:
            width = self.query_one(VirtualList).scrollable_content_region.width
        except NoMatches:
            width = 0
        width = width or self.app.size.width
        fixed = 11 + 12 + len(str(len(self.lines))) + 1  # id, date, line number
        budget = width - fixed - max(36, int(width * 0.45))
        if not self.path_width:
            return min(self.author_width, max(8, budget)), 0
        author = min(self.author_width, max(8, budget // 2))
        return author, min(self.path_width, max(12, budget - author - 1))

    def on_resize(self, event) -> None:
        super().on_resize(event)
        if self.lines:
            self.query_one(VirtualList).refresh_rows()

    def row_text(self, row: int) -> Text:
        a = self.answers[row]
        t = Text()
        digits = len(str(len(self.lines)))
        author_width, path_width = self.columns()
        if a is None:
            t.append("…".ljust(11), style="dim")
            t.append(" " * (author_width + 12 + (path_width + 1 if path_width else 0)))
        else:
            hx = a.commit.hex()
            if a.commit in self.boundaries:
                t.append("^" + hx[:9], style="yellow")
            else:
                t.append(hx[:10], style="yellow")
            t.append(" ")
            if path_width:
                # every row names its path once any does, so the columns stay aligned
                name = name_text(a.path)
                name = name if len(name) <= path_width else "…" + name[-(path_width - 1) :]
                style = "magenta" if a.path != self.path else "dim"
                t.append_text(literal(name.ljust(path_width) + " ", style))
            who, date, _ = self.facts.get(a.commit, ("?", "", ""))
            shown = who if len(who) <= author_width else who[: author_width - 1] + "…"
            t.append_text(literal(shown.ljust(author_width), "green"))
            t.append(f" {date:<10} ", style="dim")
        t.append(f"{row + 1:>{digits}} ", style="dim")
        t.append_text(literal(decode(self.lines[row]).expandtabs(8)))
        return t

    def update_title(self) -> None:
        t = Text("Blame ", style="bold")
        t.append_text(literal(name_text(self.path), "bold cyan"))
        t.append(f" at {self.commit.hex()[:10]}", style="yellow")
        if self.error:
            t.append("  ")
            t.append_text(literal(self.error, "red"))
        elif not self.lines and not self.done:
            t.append("  reading…", style="italic")
        else:
            # the state first: a narrow title cuts the counts, not whether the walk ended
            t.append("  done" if self.done else "  walking…", style="green" if self.done else "italic")
            t.append(f"  {self.answered:,}/{count(len(self.lines), 'line', 'lines')}", style="dim")
            t.append(f", {count(self.walked, 'commit', 'commits')} looked at", style="dim")
        self.query_one("#blame-title", Label).update(t, layout=False)

    # --- keys ----------------------------------------------------------------------------------

    def current(self) -> BlameLine | None:
        if not self.answers:
            return None
        return self.answers[min(self.query_one(VirtualList).cursor, len(self.answers) - 1)]

    def current_id(self) -> str | None:
        a = self.current()
        return a.commit.hex() if a is not None else None

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        a = self.answers[event.row] if event.row < len(self.answers) else None
        if a is None:
            self.notify("this line's commit is not found yet", timeout=2)
            return
        self.app.push_screen(self.commit_screen(a.commit))

    def action_blame_parent(self) -> None:
        a = self.current()
        if a is None:
            self.notify("this line's commit is not found yet", timeout=2)
            return
        before = self.previous.get((a.commit, a.path))
        if before is None:
            self.notify("the file has no earlier version: this commit added it", timeout=3)
            return
        self.app.push_screen(BlameScreen(before[0], before[1], line=a.orig, commit_screen=self.commit_screen))
