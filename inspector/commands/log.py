"""`packscope log`: git log's listing, answered by core.

    packscope log [REV…] [--all] [-n N] [--date-order|--topo-order]
                  [--first-parent] [--graph] [--oneline|--format=FMT]
                  [--literal-pathspecs] [--[no-]use-mailmap] [-- PATH…]

Revisions: anything `git rev-parse` names (refs, ids, abbreviations, `~`,
`^`, `^{}`), `^REV` and `A..B` exclusions, `--all` (every ref, then HEAD);
none means HEAD.  Arguments keep their command-line order, which decides
ties between equal dates, as in git.  The output is git's, byte for byte:
the default (medium) format, or `--format`/`--pretty` strings (`%H %h %T %t
%P %p %an %ae %ad %s %b …`; placeholders packscope does not know are
refused); `--oneline` is `%h %s`.  `-n N` (also `-N`, `--max-count=N`)
stops after N commits.  Paths after `--` limit the history with git's
default simplification; they are literal (no wildcards).

`--graph` draws git's graph beside the entries, as `git log --graph` does
(its topological order, its lines between commits, byte for byte); with
paths, each commit's parents are rewritten to the nearest commits shown, as
git rewrites them.

As in git: shallow clones end at their boundary, grafts (info/grafts) and
replace refs rewrite history (GIT_NO_REPLACE_OBJECTS turns replace refs
off), and `.mailmap` (mailmap.file, mailmap.blob) maps the Author lines
unless `--no-mailmap` or `log.mailmap=false`; `%aN %aE %cN %cE` always map.

The commit-graph is used when present (and sound); output streams — the
first commits appear at once on any history.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

from packscope.core.errors import PackscopeError, UsageError
from packscope.core.history.log_words import parse_words
from packscope.inspector.commands import command_parser, without_cycle_collector

if TYPE_CHECKING:
    from packscope.core.history.log_words import LogOptions
    from packscope.core.history.rev_args import RevArg

USAGE = (
    "packscope log [REV…] [--all] [-n N] [--date-order|--topo-order] [--first-parent] [--graph] "
    "[--oneline|--format=FMT] [--literal-pathspecs] [--[no-]use-mailmap] [-- PATH…]"
)
# Damage in a commit-graph that git 2.39 dies on when its walk parses the
# commit ("invalid parent position"): packscope's walk drops the graph there
# and reads the packs, then exits 128 as git does.
GIT_DIES_ON_GRAPH = frozenset({"commit-graph-parent"})
FLUSH_SECONDS = 0.05  # pending output waits at most this long
FLUSH_BYTES = 1 << 16


def register(sub) -> None:
    import argparse  # (only here: `packscope log …` runs without the parser, packscope.inspector.cli.Words)

    # git's arguments interleave revisions and options in an order that
    # matters, and `--` splits off paths: argparse keeps neither, so the
    # words are read here (prefix_chars that never occur: nothing is an option).
    p = command_parser(
        sub,
        "log",
        __doc__,
        "list commits like git log",
        usage=USAGE,
        add_help=False,
        prefix_chars="\0",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("words", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=run, parser=p)


@without_cycle_collector
def run(args) -> int:
    try:
        opts = parse_words(args.words)
    except UsageError as e:
        print(f"packscope log: {e}", file=sys.stderr)
        print(f"usage: {USAGE}", file=sys.stderr)
        return 129
    if opts["help"]:
        args.parser.print_help()
        return 0
    from packscope.core.history.abbrev import StoreAbbreviator, configured_abbrev
    from packscope.core.history.graph_walk import WalkSource
    from packscope.core.history.log_format import UserFormat, full_ids_format, render_id_runs, render_log
    from packscope.core.history.rev_args import walk_starts
    from packscope.core.history.walk import walk, walk_ids
    from packscope.core.repo.mailmap import load_mailmap, mailmap_enabled
    from packscope.core.repo.session import open_session
    from packscope.inspector.pathspecs import cwd_prefix, repo_paths

    pretty = opts["pretty"]
    if pretty not in (None, "medium"):
        try:
            UserFormat(pretty)  # refuse a format we cannot print before printing anything
        except ValueError as e:
            print(f"packscope log: {e}", file=sys.stderr)
            return 128
    session = open_session()
    source = None
    dies = None
    try:
        if session.store.git_fatal is not None:
            raise session.store.git_fatal  # git dies opening the object store (exit 128)
        repo = session.repo
        revs, paths = _split_revs_and_paths(session, opts)
        # revisions and commit contents are read as git reads them: through replace refs
        objects = session.objects
        starts = walk_starts(
            revs, repo=repo, refs=session.refs, store=objects, cwd_prefix=cwd_prefix(repo), strict_all=True
        )
        path_filter = repo_paths(repo, paths, literal=opts["literal"]) if paths else None
        try:
            min_abbrev = configured_abbrev(repo.config, session.fmt.hexsz)
        except ValueError as e:
            print(f"packscope log: {e}", file=sys.stderr)
            return 128
        abbrev = None if min_abbrev is None else StoreAbbreviator(session.store, min_abbrev)
        source = WalkSource.open(repo, session.store, refs=session.refs)
        map_authors = pretty in (None, "medium") and mailmap_enabled(repo, opts["mailmap"])
        mailmap = None
        if map_authors or (pretty not in (None, "medium") and UserFormat(pretty).maps_idents):
            mailmap = load_mailmap(repo, objects, session.refs)
        # (no return in here: the damage git dies on is known only after the walk, below)
        if opts["graph"]:
            write_streaming(
                _graph_chunks(session, source, starts, path_filter, opts, abbrev, mailmap, map_authors),
                sys.stdout.buffer,
            )
        elif full_ids_format(pretty):
            # --format=%H: the walk's ids alone, in runs (no record per commit over a commit-graph)
            runs = walk_ids(
                source.objects,
                starts,
                order=opts["order"],
                first_parent=opts["first_parent"],
                max_count=opts["max_count"],
                paths=path_filter,
                **source.walk_options(path_filter),
            )
            write_streaming(render_id_runs(runs, session.fmt.rawsz), sys.stdout.buffer)
        else:
            walked = walk(
                source.objects,
                starts,
                order=opts["order"],
                first_parent=opts["first_parent"],
                max_count=opts["max_count"],
                paths=path_filter,
                **source.walk_options(path_filter),
            )
            write_streaming(
                render_log(objects, walked, abbrev=abbrev, pretty=pretty, mailmap=mailmap, map_authors=map_authors),
                sys.stdout.buffer,
            )
    finally:
        if source is not None:
            for problem in source.problems:
                print(f"packscope: warning: commit-graph not used: {problem.message}", file=sys.stderr)
                if problem.kind in GIT_DIES_ON_GRAPH and dies is None:
                    dies = problem
            for text in source.grafts.complaints if source.grafts is not None else ():
                print(f"packscope: warning: info/grafts: {text} (ignored, as git does)", file=sys.stderr)
            source.close()
        session.close()
    if dies is not None:
        # the walk read past it with the packs; git stops there: exit as git does
        print(f"packscope: {dies.message} (git dies on it)", file=sys.stderr)
        return 128
    return 0


def _graph_chunks(session, source, starts, path_filter, opts: LogOptions, abbrev, mailmap, map_authors):
    """`log --graph`: the walk with rewritten parents, each entry's text
    beside git's drawing (packscope.core.history.graph_lines)."""
    from packscope.core.history.graph_lines import graph_log
    from packscope.core.history.log_format import UserFormat, log_entries
    from packscope.core.history.walk import graph_walk

    pretty = opts["pretty"]
    gw = graph_walk(
        source.objects,
        starts,
        order=opts["order"],
        first_parent=opts["first_parent"],
        max_count=opts["max_count"],
        paths=path_filter,
        **source.walk_options(path_filter),
    )
    shows = gw.shows
    keep = 1 if opts["first_parent"] else None  # --first-parent: the graph follows first parents only
    entries = (
        (e.oid, [p for p in e.parents[:keep] if shows(p)], text)
        for e, text in log_entries(
            session.objects, gw.commits, abbrev=abbrev, pretty=pretty, mailmap=mailmap, map_authors=map_authors
        )
    )
    user = UserFormat(pretty) if pretty not in (None, "medium") else None
    terminated = user is not None and user.terminator
    return graph_log(entries, terminated=terminated, empty_format=user is not None and user.empty)


