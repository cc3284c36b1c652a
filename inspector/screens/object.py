"""Screen 4: one object, by type, and where it came from."""

from __future__ import annotations

import contextlib
import datetime as _dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Label, Static

from packscope.core.face import PackscopeError
from packscope.inspector.safe_text import human_bytes, literal, short_id
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.widgets.virtual_list import ListSource, VirtualList

if TYPE_CHECKING:
    from packscope.core.face import Location

BLOB_SHOW = 64 * 1024  # bytes of a blob shown
BLOB_READ_LIMIT = 32 << 20  # larger blobs are not read at all (core reads whole objects)

HELP = """
One object: what it says, and where the store found it.

Where: "midx" or "pack" — the pack and the byte offset of its entry; or
"loose" — the file objects/xx/yyyy…; plus the object's size and the bytes
its entry takes on disk.

Delta chain: a packed object may be stored as a delta against a base, which
may itself be a delta…  Depth 0 is this entry; the last line is the base
stored whole.  Reading walks down until it meets a base that is already in
the delta-base cache (recently rebuilt objects, by pack and offset) or the
whole base, then applies the deltas upwards, caching each intermediate.

Content: a commit's headers (tree, parents, author, committer) and message;
a tag's target and message; a tree's entries (mode, type, id, name); a blob
as text, or as hex when it is binary (first 64 KiB).

When the object cannot be read, the error says which step failed (the
entry header, inflating its zlib data, finding or applying a delta base)
and the chain marks the link it failed at; links below it were read,
links above were not reached.

Opened from a pack that a repack has since removed, the object is read
where it lives now; f switches the view to that pack and offset.

Enter on a line with an id (tree, parent, entry) opens that object.
"""


@dataclass
class ObjectView:
    oid: bytes
    type_name: str = "?"
    size: int | None = None
    where: list[tuple[str, str]] = field(default_factory=list)
    chain: list | None = None
    rows: list[Text] = field(default_factory=list)
    links: dict[int, bytes] = field(default_factory=dict)
    error: str | None = None
    failed_offset: int | None = None  # the chain entry whose step failed
    failed_step: str | None = None  # which step: header, inflate, delta, base
    moved_to: Location | None = None  # where the object lives now, when the opened pack was removed
    remedy: str | None = None


# What a read was doing when an error of this kind stopped it.
STEPS = {
    "pack-offset": "reading the entry header (no entry there)",
    "pack-entry-header": "reading the entry header",
    "pack-entry-type": "reading the entry header",
    "pack-zlib": "inflating the entry's zlib data",
    "pack-truncated": "inflating the entry's zlib data (cut by the end of the pack)",
    "pack-size": "inflating the entry's zlib data (wrong size)",
    "delta-missing-base": "finding the delta base",
    "delta-base-offset": "finding the delta base",
    "delta-loop": "finding the delta base (the chain loops)",
    "delta-too-deep": "walking the delta chain (too deep)",
    "pack-unreadable": "opening the pack file",
    "idx-unreadable": "opening the pack index",
}


def failed_step(e: PackscopeError) -> str:
    if e.kind in STEPS:
        return STEPS[e.kind]
    if e.kind.startswith("delta-"):
        return "applying the delta"
    return f"reading ({e.kind})"


def _ident(ident) -> Text:
    if ident is None:
        return Text("(malformed)", style="red")
    t = literal(ident.name)
    t.append(" <")
    t.append_text(literal(ident.email))
    t.append("> ")
    try:
        tz = _dt.timezone(_dt.timedelta(minutes=ident.tz_offset_minutes))
        t.append(_dt.datetime.fromtimestamp(ident.time, tz).strftime("%Y-%m-%d %H:%M:%S ") + ident.tz, style="dim")
    except (OverflowError, ValueError, OSError):
        t.append(f"{ident.time} {ident.tz}", style="dim")
    return t


def _header(name: str, value: Text | str) -> Text:
    t = Text(f"{name:<10} ", style="bold")
    t.append_text(value if isinstance(value, Text) else literal(value))
    return t


