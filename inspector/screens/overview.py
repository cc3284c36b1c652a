"""Screen 1: the repository at a glance, and the store working live."""

from __future__ import annotations

import os
import time

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Static

from packscope.core.face import PackscopeError
from packscope.inspector.core_access import Facts
from packscope.inspector.health_state import describe_run, health_state, opening_text
from packscope.inspector.plural import count
from packscope.inspector.safe_text import human_bytes, literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.watcher import count_loose_on_disk

# git's defaults for `git gc --auto`: what the badges compare against.
GC_AUTO_LOOSE = 6700
GC_AUTO_PACK_LIMIT = 50

HELP = """
The Overview shows what the object store found when it opened, and counts
what it does while you watch.

Repository: where the git directory and objects live, the object format
(SHA-1 or SHA-256 ids) and the repository format extensions.

Object store: packs (each a .pack of zlib-compressed, often delta-compressed
objects plus an .idx that maps sorted ids to offsets), how many a
multi-pack-index covers (one sorted table over many packs, searched first),
loose objects (one zlib file per object under objects/xx/), the commit-graph
(commit parents and generation numbers without parsing commits), alternates
(other object directories this one borrows from) and refs.

Health: one state shared with the Packs and Health screens — the problems
opening the repository found (exactly what `packscope info` reports:
damaged indexes, orphan files, a bad commit-graph or multi-pack-index,
broken refs, bad alternates, a .promisor pack without a promisor remote…;
opening verifies no checksum, and when it found nothing the panel says so:
"opened without errors; checksums not verified — 8 runs the full check"),
then every pack something found wrong with (the Packs screen's cheap
checks, its t checksums of the .pack and the .idx, the last full Health
run's findings about the pack or its index), then the last Health run
(when, how long ago, its counts and exit status), then notes:
provisional scans (the pack directory changed within 2 s of the scan, so
the next miss rescans) and git's `gc --auto` thresholds.

Counters (live): lookups, hits by source (midx, pack, loose), misses,
negative-cache hits (ids known missing), rescans and rescans skipped by the
gated miss policy, directory reads, stat() calls, pack opens, MRU moves,
and the delta-base cache (hits, misses, fills, evictions, bytes held).
"""


def _kv_table(rows: list[tuple[str, object]]) -> Table:
    t = Table(box=None, show_header=False, pad_edge=False, expand=True)
    t.add_column(style="bold", no_wrap=True)
    t.add_column(overflow="fold")
    for k, v in rows:
        t.add_row(k, v if isinstance(v, Text) else literal(str(v)))
    return t


def badge(level: str, text: str) -> Text:
    style = {
        "ok": "bold black on green",
        "info": "bold black on cyan",
        "warn": "bold black on yellow",
        "error": "bold white on red",
    }[level]
    t = Text(f" {level.upper():<5}", style=style)
    t.append(" ")
    t.append_text(literal(text))
    return t


# The live counters: (label, the label in a narrow panel).  Δ is the delta-base cache.
COUNTER_LABELS = (
    ("lookups", "lookups"),
    ("hit rate", "hit %"),
    ("hits midx", "midx hits"),
    ("hits pack", "pack hits"),
    ("hits loose", "loose hits"),
    ("misses", "misses"),
    ("negative hits", "neg. hits"),
    ("null lookups", "null ids"),
    ("rescans", "rescans"),
    ("rescans skipped", "skipped"),
    ("dir reads", "dir reads"),
    ("stat calls", "stats"),
    ("pack opens", "opens"),
    ("MRU moves", "MRU moves"),
    ("delta-base hits", "Δ hits"),
    ("delta-base hit rate", "Δ hit %"),
    ("delta-base fills", "Δ fills"),
    ("delta-base evictions", "Δ evicted"),
    ("delta-base held", "Δ held"),
    ("budget", "Δ budget"),
)
# The full labels' table: each side's longest label and a 10-cell value, a cell between columns.
FULL_COUNTERS_WIDTH = sum(max(len(full) for full, _s in COUNTER_LABELS[side::2]) + 10 for side in (0, 1)) + 6


def compact_number(n: int) -> str:
    """At most 5 characters: 9,999, 12.3k, 123k, 1.2M, 12M."""
    if n < 10_000:
        return f"{n:,}"
    for unit, size in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            v = n / size
            return f"{v:.1f}{unit}" if v < 99.95 else f"{v:.0f}{unit}"
    return str(n)


def compact_bytes(n: int) -> str:
    """At most 5 characters: 512B, 12.3K, 123M, 1.5G."""
    if n < 1024:
        return f"{n}B"
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.1f}{unit}" if v < 99.95 else f"{v:.0f}{unit}"
    return str(n)


