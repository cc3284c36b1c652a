"""Screen 3: loose objects, by subdirectory, and core's loose name cache."""

from __future__ import annotations

import os
import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Label

from packscope.core.face import PackscopeError, trace
from packscope.inspector.plural import count
from packscope.inspector.safe_text import human_bytes, literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.watcher import count_loose_on_disk
from packscope.inspector.widgets.subdir_grid import GridState, SubdirGrid
from packscope.inspector.widgets.virtual_list import VirtualList

HELP = """
Loose objects live one per file: objects/xx/yyyy… where xx is the first
byte of the id in hex, so there are 256 subdirectories.  This grid is them:
row = first hex digit, column = second (row 3_, column _f is objects/3f).

Asking "is this id loose?" costs a stat() per question.  Asking many (or
resolving abbreviations) goes through the loose name cache instead: the
first question about a subdirectory reads it whole, once, into a sorted
list, and a flag remembers that it was read ("seen").  Rescans flush it.

Cells: green = seen (number of names in the cache); dim = not read yet
(number of object files on disk, counted by the UI with no effect on the
cache); yellow = the directory changed since it was read (the cache is
stale until the next rescan); a flash = filled just now.

Enter lists a subdirectory — through core, so it fills that cache entry.
`f` fills all 256 (watch them turn green), `x` flushes the cache.
"""


LEGEND = Text.assemble(
    ("green", "bold green"),
    " = read into the cache (names cached)   ",
    ("dim", "dim"),
    " = not read yet (files on disk)   ",
    ("yellow", "bold yellow"),
    " = changed since read   Enter lists one",
)