def content_rows(view: ObjectView, data: bytes, fmt) -> None:
    """Fill ``view.rows``/``links`` by type, with core's parsers."""
    from packscope.core.face import objects

    rows, links = view.rows, view.links

    def link(name: str, oid: bytes, extra: str = "") -> None:
        links[len(rows)] = oid
        t = _header(name, Text(oid.hex(), style="cyan"))
        if extra:
            t.append(f"  {extra}", style="dim")
        rows.append(t)

    def message(msg: bytes) -> None:
        rows.append(Text(""))
        for line in msg.split(b"\n"):
            rows.append(literal(line))

    if view.type_name == "commit":
        c = objects.parse_commit(data, fmt, view.oid)
        link("tree", c.tree)
        for p in c.parents:
            link("parent", p)
        rows.append(_header("author", _ident(c.author)))
        rows.append(_header("committer", _ident(c.committer)))
        if c.encoding:
            rows.append(_header("encoding", literal(c.encoding)))
        for k, v in c.extra_headers:
            first, _, rest = v.partition(b"\n")
            rows.append(_header(literal(k).plain, literal(first + (b" \xe2\x80\xa6" if rest else b""))))
        for code, text in c.problems:
            rows.append(Text(f"problem: {code}: {text}", style="red"))
        message(c.message)
    elif view.type_name == "tag":
        t = objects.parse_tag(data, fmt, view.oid)
        link("object", t.object, t.type)
        rows.append(_header("tag", literal(t.tag)))
        rows.append(_header("tagger", _ident(t.tagger)))
        for k, v in t.extra_headers:
            rows.append(_header(literal(k).plain, literal(v.partition(b"\n")[0])))
        message(t.message)
    elif view.type_name == "tree":
        for mode, name, oid in objects.tree_items(data, fmt, view.oid):
            links[len(rows)] = oid
            kind = objects.mode_type(mode)
            entry = Text(f"{mode:06o} {kind:<6} ", style="dim")
            entry.append(oid.hex(), style="cyan")
            entry.append("  ")
            entry.append_text(literal(name, "bold" if kind == "tree" else ""))
            rows.append(entry)
        if not rows:
            rows.append(Text("(empty tree)", style="dim"))
    else:
        shown = data[:BLOB_SHOW]
        binary = b"\0" in shown[:8000]
        if not binary:
            try:
                shown.decode("utf-8")
            except UnicodeDecodeError as e:
                binary = e.start < len(shown) - 4  # a character cut at the cap is fine
        if binary:
            for at in range(0, len(shown), 16):
                chunk = shown[at : at + 16]
                hexpart = " ".join(f"{b:02x}" for b in chunk)
                text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
                rows.append(Text(f"{at:08x}  {hexpart:<47}  {text}"))
        else:
            for line in shown.split(b"\n"):
                rows.append(literal(line))
        if len(data) > BLOB_SHOW:
            rows.append(Text(f"… {len(data) - BLOB_SHOW:,} more bytes not shown", style="dim italic"))


