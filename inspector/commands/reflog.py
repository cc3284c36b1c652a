"""`packscope reflog`: a ref's reflog, as git reflog shows it.

    packscope reflog [show] [-n N] [REF]

Prints `<abbrev> <REF>@{<n>}: <message>` for each entry of REF's reflog,
newest first (HEAD's by default) — byte for byte what `git reflog show`
prints.  REF may be short (`main`, `stash`, `origin/main`): it is found as
git finds a reflog (the first of git's name rules whose ref has one), and
shown as given.  The ids are abbreviated as git's %h is.
"""

from __future__ import annotations

import argparse
import sys

from packscope.inspector.commands import command_parser


def register(sub) -> None:
    p = command_parser(sub, "reflog", __doc__, "a ref's reflog, as git reflog shows it")
    p.add_argument(
        "words",
        nargs=argparse.REMAINDER,
        metavar="[show] [-n N] [REF]",
        help="`show` (optional), -n N / --max-count=N, and the ref (default HEAD)",
    )
    p.set_defaults(func=run)


def run(args) -> int:
    from packscope.core.errors import PackscopeError
    from packscope.core.history.abbrev import StoreAbbreviator, configured_abbrev
    from packscope.core.repo.reflog import find_reflog, reflog_rows
    from packscope.core.repo.session import open_session

    try:
        words, max_count = _split_words(list(args.words))
    except ValueError as e:
        print(f"packscope reflog: {e}", file=sys.stderr)
        return 129
    if len(words) > 1:
        print("packscope reflog: give at most one ref", file=sys.stderr)
        return 129
    shown = words[0] if words else "HEAD"
    session = open_session()
    try:
        full, shown = find_reflog(session.repo, session.refs, shown)
        if full is None:
            try:
                session.resolve(shown)
                return 0  # a revision without a reflog: nothing to show, as in git
            except PackscopeError:
                pass
            print(
                f"fatal: ambiguous argument '{shown}': unknown revision or path not in the working tree.",
                file=sys.stderr,
            )
            return 128
        try:
            min_len = configured_abbrev(session.repo.config, session.fmt.hexsz)
        except ValueError:
            min_len = None
        abbrev = StoreAbbreviator(session.store, min_len)
        out = sys.stdout.buffer
        for n, row in enumerate(reflog_rows(session.repo, full)):
            if max_count is not None and n >= max_count:
                break
            out.write(b"%s %s@{%d}: %s\n" % (abbrev(row.new).encode(), shown.encode(), n, row.message))
        out.flush()
    finally:
        session.close()
    return 0


def _split_words(words: list[str]) -> tuple[list[str], int | None]:
    """(the words but options, -n's count): options may come anywhere, as in git."""
    if words[:1] == ["show"]:
        words = words[1:]
    rest, count = [], None
    i = 0
    while i < len(words):
        w = words[i]
        value = None
        if w in ("-n", "--max-count"):
            if i + 1 >= len(words):
                raise ValueError(f"{w} needs a number")
            value, i = words[i + 1], i + 1
        elif w.startswith("--max-count="):
            value = w.split("=", 1)[1]
        elif w.startswith("-n") or (w[:1] == "-" and w[1:].isdigit()):
            value = w[2:] if w.startswith("-n") else w[1:]
        elif w == "--":
            rest += words[i + 1 :]
            break
        else:
            rest.append(w)
        if value is not None:
            try:
                count = int(value)
            except ValueError:
                raise ValueError(f"not a number: {value!r}") from None
        i += 1
    return rest, count
