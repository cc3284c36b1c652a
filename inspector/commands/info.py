"""`packscope info`: what the repository holds, at a glance.

Object format; packs (count, objects, sizes, index versions, .keep,
.promisor, .bitmap and .rev companions, orphaned files); loose objects per
subdirectory; the multi-pack-index; the commit-graph (single file or chain,
layers, commits, Bloom filters, generation data); alternates; partial-clone
promisor remotes and packs; refs by namespace and HEAD; worktrees; what
rewrites history (a shallow clone's boundary, replace refs, grafts).  Damage
(bad refs, unreadable indexes, broken alternates, …) is listed under
problems, never fatal.  `--json` prints one document whose schema is in the
README (`schema` is its version).  The document is core's repository report
(packscope.core.face.repository_report); this command prints it.
"""

from __future__ import annotations

import json

from packscope.core.face import open_session, repository_report
from packscope.inspector.commands import command_parser
from packscope.inspector.info_view import render


def register(sub) -> None:
    p = command_parser(sub, "info", __doc__, "summary of the repository: packs, loose objects, graphs, refs, worktrees")
    p.add_argument("--json", action="store_true", help="one JSON document (schema in the README)")
    p.add_argument(
        "--promised",
        action="store_true",
        help="in a partial clone, also count the promised objects that are absent (reads every commit, "
        "tree and tag of the promisor packs)",
    )
    p.set_defaults(func=run)


def run(args) -> int:
    session = open_session()
    try:
        info = repository_report(session, promised=args.promised)
    finally:
        session.close()
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        render(info)
    return 0