def load_object(core, oid: bytes, pack=None, offset: int | None = None) -> ObjectView:
    """Locate, read and describe ``oid`` (call with the core lock free: it
    takes it).  ``pack``/``offset``: the entry the user opened, if any."""
    store = core.store
    view = ObjectView(oid)
    removed = core.removed_at(pack) if pack is not None else None
    with core.lock:
        try:
            loc = store.locate(oid)
            if removed is not None:
                # Opened from a pack a repack has deleted since: say so, and
                # read the object where it lives now.
                view.where.append(("opened", f"{pack.name} @ {offset} — pack removed by a repack at {removed}"))
                view.moved_to = loc
                if loc is not None:
                    now = loc.path if loc.pack is None else f"{loc.pack.name} @ {loc.offset}"
                    view.where.append(("now lives in", f"{now} — f opens it there"))
                pack = offset = None
            if pack is None and loc is not None and loc.pack is not None:
                pack, offset = loc.pack, loc.offset
            if loc is None:
                view.where.append(("store", "not found (missing)"))
            elif loc.pack is None:
                view.where.append(("store", f"loose: {loc.path}"))
            else:
                view.where.append(
                    (
                        "store",
                        f"{loc.source}: {loc.pack.name} @ {loc.offset}"
                        + ("" if loc.local else f" (alternate {loc.objects_dir})"),
                    )
                )
            if pack is not None:
                p = pack.pack
                view.type_name, view.size = p.info_at(offset)
                if loc is None or loc.pack is not pack or loc.offset != offset:
                    view.where.append(("opened", f"{pack.name} @ {offset}"))
                with contextlib.suppress(PackscopeError, AttributeError):
                    view.where.append(("on disk", human_bytes(p.disk_size(offset))))
                view.chain = p.delta_chain(offset)  # before reading: which bases the cache holds now
                if view.type_name == "blob" and view.size > BLOB_READ_LIMIT:
                    view.rows.append(Text(f"blob of {view.size:,} bytes: too large to show", style="yellow"))
                    return view
                type_name, data = p.read_at(offset)
            elif loc is not None:
                view.type_name, view.size = store.read_header(oid)
                import os

                view.where.append(("on disk", human_bytes(os.path.getsize(loc.path))))
                if view.type_name == "blob" and view.size > BLOB_READ_LIMIT:
                    view.rows.append(Text(f"blob of {view.size:,} bytes: too large to show", style="yellow"))
                    return view
                type_name, data = store.read(oid)
            else:
                view.error = f"object {oid.hex()} is not in the object store"
                return view
            view.type_name, view.size = type_name, len(data)
        except PackscopeError as e:
            from packscope.core.face import explain_vanished

            e = explain_vanished(e)
            view.failed_offset, view.failed_step = e.offset, failed_step(e)
            view.error = e.message + (f" [{e.location()}]" if e.location() else "")
            view.remedy = e.remedy
            return view
        except OSError as e:
            view.error = f"cannot read: {e}"
            return view
    try:
        content_rows(view, data, store.fmt)
    except PackscopeError as e:
        view.rows.append(Text(""))
        view.rows.append(literal(f"cannot parse this {view.type_name}: {e.message}", "red"))
    return view


