"""`packscope show`: one commit and what it changed, as git show prints it.

    packscope show [-p] [--stat] [--numstat] [--name-status] [--name-only]
                   [-s] [-M[n]] [-C[n]] [--no-renames] [--cc | -c]
                   [--format=FMT] [REV...]

The commit's log entry (git's default format, or `--format`/`--pretty`
strings as `packscope log` reads them), then its changes against its
parent: a patch by default, or the listed formats.  Renames are found as
git finds them (`diff.renames`, on by default: `-M` at 50%); `-M[n]` and
`-C[n]` set the similarity (`-M90%`, `-M9`), `-C` also finds copies from
files the commit modified, `--no-renames` pairs nothing
(`diff.renameLimit` caps the similarity search as in git).

A merge's patch is the combined diff (`--cc`, git show's default; `-c`
keeps the hunks `--cc` drops), `--name-status` one letter per parent, and
`--stat`/`--numstat` count against the first parent.  REV defaults to
HEAD.  As in git, an annotated tag shows its tag line, tagger and message,
then what it tags; a tree (`HEAD:dir`, `HEAD^{tree}`) lists its names; a
blob (`HEAD:file`) is printed as stored; several revisions are shown in
turn, a commit only once.
"""

from __future__ import annotations

import os
import sys

from packscope.core.errors import PackscopeError
from packscope.inspector.commands import command_parser

USAGE = (
    "packscope show [-p] [--stat] [--numstat] [--name-status] [--name-only] [-s] "
    "[-M[n]] [-C[n]] [--no-renames] [--cc | -c] [--format=FMT] [REV...]"
)


class UsageError(Exception):
    pass