def _split_revs_and_paths(session, opts: LogOptions) -> tuple[list[RevArg], list[str]]:
    """Without `--`, git takes the first word that is not a revision, and
    every word after it, as paths — if they exist in the work tree."""
    from packscope.core.history.rev_args import ALL
    from packscope.core.repo.revision import resolve_revision

    revs, paths = opts["revs"], list(opts["paths"])
    if opts["dashdash"] or session.repo.work_tree is None:
        return revs, paths
    for k, r in enumerate(revs):
        if r is ALL or r.startswith("^") or ".." in r:
            continue
        try:
            resolve_revision(r, repo=session.repo, refs=session.refs, store=session.objects)
        except PackscopeError:
            rest = [x for x in revs[k:] if x is not ALL]
            if all(os.path.lexists(x) for x in rest):
                return revs[:k] + [x for x in revs[k:] if x is ALL], rest + paths
            raise
    return revs, paths


def write_streaming(chunks, out) -> None:
    """Write as chunks come, flushing at least every FLUSH_SECONDS (and
    whenever FLUSH_BYTES wait): the first page shows at once, and a pipe
    closed early (`| head`) raises BrokenPipeError for the CLI's guard."""
    pending: list[bytes] = []
    size = 0
    last = float("-inf")  # the first chunk goes out at once
    clock = time.monotonic
    try:
        for chunk in chunks:
            pending.append(chunk)
            size += len(chunk)
            if size >= FLUSH_BYTES or clock() - last >= FLUSH_SECONDS:
                out.write(b"".join(pending))
                out.flush()
                pending.clear()
                size = 0
                last = clock()
    except PackscopeError:
        # The walk failed part way (a missing commit): what it produced is
        # printed before the error, as git prints the commits before it dies.
        out.write(b"".join(pending))
        out.flush()
        raise
    if pending:
        out.write(b"".join(pending))
    out.flush()
