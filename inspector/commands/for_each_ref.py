"""`packscope for-each-ref`: the refs, as git for-each-ref lists them.

    packscope for-each-ref [--sort=KEY]… [--format=FORMAT] [PATTERN…]

Prints `<objectname> <objecttype>TAB<refname>` for every ref under refs/
(symbolic refs followed), sorted by refname, byte for byte what `git
for-each-ref` prints.  PATTERNs match as git's do: a prefix up to a `/`
(`refs/heads` lists every branch) or a glob (`refs/tags/v1.*`).  --sort
takes refname, committerdate, objectname, objecttype or subject, `-` in
front to reverse; the last --sort is the primary key.  --format takes
%(refname), %(refname:short), %(objectname), %(objectname:short),
%(objecttype), %(committerdate), %(subject), %(HEAD), %(upstream) and
%(upstream:short), %% and %xx.
"""

from __future__ import annotations

import sys

from packscope.inspector.commands import command_parser


def register(sub) -> None:
    p = command_parser(sub, "for-each-ref", __doc__, "list refs as git for-each-ref does")
    p.add_argument("patterns", nargs="*", metavar="PATTERN", help="prefixes or globs of ref names")
    p.add_argument("--sort", action="append", default=[], metavar="KEY", help="sort key, '-' to reverse")
    p.add_argument("--format", default=None, metavar="FORMAT", help="%%(atom) format of each line")
    p.add_argument("--count", type=int, default=None, metavar="N", help="stop after N refs")
    p.set_defaults(func=run)


def run(args) -> int:
    from packscope.core.errors import PackscopeError
    from packscope.core.history.abbrev import StoreAbbreviator, configured_abbrev
    from packscope.core.history.ref_list import (
        DEFAULT_FORMAT,
        compile_format,
        format_row,
        list_refs,
        needs_details,
        sort_rows,
    )
    from packscope.core.repo.session import open_session

    try:
        pieces = compile_format(DEFAULT_FORMAT if args.format is None else args.format)
        sort_rows([], args.sort)  # the keys are checked before anything is read
    except ValueError as e:
        print(f"fatal: {e}", file=sys.stderr)
        return 128
    session = open_session()
    try:
        refs = session.refs
        details = needs_details(pieces, args.sort)
        rows = sort_rows(list_refs(refs, session.objects, args.patterns, details=details), args.sort)
        if args.count is not None:
            rows = rows[: max(args.count, 0)]
        abbrev = None
        if any(p == ("objectname:short",) for p in pieces):
            try:
                min_len = configured_abbrev(session.repo.config, session.fmt.hexsz)
            except ValueError:
                min_len = None
            abbrev = StoreAbbreviator(session.store, min_len)
        head = None
        try:
            chain = refs.follow("HEAD")
            head = chain[-1].name if len(chain) > 1 else None
        except PackscopeError:
            pass
        out = sys.stdout.buffer
        for row in rows:
            out.write(
                format_row(
                    pieces, row, refs=refs, abbrev=abbrev or (lambda o: o.hex()), head=head, config=session.repo.config
                )
                + b"\n"
            )
        out.flush()
    finally:
        session.close()
    return 0
