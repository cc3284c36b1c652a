"""`packscope fsck`: verify the repository as `git fsck --full` does.

Checks pack indexes and packs (checksums, the index's copy of the pack's
checksum, per-object CRC32, inflation, delta bases, object ids), loose
objects, stray `.idx`/`.pack` files, refs, reflogs and indexes as roots,
connectivity (missing vs promised objects), object syntax with git's
message ids, the commit-graph and the multi-pack-index.  Findings stream as
they are found; progress goes to stderr.  The exit status is git fsck's bit
set: 1 objects, 2 reachability, 4 packs, 8 refs, 16 commit-graph, 32
multi-pack-index (0: healthy; dangling objects are information); 128 where
git would stop (an index file it cannot read, a packed-refs line it cannot
parse), after every other finding has been reported.  Of one
kind of finding, at most 100 per file are shown, then a count of the rest
(--limit); the --json summary counts the missing and promised objects.
The objects of large packs are checked by --jobs worker processes (default:
one per CPU); the findings and the exit status do not depend on it.
"""

from __future__ import annotations

import json
import sys
import time

from packscope.core.repo.session import open_session
from packscope.inspector.commands import command_parser


def register(sub) -> None:
    p = command_parser(sub, "fsck", __doc__, "verify packs, objects, refs and connectivity, like git fsck --full")
    p.add_argument("--json", action="store_true", help="one JSON object per finding, then a summary line")
    p.add_argument(
        "--connectivity-only",
        action="store_true",
        help="check only that reachable objects exist (do not read blobs or verify packs entry by entry)",
    )
    p.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show progress on stderr (default: when stderr is a terminal)",
    )
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("--no-dangling", dest="dangling", action="store_false", help="do not list dangling objects")
    p.add_argument(
        "--limit",
        type=_limit,
        default=100,
        metavar="N",
        help="at most N findings of one kind per file, then a count of the rest (default 100; 0: no limit)",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        default=None,
        metavar="N",
        help="check the objects of large packs in N worker processes (default: the number of CPUs)",
    )
    p.set_defaults(func=run)


class _ProgressLine:
    """`phase: 45% (123/456)` rewritten in place on stderr, at most ~10×/s."""

    def __init__(self) -> None:
        self.last = 0.0
        self.phase: str | None = None

    def __call__(self, done: int, total: int, phase: str) -> None:
        now = time.monotonic()
        if phase == self.phase and now - self.last < 0.1 and done < total:
            return
        if phase != self.phase and self.phase is not None:
            sys.stderr.write("\n")
        self.phase, self.last = phase, now
        pct = f"{100 * done // total:3d}% " if total else ""
        sys.stderr.write(f"\rChecking {phase}: {pct}({done}/{total})")
        sys.stderr.flush()

    def end(self) -> None:
        if self.phase is not None:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _limit(text: str) -> int:
    import argparse

    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"not a count: {text!r}")
    return n


def _jobs(text: str) -> int:
    import argparse

    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"not a number of jobs (1 or more): {text!r}")
    return n


def run(args) -> int:
    from packscope.core.fsck.parallel import default_jobs
    from packscope.core.fsck.verify import Fsck

    show_progress = sys.stderr.isatty() if args.progress is None else args.progress
    line = _ProgressLine() if show_progress else None
    session = open_session()
    out = sys.stdout
    try:
        checker = Fsck(
            session.repo,
            session.store,
            session.refs,
            connectivity_only=args.connectivity_only,
            dangling=args.dangling,
            progress=line,  # the check keeps its own resident set down (core/fsck/resident.py)
            limit_per_file=args.limit or sys.maxsize,
            jobs=args.jobs or default_jobs(),
        )
        for finding in checker.run():
            if line is not None and line.phase is not None:
                sys.stderr.write("\r\033[K")  # keep the progress line off the finding's line
            if args.json:
                out.write(json.dumps(finding.to_dict(), ensure_ascii=False) + "\n")
            else:
                out.write(format_finding(finding))
            out.flush()
        if line is not None:
            line.end()
        if args.json:
            out.write(json.dumps({"summary": checker.summary()}) + "\n")
        elif checker.exit_status == 0 and not checker.counts.get("error"):
            pass  # like git: silence means healthy
        out.flush()
        return checker.exit_status
    finally:
        session.close()


def format_finding(f) -> str:
    """git-like first line, then where, other copies and the remedy."""
    if f.kind == "dangling":
        return f"{f.message}\n"
    if f.severity == "info":
        about = f" ({f.object_type or 'object'} {f.oid})" if f.oid and f.oid not in f.message else ""
        return f"notice: {f.message}{about}\n"
    tag = f"{f.severity}"
    head = f"{tag}: {f.message}"
    lines = [head]
    where = f.location()
    if where:
        lines.append(f"  where:     {where}")
    if f.pack and f.pack != f.path:
        lines.append(f"  pack:      {f.pack}")
    if f.idx and f.idx != f.path:
        lines.append(f"  index:     {f.idx}")
    if f.elsewhere:
        lines.append(f"  elsewhere: {', '.join(f.elsewhere)}")
    elif f.severity == "error" and f.oid and f.area in ("packs", "objects", "reachability"):
        lines.append("  elsewhere: no other copy")
    if f.remedy and f.severity != "info":
        lines.append(f"  remedy:    {f.remedy}")
    return "\n".join(lines) + "\n"
