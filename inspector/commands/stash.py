"""`packscope stash list`: the stash entries, as git stash list prints them.

    packscope stash list

Prints `stash@{<n>}: <message>` for each entry of refs/stash's reflog,
newest first — byte for byte what `git stash list` prints (git's
`git log -g --format='%gd: %gs' refs/stash`).  Nothing when there is no
stash.  packscope only reads: the other stash commands are git's.
"""

from __future__ import annotations

import sys

from packscope.inspector.commands import command_parser

STASH_REF = "refs/stash"


def register(sub) -> None:
    p = command_parser(sub, "stash", __doc__, "list stash entries as git stash list does")
    p.add_argument("action", choices=["list"], help="list (the only one: packscope never writes)")
    p.set_defaults(func=run)


def stash_lines(repo) -> list[bytes]:
    """`git stash list`'s lines (without newlines), newest first."""
    from packscope.core.repo.reflog import has_reflog, reflog_rows

    if not has_reflog(repo, STASH_REF):
        return []
    return [b"stash@{%d}: %s" % (n, row.message) for n, row in enumerate(reflog_rows(repo, STASH_REF))]


def run(args) -> int:
    from packscope.core.repo.session import open_session

    session = open_session()
    try:
        out = sys.stdout.buffer
        for line in stash_lines(session.repo):
            out.write(line + b"\n")
        out.flush()
    finally:
        session.close()
    return 0