class ObjectScreen(PackscopeScreen):
    HELP = HELP
    TAB = "object"

    BINDINGS = [Binding("f", "follow", "Follow to new pack", id="object.follow")]

    def __init__(
        self, oid: bytes | None = None, pack=None, offset: int | None = None, follows_last: bool = False
    ) -> None:
        super().__init__()
        self.oid = oid
        self.entry_pack = pack
        self.entry_offset = offset
        self.follows_last = follows_last  # the Object tab shows the last object opened anywhere
        self.view: ObjectView | None = None

    def compose_body(self) -> ComposeResult:
        yield Static("", id="object-where", classes="panel")
        yield Label("", id="object-content-title", markup=False)
        yield VirtualList(width=200, id="object-content")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#object-where").border_title = "Object"
        self.query_one(VirtualList).focus()
        self.show()

    def on_screen_resume(self) -> None:
        last = self.app.last_object
        if self.follows_last and last is not None and last[0] != self.oid:
            self.oid, self.entry_pack, self.entry_offset = last
            self.view = None
        super().on_screen_resume()

    def refresh_data(self) -> None:
        if self.oid is not None and self.app.core.ready:
            self.load()
        else:
            self.show()

    @work(thread=True, exclusive=True, group="object-load")
    def load(self) -> None:
        oid = self.oid  # set before any load
        if oid is None:
            return
        view = load_object(self.app.core, oid, self.entry_pack, self.entry_offset)
        self.app.call_from_thread(self._loaded, view)

    def _loaded(self, view: ObjectView) -> None:
        if view.oid != self.oid:
            return
        self.view = view
        self.show()
        self.refresh_bindings()  # f (follow) only for a moved object

    def show(self) -> None:
        where = self.query_one("#object-where", Static)
        if self.oid is None:
            where.update(
                Text(
                    "No object yet: open one from Packs or Loose (Enter), or Ctrl-P → "
                    "“Go to object” and type an id, abbreviation or revision.",
                    style="italic",
                )
            )
            self.query_one(VirtualList).set_source(ListSource([]))
            return
        v = self.view
        t = Table(box=None, show_header=False, pad_edge=False, expand=True)
        t.add_column(style="bold", no_wrap=True)
        t.add_column(overflow="fold")
        t.add_row("id", Text(self.oid.hex(), style="bold cyan"))
        if v is None:
            t.add_row("", Text("reading…", style="italic"))
            where.update(t)
            return
        t.add_row("type", Text(f"{v.type_name}, {v.size:,} bytes" if v.size is not None else v.type_name))
        for k, val in v.where:
            t.add_row(k, literal(val))
        if v.error:  # one row each: literal() shows a newline as "\n"
            t.add_row("error", literal(v.error, "red"))
            if v.failed_step:
                t.add_row("failed step", literal(v.failed_step, "bold red"))
            if v.remedy:
                t.add_row("remedy", literal(v.remedy))
        if v.chain is not None:
            t.add_row("delta chain", self.chain_text(v.chain, v.failed_offset if v.error else None, bool(v.error)))
        where.update(t)
        self.query_one("#object-content-title", Label).update(
            Text(f"{v.type_name} content" + (" (Enter on an id opens it)" if v.links else ""), style="bold")
        )
        self.query_one(VirtualList).set_source(ListSource(v.rows))

    @staticmethod
    def chain_text(chain, failed_at: int | None = None, failed: bool = False) -> Text:
        """The chain, each link with what reading did to it.  When the read
        failed, the link it failed at says so and nothing claims "applied":
        links below it were read before the failure, links above were not
        reached."""
        if len(chain) == 1 and not failed:
            return Text("none: stored whole (depth 0)")
        t = Text()
        stop = next((i for i, link in enumerate(chain) if link.cached and i > 0), None)
        fail_depth = next((link.depth for link in chain if failed and link.offset == failed_at), None)
        for link in chain:
            if link.depth:
                t.append("\n")
            t.append(f"{link.depth:>3} ", style="dim")
            if link.offset is None:
                t.append(f"external base {short_id(link.base_oid or b'')}", style="yellow")
                continue
            t.append(f"@{link.offset:<10} {link.type_name:<9}")
            if failed:
                if fail_depth is None:
                    t.append(" not read (the read failed elsewhere)", style="yellow")
                elif link.depth == fail_depth:
                    t.append(" ✗ failed here", style="bold red")
                elif link.depth > fail_depth:
                    t.append(" read before the failure", style="dim")
                else:
                    t.append(" not reached (a link below failed)", style="yellow")
            elif link.cached:
                t.append(" in delta-base cache", style="bold green")
            elif stop is not None and link.depth > stop:
                t.append(" not needed (a cached base is above)", style="dim")
            elif link.depth == len(chain) - 1:
                t.append(" base, inflated", style="cyan")
            else:
                t.append(" delta applied", style="")
        return t

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "follow":  # only for an object whose pack a repack removed
            return self.view is not None and self.view.moved_to is not None
        return super().check_action(action, parameters)

    def action_follow(self) -> None:
        """Opened from a pack a repack removed: show the object's entry in
        the pack that holds it now."""
        v = self.view
        loc = v.moved_to if v is not None else None
        if loc is None:
            self.notify("nothing to follow: this object's pack is still there", timeout=3)
            return
        self.entry_pack, self.entry_offset = loc.pack, loc.offset
        self.app.last_object = (self.oid, loc.pack, loc.offset)
        self.view = None
        self.show()
        self.load()

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        if self.view is not None and event.row in self.view.links:
            self.app.open_object(self.view.links[event.row])

    def current_id(self) -> str | None:
        if self.view is not None:
            row = self.query_one(VirtualList).cursor
            if row in self.view.links:
                return self.view.links[row].hex()
        return self.oid.hex() if self.oid is not None else None
