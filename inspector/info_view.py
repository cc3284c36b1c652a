"""How `packscope info` shows its document to people (Rich); the document
itself is core's repository report (core/face/report.py)."""

from __future__ import annotations


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    size: float = n
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)


def _head_text(head: dict | None) -> str:
    if head is None:
        return "(bare)"
    if head["symref"] and head["unborn"]:
        return f"{head['symref']} (unborn)"
    short = (head["oid"] or "?")[:12]
    if head["symref"]:
        return f"{head['symref']} → {short}"
    if head["oid"]:
        return f"detached at {short}"
    return "(unreadable)"


def render(info: dict) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    c = Console(highlight=False, soft_wrap=True)

    def section(title: str) -> Table:
        t = Table(title=f"[bold]{title}[/]", title_justify="left", show_header=False, box=None, padding=(0, 2))
        t.add_column(style="dim", no_wrap=True)
        t.add_column()
        return t

    def yes(v: bool) -> str:
        return "yes" if v else "no"

    r = info["repository"]
    t = section("repository")
    t.add_row("git dir", escape(r["git_dir"]))
    if r["common_dir"] != r["git_dir"]:
        t.add_row("common dir", escape(r["common_dir"]))
    t.add_row("work tree", escape(r["work_tree"] or "(bare)"))
    t.add_row("object format", info["object_format"])
    t.add_row(
        "format version",
        str(r["format_version"])
        + (
            f"  extensions: {escape(', '.join(f'{k}={v}' for k, v in r['extensions'].items()))}"
            if r["extensions"]
            else ""
        ),
    )
    rewrites = rewrites_text(info)
    if rewrites:
        t.add_row("history rewritten", escape(rewrites))
    impl = info.get("implementation")
    if impl:
        t.add_row("packscope path", escape(f"{impl['path']} ({impl['reason']})"))
    c.print(t)

    p = info["packs"]
    t = section("packs")
    t.add_row(
        "packs",
        f"{p['count']}, {p['objects']} objects, {_size(p['pack_bytes'])} (+ {_size(p['index_bytes'])} of indexes)",
    )
    if p["index_versions"]:
        t.add_row("index versions", ", ".join(f"v{v}: {n}" for v, n in p["index_versions"].items()))
    t.add_row("companions", f".keep {p['keep']}  .promisor {p['promisor']}  .bitmap {p['bitmap']}  .rev {p['rev']}")
    if p["orphans"]:
        t.add_row("orphans", escape(", ".join(p["orphans"])))
    c.print(t)
    if p["list"]:
        lt = Table(box=None, padding=(0, 1), header_style="dim")
        for col in ("pack", "objects", "size", "idx", "flags"):
            lt.add_column(col, justify="right" if col in ("objects", "size") else "left")
        shown = p["list"][:20]
        for row in shown:
            flags = " ".join(f for f in ("keep", "promisor", "bitmap", "rev", "in_midx") if row[f])
            lt.add_row(
                escape(row["name"]),
                str(row["objects"] if row["objects"] is not None else "?"),
                _size(row["pack_bytes"]),
                f"v{row['index_version']}" if row["index_version"] else "?",
                flags.replace("in_midx", "midx"),
            )
        c.print(lt)
        if len(p["list"]) > len(shown):
            c.print(f"  … and {len(p['list']) - len(shown)} more packs (--json lists them all)")

    lo = info["loose"]
    t = section("loose objects")
    per = lo["per_subdirectory"]
    t.add_row("objects", f"{lo['objects']} in {lo['subdirectories_used']} of 256 subdirectories")
    if lo["objects"]:
        t.add_row(
            "per subdirectory", f"min {per['min']}, max {per['max']} (objects/{lo['busiest']}), mean {per['mean']:.1f}"
        )
    if lo["also_packed"]:
        t.add_row("also packed", f"{lo['also_packed']} (git prune-packed would remove them)")
    if lo.get("garbage"):
        t.add_row("garbage", f"{lo['garbage']} other files in objects/xx (not counted as objects, as git counts)")
    c.print(t)

    m = info["multi_pack_index"]
    t = section("multi-pack-index")
    if m is None:
        t.add_row("present", "no")
    else:
        t.add_row("present", f"yes, a chain of {m['layers']} layers" if m["chain"] else "yes")
        t.add_row("covers", f"{m['packs']} packs, {m['objects']} objects")
        if m["packs_missing"]:
            t.add_row("missing packs", escape(", ".join(m["packs_missing"])))
    c.print(t)

    g = info["commit_graph"]
    t = section("commit-graph")
    if not g["present"]:
        t.add_row("present", "no")
    else:
        t.add_row(
            "present", "yes, " + ("a single file" if g["kind"] == "single" else f"a chain of {g['layers']} layers")
        )
        t.add_row("commits", str(g["commits"]))
        t.add_row(
            "Bloom filters",
            f"{yes(g['bloom_filters'])}"
            + (
                f" ({g['bloom_layers']} of {g['layers']} layers)" if g["kind"] == "chain" and g["bloom_filters"] else ""
            ),
        )
        t.add_row("generation data", "corrected commit dates" if g["generation_data"] else "topological levels")
    c.print(t)

    if info["alternates"]:
        t = section("alternates")
        for a in info["alternates"]:
            t.add_row(
                escape(a["path"]),
                f"{a['packs']} packs ({a['packed_objects']} objects), "
                f"{a['loose_objects']} loose  [dim]({a['source']})[/]",
            )
        c.print(t)

    pr = info["promisor"]
    if pr["partial_clone"] or pr["packs"]:
        t = section("partial clone")
        for rem in pr["remotes"]:
            t.add_row(
                "promisor remote",
                escape(f"{rem['name']}  {rem['url'] or ''}" + (f"  filter {rem['filter']}" if rem["filter"] else "")),
            )
        t.add_row("promisor packs", escape(", ".join(pr["packs"])) or "none")
        if pr["promised"] is not None:
            t.add_row(
                "promised",
                f"{pr['promised']['absent']} objects absent here that the promisor remote has "
                f"(of {pr['promised']['referenced']} the promisor packs reference)",
            )
        elif pr["partial_clone"]:
            t.add_row(
                "promised",
                "absent objects the promisor packs reference are fetched by git on demand (--promised counts them)",
            )
        c.print(t)

    rf = info["refs"]
    t = section("refs")
    t.add_row("HEAD", escape(_head_text(rf["head"])))
    if rf.get("storage") == "reftable":
        tables = rf.get("reftable_tables") or 0
        t.add_row("refs", f"{rf['total']} in reftable ({tables} tables; {rf['symbolic']} symbolic)")
    else:
        t.add_row("refs", f"{rf['total']} ({rf['loose']} loose, {rf['packed']} packed, {rf['symbolic']} symbolic)")
    for ns, n in rf["namespaces"].items():
        t.add_row(f"  {escape(ns)}", str(n))
    c.print(t)

    wts = info["worktrees"]
    if len(wts) > 1:
        t = section("worktrees")
        for w in wts:
            label = "main" if w["main"] else w["name"]
            extra = "".join(f"  [yellow]{k}[/]" for k in ("locked", "prunable") if w[k])
            t.add_row(
                escape(label) + (" *" if w["current"] else ""),
                f"{escape(w['path'] or '?')}  {escape(_head_text(w['head']))}{extra}",
            )
        c.print(t)

    probs = info["problems"]
    if probs:
        t = Table(
            title=f"[bold red]problems ({len(probs)})[/]",
            title_justify="left",
            box=None,
            padding=(0, 1),
            header_style="dim",
        )
        for col in ("area", "kind", "what", "remedy"):
            t.add_column(col)
        for pb in probs:
            what = pb["message"] + (f"  [{pb['path']}]" if pb["path"] else "")
            t.add_row(pb["area"], pb["kind"], escape(what), escape(pb["remedy"] or ""))
        c.print(t)


def rewrites_text(info: dict) -> str:
    """Shallow boundary, replace refs, grafts: what makes git's history differ
    from the stored commits ("" when nothing does)."""
    parts = []
    sh = info.get("shallow") or {}
    if sh.get("present"):
        n = sh.get("commits")
        parts.append(f"shallow clone ({n} boundary commit{'' if n == 1 else 's'})")
    rr = info.get("replace_refs") or {}
    if rr.get("count"):
        parts.append(f"{rr['count']} replace refs" + ("" if rr.get("used") else " (turned off)"))
    gr = info.get("grafts") or {}
    if gr.get("commits"):
        parts.append(f"{gr['commits']} grafts (info/grafts)")
    return "; ".join(parts)
