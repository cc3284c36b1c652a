"""The ``packscope`` command line.

``packscope [PATH]`` opens the UI; ``packscope COMMAND …`` runs one command.
Each command lives in ``inspector/commands/<name>.py`` with a
``register(subparsers)`` that sets ``func``.  Rich and Textual are imported
only by the commands that draw, so batch commands start fast.

Every core error is caught here, once: printed as message, location and
remedy, without a traceback, exit status 128 (git's "fatal").
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from packscope.core.errors import PackscopeError

# command name -> module in packscope.inspector.commands
COMMANDS = {
    "demo": "demo",
    "lookup": "lookup",
    "cat-file": "cat_file",
    "info": "info",
    "log": "log",
    "last-modified": "last_modified",
    "fsck": "fsck",
    "bench": "bench",
    "screenshots": "screenshots",
}


def _available_commands() -> dict:
    here = os.path.join(os.path.dirname(__file__), "commands")
    return {name: mod for name, mod in COMMANDS.items() if os.path.exists(os.path.join(here, mod + ".py"))}


def build_parser(commands: dict | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="packscope",
        description="See inside a git object database and watch it work.",
        epilog="Run `packscope [PATH]` with no command to open the terminal UI.",
    )
    parser.add_argument(
        "-C", dest="chdir", action="append", metavar="PATH", help="run as if started in PATH (like git -C)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, mod in (commands or _available_commands()).items():
        importlib.import_module(f"packscope.inspector.commands.{mod}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = _available_commands()
    first = _first_word(argv)
    if first not in commands:
        # `packscope [PATH]` (no command) opens the UI; bare --help shows all commands.
        if first is None and any(a in ("-h", "--help") for a in argv):
            build_parser(commands).print_help()
            return 0
        return _open_ui(argv)
    parser = build_parser({first: commands[first]})
    args = parser.parse_args(argv)
    for path in args.chdir or ():
        try:
            os.chdir(path)
        except OSError as e:
            print(f"packscope: cannot change to {path!r}: {e.strerror}", file=sys.stderr)
            return 128
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return run_guarded(args.func, args)


def _first_word(argv: list[str]) -> str | None:
    """The first argument that is not an option (nor -C's value)."""
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a == "-C":
            skip = True
        elif not a.startswith("-"):
            return a
    return None


def run_guarded(func, args) -> int:
    try:
        return int(func(args) or 0)
    except PackscopeError as e:
        report_error(e)
        return 128
    except BrokenPipeError:
        # Output closed early (e.g. piped into head): not an error of ours.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
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


def _open_ui(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="packscope", description="Open the packscope UI on a repository.")
    parser.add_argument("-C", dest="chdir", action="append", metavar="PATH")
    parser.add_argument(
        "path", nargs="?", default=None, help="repository (default: discovered from the current directory)"
    )
    args = parser.parse_args(argv)
    for path in args.chdir or ():
        try:
            os.chdir(path)
        except OSError as e:
            print(f"packscope: cannot change to {path!r}: {e.strerror}", file=sys.stderr)
            return 128
    try:
        from packscope.inspector.app import run_app
    except ImportError:
        print("packscope: the UI is not available in this build; try `packscope --help`.", file=sys.stderr)
        return 2
    return run_guarded(lambda a: run_app(a.path), args)


if __name__ == "__main__":
    sys.exit(main())