class LooseScreen(PackscopeScreen):
    HELP = HELP
    TAB = "loose"

    BINDINGS = [
        Binding("f", "fill_all", "Fill all", id="loose.fill-all"),
        Binding("x", "flush", "Flush cache", id="loose.flush"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.state = GridState()
        self._flash_until: dict[int, float] = {}

    def compose_body(self) -> ComposeResult:
        yield Label("", id="loose-summary", markup=False)
        yield SubdirGrid(id="loose-grid")
        yield Label("", id="loose-detail", markup=False)
        yield Label(LEGEND, id="loose-legend", markup=False)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(SubdirGrid).focus()

    @property
    def cache(self):
        core = self.app.core
        return core.store.loose_cache() if core.ready else None

    def refresh_data(self) -> None:
        self.read_cache_state()
        self.count_disk()

    def read_cache_state(self) -> None:
        cache = self.cache
        if cache is None:
            return
        with self.app.core.lock:
            for n in range(256):
                seen = cache.seen(n)
                self.state.seen[n] = seen
                self.state.cached[n] = len(cache.entries(n)) if seen else None
        self.show()

    @work(thread=True, exclusive=True, group="loose-count")
    def count_disk(self, only: tuple[int, ...] | None = None) -> None:
        store = self.app.core.store
        for n in range(256) if only is None else only:
            self.state.on_disk[n] = count_loose_on_disk(store.objects_dir, n, store.fmt.hexsz)
        self.app.call_from_thread(self.show)

    def show(self) -> None:
        now = time.monotonic()
        self.state.flashed = {n for n, t in self._flash_until.items() if t > now}
        self.query_one(SubdirGrid).update_state(self.state)
        s = self.state
        seen = sum(s.seen)
        cached = sum(c or 0 for c in s.cached)
        disk = sum(c or 0 for c in s.on_disk)
        strategy = self.cache.strategy if self.cache is not None else "?"
        self.query_one("#loose-summary", Label).update(
            Text(
                f"{disk:,} loose objects on disk; cache ({strategy}): {seen}/256 subdirectories read, "
                + count(cached, "name")
                + (f"; {len(s.changed)} changed since read" if s.changed else "")
            )
        )
        self.show_detail(self.query_one(SubdirGrid).cursor)

    def show_detail(self, n: int) -> None:
        s = self.state
        store = self.app.core.store
        if store is None:
            return
        path = os.path.join(store.objects_dir, f"{n:02x}")
        t = literal(path, "bold")
        t.append(": cache ")
        t.append("seen" if s.seen[n] else "not read yet", style="green" if s.seen[n] else "dim")
        cached = s.cached[n]  # known once seen
        if s.seen[n] and cached is not None:
            t.append(f" ({count(cached, 'name')})")
        t.append("; on disk ")
        t.append("…" if s.on_disk[n] is None else f"{s.on_disk[n]} object files")
        if n in s.changed:
            t.append("; changed since the cache read it", style="yellow")
        self.query_one("#loose-detail", Label).update(t)

    def on_subdir_grid_moved(self, event: SubdirGrid.Moved) -> None:
        self.show_detail(event.subdir)

    def on_subdir_grid_opened(self, event: SubdirGrid.Opened) -> None:
        self.app.push_screen(LooseDirScreen(event.subdir))

    def core_events(self, batch: list) -> None:
        cache = self.cache
        if cache is None:
            return
        touched = False
        for e in batch:
            if isinstance(e, trace.LooseCacheFilled) and e.objects_dir == cache.objects_dir:
                n = int(e.subdir, 16)
                self.state.seen[n] = True
                self.state.cached[n] = e.added
                self.state.changed.discard(n)
                self._flash_until[n] = time.monotonic() + 0.6
                touched = True
            elif isinstance(e, trace.LooseCacheFlushed) and e.objects_dir == cache.objects_dir:
                self.state.seen = [False] * 256
                self.state.cached = [None] * 256
                self.state.changed.clear()
                touched = True
        if touched:
            self.show()

    def tick(self) -> None:
        if self._flash_until:
            now = time.monotonic()
            if any(t <= now for t in self._flash_until.values()):
                self._flash_until = {n: t for n, t in self._flash_until.items() if t > now}
                self.show()

    def outside_changed(self, changes) -> None:
        store = self.app.core.store
        subs = tuple(int(s, 16) for c in changes if c.objects_dir == store.objects_dir for s in c.subdirs)
        for n in subs:
            if self.state.seen[n]:
                self.state.changed.add(n)
        self.read_cache_state()
        if subs:
            self.count_disk(subs)

    def action_fill_all(self) -> None:
        self.fill_all()

    @work(thread=True, exclusive=True, group="loose-fill")
    def fill_all(self) -> None:
        cache = self.cache
        core = self.app.core
        for n in range(256):
            with core.lock:  # one subdirectory per hold: the UI keeps drawing
                cache.fill(n)
            time.sleep(0.002)  # slow enough to watch the grid fill

    def action_flush(self) -> None:
        with self.app.core.lock:
            self.cache.flush("request")

    def current_id(self) -> str | None:
        return f"{self.query_one(SubdirGrid).cursor:02x}"


class _DirSource:
    search_hint = "id prefix"

    def __init__(self, objects_dir: str, subdir: int, ids: list[bytes]) -> None:
        self.objects_dir = objects_dir
        self.subdir = subdir
        self.ids = ids
        self._info: dict[int, tuple] = {}

    def row_count(self) -> int:
        return len(self.ids)

    def info(self, row: int) -> tuple:
        hit = self._info.get(row)
        if hit is None:
            from packscope.core.face import loose_path, read_loose_header

            path = loose_path(self.objects_dir, self.ids[row].hex())
            try:
                type_name, size = read_loose_header(path, self.ids[row])
                hit = (type_name, size, os.stat(path).st_size, None)
            except (PackscopeError, OSError) as e:
                hit = ("?", None, None, e.message if isinstance(e, PackscopeError) else str(e))
            self._info[row] = hit
        return hit

    def row_text(self, row: int) -> Text:
        type_name, size, disk, err = self.info(row)
        t = Text(self.ids[row].hex(), style="bold")
        if err:
            t.append("  ")
            t.append_text(literal(err, "red"))
            return t
        t.append(f"  {type_name:<7} {size:>9} {human_bytes(disk):>10}")
        return t

    def find(self, query: str) -> list[int]:
        q = query.lower()
        return [i for i, oid in enumerate(self.ids) if oid.hex().startswith(q)]


class LooseDirScreen(PackscopeScreen):
    HELP = """
One loose subdirectory, objects/xx: the ids core's loose name cache read
from it (listing it here is what fills that cache entry), with each
object's type and size (from the start of its zlib stream) and the file's
size on disk.  Enter opens an object.
"""
    TAB = "loose"

    def __init__(self, subdir: int) -> None:
        super().__init__()
        self.subdir = subdir
        self.ids: list[bytes] = []  # the subdirectory's ids, read on mount

    def compose_body(self) -> ComposeResult:
        yield Label("", id="loose-dir-title", markup=False)
        yield Label(f"{'id':<40}  {'type':<7} {'size':>9} {'on disk':>10}", id="loose-dir-header", markup=False)
        yield VirtualList(width=80, id="loose-dir-list")

    def on_mount(self) -> None:
        super().on_mount()
        core = self.app.core
        cache = core.store.loose_cache()
        with core.lock:
            ids = cache.entries(self.subdir)  # through core: fills the cache if unseen
        lst = self.query_one(VirtualList)
        self.ids = ids
        lst.set_source(_DirSource(core.store.objects_dir, self.subdir, ids))
        lst.focus()
        self.query_one("#loose-dir-title", Label).update(
            Text(f"objects/{self.subdir:02x}/  {len(ids)} objects (read through core's loose cache)", style="bold")
        )

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        self.app.open_object(self.ids[event.row])

    def current_id(self) -> str | None:
        lst = self.query_one(VirtualList)
        return self.ids[lst.cursor].hex() if lst.row_count else None