def register(sub) -> None:
    import argparse

    p = command_parser(
        sub,
        "show",
        __doc__,
        "one commit and its changes, as git show prints them",
        usage=USAGE,
        add_help=False,
        prefix_chars="\0",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("words", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=run, parser=p)


def parse_words(words: list[str], config_renames: str | None = None):
    """(options, revisions, help?) from git show's words; ``config_renames``
    is ``diff.renames`` (true by default, "copies" for -C, false for none)."""
    from packscope.core.history.renames import DEFAULT_SCORE, parse_score
    from packscope.core.history.show import ShowOptions

    opts = ShowOptions()
    value = (config_renames or "true").strip().lower()
    if value in ("false", "no", "off", "0"):
        opts.minimum = None
    elif value in ("copies", "copy"):
        opts.copies = True
    formats: list[str] = []
    patch = False
    no_patch = False
    revs: list[str] = []
    help_asked = False

    def score(text: str) -> int:
        if not text:
            return DEFAULT_SCORE
        try:
            return parse_score(text)
        except ValueError:
            raise UsageError(f"bad similarity {text!r}") from None

    for w in words:
        if w in ("-h", "--help"):
            help_asked = True
        elif w in ("-p", "-u", "--patch"):
            patch = True
        elif w in ("-s", "--no-patch"):
            no_patch = True
        elif w in ("--stat", "--numstat", "--name-status", "--name-only"):
            formats.append(w[2:])
        elif w == "--cc":  # (a patch only when no other format is asked for, as in git)
            opts.combined = "cc"
        elif w == "-c":
            opts.combined = "c"
        elif w == "--no-renames":
            opts.minimum = None
            opts.copies = False
        elif w.startswith(("-M", "--find-renames")):
            arg = w[2:] if w.startswith("-M") else w.partition("=")[2]
            opts.minimum = score(arg)
            opts.copies = False
        elif w.startswith("-C") or (w.startswith("--find-copies=") or w == "--find-copies"):
            arg = w[2:] if w.startswith("-C") else w.partition("=")[2]
            opts.minimum = score(arg)
            opts.copies = True
        elif w == "--pretty":
            opts.pretty = "medium"
        elif w.startswith(("--format=", "--pretty=")):
            opts.pretty = w.split("=", 1)[1]
        elif w == "--":
            raise UsageError("paths are not supported")
        elif w.startswith("-") and w != "-":
            raise UsageError(f"unrecognized argument: {w}")
        else:
            revs.append(w)
    if no_patch:
        opts.formats = ()
    elif formats:
        names = [f for f in formats if f in ("name-only", "name-status")]
        # as in git: a list of names replaces every other format
        opts.formats = (names[-1],) if names else tuple(formats) + (("patch",) if patch else ())
    return opts, revs, help_asked


def _columns() -> int:
    # git's width: COLUMNS when set, the terminal's when stdout is one, else 80
    text = os.environ.get("COLUMNS", "")
    if text.isdigit() and int(text) > 0:
        return int(text)
    if sys.stdout.isatty():
        try:
            return os.get_terminal_size(sys.stdout.fileno()).columns
        except OSError:
            pass
    return 80


def run(args) -> int:
    from packscope.core.repo.session import open_session

    session = open_session()
    try:
        config = session.repo.config
        try:
            opts, revs, help_asked = parse_words(args.words, config.get("diff", "renames") if config else None)
        except UsageError as e:
            print(f"packscope show: {e}", file=sys.stderr)
            print(f"usage: {USAGE}", file=sys.stderr)
            return 129
        if help_asked:
            args.parser.print_help()
            return 0
        limit_text = config.get("diff", "renameLimit") if config else None
        if limit_text is not None:
            try:
                opts.limit = int(limit_text)
            except ValueError:
                print(f"packscope show: bad diff.renameLimit {limit_text!r}", file=sys.stderr)
                return 128
        opts.stat_width = _columns()
        return _show(session, revs or ["HEAD"], opts)
    finally:
        session.close()


def _show(session, revs: list[str], opts) -> int:
    """Each revision in turn, as git shows it: a commit (once, however often
    it is named or tagged), an annotated tag's block and then what it tags,
    a tree's listing, a blob's bytes; every one named is resolved first."""
    from packscope.core.history.abbrev import StoreAbbreviator, configured_abbrev
    from packscope.core.history.show import tag_block, tree_listing

    oids = [session.resolve(rev) for rev in revs]
    try:
        min_len = configured_abbrev(session.repo.config, session.fmt.hexsz)
    except ValueError as e:
        print(f"packscope show: {e}", file=sys.stderr)
        return 128
    abbrev = StoreAbbreviator(session.store, min_len)
    if opts.pretty not in (None, "medium"):
        from packscope.core.history.log_format import UserFormat

        try:
            UserFormat(opts.pretty)
        except ValueError as e:
            print(f"packscope show: {e}", file=sys.stderr)
            return 128
    from packscope.core.history.log_format import UserFormat
    from packscope.core.repo.mailmap import load_mailmap, mailmap_enabled

    medium = opts.pretty in (None, "medium")
    between = medium or not UserFormat(opts.pretty).terminator  # a newline between entries, not after each
    map_authors = medium and mailmap_enabled(session.repo)
    mailmap = None
    if map_authors or (not medium and UserFormat(opts.pretty).maps_idents):
        mailmap = load_mailmap(session.repo, session.objects, session.refs)
    out = sys.stdout.buffer
    objects = session.objects
    shown_one = False  # git's rev.shown_one: a blank line before the next entry
    shown: set[bytes] = set()  # commits already shown
    for rev, oid in zip(revs, oids, strict=True):
        typ, data = objects.read(oid)
        while typ == "tag":
            if shown_one:
                out.write(b"\n")
            block, oid = tag_block(data, session.fmt, oid, opts.pretty)
            out.write(block)
            shown_one = True
            typ, data = objects.read(oid)
        if typ == "blob":
            out.write(data)
        elif typ == "tree":
            if shown_one:
                out.write(b"\n")
            out.write(tree_listing(os.fsencode(rev), data, session.fmt, oid))
            shown_one = True
        elif typ == "commit" and oid not in shown:
            shown.add(oid)
            if shown_one and between:
                out.write(b"\n")
            _show_commit(session, oid, data, opts, abbrev, out, mailmap, map_authors)
            shown_one = True
    out.flush()
    return 0


def _show_commit(session, oid: bytes, data: bytes, opts, abbrev, out, mailmap, map_authors: bool) -> None:
    from packscope.core.history.show import show_commit
    from packscope.core.objects import parse_commit

    objects = session.objects
    commit = parse_commit(data, session.fmt, oid)
    try:
        parents = tuple(objects.parent_table.get(oid, commit.parents))
    except PackscopeError:
        parents = tuple(commit.parents)
    parent_trees: list[bytes | None] = []
    for p in parents:
        ptyp, pdata = objects.read(p)
        if ptyp != "commit":
            raise PackscopeError(f"parent {p.hex()} is a {ptyp}, not a commit", oid=p.hex())
        parent_trees.append(parse_commit(pdata, session.fmt, p).tree)
    for chunk in show_commit(
        session.store,
        oid,
        commit,
        parents,
        parent_trees,
        opts,
        abbrev=abbrev,
        index_abbrev=abbrev,
        warn=lambda text: print(f"warning: {text}", file=sys.stderr),
        mailmap=mailmap,
        map_authors=map_authors,
    ):
        out.write(chunk)
