"""`packscope last-modified`: the last commit that touched each entry of a directory.

    packscope last-modified [REV] [DIR]        (or: [REV] -- DIR)

For every entry of DIR (default: the top) at REV (default: HEAD) prints
`<commit>TAB<path>`, in tree order, the path from the top of the repository
as git prints `DIR/ENTRY` — each line what `git --literal-pathspecs log -1
--format=%H REV -- DIR/ENTRY` answers, all found in one walk of the history
(the commit-graph and its changed-path filters are used when present).
DIR is relative to the current directory inside a work tree.  With a
single argument, a revision wins over a path, as in git.
"""

from __future__ import annotations

import sys

from packscope.core.errors import PackscopeError
from packscope.inspector.commands import command_parser, without_cycle_collector


def register(sub) -> None:
    p = command_parser(sub, "last-modified", __doc__, "last commit per directory entry")
    p.add_argument("args", nargs="*", metavar="REV|DIR", help="a revision, then a directory (or REV -- DIR)")
    p.add_argument(
        "--literal-pathspecs", action="store_true", help="accepted for git compatibility (paths are literal)"
    )
    p.set_defaults(func=run)


@without_cycle_collector
def run(args) -> int:
    from packscope.core.history.graph_walk import WalkSource
    from packscope.core.history.last_modified import last_modified
    from packscope.core.repo.revision import resolve_revision
    from packscope.core.repo.session import open_session
    from packscope.inspector.commands.cat_file import quote_name
    from packscope.inspector.pathspecs import cwd_prefix, repo_paths

    words = list(args.args)
    if len(words) > 2:
        print("packscope last-modified: give at most a revision and a directory", file=sys.stderr)
        return 129
    session = open_session()
    source = None
    try:
        repo = session.repo

        def resolve(text: str) -> bytes:
            return resolve_revision(
                text, repo=repo, refs=session.refs, store=session.objects, cwd_prefix=cwd_prefix(repo)
            )

        rev_text, dir_text = "HEAD", ""
        if len(words) == 2:
            rev_text, dir_text = words
        elif len(words) == 1:
            try:
                resolve(words[0])
                rev_text = words[0]
            except PackscopeError:
                dir_text = words[0]  # not a revision: the directory (of HEAD)
        rev = resolve(rev_text)
        directory = repo_paths(repo, [dir_text], literal=True)[0]
        source = WalkSource.open(repo, session.store, refs=session.refs)
        quote_high = repo.config.get_bool("core", "quotepath", default=True) is not False
        prefix = directory.encode("utf-8", "surrogateescape") + b"/" if directory else b""
        # through replace refs, as git reads them (shallow and grafted parents come from the source)
        answers = last_modified(session.objects, rev, directory, source=source)
        write_in_order(answers, _names(session.objects, rev, directory, source), prefix, quote_high, quote_name)
    finally:
        if source is not None:
            for problem in source.problems:
                print(f"packscope: warning: commit-graph not used: {problem.message}", file=sys.stderr)
            source.close()
        session.close()
    return 0


def _names(store, rev: bytes, directory: str, source=None) -> list[bytes]:
    from packscope.core.history.last_modified import entries_of

    return entries_of(store, rev, directory, source=source)


def write_in_order(answers, names: list[bytes], prefix: bytes, quote_high: bool, quote_name) -> None:
    """Print answers in tree order, each as soon as every entry before it
    has its answer (answers arrive in history order)."""
    out = sys.stdout.buffer
    got: dict[bytes, bytes | None] = {}
    k = 0
    for name, commit in answers:
        got[name] = commit
        lines = []
        while k < len(names) and names[k] in got:
            c = got.pop(names[k])
            if c is not None:  # git's log -1 shows nothing for such an entry
                lines.append(c.hex().encode() + b"\t" + quote_name(prefix + names[k], quote_high) + b"\n")
            k += 1
        if lines:
            out.write(b"".join(lines))
            out.flush()
    out.flush()
