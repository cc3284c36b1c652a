"""Turning a run's JSON document into tables: Rich for a terminal, Markdown
for RESULTS.md.  Both are drawn from the same rows (``tables(doc)``), so the
file and the screen cannot disagree; scripts read the JSON itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- numbers -----------------------------------------------------------------------------


def fmt_seconds(v: float | None) -> str:
    if v is None:
        return "–"
    if v < 1e-3:
        return f"{v * 1e6:.3g} µs"
    if v < 1:
        return f"{v * 1e3:.3g} ms"
    return f"{v:.3g} s"


def fmt_value(v: float | None, unit: str) -> str:
    if v is None:
        return "–"
    if unit == "s":
        return fmt_seconds(v)
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.3g} {unit}".strip()
    return f"{int(v):,} {unit}".strip()


def fmt_ratio(r: float | None) -> str:
    return "–" if r is None else f"{r:.2f}×"


def _spread(s: dict) -> str:
    if s["min"] is None or len(s["samples"]) < 2:
        return ""
    return f"{fmt_value(s['min'], s['unit'])} – {fmt_value(s['max'], s['unit'])}"


def _answer(info: dict) -> str:
    parts = []
    for k in ("found", "missing", "objects", "commits", "lines", "entries", "content_bytes"):
        if k in info and info[k] is not None:
            parts.append(f"{k.replace('_', ' ')} {info[k]:,}" if isinstance(info[k], int) else f"{k} {info[k]}")
    if "correct" in info:
        parts.append("✓" if info["correct"] else "WRONG ANSWER")
    if info.get("mark"):
        parts.append(str(info["mark"]))
    return ", ".join(parts)


# --- tables ------------------------------------------------------------------------------


def tables(doc: dict) -> list[Table]:
    out = []
    for sc in doc["scenarios"]:
        title = f"{sc['scenario']} — {sc['title']}"
        if not sc["available"]:
            out.append(Table(title, ["status"], [[f"not available: {sc['reason']}"]], list(sc["notes"])))
            continue
        t = _matrix(sc, title) if sc["layout"] == "matrix" else _list(sc, title)
        t.notes += sc["notes"]
        for case in sc["cases"]:
            for target in case["targets"]:
                verdict = "no number" if target["met"] is None else ("met" if target["met"] else "MISSED")
                cpu = target.get("cpu_ratio")
                on_cpu = (
                    "" if cpu is None else f" (CPU time: {fmt_ratio(cpu)} — {'met' if target['met_cpu'] else 'MISSED'})"
                )
                t.notes.append(
                    f"target ({case['case']}): {target['label']}: {fmt_ratio(target['ratio'])} — {verdict}" + on_cpu
                )
            for note in case["notes"]:
                t.notes.append(f"{case['case']}: {note}")
            for s in case["systems"]:
                if s["note"]:
                    t.notes.append(f"{case['case']} · {s['system']}: {s['note']}")
        out.append(t)
        if sc["scenario"] == "scale-growth":
            out.append(growth_table(sc))
    return out


def _list(sc: dict, title: str) -> Table:
    extra = [tuple(c) for c in sc.get("columns", [])]
    if any("cpu_seconds" in s["metrics"] for case in sc["cases"] for s in case["systems"]):
        extra.insert(0, ("cpu_seconds", "CPU"))
    headers = ["case", "system", "median", "min – max", *[h for _, h in extra], "vs peers", "answer"]
    t = Table(title, headers)
    for case in sc["cases"]:
        ratios: dict[str, list[str]] = {}
        for r in case["ratios"]:
            cpu = "" if r.get("cpu_ratio") is None else f" (CPU {fmt_ratio(r['cpu_ratio'])})"
            ratios.setdefault(r["packscope"], []).append(f"{fmt_ratio(r['ratio'])}{cpu} {r['peer']}")
        first = True
        for s in case["systems"]:
            if not s["available"] and not s["samples"]:
                cells = [case["case"] if first else "", s["system"], "skipped", "", *["" for _ in extra], "", ""]
            else:
                cells = [case["case"] if first else "", s["system"], fmt_value(s["median"], s["unit"]), _spread(s)]
                for metric, _ in extra:
                    m = s["metrics"].get(metric)
                    cells.append(_metric(metric, m["median"] if m else s["info"].get(metric)))
                cells.append("; ".join(ratios.get(s["system"], [])))
                cells.append(_answer(s["info"]))
            t.rows.append(cells)
            first = False
    return t


def _metric(name: str, v) -> str:
    if v is None:
        return "–"
    if name.endswith("seconds"):
        return fmt_seconds(v)
    if name.endswith("bytes"):
        return f"{v / 2**20:.1f} MiB"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.3g}"
    return f"{int(v):,}" if isinstance(v, (int, float)) else str(v)


def _matrix(sc: dict, title: str) -> Table:
    systems: list[str] = []
    ratio_cols: list[tuple[str, str]] = []
    for case in sc["cases"]:
        for s in case["systems"]:
            if s["system"] not in systems:
                systems.append(s["system"])
        for r in case["ratios"]:
            if r["group"] == "within packscope" and (r["packscope"], r["peer"]) not in ratio_cols:
                ratio_cols.append((r["packscope"], r["peer"]))
    headers = ["case", *systems, *[f"{a} / {b}" for a, b in ratio_cols]]
    t = Table(title, headers)
    for case in sc["cases"]:
        by = {s["system"]: s for s in case["systems"]}
        row = [case["case"]]
        for name in systems:
            s = by.get(name)
            if s is None:
                row.append("")
            elif not s["samples"]:
                row.append("skipped")
            else:
                cell = fmt_value(s["median"], s["unit"])
                if len(s["samples"]) > 1:
                    cell += f" [{fmt_value(s['min'], s['unit'])}–{fmt_value(s['max'], s['unit'])}]"
                cpu = s["metrics"].get("cpu_seconds")
                if cpu and cpu["median"] is not None:
                    cell += f" cpu {fmt_seconds(cpu['median'])}"
                if s["info"].get("correct") is False:
                    cell += " WRONG"
                if s["info"].get("mark"):
                    cell += f" {s['info']['mark']}"
                row.append(cell)
        rmap = {(r["packscope"], r["peer"]): r for r in case["ratios"]}
        for rc in ratio_cols:
            r = rmap.get(rc)
            cell = fmt_ratio(r["ratio"] if r else None)
            if r and r.get("cpu_ratio") is not None:
                cell += f" (cpu {fmt_ratio(r['cpu_ratio'])})"
            row.append(cell)
        t.rows.append(row)
    return t


# --- machine ------------------------------------------------------------------------------


def machine_lines(doc: dict) -> list[str]:
    m = doc["machine"]
    libs = ", ".join(f"{k} {v}" for k, v in m["libraries"].items() if v)
    mem = f"{m['memory_bytes'] / 2**30:.0f} GiB" if m.get("memory_bytes") else "?"
    return [
        f"CPU: {m['cpu']} ({m['cores']} cores), memory {mem}, {m['os']}",
        f"Python {m['python']} ({m['python_implementation']}), git {m['git']}; "
        f"packscope source {m.get('packscope_revision') or '?'}",
        f"libraries: {libs}",
        f"load average at start / end: {_load(doc.get('load_start'))} / {_load(doc.get('load_end'))}",
        f"repetitions: {doc['reps']}{' (tiny sizes)' if doc['tiny'] else ''}; each repetition a fresh process with fresh random ids",
    ] + (
        [
            f"measured processes ran without {', '.join(m['python_settings_dropped'])} (set in the shell that ran the "
            "benchmark), with bytecode cached as in an installed package"
        ]
        if m.get("python_settings_dropped")
        else []
    )


def _load(v) -> str:
    return "?" if not v else " ".join(f"{x:.1f}" for x in v)


# --- renderers ---------------------------------------------------------------------------------


def render_rich(doc: dict, console=None) -> None:
    from rich.console import Console
    from rich.table import Table as RichTable

    console = console or Console()
    for line in machine_lines(doc):
        console.print(line, highlight=False, markup=False)
    for note in doc.get("notes", []):
        console.print(f"note: {note}", style="yellow", markup=False)
    for t in tables(doc):
        rt = RichTable(title=t.title, title_justify="left", show_lines=False)
        for h in t.headers:
            rt.add_column(h, overflow="fold")
        for row in t.rows:
            rt.add_row(*row)
        console.print()
        console.print(rt)
        for note in t.notes:
            style = "bold red" if "MISSED" in note or "WRONG" in note else "dim"
            console.print(f"  {note}", style=style, markup=False, highlight=False)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(doc: dict) -> str:
    lines = [f"- {line}" for line in machine_lines(doc)]
    lines += [f"- note: {n}" for n in doc.get("notes", [])]
    for t in tables(doc):
        lines += ["", f"### {t.title}", ""]
        lines.append("| " + " | ".join(_md_cell(h) for h in t.headers) + " |")
        lines.append("|" + "|".join("---" for _ in t.headers) + "|")
        for row in t.rows:
            lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
        if t.notes:
            lines.append("")
            lines += [f"- {_md_cell(n)}" for n in t.notes]
    return "\n".join(lines) + "\n"


# --- scale-growth's growth table -------------------------------------------------------------------------


def growth_table(sc: dict) -> Table:
    """Each row's median at each size (with its peak RSS), and its slope: the
    extra cost per 1,000 commits (per 1,000 objects for the object rows)
    from the smallest size to the largest."""

    def mib(v) -> str:
        return "–" if v is None else f"{v / 2**20:.0f} MiB"

    sizes: dict[float, dict] = {}
    values: dict[tuple[str, str], dict[float, tuple[float | None, float | None]]] = {}
    order: list[tuple[str, str]] = []
    for case in sc["cases"]:
        w = case["workload"]
        scale = w.get("scale")
        if scale is None:
            continue
        sizes[scale] = w
        per = "objects" if "all objects" in case["case"] else "commits"
        for s in case["systems"]:
            metrics = s["metrics"]
            rss = (metrics.get("max_rss_bytes") or {}).get("median")
            cpu = (metrics.get("cpu_seconds") or {}).get("median")
            measures = [(s["system"], s["median"])]
            if cpu is not None:
                measures.append((f"{s['system']} (CPU time)", cpu))
            if s["group"] == "ui":
                measures = [(f"{s['system']}: first rows (from spawn)", s["median"])]
                for key, what in (
                    ("first_paint_seconds", "first paint (from spawn)"),
                    ("first_rows_cpu_seconds", "first rows (CPU time from spawn)"),
                    ("history_seconds", "G to the end"),
                    ("end_cpu_seconds", "at the end (CPU time from spawn)"),
                    ("open_commit_seconds", "opening HEAD's commit"),
                ):
                    if key in metrics:
                        measures.append((f"{s['system']}: {what}", metrics[key]["median"]))
            for row, v in measures:
                at = (row, per)
                if at not in values:
                    values[at] = {}
                    order.append(at)
                values[at][scale] = (v, rss)
    scales = sorted(sizes)
    headers = ["row"] + [
        f"{x:g}× ({sizes[x].get('commits', 0):,} commits, {sizes[x].get('objects', 0):,} objects)" for x in scales
    ]
    headers.append("slope")
    t = Table(f"{sc['scenario']} — growth (median · peak RSS)", headers)
    for row, per in order:
        cells = [row]
        for x in scales:
            v, rss = values[(row, per)].get(x, (None, None))
            cells.append("–" if v is None else f"{fmt_seconds(v)} · {mib(rss)}")
        pts: list[tuple[int, float]] = []
        for x in scales:
            n, v = sizes[x].get(per), values[(row, per)].get(x, (None, None))[0]
            if n and v is not None:
                pts.append((n, v))
        if len(pts) >= 2 and pts[-1][0] != pts[0][0]:
            slope = (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0]) * 1000
            sign = "−" if slope < 0 else ""  # (a smaller number at the larger size: noise or a fixed cost)
            cells.append(f"{sign}{fmt_seconds(abs(slope))} per 1,000 {per}")
        else:
            cells.append("–")
        t.rows.append(cells)
    t.notes.append("slope: (median at the largest size − at the smallest) / (difference in commits or objects)")
    return t
