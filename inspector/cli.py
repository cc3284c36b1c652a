"""The ``packscope`` command line.

``packscope [PATH]`` opens the UI; ``packscope COMMAND …`` runs one command.
Each command lives in a module of its own (``COMMANDS``) with a
``register(subparsers)`` that sets ``func``.  Rich and Textual are imported
only by the commands that draw, so batch commands start fast.

Every core error is caught here, once: printed as message, location and
remedy, without a traceback, exit status 128 (git's "fatal").
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import TYPE_CHECKING

from packscope.core.errors import PackscopeError
from packscope.inspector.collector import collector_paused
from packscope.inspector.launch import import_ui  # noqa: F401 - where bench and older callers find it

if TYPE_CHECKING:
    import argparse

# command name -> the module that registers it.  `bench` lives in
# packscope.bench, the layer above inspector (it measures the UI too), and is
# found by name like every other command.
COMMANDS = {
    "demo": "packscope.inspector.commands.demo",
    "lookup": "packscope.inspector.commands.lookup",
    "lab": "packscope.inspector.commands.lab",
    "serve": "packscope.inspector.commands.serve",
    "cat-file": "packscope.inspector.commands.cat_file",
    "info": "packscope.inspector.commands.info",
    "log": "packscope.inspector.commands.log",
    "show": "packscope.inspector.commands.show",
    "last-modified": "packscope.inspector.commands.last_modified",
    "blame": "packscope.inspector.commands.blame",
    "for-each-ref": "packscope.inspector.commands.for_each_ref",
    "reflog": "packscope.inspector.commands.reflog",
    "stash": "packscope.inspector.commands.stash",
    "fsck": "packscope.inspector.commands.fsck",
    "advise": "packscope.inspector.commands.advise",
    "bench": "packscope.bench.command",
    "screenshots": "packscope.inspector.commands.screenshots",
}
# Commands that read their words themselves, as git does (the parser only
# passes them on): run without argparse when the command comes first.
WORDS_COMMANDS = frozenset({"log"})


def build_parser(names: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``names`` (default: every command; a one-shot run
    registers only its own, so it imports only what it uses)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="packscope",
        description="See inside a git object database and watch it work.",
        epilog="Run `packscope [PATH]` with no command to open the terminal UI.",
    )
    parser.add_argument(
        "-C", dest="chdir", action="append", metavar="PATH", help="run as if started in PATH (like git -C)"
    )
    parser.add_argument(
        "--version", action="store_true", help="print the version and which path runs (compiled or pure Python)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in names if names is not None else COMMANDS:
        importlib.import_module(COMMANDS[name]).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Paths and ref names are bytes read as surrogate-escaped text: written
    # back as the bytes they were, as git writes them, whatever the locale
    # (Python's stdout is strict under en_US.UTF-8: a non-UTF-8 byte in an
    # alternates path was a UnicodeEncodeError).
    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(errors="surrogateescape")  # type: ignore[union-attr]
    chdirs, rest = split_chdir(argv)
    for path in chdirs:
        try:
            os.chdir(path)
        except OSError as e:
            print(f"packscope: cannot change to {path!r}: {e.strerror}", file=sys.stderr)
            return 128
    first = next((a for a in rest if not a.startswith("-")), None)
    if first not in COMMANDS:
        # `packscope [PATH]` (no command) opens the UI; bare --help shows all commands.
        if first is None and any(a in ("-h", "--help") for a in rest):
            build_parser().print_help()
            return 0
        if first is None and "--version" in rest:
            from packscope.inspector.version import version_line

            print(version_line())
            return 0
        return _open_ui(rest)
    if first in WORDS_COMMANDS and rest[0] == first:
        with collector_paused(freeze_after=True):  # its modules load (packscope.inspector.entry)
            run = importlib.import_module(COMMANDS[first]).run
        return run_guarded(run, Words(first, rest[1:]))
    with collector_paused(freeze_after=True):
        parser = build_parser([first])
    args = parser.parse_args(rest)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return run_guarded(args.func, args)


class Words:
    """A words command's arguments without the parser: what the parser would
    give (``words``, and ``parser`` for the command's --help, built only when
    asked for).  argparse and the imports of its help formatter are ~8 ms of
    a one-shot command's start-up."""

    def __init__(self, command: str, words: list[str]) -> None:
        self.command = command
        self.words = words

    @property
    def parser(self) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = build_parser([self.command]).parse_args([self.command]).parser
        return parser


def split_chdir(argv: list[str]) -> tuple[list[str], list[str]]:
    """git's ``-C PATH`` (also ``-CPATH``), as often as given, before the
    command: (the paths in order, the arguments without them)."""
    chdirs: list[str] = []
    rest: list[str] = []
    args = iter(argv)
    for a in args:
        if (rest and not rest[-1].startswith("-")) or a == "--":
            rest.append(a)  # past the command word: everything is the command's
            rest.extend(args)
            break
        if a == "-C":
            value = next(args, None)
            if value is None:
                rest.append(a)  # let argparse say that -C needs a value
                break
            chdirs.append(value)
        elif a.startswith("-C") and len(a) > 2:
            chdirs.append(a[2:])
        else:
            rest.append(a)
    return chdirs, rest


def run_guarded(func, args) -> int:
    try:
        return int(func(args) or 0)
    except PackscopeError as e:
        report_error(e)
        return 128
    except BrokenPipeError:
        # Output closed early (e.g. piped into head): not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stays open until exit, absorbing late writes
        return 141
    except KeyboardInterrupt:
        print("packscope: interrupted", file=sys.stderr)
        return 130


def report_error(e: PackscopeError) -> None:
    print(f"packscope: {e.message}", file=sys.stderr)
    where = e.location()
    if where:
        print(f"  where:  {where}", file=sys.stderr)
    print(f"  remedy: {e.remedy}", file=sys.stderr)


def ui_parser():
    """``packscope [PATH] [--present]``: the UI with no command word."""
    import argparse

    parser = argparse.ArgumentParser(prog="packscope", description="Open the packscope UI on a repository.")
    parser.add_argument(
        "path", nargs="?", default=None, help="repository (default: discovered from the current directory)"
    )
    parser.add_argument(
        "--present", action="store_true", help="presentation mode (no live panels; the Lab draws larger)"
    )
    return parser


def _open_ui(argv: list[str]) -> int:
    from packscope.inspector import launch

    args = ui_parser().parse_args(argv)
    return run_guarded(lambda a: launch.run(launch.build_app(a.path, present=a.present)), args)


def ui_app(argv: list[str]):
    """The app ``packscope ARGV`` would run, built as the command line
    builds it (``-C`` changes the current directory, as it does there), not
    run; for the tests, which so start the UI in every way a user can.
    ARGV must open the UI: no command, ``lab`` or ``demo``."""
    from packscope.inspector import launch

    chdirs, rest = split_chdir(argv)
    for path in chdirs:
        os.chdir(path)
    first = next((a for a in rest if not a.startswith("-")), None)
    if first not in COMMANDS:
        args = ui_parser().parse_args(rest)
        return launch.build_app(args.path, present=args.present)
    args = build_parser([first]).parse_args(rest)
    return args.build_app(args)


if __name__ == "__main__":
    sys.exit(main())
