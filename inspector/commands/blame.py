"""`packscope blame`: the commit that last brought each line of a file.

    packscope blame [REV] [--porcelain] [--root] [--] FILE

What `git blame REV -- FILE` prints, in its default format or with
`--porcelain` (`-p`): every parent followed, whole-file renames found as
git finds them (exact renames), the mailmap applied.  REV defaults to HEAD
(the committed file: uncommitted changes in a work tree are not blamed).
`--root` does not treat root commits as boundaries (blame.showRoot).  The
commit-graph and its changed-path filters are used when present.
"""

from __future__ import annotations

import sys

from packscope.inspector.commands import command_parser, without_cycle_collector


def register(sub) -> None:
    p = command_parser(sub, "blame", __doc__, "the last commit of each line of a file")
    p.add_argument("args", nargs="+", metavar="REV|FILE", help="a revision, then the file (or REV -- FILE)")
    p.add_argument("-p", "--porcelain", action="store_true", help="git's machine-readable format")
    p.add_argument("--root", action="store_true", help="do not treat root commits as boundaries")
    p.set_defaults(func=run)


@without_cycle_collector
def run(args) -> int:
    from packscope.core.repo.session import open_session

    words = [w for w in args.args if w != "--"]
    if len(words) not in (1, 2):
        print("packscope blame: give a revision and one file (REV -- FILE)", file=sys.stderr)
        return 129
    rev_text, file_text = ("HEAD", words[0]) if len(words) == 1 else words
    session = open_session()
    try:
        out = sys.stdout.buffer
        out.write(blame_output(session, rev_text, file_text, porcelain=args.porcelain, root=args.root))
        out.flush()
    finally:
        session.close()
    return 0


def blame_output(session, rev_text: str, file_text: str, *, porcelain: bool = False, root: bool = False) -> bytes:
    """What the command prints for REV and FILE (FILE relative to the
    current directory inside a work tree)."""
    from packscope.core.history.abbrev import StoreAbbreviator, configured_abbrev
    from packscope.core.history.blame import Blame
    from packscope.core.history.blame_format import commit_facts, default_lines, porcelain_lines
    from packscope.core.history.graph_walk import WalkSource
    from packscope.core.repo.mailmap import load_mailmap
    from packscope.core.repo.revision import resolve_revision
    from packscope.inspector.commands.cat_file import quote_name
    from packscope.inspector.pathspecs import cwd_prefix, repo_paths

    repo = session.repo
    rev = resolve_revision(rev_text, repo=repo, refs=session.refs, store=session.objects, cwd_prefix=cwd_prefix(repo))
    path = repo_paths(repo, [file_text], literal=True)[0].encode("utf-8", "surrogateescape")
    source = WalkSource.open(repo, session.store, refs=session.refs)
    try:
        show_root = root or repo.config.get_bool("blame", "showroot", default=False) is True
        b = Blame(session.objects, source=source, show_root=show_root)
        result = b.result(list(b.run(rev, path)))
    finally:
        for problem in source.problems:
            print(f"packscope: warning: commit-graph not used: {problem.message}", file=sys.stderr)
        source.close()
    mailmap = load_mailmap(repo, session.objects, session.refs)
    remember: dict = {}

    def facts(oid: bytes):
        got = remember.get(oid)
        if got is None:
            _, data = session.objects.read(oid)
            got = remember[oid] = commit_facts(data, oid, mailmap.map if mailmap else None)
        return got

    quote_high = repo.config.get_bool("core", "quotepath", default=True) is not False

    def quote(p: bytes) -> bytes:
        return quote_name(p, quote_high)

    if porcelain:
        return b"".join(porcelain_lines(result, facts, quote))
    abbrev = StoreAbbreviator(session.store, configured_abbrev(repo.config, session.store.fmt.hexsz))
    return b"".join(default_lines(result, facts, abbrev, quote))
