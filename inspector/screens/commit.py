"""One commit (opened from History): message, parents, idents, and its
tree with the last commit of every entry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.widgets import Label

from packscope.core.face import PackscopeError
from packscope.inspector.commit_text import decode, decoration_text, ident_text, name_text
from packscope.inspector.history_model import SummaryCache
from packscope.inspector.safe_text import literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.widgets.virtual_list import VirtualList

if TYPE_CHECKING:
    from packscope.core.face import Commit
    from packscope.inspector.commit_changes_model import ParentChanges

NARROW = 100  # under this many columns tree rows drop the mode digits and names take 24

HELP = """
One commit, as stored: its id, parents, author and committer (each with
the date in its own time zone, as recorded), the encoding header if any,
the message (decoded with that encoding; bytes that are not valid show as
\ufffd; markup and control characters shown literally), then its tree.

What it changed: the files changed against the parent (each parent in
turn for a merge; a root commit against the empty tree) with git's status
letter (A added, D deleted, M modified, T type changed, R087 renamed with
87% of its content kept, C copied — found as `git diff -M` finds them:
`diff.renames`, similarity at 50% by default) and the lines added and
removed (`git diff --numstat`; "- -" for a binary file).
For a merge, `c` shows (again: hides) git's combined diff (`git show
--cc`) above the per-parent lists: the files the merge changed against
every parent, one column per parent.
A file larger than 512 KB, or whose count takes more than a second, is not
counted ("skipped", with the reason): its diff would cost far more memory
and time than the rest; Enter on it opens its diff, which offers to compute
it anyway.  Leaving the screen stops the counting.
Enter on a file opens its diff.  `d` moves the cursor to the changed files
(again: to the next parent's), `t` to the tree.  `b` on a changed file or
a file of the tree opens its Blame: each line with the commit that last
brought it.

Tree rows: mode (left out under 100 columns), type, name, and the last commit that changed the entry —
found by one history walk from this commit, filled in as the answers arrive
(the title shows how far the walk got).

Enter on a parent opens that commit; on a changed file, its diff; on a subdirectory, its tree (with its
own last commits); on a file, the Object screen (the blob's content and
where it is stored); on the tree line, the tree object.  `o` opens the
Object screen for the row (or the commit itself).  Esc goes back.
"""


def combined_line_text(line: bytes, nparents: int) -> Text:
    """One line of a combined diff, colored as git colors it: headers bold,
    hunk headers cyan, lines with a ``+`` column green, with ``-`` red."""
    text = literal(decode(line).expandtabs(8))  # (tabs as spaces, not as the literal \t of control characters)
    if line.startswith((b"diff --cc", b"diff --combined")):
        text.stylize("bold")
    elif line.startswith((b"index ", b"--- ", b"+++ ", b"mode ", b"new file", b"deleted file")):
        text.stylize("bold dim")
    elif line.startswith(b"@@"):
        text.stylize("cyan")
    else:
        head = line[:nparents]
        if b"+" in head:
            text.stylize("green")
        elif b"-" in head:
            text.stylize("red")
    return text


@dataclass
class CommitView:
    oid: bytes
    path: bytes = b""
    commit: Commit | None = None
    tree: bytes | None = None
    entries: list[tuple[int, bytes, bytes]] = field(default_factory=list)  # (mode, name, oid)
    error: str | None = None
    tree_error: str | None = None


def shallow_boundary(core, oid: bytes) -> bool:
    """Whether ``oid`` is listed in the repository's shallow file (its
    parents were never fetched)."""
    from packscope.core.face import read_shallow

    try:
        with core.lock:
            return oid in read_shallow(core.bulk.repo, core.bulk.store.fmt)
    except (PackscopeError, OSError):
        return False


def load_commit(core, oid: bytes, path: bytes, tree: bytes | None) -> CommitView:
    from packscope.core.face import mode_is_tree, parse_commit, tree_items

    view = CommitView(oid, path)
    store = core.bulk.store
    try:
        with core.lock:
            typ, data = store.read(oid)
        if typ != "commit":
            view.error = f"{oid.hex()} is a {typ}, not a commit"
            return view
        view.commit = commit = parse_commit(data, store.fmt, oid)
    except PackscopeError as e:
        view.error = e.message + (f" [{e.location()}]" if e.location() else "")
        return view
    try:
        with core.lock:
            if tree is None:
                tree = commit.tree
                for part in [p for p in path.split(b"/") if p]:
                    typ, data = store.read(tree)
                    if typ != "tree":
                        raise PackscopeError(f"expected a tree, found a {typ}", oid=tree.hex())
                    entry = next((e for e in tree_items(data, store.fmt, tree) if e[1] == part), None)
                    if entry is None or not mode_is_tree(entry[0]):
                        raise PackscopeError(f"no directory {part!r} in this commit")
                    tree = entry[2]
            view.tree = tree
            typ, data = store.read(tree)
            if typ != "tree":
                raise PackscopeError(f"expected a tree, found a {typ}", oid=tree.hex())
            view.entries = tree_items(data, store.fmt, tree)
    except PackscopeError as e:
        view.tree_error = e.message + (f" [{e.location()}]" if e.location() else "")
    return view


class _Source:
    search_hint = "text in the commit or its tree"

    def __init__(self, screen: CommitScreen) -> None:
        self.s = screen

    def row_count(self) -> int:
        return len(self.s.rows)

    def row_text(self, row: int) -> Text:
        kind, value = self.s.rows[row]
        if kind == "text":
            return value
        if kind == "parent":
            t = Text("parent     ", style="bold")
            t.append(value.hex(), style="cyan")
            sm = self.s.summaries.get(value)
            t.append("  ")
            if sm.error and self.s.boundary:
                t.append("not fetched: the shallow clone's history ends at this commit", style="yellow")
            else:
                t.append_text(literal(sm.error or sm.subject, "red" if sm.error else "dim"))
            return t
        if kind == "entry":
            return self.s.entry_text(value)
        if kind == "changes":
            return self.s.changes_title(value)
        if kind == "change":
            return self.s.change_text(*value)
        if kind == "combined-title":
            return self.s.combined_title()
        if kind == "combined":
            c = self.s.view.commit if self.s.view is not None else None
            return combined_line_text(value, len(c.parents) if c is not None else 2)
        return Text(str(value))


class CommitScreen(PackscopeScreen):
    HELP = HELP
    DEFAULT_CSS = """
    #commit-title { width: 1fr; height: 1; padding: 0 1; }
    #commit-list { padding: 0 1; }
    """
    TAB = "history"

    summaries: SummaryCache  # made on mount, before any row is drawn

    BINDINGS = [
        Binding("o", "open_object", "Object screen", id="commit.object"),
        Binding("d", "jump('change')", "Changed files", id="commit.changes"),
        Binding("t", "jump('entry')", "Tree", id="commit.tree"),
        Binding("b", "blame", "Blame file", id="commit.blame"),
        Binding("c", "toggle_combined", "Combined diff (--cc)", id="commit.combined"),
    ]

    def __init__(self, oid: bytes, path: bytes = b"", tree: bytes | None = None, decor=None) -> None:
        super().__init__()
        self.oid = oid
        self.boundary = False  # a shallow clone's boundary commit: its parents were never fetched
        self.path = path
        self.tree_oid = tree
        self.decor = decor or {}
        self.view: CommitView | None = None
        # A row's (and a link's) value goes with its kind: a Text, a commit id, the
        # index of a tree entry or of a parent's changes, a (parent, file) pair.
        self.rows: list[tuple[str, Any]] = []
        self.links: dict[int, tuple[str, Any]] = {}
        self.last: dict[bytes, bytes] = {}  # entry name -> commit id
        self.walked = 0
        self.last_done = False
        self.last_changed: str | None = None  # the repository changed during the last-commit walk
        self.read_started = False  # the commit's read has started
        self.changes: list[ParentChanges] | None = None  # per parent, once listed
        self.show_combined = False  # a merge's --cc diff shown (c)
        self.combined: list[bytes] | None = None  # its lines, once computed
        self.combined_files = 0
        self.combined_note: str | None = None  # why it is not shown (budget, error)

    def compose_body(self) -> ComposeResult:
        yield Label("", id="commit-title", markup=False)
        yield VirtualList(width=240, id="commit-list")

    def on_mount(self) -> None:
        super().on_mount()
        self.summaries = SummaryCache(self.app.core, size=1024)
        self.query_one(VirtualList).focus()
        self.update_title()
        self.refresh_data()

    def refresh_data(self) -> None:
        # Once: a resume before the first read ended started a second one,
        # whose workers cancelled the first's, and the cancelled changes
        # worker could still hand over its list last (never counted).
        if self.view is None and self.app.core.ready and not self.read_started:
            self.read_started = True
            self.load()

    def action_refresh_data(self) -> None:
        # R after the repository changed under the last-commit walk: walk again
        # (only on R: an outside change while a repack loop runs would restart it forever)
        if self.last_changed and self.last_done and self.view is not None and self.view.entries:
            self.last_changed, self.last_done, self.last = None, False, {}
            self.find_last_commits(self.view)
        super().action_refresh_data()

    @work(thread=True, exclusive=True, group="commit-load")
    def load(self) -> None:
        view = load_commit(self.app.core, self.oid, self.path, self.tree_oid)
        self.app.call_from_thread(self._loaded, view)

    def _loaded(self, view: CommitView) -> None:
        self.view = view
        self.build_rows()
        self.query_one(VirtualList).set_source(_Source(self), self.first_entry_row())
        self.update_title()
        if view.commit is not None and not self.path:
            self.find_changes(view.commit)
        if view.entries:
            self.find_last_commits(view)

    def first_entry_row(self) -> int:
        if self.path:
            return next((i for i, (k, _v) in enumerate(self.rows) if k == "entry"), 0)
        return 0

    def build_rows(self) -> None:
        v = self.view
        if v is None:  # rows are built once the commit is read
            return
        rows: list[tuple[str, Any]] = []
        links: dict[int, tuple[str, Any]] = {}
        self.links = links

        def text(t: Text | str, style: str = "") -> None:
            rows.append(("text", t if isinstance(t, Text) else Text(t, style=style)))

        def header(name: str, value: Text) -> None:
            t = Text(f"{name:<10} ", style="bold")
            t.append_text(value)
            text(t)

        header("commit", Text(self.oid.hex(), style="bold yellow"))
        c = v.commit
        if v.error or c is None:  # no commit read: what went wrong instead
            header("error", literal(v.error or "", "red"))
            self.rows = rows
            return
        enc = c.encoding
        if self.decor.get(self.oid):
            header("refs", decoration_text(self.decor[self.oid]))
        for p in c.parents:
            links[len(rows)] = ("commit", p)
            rows.append(("parent", p))
        header("author", ident_text(c.author, enc))
        header("committer", ident_text(c.committer, enc))
        if enc:
            header("encoding", literal(decode(enc, None)))
        for key, val in c.extra_headers:
            first, _, rest = val.partition(b"\n")
            header(literal(decode(key)).plain[:10], literal(decode(first) + (" …" if rest else ""), "dim"))
        for code, problem in c.problems:
            header("problem", literal(f"{code}: {problem}", "red"))
        text("")
        for line in decode(c.message, enc).split("\n"):
            text(literal("    " + line))
        text("")
        if not self.path and self.show_combined:
            rows.append(("combined-title", None))
            for patch_line in self.combined or []:
                rows.append(("combined", patch_line))
            text("")
        if not self.path and self.changes is not None:
            for k, pc in enumerate(self.changes):
                rows.append(("changes", k))
                for i in range(len(pc.changes)):
                    links[len(rows)] = ("change", (k, i))
                    rows.append(("change", (k, i)))
                text("")
        title = Text(f"{'tree':<10} ", style="bold")
        if v.tree is not None:
            links[len(rows)] = ("object", v.tree)
            title.append(v.tree.hex(), style="cyan")
        title.append("  ")
        title.append_text(literal("/" + name_text(v.path), "bold"))
        if v.tree_error:
            title.append("  ")
            title.append_text(literal(v.tree_error, "red"))
        else:
            title.append(f"  {len(v.entries)} entries — last commit of each:", style="dim")
        text(title)
        for i in range(len(v.entries)):
            links[len(rows)] = ("entry", i)
            rows.append(("entry", i))
        self.rows = rows

    def _room(self) -> int:
        """The list's width now (0: not known)."""
        try:
            return self.query_one(VirtualList).scrollable_content_region.width
        except NoMatches:
            return 0

    def on_resize(self, event) -> None:
        super().on_resize(event)
        if self.rows:
            self.query_one(VirtualList).refresh_rows()

    @property
    def entries(self) -> list[tuple[int, bytes, bytes]]:
        """The tree's entries (none before the commit is read)."""
        return self.view.entries if self.view is not None else []

    def entry_text(self, i: int) -> Text:
        from packscope.core.face import mode_type

        mode, name, _ = self.entries[i]
        kind = mode_type(mode)
        narrow = 0 < self._room() < NARROW
        # under 100 columns the mode's digits go and names take 24 columns, so
        # the last commit's subject still shows (the Object screen has the mode)
        t = Text(f"{kind:<6} " if narrow else f"{mode:06o} {kind:<6} ", style="dim")
        shown = name_text(name) + ("/" if kind == "tree" else "")
        lit = literal(shown, "bold blue" if kind == "tree" else "")
        width = 24 if narrow else 36
        if lit.cell_len > width:
            lit.truncate(width - 1)
            lit.append("…")
        t.append_text(lit)
        t.append(" " * max(1, width + 1 - lit.cell_len))
        commit = self.last.get(name)
        if commit is None:
            t.append("…" if not self.last_done else "?", style="dim")
            return t
        sm = self.summaries.get(commit)
        t.append(commit.hex()[:10], style="yellow")
        t.append(f" {sm.date:<10} ", style="dim")
        t.append_text(literal(sm.error or sm.subject, "red" if sm.error else ""))
        return t

    def action_jump(self, kind: str) -> None:
        """d: the cursor to the first changed file (again: the next parent's); t: to the tree."""
        lst = self.query_one(VirtualList)
        rows = [i for i, (k, _v) in enumerate(self.rows) if k == kind]
        if not rows:
            what = "changed files (still reading…)" if kind == "change" and self.changes is None else "nothing"
            self.notify(f"no {what} to go to" if what == "nothing" else f"no {what}", timeout=2)
            return
        heads = rows
        if kind == "change":  # the first file of each parent's section
            heads = [i for i in rows if self.rows[i - 1][0] == "changes"]
        after = [i for i in heads if i > lst.cursor]
        target = after[0] if after else heads[0]
        lst.move_to(target)
        # show the section's title too
        lst.scroll_to(y=max(0, target - 2), animate=False, immediate=True)

    # --- what it changed -------------------------------------------------------------

    @work(thread=True, exclusive=True, group="commit-changes")
    def find_changes(self, commit) -> None:
        from textual.worker import get_current_worker

        from packscope.inspector.commit_changes_model import count_lines, list_changes

        worker = get_current_worker()
        self.boundary = shallow_boundary(self.app.core, self.oid)
        parents = list_changes(self.app.core, commit, self.oid)
        self.app.call_from_thread(self._changes_listed, parents)
        count_lines(
            self.app.core,
            parents,
            counted=lambda: self.app.call_from_thread(self._counted),
            cancelled=lambda: worker.is_cancelled,
        )

    def _changes_listed(self, parents) -> None:
        if not self.is_mounted:
            return
        self.changes = parents
        lst = self.query_one(VirtualList)
        cursor = lst.cursor
        self.build_rows()
        lst.set_source(_Source(self), cursor if not self.path else self.first_entry_row())

    def _counted(self) -> None:
        if self.is_mounted:
            self.query_one(VirtualList).refresh_rows()

    def changes_title(self, k: int) -> Text:
        changes = self.changes
        if changes is None:  # its rows exist once the changes are listed
            return Text("")
        pc = changes[k]
        t = Text(f"{'changes':<10} ", style="bold")
        if pc.parent is None:
            t.append("against the empty tree (a root commit)", style="dim")
        else:
            t.append("against ")
            t.append(f"parent {pc.number} " if len(changes) > 1 else "the parent ", style="dim")
            t.append(pc.parent.hex()[:10], style="cyan")
        n = len(pc.changes)
        t.append(f"  {n:,} file{'s' if n != 1 else ''} changed", style="bold")
        added, deleted = pc.totals()
        t.append(f", +{added:,}", style="green")
        t.append(f" -{deleted:,}", style="red")
        if not pc.counting_done:
            done = len(pc.counts) + len(pc.skipped)
            t.append(f"  (counting {done:,}/{n:,}…)", style="yellow")
        if pc.skipped:
            k = len(pc.skipped)
            t.append(f"  {k:,} skipped (over budget; Enter on one to see why)", style="yellow")
        if pc.error:
            t.append("  ")
            t.append_text(literal(pc.error, "red"))
        return t

    def change_text(self, k: int, i: int) -> Text:
        if self.changes is None:  # its rows exist once the changes are listed
            return Text("")
        pc = self.changes[k]
        c = pc.changes[i]
        t = Text(f"  {c.name_status:<4} ", style="bold magenta")
        if i in pc.counts:
            counts = pc.counts[i]
            if counts is None:  # binary: numstat's "-  -"
                t.append(f"{'-':>7} {'-':>7}  ", style="dim")
            else:
                t.append(f"{'+' + format(counts[0], ','):>7}", style="green")
                t.append(f" {'-' + format(counts[1], ','):>7}  ", style="red")
        elif i in pc.skipped:
            t.append(f"{'skipped':>15}  ", style="yellow")
        else:
            t.append(f"{'…':>7} {'…':>7}  ", style="dim")
        if c.status == "R":
            t.append_text(literal(name_text(c.old_path)))
            t.append(" → ", style="dim")
        t.append_text(literal(name_text(c.path)))
        if i in pc.counts and pc.counts[i] is None:
            t.append("  binary", style="dim italic")
        if i in pc.skipped:
            t.append(f"  not counted: {pc.skipped[i]}", style="dim italic")
        if c.status == "T" or (c.old_mode and c.new_mode and c.old_mode != c.new_mode):
            t.append(f"  mode {c.old_mode:o} → {c.new_mode:o}", style="dim")
        return t

    # --- the combined diff ------------------------------------------------------------

    def action_toggle_combined(self) -> None:
        """c: a merge's combined diff (git show --cc), shown or hidden."""
        v = self.view
        if v is None or v.commit is None or self.path:
            return
        if len(v.commit.parents) < 2:
            self.notify("not a merge: the combined diff is a merge's", timeout=2)
            return
        self.show_combined = not self.show_combined
        if self.show_combined and self.combined is None and self.combined_note is None:
            self.find_combined(v.commit)
        self.rebuild_keeping_cursor()
        if self.show_combined:
            lst = self.query_one(VirtualList)
            at = next((i for i, (k, _v) in enumerate(self.rows) if k == "combined-title"), None)
            if at is not None:
                lst.move_to(at)
                lst.scroll_to(y=max(0, at - 2), animate=False, immediate=True)

    def rebuild_keeping_cursor(self) -> None:
        lst = self.query_one(VirtualList)
        cursor = lst.cursor
        self.build_rows()
        lst.set_source(_Source(self), min(cursor, max(0, len(self.rows) - 1)))

    @work(thread=True, exclusive=True, group="commit-combined")
    def find_combined(self, commit) -> None:
        from textual.worker import get_current_worker

        from packscope.core.face import CancelledError
        from packscope.inspector.commit_changes_model import OverBudget, combined_text

        worker = get_current_worker()
        lines: list[bytes] | None = None
        files = 0
        note = None
        try:
            lines, files = combined_text(self.app.core, commit, self.oid, cancelled=lambda: worker.is_cancelled)
        except OverBudget:
            note = "not shown: over its time budget"
        except CancelledError:
            return
        except PackscopeError as e:
            note = e.message
        self.app.call_from_thread(self._combined_found, lines, files, note)

    def _combined_found(self, lines, files: int, note: str | None) -> None:
        if not self.is_mounted:
            return
        self.combined, self.combined_files, self.combined_note = lines, files, note
        if self.show_combined:
            self.rebuild_keeping_cursor()

    def combined_title(self) -> Text:
        t = Text(f"{'combined':<10} ", style="bold")
        t.append("diff --cc against all parents", style="dim")
        if self.combined_note:
            t.append("  ")
            t.append_text(literal(self.combined_note, "yellow"))
        elif self.combined is None:
            t.append("  computing…", style="yellow")
        else:
            n = self.combined_files
            t.append(f"  {n:,} file{'s' if n != 1 else ''}", style="bold")
            if not n:
                t.append(" (each file equals one parent's, or --cc drops every hunk)", style="dim")
        return t

    # --- last commits -------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="commit-last")
    def find_last_commits(self, view: CommitView) -> None:
        from textual.worker import get_current_worker

        from packscope.inspector.last_commits import last_commits

        worker = get_current_worker()
        names = {name for _m, name, _o in view.entries}

        def found(batch) -> None:
            self.app.call_from_thread(self._found, batch)

        def progress(n: int) -> None:
            self.walked = n

        def changed(what: str) -> None:
            self.last_changed = what

        try:
            last_commits(
                self.app.core,
                self.oid,
                view.path,
                names,
                found=found,
                progress=progress,
                cancelled=lambda: worker.is_cancelled,
                changed=changed,
            )
        except PackscopeError as e:
            self.app.call_from_thread(
                self.notify, literal(f"last commits: {e.message}").plain, severity="error", timeout=6
            )
        if not worker.is_cancelled:
            self.app.call_from_thread(self._last_finished)

    def _found(self, batch) -> None:
        for name, commit in batch:
            self.last[name] = commit
        self.query_one(VirtualList).refresh_rows()
        self.update_title()

    def _last_finished(self) -> None:
        self.last_done = True
        self.query_one(VirtualList).refresh_rows()
        self.update_title()

    def tick(self) -> None:
        if not self.is_mounted:
            return
        if self.view is not None and not self.last_done:
            self.update_title()

    def update_title(self) -> None:
        t = Text("Commit ", style="bold")
        t.append(self.oid.hex()[:12], style="yellow")
        if self.path:
            t.append("  ")
            t.append_text(literal("/" + name_text(self.path), "bold"))
        v = self.view
        if v is None:
            t.append("  reading…", style="italic")
        elif v.entries:
            n = len(v.entries)
            got = sum(1 for _m, name, _o in v.entries if name in self.last)
            if self.last_done:
                t.append(f"  last commits: {got}/{n}", style="green")
                if self.last_changed:
                    t.append(
                        f" — the repository changed during the walk ({self.last_changed}): R walks again",
                        style="yellow",
                    )
            else:
                t.append(f"  last commits: {got}/{n} — walked {self.walked:,} commits…", style="yellow")
        # A fixed size (one row, the screen's width): a new title needs no
        # layout pass, which would redraw the whole screen 8 times a second
        # while the last-commit column fills.
        self.query_one("#commit-title", Label).update(t, layout=False)

    # --- opening ------------------------------------------------------------------------

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        link = self.links.get(event.row)
        if link is None:
            return
        kind, value = link
        if kind == "commit":
            self.app.push_screen(CommitScreen(value, decor=self.decor))
        elif kind == "change" and self.changes is not None:
            from packscope.inspector.screens.diff import DiffScreen

            k, i = value
            pc = self.changes[k]
            self.app.push_screen(DiffScreen(self.oid, pc.parent, pc.changes, i))
        elif kind == "object":
            self.app.open_object(value)
        elif kind == "entry":
            from packscope.core.face import mode_type

            mode, name, oid = self.entries[value]
            t = mode_type(mode)
            if t == "tree":
                self.app.push_screen(CommitScreen(self.oid, self.path + name + b"/", oid, decor=self.decor))
            elif t == "commit":
                self.notify("a submodule commit: it lives in another repository", timeout=3)
            else:
                self.app.open_object(oid)

    def action_blame(self) -> None:
        """b: the Blame view of the file under the cursor (a changed file, or a
        file of the tree), at this commit."""
        from packscope.core.face import mode_type

        row = self.query_one(VirtualList).cursor
        link = self.links.get(row)
        path = None
        if link is not None and link[0] == "change" and self.changes is not None:
            k, i = link[1]
            c = self.changes[k].changes[i]
            if c.status != "D" and c.new_oid is not None and mode_type(c.new_mode) == "blob":
                path = c.path
        elif link is not None and link[0] == "entry":
            mode, name, _ = self.entries[link[1]]
            if mode_type(mode) == "blob":
                path = self.path + name
        if path is None:
            self.notify(
                "b blames a file: put the cursor on a changed file (not deleted) or a file of the tree", timeout=3
            )
            return
        from packscope.inspector.screens.blame import BlameScreen

        self.app.push_screen(BlameScreen(self.oid, path, commit_screen=CommitScreen))

    def action_open_object(self) -> None:
        row = self.query_one(VirtualList).cursor
        link = self.links.get(row)
        if link is not None and link[0] == "entry":
            self.app.open_object(self.entries[link[1]][2])
        elif link is not None and link[0] == "change":
            oid = self.current_id()
            self.app.open_object(bytes.fromhex(oid) if oid else self.oid)
        elif link is not None:
            self.app.open_object(link[1])
        else:
            self.app.open_object(self.oid)

    def current_id(self) -> str | None:
        row = self.query_one(VirtualList).cursor
        link = self.links.get(row)
        if link is not None and link[0] == "entry":
            return self.entries[link[1]][2].hex()
        if link is not None and link[0] == "change" and self.changes is not None:
            k, i = link[1]
            c = self.changes[k].changes[i]
            return (c.new_oid or c.old_oid).hex() if (c.new_oid or c.old_oid) else None
        if link is not None:
            return link[1].hex()
        return self.oid.hex()
