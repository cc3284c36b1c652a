"""`packscope advise`: what git's own maintenance would do here and why,
git-sizer's metrics with on-disk sizes, and what-if layouts.

Maintenance: one row per task git may run on its own (gc --auto, the `git
maintenance` tasks' auto conditions, pack-refs, repack --geometric=2), each
with its triggers: the value here, the threshold, where the threshold came
from (a config file and line, or git's default) and whether it fires.
Sizes: git-sizer's 22 metrics over everything reachable from refs and
HEAD, each with its level of concern (value / git-sizer's reference value)
and where the maximum is; bytes on disk beside logical sizes; the largest
blobs and paths; unreachable, cruft, temporary and garbage bytes.
What-if: lookups under other layouts, modeled from the indexes (a seeded
sample of ids, loose objects included, or the lookups of a recorded
`packscope lookup --json` trace: --whatif-trace FILE), and the reads of
`log -- PATH` (--whatif-path; by default the largest path) with and
without a commit-graph and Bloom filters.  Nothing is changed.  `--json` prints one document (`schema` 1; keys are only ever
added).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from packscope.inspector.commands import command_parser, without_cycle_collector


def register(sub: Any) -> None:
    p = command_parser(sub, "advise", __doc__, "what git's maintenance would do, git-sizer's metrics, what-if layouts")
    p.add_argument("--json", action="store_true", help="one JSON document (schema 1)")
    p.add_argument("--top", type=int, default=20, metavar="N", help="how many largest blobs and paths (default 20)")
    p.add_argument("--no-whatif", action="store_true", help="leave the what-if models out")
    p.add_argument(
        "--whatif-trace",
        metavar="FILE",
        help="replay the lookups of a `packscope lookup --json` recording instead of the sample",
    )
    p.add_argument(
        "--whatif-path",
        metavar="PATH",
        help="the path of the `log -- PATH` walk (default: the largest path)",
    )
    p.set_defaults(func=run)


@without_cycle_collector
def run(args: Any) -> int:
    from packscope.core.advise.document import advise
    from packscope.core.repo.session import open_session

    ids = workload = None
    if args.whatif_trace and not args.no_whatif:
        from packscope.core.errors import PackscopeError
        from packscope.inspector.replay import read_recordings

        try:
            recs = read_recordings(args.whatif_trace)
        except PackscopeError as e:
            print(f"packscope advise: {e.message}", file=sys.stderr)
            if e.remedy:
                print(f"hint: {e.remedy}", file=sys.stderr)
            return 128
        ids = [bytes.fromhex(r.doc["oid"]) for r in recs if r.doc.get("oid")]
        unresolved = len(recs) - len(ids)
        workload = f"lookups: {len(ids):,} recorded in {args.whatif_trace}" + (
            f" ({unresolved:,} unresolved left out)" if unresolved else ""
        )
    session = open_session()
    try:
        doc = advise(
            session,
            top=max(0, args.top),
            whatif=not args.no_whatif,
            whatif_ids=ids,
            whatif_workload=workload,
            whatif_path=args.whatif_path,
        )
    finally:
        session.close()
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(doc))
    return 0


# --- the human table ----------------------------------------------------------------------------


def human(n: float, unit: str = "") -> str:
    """1234567 -> 1.23 M (counts) or 1.18 MiB (bytes)."""
    if unit == "B":
        for name, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if abs(n) >= size:
                return f"{n / size:.2f} {name}"
        return f"{int(n)} B"
    for word, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.2f} {word}"
    return f"{n:g}"


BYTES = {
    "uniqueCommitSize",
    "uniqueTreeSize",
    "uniqueBlobSize",
    "maxCommitSize",
    "maxBlobSize",
    "maxCheckoutBlobSize",
    "maxCheckoutPathLength",
}


def stars(level: float) -> str:
    """git-sizer's marks: one star per whole level, up to 30 (! above)."""
    if level < 1:
        return ""
    n = int(level)
    return "*" * min(n, 30) + ("!" if n > 30 else "")


def table(rows: list[list[str]], right: frozenset[int] | set[int] = frozenset()) -> str:
    if not rows:
        return ""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out) + "\n"


def cell(v: object) -> str:
    """A trigger's value or threshold in the table: on/off for settings
    that are switches."""
    if isinstance(v, bool):
        return "on" if v else "off"
    return "–" if v is None else f"{v:,}" if isinstance(v, int) else str(v)


