"""What the Lookup lab draws: the stages of a lookup, one bucket search
stepped by three algorithms side by side, and a batch's distributions.

``SearchView`` keeps its data model (``stage``, ``paths``, ``step``) as
attributes, so what it draws can be checked against core's trace; the
drawing is plain Rich text (block characters), cheap to redo every frame.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from packscope.core.face import ALGORITHMS
from packscope.inspector import lab_batch
from packscope.inspector import lab_model as lab
from packscope.inspector.plural import count
from packscope.inspector.safe_text import literal

CMP_STYLE = {-1: "bold blue", 0: "bold green", 1: "bold red"}
KIND_STYLE = {
    "midx": "cyan",
    "pack": "cyan",
    "loose": "green",
    "fill": "green",
    "rescan": "yellow",
    "skipped": "dim yellow",
    "negative": "magenta",
    "null": "dim",
    "mru": "blue",
    "finished": "bold",
}
SHORT = {"binary": "bin", "interpolation": "int", "hedged": "hed"}
BARS = " ▁▂▃▄▅▆▇█"


def _n(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def rendered_height(console, text: Text, width: int) -> int:
    """Lines ``text`` takes at ``width`` cells, wrapped as Rich wraps it
    (not its newline count: a long line is two or more rows on screen)."""
    return max(1, len(text.wrap(console, max(1, width))))


def _legend(width: int) -> list[Text]:
    legend = [
        Text.assemble(("━", "bold"), (" window [lo,hi)  ─ ruled out", "dim")),
        Text.assemble(("▼ probe: ", "dim"), (">", CMP_STYLE[1]), (" name there > target, go left", "dim")),
        Text.assemble(("<", CMP_STYLE[-1]), (" go right", "dim")),
        Text.assemble(("=", CMP_STYLE[0]), (" hit  ◆ found  ✕ absent", "dim")),
    ]
    return _flow(legend, width)


def _flow(pieces: list[Text], room: int) -> list[Text]:
    """Pieces joined by two spaces into lines of at most ``room`` cells
    (a piece wider than that gets a line of its own)."""
    lines: list[Text] = []
    line = Text(end="")
    for piece in pieces:
        if line.cell_len and line.cell_len + 2 + piece.cell_len > room:
            lines.append(line)
            line = Text(end="")
        if line.cell_len:
            line.append("  ")
        line.append_text(piece)
    if line.cell_len or not lines:
        lines.append(line)
    return lines


FIRST_MISSES = 3  # searches shown before a long run of misses is folded


def _missed(s: lab.Stage) -> bool:
    search = s.search
    return s.is_search and search is not None and search.path.found is None


def folded_runs(run: lab.LookupRun | None) -> list[tuple[int, int]]:
    """[start, end) of each run of consecutive searches that found nothing
    and is long enough to fold: the stages after its first few."""
    out: list[tuple[int, int]] = []
    if run is None:
        return out
    stages, i = run.stages, 0
    while i < len(stages):
        if not _missed(stages[i]):
            i += 1
            continue
        j = i
        while j < len(stages) and _missed(stages[j]):
            j += 1
        if j - i > FIRST_MISSES + 2:
            out.append((i + FIRST_MISSES, j))
        i = j
    return out


def _stage_line(t: Text, run: lab.LookupRun, i: int, current: int) -> None:
    s = run.stages[i]
    future = i > current
    t.append("▶ " if i == current else "  ", style="bold")
    t.append(f"{i + 1:>2} {s.kind:<8} ", style="dim" if future else KIND_STYLE.get(s.kind, ""))
    t.append_text(literal(s.text, "dim" if future else ("bold" if i == current else "")))
    if s.is_search:
        t.append("  " + " · ".join(f"{SHORT[a]} {len(p.probes)}" for a, p in s.paths.items()) + " probes", style="dim")


def stage_list(run: lab.LookupRun | None, current: int, expanded: bool = False) -> Text:
    """One line per stage: done, ▶ current, dim for those still to come.
    A long run of packs searched in vain (hundreds, in a repository never
    repacked) is folded after its first few into one line, unless
    ``expanded`` (Enter); the stage being stepped through is shown on it."""
    t = Text(no_wrap=True, overflow="ellipsis", end="")
    if run is None:
        t.append("Press l (or Enter) and type an id, an abbreviation or a revision.", style="italic")
        return t
    if run.error:
        t.append_text(literal(run.text, "bold"))
        t.append(": ")
        t.append_text(literal(run.error, "red"))
        return t
    folds = {} if expanded else dict(folded_runs(run))
    lines = 0
    i = 0
    while i < len(run.stages):
        if lines:
            t.append("\n")
        lines += 1
        if i in folds:
            end = folds[i]
            inside = i <= current < end
            t.append("▶ " if inside else "  ", style="bold")
            t.append(f"   … {end - i} packs searched, not found", style="bold" if inside else "dim")
            if inside:
                t.append(f" — now {current + 1}: ", style="bold")
                search = run.stages[current].search
                t.append_text(literal(search.pack if search is not None else "", "bold"))
            t.append("  (Enter lists them)", style="dim")
            i = end
            continue
        _stage_line(t, run, i, current)
        i += 1
    return t


class SearchView(Widget):
    """One bucket search at one step, for every algorithm: a bar of the
    bucket with the current window [lo, hi) bright and the probed slot
    marked (▼, coloured by the comparison: red >, blue <, green =), then
    the probes so far, each labelled ``mi [lo,hi) cmp page``.

    Its height is what it draws at the width it is given (long lines wrap),
    and each algorithm's probes get at most ``probe_lines`` lines: a bucket
    of thousands of names takes a dozen probes, and all three rows and the
    legend must stay on screen, so the earliest probes give way ("… 5
    earlier")."""

    DEFAULT_CSS = "SearchView { height: auto; }"
    INDENT = 14

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.stage: lab.Stage | None = None
        self.paths: dict = {}
        self.step = 0
        self.note = ""
        self.probe_lines = 2
        self.bar_rows = 1  # presentation mode draws taller bars

    def show(self, stage: lab.Stage | None, step: int, note: str = "") -> None:
        self.stage = stage
        self.paths = dict(stage.paths) if stage is not None and stage.is_search else {}
        self.step = step
        self.note = note
        self.refresh(layout=True)

    def shown_probes(self, algorithm: str) -> list:
        p = self.paths[algorithm]
        return list(p.probes[: self.step])

    def get_content_height(self, container, viewport, width) -> int:
        return rendered_height(self.app.console, self.render_text(width), width)

    def render(self) -> Text:
        return self.render_text(self.size.width)

    def render_text(self, width: int) -> Text:
        # Layout asks for the height and then draws at the same width: one
        # build per frame (a 3,400-name bucket is ~450 cells of bars).
        key = (width, self.step, self.note, self.probe_lines, self.bar_rows)
        cached = getattr(self, "_drawn", None)
        if cached is not None and cached[0] == key and cached[1] is self.stage:
            return cached[2].copy()
        text = self._build(width)
        self._drawn = (key, self.stage, text)
        return text.copy()

    def _build(self, width: int) -> Text:
        width = max(40, width or 100)
        s = self.stage
        search = s.search if s is not None else None
        if not self.paths or s is None or search is None:  # paths are only shown for a search stage
            return Text(self.note or "No bucket search at this step.", style="italic dim", end="")
        blo, bhi = next(iter(self.paths.values())).bucket
        n = bhi - blo
        ind = self.INDENT
        bar_w = max(10, width - ind - 2)
        if 0 < n <= bar_w:
            cell = bar_w // n
            bar_w = n * cell
        lines: list[Text] = []
        head = literal(search.pack, "bold")
        head.append(f"  bucket [{blo},{bhi}): {_n(n, 'name')}; the store searched it with {search.path.algorithm}")
        head.truncate(width, overflow="ellipsis")
        lines.append(head)
        left, right = str(blo), str(bhi)
        lines.append(Text(" " * ind + left + " " * max(1, bar_w - len(left) - len(right)) + right, style="dim"))
        for a in ALGORITHMS:
            path = self.paths[a]
            shown = path.probes[: self.step]
            done = self.step >= len(path.probes)
            bar = self._bar(path, shown, done, blo, n, bar_w)
            style = "bold" if a == search.path.algorithm else ""
            for row in range(self.bar_rows):
                last = row == self.bar_rows - 1
                line = Text(f"{a:<{ind - 1}} " if last else " " * ind, style=style, end="")
                line.append_text(bar if last else self._thick(bar))
                lines.append(line)
            for probe_line in self._probe_lines(path, shown, done, n, width, s.nr):
                lines.append(Text(" " * ind, end="") + probe_line)
        lines += _legend(width)
        return Text("\n", end="").join(lines)

    def fixed_height(self, width: int) -> int:
        """Rows drawn whatever the probes: title, scale, the bars, legend."""
        width = max(40, width or 100)
        return 2 + len(ALGORITHMS) * self.bar_rows + len(_legend(width))

    def _probe_lines(self, path, shown, done: bool, n: int, width: int, nr: int | None) -> list[Text]:
        """The probes so far and the verdict, laid out in lines that fit
        ``width`` after the indent; at most ``probe_lines`` of them, the
        earliest probes dropped first."""
        room = max(20, width - self.INDENT)
        pieces: list[Text] = []
        for k, p in enumerate(shown):
            current = k == len(shown) - 1 and not done
            piece = Text(f"#{k + 1} ", style="dim", end="")
            piece.append(lab.probe_label(p), style=CMP_STYLE[p.cmp] + (" reverse" if current else ""))
            pieces.append(piece)
        if not path.probes:
            why = "the bucket is empty" if n <= 0 else "the bounds already rule it out"
            pieces.append(Text(f"no probe: {why}", style="dim", end=""))
        if done:
            verdict = f"found at {path.found}" if path.found is not None else f"absent, would be at {path.insert_at}"
            reads = lab.names_read(path, nr)
            tail = Text(
                f"→ {verdict}: {_n(len(path.probes), 'probe')}, {_n(reads, 'name')} read, "
                f"{_n(len(path.pages), 'page')}",
                style="bold",
                end="",
            )
        else:
            tail = Text(f"step {self.step}/{len(path.probes)}", style="dim", end="")
        dropped = 0
        while True:
            head = [Text(f"… {dropped} earlier", style="dim", end="")] if dropped else []
            lines = _flow(head + pieces[dropped:] + [tail], room)
            if len(lines) <= self.probe_lines:
                return lines
            if dropped >= len(shown):  # the verdict alone needs the room (it counts the probes)
                return _flow([*pieces[dropped:], tail], room)
            dropped += 1

    @staticmethod
    def _thick(bar: Text) -> Text:
        """An extra row above a bar (presentation mode): the window solid,
        the marks repeated, the rest blank."""
        out = bar.copy()
        out.plain = bar.plain.replace("━", "█").replace("─", " ")
        return out

    @staticmethod
    def _bar(path, shown, done: bool, blo: int, n: int, bar_w: int) -> Text:
        def col(pos: int) -> int:
            return 0 if n <= 0 else min(bar_w - 1, max(0, (pos - blo) * bar_w // n))

        if n <= 0:
            return Text("(empty bucket)", style="dim")
        if shown and not done:
            lo, hi = shown[-1].lo, shown[-1].hi
        elif done:
            end = path.found if path.found is not None else path.insert_at
            lo, hi = end, end
        else:
            lo, hi = path.bucket
        cells = []
        c_lo = col(lo)
        c_hi = col(hi) if hi < blo + n else bar_w
        for c in range(bar_w):
            inside = c_lo <= c < max(c_hi, c_lo + (1 if hi > lo else 0))
            cells.append(["━", "bold"] if inside else ["─", "dim"])
        for p in shown[:-1] if not done else shown:
            cells[col(p.mi)] = ["│", CMP_STYLE[p.cmp].replace("bold ", "")]
        if shown and not done:
            p = shown[-1]
            cells[col(p.mi)] = ["▼", CMP_STYLE[p.cmp]]
        if done:
            if path.found is not None:
                cells[col(path.found)] = ["◆", "bold green"]
            else:
                cells[min(bar_w - 1, col(path.insert_at))] = ["✕", "bold red"]
        # One span per run of equal style, not per cell.
        t = Text("".join(ch for ch, _ in cells), end="")
        start = 0
        for c in range(1, bar_w + 1):
            if c == bar_w or cells[c][1] != cells[start][1]:
                t.stylize(cells[start][1], start, c)
                start = c
        return t


# --- batches -------------------------------------------------------------------------

METRICS = (
    ("probes", "probes/lookup", True),
    ("reads", "names read/lookup", True),
    ("pages", "pages/lookup", True),
    ("micros", "µs/lookup", False),
)


def _spark(counts: list[int]) -> str:
    peak = max(counts) or 1
    return "".join(BARS[0 if not c else max(1, round(c / peak * 8))] for c in counts)


def batch_bins(width: int) -> int:
    """Histogram bins per cell so the four metric columns fit ``width``."""
    return max(8, min(24, (width - 16) // len(METRICS) - 2))


def batch_table(res: lab_batch.BatchResult, bins: int = 24, narrow: bool = False) -> Table:
    """Per algorithm (rows) and metric (columns): a histogram over one
    shared range per metric (the distribution), and under it the mean, the
    median, the 99th percentile and the maximum — a timing's mean can sit
    above its p99 when one outlier dominates, so the median is shown too.
    ``narrow`` (80 columns): the algorithms as bin, int, hed."""
    t = Table(box=None, pad_edge=False, padding=(0, 2, 0, 0), show_header=True, header_style="bold")
    t.add_column("alg" if narrow else "algorithm", no_wrap=True)
    for _key, title, _int in METRICS:
        t.add_column(title, no_wrap=True)
    ranges = {}
    for key, _title, integer in METRICS:
        values = [v for a in ALGORITHMS for v in getattr(res, key)[a]]
        lo = min(values) if values else 0
        hi = lab_batch.percentile(values, 0.99) if not integer else (max(values) if values else 0)
        ranges[key] = (lo, max(hi, lo + (1 if integer else 1e-9)))
    for a in ALGORITHMS:
        cells = []
        for key, _title, integer in METRICS:
            values = getattr(res, key)[a]
            lo, hi = ranges[key]
            counts, _width = lab_batch.histogram(values, bins, lo, hi, integer)
            mean = sum(values) / len(values) if values else 0.0
            cell = Text(_spark(counts), style="cyan", end="")
            unit = "" if integer else " µs"
            fmt = (lambda v: f"{v:.0f}") if integer else (lambda v: f"{v:.1f}")
            cell.append(f"\n{fmt(lo)}…{fmt(hi)}{'+' if not integer else ''}{unit}", style="dim")
            cell.append(f"\nmean {mean:.2f}" if integer else f"\nmean {mean:.1f}")
            cell.append(f"\np50 {fmt(lab_batch.percentile(values, 0.5))}", style="bold")
            cell.append(f"  p99 {fmt(lab_batch.percentile(values, 0.99))}")
            cell.append(f"\nmax {fmt(max(values) if values else 0)}")
            cells.append(cell)
        t.add_row(Text(SHORT[a] if narrow else a, style="bold"), *cells)
    return t


def batch_summary(res: lab_batch.BatchResult) -> Text:
    s = res.settings
    t = Text(end="")
    t.append(f"{res.label}: ", style="bold")
    t.append(
        f"{res.lookups:,} lookups{' (cancelled)' if res.cancelled else ''}, {res.found:,} found, "
        f"{res.missing:,} missing, {res.searches:,} bucket searches\n"
    )
    if res.changed:
        t.append(
            f"the repository changed during the batch ({res.changed}): found and missing mix the states "
            "before and after"
            + (
                f", {count(res.vanished, 'search', 'searches')} not repeated (the index was gone)"
                if res.vanished
                else ""
            )
            + " — r runs it again\n",
            style="bold yellow",
        )
    t.append("rescans ")
    t.append(f"{res.rescans:,}", style="bold yellow" if res.rescans else "bold")
    t.append(f" (skipped {res.rescans_skipped:,})   loose-cache fills ")
    t.append(f"{res.fills:,}", style="bold green" if res.fills else "bold")
    t.append(
        f"   dir reads {res.dir_reads:,}   stat() {res.stats:,}   store time "
        f"{res.seconds * 1e3:.1f} ms   wall {res.wall:.2f} s\n"
    )
    t.append(
        f"settings: store algorithm {s['algorithm']}, policy {s['policy']}, quick {'on' if s['quick'] else 'off'}, "
        f"loose cache {s['loose']}, caches {s.get('cache', 'warm')}"
        + (" (kept from before)" if s.get("cache") == "warm" else " (a fresh store)"),
        style="dim",
    )
    return t


def _setting_text(key: str, value) -> str:
    if key == "quick":
        return "quick-on" if value else "quick-off"
    return str(value)


def runs_table(runs: list[lab_batch.BatchResult]) -> Table:
    """Every batch run so far, one row each, with every setting it ran
    under on the line below its name (a value that differs from the run
    before is highlighted), so two rows never look alike when their
    settings were not."""
    t = Table(box=None, pad_edge=False, padding=(0, 2, 0, 0), header_style="bold")
    t.add_column("run / settings", no_wrap=True)
    for col in ("lookups", "rescans", "skipped", "fills", "store ms", "probes b/i/h", "names b/i/h"):
        t.add_column(col, no_wrap=True, justify="right")
    shown = runs[-6:]
    before = runs[-7] if len(runs) > 6 else None
    for r in shown:

        def means(values: dict) -> str:
            return "/".join(f"{sum(values[a]) / max(1, len(values[a])):.1f}" for a in ALGORITHMS)

        cell = literal(r.label if len(r.label) <= 36 else r.label[:35] + "…")
        cell.append("\n")
        for key in lab_batch.RUN_SETTINGS:
            value = r.settings.get(key)
            changed = before is not None and before.settings.get(key) != value
            cell.append(_setting_text(key, value), style="bold yellow" if changed else "dim")
            cell.append(" ")
        t.add_row(
            cell,
            f"{r.lookups:,}",
            Text(f"{r.rescans:,}", style="yellow" if r.rescans else ""),
            f"{r.rescans_skipped:,}",
            Text(f"{r.fills:,}", style="green" if r.fills else ""),
            f"{r.seconds * 1e3:.1f}",
            means(r.probes),
            means(r.reads),
        )
        before = r
    return t
