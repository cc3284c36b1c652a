"""Screen 7: the commit log, loaded as you scroll; Enter opens a commit.

The list is virtual (only visible rows are drawn) and the walk behind it is
lazy (packscope.inspector.history_model): the first rows paint after a few objects
are read, whatever the length of the history, and more are loaded only
when the cursor nears the end, ``G`` is pressed, or a search needs them.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.widgets import Label

from packscope.inspector.commit_text import decoration_text
from packscope.inspector.history_graph import graph_text
from packscope.inspector.history_model import HistoryLog
from packscope.inspector.safe_text import literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.screens.commit import CommitScreen
from packscope.inspector.widgets.prompt import Prompt
from packscope.inspector.widgets.virtual_list import VirtualList

if TYPE_CHECKING:
    from collections.abc import Callable

HELP = """
The commit log, newest first, as `git log --graph` lists it for the
revisions shown in the title (HEAD unless you pick others with `r`): in
topological order (a commit before its parents) with the graph column —
each commit (●, a merge ◉) in the lane git draws it in, lines for the
branches passing by.  `t` hides the graph and lists in git log's default
order (by commit date); `t` again brings it back.  With paths (`p`) the
graph is drawn as `git log --graph -- PATH` draws it: over rewritten
parents (each commit's nearest ancestors the list shows), so the lines join
the commits that touched the paths.  Without a commit-graph
file, the topological order needs the whole history read first (the title
counts the commits read), as git's does.

Rows: graph, abbreviated id, author date (in the author's time zone), author
(18 columns, 12 under 100 so the subject keeps room), the
refs that point at the commit (HEAD, branches, tags: peeled to the commit
they name) and the subject.  Text from the repository is shown literally:
markup is not interpreted, control and bidi characters are spelled out
(\\e, \\u202e…), bytes that are not valid in the commit's encoding show as
\ufffd.

The walk is lazy: rows are read as you scroll ("loaded N of ~M"; M is the
commit-graph's commit count when there is a graph, else unknown).  G walks
to the end (watch the count), g goes back to the top.

/ searches at once among the loaded commits: an id prefix (4+ hex
digits), or text in the author's name or email or in the subject
(case-insensitive).  The cursor goes to the next match after its own row;
the title counts ("match 3/17"), says when the search wrapped around, and
keeps counting as more history loads.  n / N go to the next / previous
match (never the row the cursor is on); past the loaded rows, n loads more
history until a match turns up.

r picks revisions (like git log's arguments: HEAD, --all, main..topic,
v2.0 ^v1.0, optionally `-- path…`); p limits to paths (literal, from the
top of the repository; empty clears).

Enter opens the commit: its message, parents, author and committer with
their time zones, and its tree with the last commit of every entry.
"""


class HistoryList(VirtualList):
    """A VirtualList whose end, search and matches are asked of the screen
    with messages (the rows are still being loaded: the screen's walk
    and search index answer)."""

    class EndAsked(Message):
        """G: the last commit, the whole history loaded first."""

    class SearchAsked(Message):
        """/ (``restart``), n or N: the next match of ``query`` in ``direction``."""

        def __init__(self, query: str, direction: int, restart: bool = False) -> None:
            super().__init__()
            self.query = query
            self.direction = direction
            self.restart = restart

    def action_last(self) -> None:
        self.post_message(self.EndAsked())

    def action_search(self) -> None:
        from packscope.inspector.widgets.prompt import Prompt

        def chosen(q: str | None) -> None:
            if q:
                self.post_message(self.SearchAsked(q, 1, restart=True))

        self.app.push_screen(Prompt("/", "id prefix, author or subject", self.search_query), chosen)

    def action_next_match(self, direction: int) -> None:
        self.post_message(self.SearchAsked(self.search_query, direction))

    def grow(self) -> None:
        """More rows were loaded: re-measure, keep the drawn lines."""
        n = self.row_count
        self.virtual_size = Size(self.line_width, n)
        if self.follow and n:
            self.set_reactive(VirtualList.cursor, n - 1)
            self.scroll_end(animate=False, immediate=True)
        self.refresh()


class HistoryTitle(Label):
    """The title line: the walk (revisions, paths, progress) and the
    search, each a reactive bound to the History screen's."""

    walk_line: var[Text] = var(Text)
    search_line: var[str] = var("")

    def watch_walk_line(self) -> None:
        self._redraw()

    def watch_search_line(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        t = self.walk_line.copy()
        if self.search_line:
            t.append("   ")
            t.append_text(literal(self.search_line, "italic"))
        self.update(t)


class _PathsPrompt(Prompt):
    """Enter on an empty line means "no paths" (Esc still cancels)."""

    def on_input_submitted(self, event) -> None:
        event.prevent_default()  # not the base class's handler too
        event.stop()
        self.dismiss(event.value.strip())


NARROW = 100  # under this many columns the author column narrows


class _Source:
    search_hint = "id prefix, author or subject"

    def __init__(self, log: HistoryLog, room: Callable[[], int] = lambda: 0) -> None:
        self.history = log
        self.room = room  # the list's width now (0: not known)

    def author_width(self) -> int:
        """18 columns for the author; under 100 columns 12, so the subject
        keeps room beside the graph."""
        room = self.room()
        return 12 if room and room < NARROW else 18

    def row_count(self) -> int:
        return self.history.loaded

    def row_text(self, row: int) -> Text:
        c = self.history.rows[row]
        s = self.history.summaries.get(c.oid)
        t = Text()
        if self.history.lanes is not None:
            t.append_text(graph_text(self.history.lanes.row(row)))
            t.append(" ")
        t.append(c.oid.hex()[:10], style="yellow")
        if s.error:
            t.append("  ")
            t.append_text(literal(f"cannot read: {s.error}", "red"))
            return t
        t.append(f" {s.date:<10} ", style="dim")
        width = self.author_width()
        author = s.author if len(s.author) <= width else s.author[: width - 1] + "…"
        t.append_text(literal(author.ljust(width), "cyan"))
        t.append(" ")
        decor = self.history.decor.get(c.oid)
        if decor:
            t.append_text(decoration_text(decor))
        if len(c.parents) > 1:
            t.append("M ", style="magenta")
        t.append_text(literal(s.subject))
        return t


class HistoryScreen(PackscopeScreen):
    HELP = HELP
    DEFAULT_CSS = """
    #history-title { height: 1; padding: 0 1; }
    #history-list { padding: 0 1; }
    """
    TAB = "history"

    BINDINGS = [
        Binding("r", "pick_revisions", "Revisions", id="history.revisions"),
        Binding("p", "pick_paths", "Paths", id="history.paths"),
        Binding("t", "toggle_graph", "Graph on/off", id="history.graph"),
    ]

    PAGE_MARGIN = 3  # pages loaded beyond the cursor

    # State that redraws: t (graph) walks again; the search's text, progress
    # and wrap redraw the title's search part; the title's two parts are
    # bound to the HistoryTitle's.
    graph: var[bool] = var(True)  # the graph column, and git log --graph's topo order
    find_text: var[str] = var("")  # the query being searched
    search_state: var[str] = var("")  # a search's progress or failure (else the match counter)
    wrapped: var[str] = var("")  # the last step wrapped around (said in the title)
    walk_line: var[Text] = var(Text)
    search_line: var[str] = var("")

    def __init__(self, revs: list[str] | None = None, paths: list[str] | None = None) -> None:
        super().__init__()
        self.revs = revs or ["HEAD"]
        self.paths = paths or []
        self.history: HistoryLog | None = None
        self.matches: list[int] = []  # rows matching the query, among the first `scanned`
        self.scanned = 0
        self.pending = 0  # 1: a forward search waiting for more rows
        self._search_row = -1
        self._decor_seen: dict[bytes, list[tuple[str, str]]] | None = None

    def compose_body(self) -> ComposeResult:
        yield HistoryTitle("", id="history-title", markup=False).data_bind(
            HistoryScreen.walk_line, HistoryScreen.search_line
        )
        yield HistoryList(width=220, searchable=True, id="history-list")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(HistoryList).focus()
        self.update_title()

    @property
    def vlist(self) -> HistoryList:
        return self.query_one(HistoryList)

    def _room(self) -> int:
        try:
            return self.vlist.scrollable_content_region.width
        except NoMatches:
            return 0

    def on_resize(self, event) -> None:
        super().on_resize(event)
        if self.history is not None:
            self.vlist.refresh_rows()

    # --- loading --------------------------------------------------------------------

    def refresh_data(self) -> None:
        # R, a rescan, an outside change: start again (refs may have moved).
        if self.history is None or self.history.error or self._refs_changed():
            self.restart()

    def _refs_changed(self) -> bool:
        return False

    def action_refresh_data(self) -> None:
        # R after the repository changed under the walk: walk again (only on R:
        # outside changes while a repack loop runs would restart it forever)
        if self.history is not None and self.history.changed and self.app.core.ready:
            self.restart()
        super().action_refresh_data()

    def restart(self) -> None:
        if not self.app.core.ready:
            return
        if self.history is not None:
            self.history.cancel()
        # (with paths the graph is drawn over rewritten parents, as git log --graph draws it)
        self.history = HistoryLog(self.app.core, self.revs, self.paths, graph=self.graph)
        lst = self.vlist
        lst.follow = False
        lst.set_source(_Source(self.history, room=self._room))
        self.matches, self.scanned, self.pending = [], 0, 0
        self.search_state = self.find_text = self.wrapped = ""
        self.history.demand(self._page() * (self.PAGE_MARGIN + 1))
        self.walker(self.history)
        self.update_title()

    def _page(self) -> int:
        return max(20, self.vlist.scrollable_content_region.height or 30)

    @work(thread=True, group="history-walk")
    def walker(self, log: HistoryLog) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        log.run(lambda: self._notify(log), lambda: worker.is_cancelled)

    def _notify(self, log: HistoryLog) -> None:
        # the app is closing, or the screen's widgets are gone (its exceptions come back here)
        with contextlib.suppress(RuntimeError, NoMatches):
            self.app.call_from_thread(self._grown, log)

    def _grown(self, log: HistoryLog) -> None:
        if log is not self.history or not self.is_mounted:
            return
        if log.decor is not self._decor_seen:
            self._decor_seen = log.decor
            self.vlist.refresh_rows()
        self.vlist.grow()
        if self.find_text:
            self._extend_matches()
            if self.pending:
                self._step(self.pending)
        if log.error:
            self.notify(literal(log.error).plain, severity="error", timeout=6)
        self.update_title()

    def demand_more(self) -> None:
        log = self.history
        if log is None or log.done:
            return
        lst = self.vlist
        page = self._page()
        seen = max(lst.cursor, int(lst.scroll_y) + page)
        log.demand(seen + page * self.PAGE_MARGIN)

    def on_virtual_list_moved(self, event: VirtualList.Moved) -> None:
        self.demand_more()
        if self.find_text:
            if event.row != self._search_row:  # the user moved on: the wrap is old news
                self.wrapped = ""
            self.update_title()

    def tick(self) -> None:
        if self.history is not None and not self.history.done and self.is_mounted:
            try:
                self.demand_more()  # scrolling with the wheel moves no cursor
                self.update_title()
            except NoMatches:  # closing
                pass

    @on(HistoryList.EndAsked)
    def go_to_end(self) -> None:
        log = self.history
        if log is None:
            return
        lst = self.vlist
        lst.follow = True
        if log.done:
            lst.move_to(lst.row_count - 1)
        else:
            log.demand(float("inf"))
            lst.grow()

    def update_title(self) -> None:
        log = self.history
        t = Text("History ", style="bold")
        if log is None:
            t.append("— waiting for the repository…", style="italic")
        else:
            t.append_text(literal(log.describe(), "bold cyan"))
            total = "?" if log.estimate is None else f"~{log.estimate:,}"
            if log.graph:
                t.append("  graph", style="dim")
            if log.done:
                t.append(f"  {log.loaded:,} commits", style="green")
            elif log.graph and not log.loaded and log.reads is not None and log.reads.reads:
                # without generation numbers, --topo-order reads everything before its first row
                t.append(f"  ordering for the graph: {log.reads.reads:,} commits read…", style="yellow")
            else:
                t.append(f"  loaded {log.loaded:,} of {total}")
                if log.want > log.loaded:
                    t.append(" (loading…)", style="yellow")
            if log.error:
                t.append("  ")
                t.append_text(literal(log.error, "red"))
            if log.changed:
                t.append(f"  the repository changed during the walk ({log.changed}): R walks again", style="yellow")
        self.walk_line = t
        self._search_changed()

    def _search_changed(self) -> None:
        if self.is_mounted:
            self.search_line = self.search_text()

    # The search's own state redraws the title's search part.
    watch_find_text = watch_search_state = watch_wrapped = _search_changed

    # --- search ------------------------------------------------------------------
    # Instant: the log's SearchIndex holds the loaded rows' lines (the
    # first log.indexed rows: the worker indexes rows after loading them,
    # and keeps up once a search is on); a query lists its matches among
    # them at once (re-listed for rows indexed since).  n/N go to the
    # next/previous match past the cursor's row, wrapping (and saying so);
    # a step that needs rows not indexed yet waits for them (pending);
    # forward past the loaded rows, more history is loaded until a match
    # turns up or the walk ends.

    @on(HistoryList.SearchAsked)
    def _search_asked(self, message: HistoryList.SearchAsked) -> None:
        self.start_search(message.query, message.direction, message.restart)

    def start_search(self, query: str, direction: int, restart: bool = False) -> None:
        log = self.history
        if not query or log is None:
            return
        lst = self.vlist
        lst.search_query = query
        log.search_started()
        if restart or query != self.find_text:
            self.find_text = query
            self.scanned = log.indexed
            self.matches = log.index.find(query, 0, self.scanned)
        self.wrapped = ""
        self._step(direction)

    def _extend_matches(self) -> None:
        log = self.history
        if self.find_text and log is not None and log.indexed > self.scanned:
            indexed = log.indexed
            self.matches += log.index.find(self.find_text, self.scanned, indexed)
            self.scanned = indexed

    def _step(self, direction: int) -> None:
        import bisect

        log = self.history
        if log is None:  # searches start once the walk has
            return
        lst = self.vlist
        self._extend_matches()
        cursor = lst.cursor
        matches = self.matches
        self.pending = 0
        scanned = self.scanned
        if direction > 0:
            k = bisect.bisect_right(matches, cursor)
            if k < len(matches):  # (every row before it is indexed: none nearer)
                return self._go(matches[k])
            if scanned < log.loaded or not log.done:  # index, or load, on until a match turns up
                return self._wait(1)
            target = matches[0] if matches else None
            self.wrapped = "wrapped to the top"
        else:
            k = bisect.bisect_left(matches, cursor)
            if k > 0 and scanned >= cursor:
                return self._go(matches[k - 1])
            if scanned < max(cursor, log.loaded):  # the rows up to the cursor, or to wrap, not indexed yet
                return self._wait(-1)
            target = matches[-1] if matches else None
            self.wrapped = "wrapped to the bottom" if log.done else "wrapped to the last loaded row"
        if target is None:
            # (backward never loads more: say so while more history exists)
            more = "" if log.done else f" in the {log.loaded:,} loaded (n searches on)"
            self.search_state = f"no match for {self.find_text!r}{more}"
            self.wrapped = ""
            self.notify(f"no match for {literal(self.find_text).plain!r}", severity="warning", timeout=3)
            return
        self.notify(f"search {self.wrapped}", timeout=2)
        self._go(target)

    def _wait(self, direction: int) -> None:
        """The step waits: for the index to reach the loaded rows, or for
        more rows (then it goes on from _grown)."""
        log = self.history
        assert log is not None
        self.pending = direction
        if self.scanned >= log.loaded:
            log.demand(log.loaded + 5000)
            self.search_state = f"searching {self.find_text!r}: {log.loaded:,} loaded…"
        else:
            self.search_state = f"searching {self.find_text!r}: indexing ({self.scanned:,} of {log.loaded:,} loaded)…"
        self.update_title()

    def _go(self, row: int) -> None:
        lst = self.vlist
        self.search_state = ""
        lst.grow()
        lst.follow = False
        self._search_row = row
        lst.move_to(row)
        self.update_title()

    def search_text(self) -> str:
        """What the title says of the search: match k/N, wrapped, loading."""
        import bisect

        if self.search_state or not self.find_text:
            return self.search_state
        matches = self.matches
        cursor = self.vlist.cursor
        k = bisect.bisect_left(matches, cursor)
        at = (
            f"match {k + 1}/{len(matches):,}"
            if k < len(matches) and matches[k] == cursor
            else f"{len(matches):,} matches"
        )
        log = self.history
        if log is None or (log.done and self.scanned >= log.loaded):
            more = ""
        elif self.scanned < log.loaded:
            more = f" in the first {self.scanned:,} of {log.loaded:,} loaded (indexing…)"
        else:
            more = f" in {log.loaded:,} loaded"
        wrapped = f" — {self.wrapped}" if self.wrapped else ""
        return f"/{self.find_text}: {at}{more}{wrapped}  (n/N next/previous)"

    def action_toggle_graph(self) -> None:
        self.graph = not self.graph
        self.notify(
            "graph shown (topo order, as git log --graph)" if self.graph else "graph hidden (date order, as git log)",
            timeout=2,
        )

    def watch_graph(self) -> None:
        if self.is_mounted:
            self.restart()  # the graph is drawn in topo order: walk again

    # --- pickers ----------------------------------------------------------------------

    def action_pick_revisions(self) -> None:
        from packscope.inspector.widgets.prompt import Prompt

        current = " ".join(self.revs) + (" -- " + " ".join(self.paths) if self.paths else "")
        self.app.push_screen(
            Prompt("revisions:", "HEAD, --all, main..topic, v2 ^v1 [-- path…]", current), self._revisions_entered
        )

    def _revisions_entered(self, text: str | None) -> None:
        if text is None:
            return
        import shlex

        from packscope.core.face import UsageError
        from packscope.core.face import parse_log_words as parse_words

        try:
            words = shlex.split(text)
            opts = parse_words(words)
        except (ValueError, UsageError) as e:
            self.notify(literal(f"revisions: {e}").plain, severity="error", timeout=5)
            return
        from packscope.core.face import ALL

        self.revs = ["--all" if r is ALL else r for r in opts["revs"]] or ["HEAD"]
        if opts["dashdash"]:
            self.paths = list(opts["paths"])
        self.restart()

    def action_pick_paths(self) -> None:

        self.app.push_screen(
            _PathsPrompt("paths:", "dir/file … (empty: the whole tree)", " ".join(self.paths)), self._paths_entered
        )

    def _paths_entered(self, text: str | None) -> None:
        import shlex

        if text is None:
            return  # Esc: keep the paths
        try:
            self.paths = shlex.split(text)
        except ValueError as e:
            self.notify(f"paths: {e}", severity="error", timeout=5)
            return
        self.restart()

    # --- opening ---------------------------------------------------------------------

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        if self.history is None or event.row >= self.history.loaded:
            return
        self.app.push_screen(CommitScreen(self.history.rows[event.row].oid, decor=self.history.decor))

    def current_id(self) -> str | None:
        if self.history is None or not self.history.loaded:
            return None
        return self.history.rows[min(self.vlist.cursor, self.history.loaded - 1)].oid.hex()

    def on_screen_suspend(self) -> None:
        # Leaving (another screen, a prompt): a failed search is not news when coming back.
        if self.search_state.startswith("no match"):
            self.search_state = ""

    def on_unmount(self) -> None:
        if self.history is not None:
            self.history.cancel()