def render(doc: dict[str, Any]) -> str:
    parts = ["Maintenance, as git would decide it now\n"]
    rows = [["task", "runs", "trigger", "value", "threshold", "fires", "from"]]
    for t in doc["maintenance"]:
        first = True
        for trig in t["triggers"]:
            rows.append(
                [
                    t["task"] if first else "",
                    ("yes" if t["would_run"] else "no") if first else "",
                    trig["setting"],
                    cell(trig["value"]),
                    cell(trig["threshold"]),
                    "yes" if trig["fires"] else "no",
                    trig["source"],
                ]
            )
            first = False
    parts.append(table(rows, {3, 4}))
    parts.append("\n")
    for t in doc["maintenance"]:
        parts.append(f"  {t['task']}: {t['why']}" + (f"  -> {t['command']}" if t["would_run"] else "") + "\n")
        for trig in t["triggers"]:
            if trig.get("sentence"):
                parts.append(f"    {trig['sentence']}\n")
        if t["task"] == "geometric-repack" and t.get("packs"):
            parts.append("    rolls up: " + ", ".join(t["packs"]) + "\n")
    sizes = doc["sizes"]
    if sizes:
        parts.append("\nSizes (git-sizer's metrics; level = value / reference)\n")
        rows = [["metric", "value", "reference", "level", "", "object"]]
        for name, m in sizes.items():
            unit = "B" if name in BYTES and name != "maxCheckoutPathLength" else ""
            rows.append(
                [
                    name,
                    human(m["value"], unit),
                    human(m["reference"], unit),
                    f"{m['level']:.3f}",
                    stars(m["level"]),
                    m["object"] or "",
                ]
            )
        parts.append(table(rows, {1, 2, 3}))
        disk = doc.get("disk") or {}
        if disk:
            parts.append(
                "\nOn disk: "
                + ", ".join(f"{k[len('unique') : -len('Disk')].lower()}s {human(v, 'B')}" for k, v in disk.items())
                + "\n"
            )
        stored = doc.get("stored")
        if stored:
            parts.append(
                f"Stored beside: {stored['unreachable_objects']} unreachable objects "
                f"({human(stored['unreachable_disk'], 'B')}), {stored['cruft_packs']} cruft packs "
                f"({human(stored['cruft_bytes'], 'B')}), {stored['temporary_files']} temporary files "
                f"({human(stored['temporary_bytes'], 'B')}), {stored['garbage_files']} garbage files "
                f"({human(stored['garbage_bytes'], 'B')})\n"
            )
        if doc.get("shallow"):
            parts.append("Shallow clone: history stops at the shallow boundary, as git's does.\n")
        if doc.get("promised"):
            parts.append(
                "Partial clone: promised (absent) objects, not counted above: "
                + ", ".join(f"{v} {k}s" for k, v in doc["promised"].items())
                + "\n"
            )
        if doc.get("missing"):
            parts.append("Missing objects: " + ", ".join(f"{v} {k}s" for k, v in doc["missing"].items()) + "\n")
    largest = doc["largest"]
    if largest.get("blobs"):
        parts.append("\nLargest blobs\n")
        rows = [["size", "on disk", "depth", "blob", "where"]]
        for b in largest["blobs"]:
            rows.append(
                [human(b["size"], "B"), human(b["disk_size"], "B"), str(b["delta_depth"]), b["oid"][:12], b["path"]]
            )
        parts.append(table(rows, {0, 1, 2}))
    if largest.get("paths"):
        parts.append("\nLargest paths (the distinct blobs first met there)\n")
        rows = [["size", "on disk", "blobs", "path"]]
        for p in largest["paths"]:
            rows.append([human(p["size"], "B"), human(p["disk_size"], "B"), str(p["blobs"]), p["path"]])
        parts.append(table(rows, {0, 1, 2}))
    if doc.get("whatif"):
        lookups = [w for w in doc["whatif"] if w.get("kind") != "walk" or "commits_parsed" not in w["current"]]
        walks = [w for w in doc["whatif"] if w not in lookups]
        parts.append("\nWhat-if (per lookup; current -> proposed)\n")
        rows = [["layout", "workload", "probes", "pages", "packs searched", "loose reads", "rescans"]]
        for w in lookups:
            c, p = w["current"], w["proposed"]
            rows.append(
                [
                    w["layout"],
                    w["workload"],
                    f"{c['probes_per_lookup']:.1f} -> {p['probes_per_lookup']:.1f}",
                    f"{c['pages_per_lookup']:.1f} -> {p['pages_per_lookup']:.1f}",
                    f"{c['packs_searched']:.2f} -> {p['packs_searched']:.2f}",
                    f"{c.get('loose_reads', 0):.2f} -> {p.get('loose_reads', 0):.2f}",
                    f"{c['rescans']} -> {p['rescans']}",
                ]
            )
        parts.append(table(rows))
        for w in walks:
            c, p = w["current"], w["proposed"]
            parts.append(f"\nWhat-if, {w['workload']} (current -> with a commit-graph and Bloom filters)\n")
            rows = [["reads", "current", "proposed"]]
            for key, label in WALK_ROWS:
                rows.append([label, f"{c[key]:,}", f"{p[key]:,}"])
            parts.append(table(rows, {1, 2}))
    return "".join(parts)


WALK_ROWS = (
    ("commits_walked", "commits walked"),
    ("commits_parsed", "commits parsed"),
    ("graph_records", "graph records"),
    ("trees_read", "trees read"),
    ("bloom_queries", "Bloom queries"),
    ("bloom_answered", "answered by Bloom"),
    ("commits_shown", "commits shown"),
)