class OverviewScreen(PackscopeScreen):
    HELP = HELP
    TAB = "overview"

    BINDINGS = [Binding("h", "open_health", "Health details", id="overview.health")]

    def __init__(self) -> None:
        super().__init__()
        self.facts = Facts()
        self._pack_rows: list = []
        self._health_shown: tuple = ()

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="overview-body"):
            with VerticalScroll(id="overview-left"):
                yield Static(Text("opening the repository…", style="italic"), id="ov-repo", classes="panel")
                yield Static("", id="ov-store", classes="panel")
            with Vertical(id="overview-right"):
                yield Static("", id="ov-health", classes="panel")
                yield Static("", id="ov-counters", classes="panel")

    def on_mount(self) -> None:
        super().on_mount()
        for wid, title in (
            ("#ov-repo", "Repository"),
            ("#ov-store", "Object store"),
            ("#ov-health", "Health"),
            ("#ov-counters", "Counters (live)"),
        ):
            self.query_one(wid).border_title = title
        self.query_one("#ov-health").border_subtitle = "h or click: details in Health"
        if self.app.core.error is not None:
            self.show_error(self.app.core.error)
        elif self.app.core.absent:  # lab --replay outside a repository
            self.query_one("#ov-repo", Static).update(Text(self.app.core.absent, style="italic"))

    def core_failed(self, error: PackscopeError) -> None:
        self.show_error(error)

    def show_error(self, e: PackscopeError) -> None:
        t = Text("cannot open the repository\n", style="bold red")
        t.append_text(literal(e.message))
        if e.location():
            t.append("\nwhere: ")
            t.append_text(literal(e.location()))
        t.append("\nremedy: ")
        t.append_text(literal(e.remedy))
        self.query_one("#ov-repo", Static).update(t)

    # --- data -------------------------------------------------------------------

    def refresh_data(self) -> None:
        self.gather_facts()
        self.render_all()

    @work(thread=True, exclusive=True, group="overview-facts")
    def gather_facts(self) -> None:
        """Everything that opens files: counted in a worker, shown as it comes."""
        core = self.app.core
        facts = Facts()
        facts.repo = core.repo_facts()
        rows = [r for r in core.pack_rows() if r.orphan is None]  # orphans are info's problems
        self._pack_rows = rows
        self.app.call_from_thread(self._show_facts, facts)
        total = 0
        for i, row in enumerate(rows):
            if row.objects is None:
                core.count_pack(row)
            total += row.objects or 0
            facts.packs_counted = i + 1
            if i % 200 == 199:
                self.app.call_from_thread(self.app.set_status, f"counting packs {i + 1}/{len(rows)}")
        facts.pack_objects = total
        facts.rewrites = self.gather_opening_problems()
        try:
            facts.midx = core.midx_facts()
        except (PackscopeError, OSError) as e:
            facts.midx = [{"path": "multi-pack-index", "error": str(e)}]
        facts.midx_read = True
        try:
            facts.commit_graph = core.commit_graph_facts()
        except (PackscopeError, OSError) as e:
            facts.commit_graph_error = e.message if isinstance(e, PackscopeError) else str(e)
        try:
            facts.refs = core.ref_facts()
        except (PackscopeError, OSError) as e:
            facts.refs_error = e.message if isinstance(e, PackscopeError) else str(e)
        self.app.call_from_thread(self._show_facts, facts)
        hexsz = core.store.fmt.hexsz
        on_disk = 0
        for n in range(256):
            on_disk += count_loose_on_disk(core.store.objects_dir, n, hexsz)
        facts.loose_on_disk = on_disk
        facts.loose_dirs_counted = 256
        self.app.call_from_thread(self._show_facts, facts)
        self.app.call_from_thread(self.app.set_status, "")

    def gather_opening_problems(self) -> str | None:
        """What ``packscope info`` reports as problems, from the same code
        (on the untraced session: info reads every index); returns info's
        line on what rewrites history (shallow, replace refs, grafts)."""
        from packscope.core.face import repository_report as collect
        from packscope.inspector.info_view import rewrites_text

        core = self.app.core
        rewrites = None
        try:
            with core.lock:
                doc = collect(core.bulk)
            problems = doc["problems"]
            rewrites = rewrites_text(doc)
        except (PackscopeError, OSError) as e:
            problems = [
                {
                    "area": "repository",
                    "severity": "error",
                    "kind": getattr(e, "kind", "unreadable"),
                    "message": str(e),
                    "path": None,
                    "remedy": getattr(e, "remedy", None),
                }
            ]
        self.app.call_from_thread(health_state(self.app).set_opening, problems)
        return rewrites

    def _show_facts(self, facts: Facts) -> None:
        self.facts = facts
        self.render_all()

    def render_all(self) -> None:
        if not self.app.core.ready or not self.is_mounted:
            return
        try:
            self.render_repo()
            self.render_store()
            self.render_health()
            self.render_counters()
        except NoMatches:  # closing: the widgets are already gone
            pass

    def render_repo(self) -> None:
        self.query_one("#ov-repo", Static).update(_kv_table(list(self.facts.repo.items())))

    def render_store(self) -> None:
        f = self.facts
        core = self.app.core
        rows = self._pack_rows or [r for r in core.pack_rows() if r.orphan is None]
        in_midx = sum(1 for r in rows if r.in_midx)
        size = sum(r.size for r in rows)
        objs = "counting…" if f.pack_objects is None else f"{f.pack_objects:,} objects"
        out: list[tuple[str, object]] = [
            (
                "packs",
                f"{len(rows):,} ({objs}, {human_bytes(size)}); {in_midx} in the multi-pack-index, "
                f"{len(rows) - in_midx} outside it",
            ),
        ]
        if f.midx:
            for m in f.midx:
                if "error" in m:
                    out.append(("multi-pack-index", Text(f"unreadable: {m['error']}", style="red")))
                else:
                    kind = f"chain of {m['layers']} layers" if m["chain"] else "single file"
                    out.append(
                        ("multi-pack-index", f"{m['objects']:,} objects over {count(m['packs'], 'pack')} ({kind})")
                    )
        else:
            # (not "none" before it is read; an empty repository has no packs to count first)
            out.append(("multi-pack-index", "none" if f.midx_read else "…"))
        loose_rows = []
        for k, (_d, c) in enumerate(core.loose_counts()):
            # one row per object directory: the repository's own, then each alternate
            where = "" if k == 0 else f"alternate {k}: "
            loose_rows.append(f"{where}{c.entries:,} cached from {c.subdirs_seen}/256 subdirs ({c.strategy})")
        disk = "counting…" if f.loose_on_disk is None else f"{f.loose_on_disk:,} on disk"
        out.append(("loose objects", f"{disk}; " + "; ".join(loose_rows)))
        if f.commit_graph_error:
            out.append(("commit-graph", Text(f"unreadable: {f.commit_graph_error}", style="red")))
        elif f.commit_graph:
            g = f.commit_graph
            out.append(
                (
                    "commit-graph",
                    f"{g['commits']:,} commits, {g['layers']} layer(s), {g['generation']}"
                    + (", changed-path Bloom filters" if g["bloom"] else ""),
                )
            )
        else:
            out.append(("commit-graph", "none" if f.packs_counted == len(rows) else "…"))
        out.append(("alternates", ", ".join(core.store.object_dirs[1:]) or "none"))
        if f.rewrites:
            out.append(("history", Text(f.rewrites, style="bold red")))
        if f.refs is not None:
            kinds = ", ".join(f"{n:,} {k}" for k, n in sorted(f.refs["by kind"].items()))
            out.append(
                (
                    "refs",
                    f"{f.refs['total']:,}"
                    + (f" ({kinds})" if kinds else "")
                    + (" in reftable" if f.refs.get("storage") == "reftable" else f", {f.refs['packed']:,} packed")
                    + f"; HEAD {f.refs['head']}",
                )
            )
        elif f.refs_error:
            out.append(("refs", Text(literal(f.refs_error).plain, style="dim")))
        s = core.store.settings
        out.append(
            (
                "settings",
                f"policy {s.policy}, search {s.algorithm}, loose cache {s.loose_strategy}"
                + (", quick" if s.quick else ""),
            )
        )
        self.query_one("#ov-store", Static).update(_kv_table(out))

    def health_badges(self) -> list[Text]:
        """The shared health state (opening problems as info reports them,
        the last Health run), then notes that are not problems."""
        core = self.app.core
        f = self.facts
        state = health_state(self.app)
        out: list[Text] = []
        if state.opening is None:
            out.append(badge("info", "checking what opening the repository found…"))
        elif not state.opening:
            out.append(badge(*opening_text(state)))
        else:
            for p in state.opening[:8]:
                where = f" [{p['path']}]" if p.get("path") else ""
                level = {"error": "error", "warning": "warn"}.get(p.get("severity", "error"), "info")
                out.append(badge(level, f"{p['kind']}: {p['message']}{where}"))
            if len(state.opening) > 8:
                out.append(badge("error", f"… {len(state.opening) - 8} more problems (packscope info lists them)"))
        damaged = state.damaged_packs()
        for key, problems in damaged[:8]:
            out.append(badge("error", f"{os.path.basename(key)}: " + "; ".join(problems)))
        if len(damaged) > 8:
            out.append(badge("error", f"… {len(damaged) - 8} more packs with problems (2: Packs, sorted by problems)"))
        verified = [k for k, ph in state.packs.items() if ph.verified_text() and not ph.problems()]
        if verified:
            out.append(badge("info", f"{count(len(verified), 'pack')} verified by t (pack and idx checksums ok)"))
        run = state.last_run
        if run is None:
            if state.opening != []:  # (with no problems, the opening line says it already)
                out.append(badge("info", "no Health run yet: 8 runs the full check"))
        else:
            level = (
                "error"
                if run.error or (run.exit or 0) != 0 or run.counts.get("error")
                else "warn"
                if run.cancelled or run.counts.get("warning")
                else "ok"
            )
            out.append(badge(level, describe_run(run)))
        if core.provisional_scans():
            out.append(badge("info", "pack directory changed within 2 s of its scan: the next miss will rescan"))
        rows = self._pack_rows
        outside = [r for r in rows if not r.in_midx and r.orphan is None]
        if f.midx and outside:
            out.append(
                badge(
                    "info",
                    f"{count(len(outside), 'pack')} outside the multi-pack-index {'is' if len(outside) == 1 else 'are'} searched one by one",
                )
            )
        if len(outside) > GC_AUTO_PACK_LIMIT:
            out.append(
                badge(
                    "warn", f"{len(outside)} packs > gc.autoPackLimit {GC_AUTO_PACK_LIMIT}: git gc --auto would repack"
                )
            )
        if f.loose_on_disk is not None and f.loose_on_disk > GC_AUTO_LOOSE:
            out.append(badge("warn", f"{f.loose_on_disk:,} loose objects > gc.auto {GC_AUTO_LOOSE}"))
        return out

    def action_open_health(self) -> None:
        """The badges lead to the Health screen (a full check, grouped by kind)."""
        if "health" in self.app.MODES:
            self.app.action_switch("health")

    def on_click(self, event) -> None:
        widget = getattr(event, "widget", None)
        if widget is not None and widget.id == "ov-health":
            self.action_open_health()

    def render_health(self) -> None:
        self.query_one("#ov-health", Static).update(Text("\n").join(self.health_badges()))

    def render_counters(self) -> None:
        core = self.app.core
        c = core.counters()
        if not c:
            return
        panel = self.query_one("#ov-counters", Static)
        # Two pairs a row, the full labels where they fit, else the short
        # labels and compact numbers (80 columns: ~36 cells), so nothing is
        # ever cut mid-word.
        narrow = 0 < panel.content_size.width < FULL_COUNTERS_WIDTH
        t = Table(box=None, show_header=False, pad_edge=False, expand=True)
        for _ in range(2):
            t.add_column(style="bold", no_wrap=True)
            t.add_column(justify="right", no_wrap=True, min_width=1 if narrow else 10)
        number = compact_number if narrow else (lambda n: f"{n:,}")
        size = compact_bytes if narrow else human_bytes
        hits = c["hits_midx"] + c["hits_pack"] + c["hits_loose"]
        rate = f"{100 * hits / c['lookups']:.{0 if narrow else 1}f}%" if c["lookups"] else "–"
        ds = core.delta_stats()
        dh = f"{100 * ds.hits / (ds.hits + ds.misses):.{0 if narrow else 1}f}%" if ds and ds.hits + ds.misses else "–"
        values = [
            number(c["lookups"]),
            rate,
            number(c["hits_midx"]),
            number(c["hits_pack"]),
            number(c["hits_loose"]),
            number(c["misses"]),
            number(c["negative_hits"]),
            number(c["null_lookups"]),
            number(c["rescans"]),
            number(c["rescans_skipped"]),
            number(c["dir_reads"]),
            number(c["stats"]),
            number(c["opens"]),
            number(c["mru_moves"]),
        ]
        if ds is not None:
            held = size(ds.bytes) if narrow else f"{ds.entries}/{size(ds.bytes)}"
            values += [number(ds.hits), dh, number(ds.fills), number(ds.evictions), held, size(ds.budget)]
        pairs = [(label[1 if narrow else 0], v) for label, v in zip(COUNTER_LABELS, values, strict=False)]
        for i in range(0, len(pairs), 2):
            (k1, v1), (k2, v2) = pairs[i], pairs[i + 1] if i + 1 < len(pairs) else ("", "")
            t.add_row(k1, v1, k2, v2)
        panel.update(t)

    def tick(self) -> None:
        if self.app.core.ready:
            try:
                self.render_counters()
                shown = (health_state(self.app).version, int(time.time()) // 30)
                if shown != self._health_shown:  # a new run or problems; the age every 30 s
                    self._health_shown = shown
                    self.render_health()
            except NoMatches:
                pass

    def core_events(self, batch: list) -> None:
        # Scans change what the store section and health show.
        from packscope.core.face import PackDirScanned

        if any(isinstance(e, PackDirScanned) for e in batch):
            self.refresh_data()
