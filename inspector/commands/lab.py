"""`packscope lab`: open the UI on the Lookup lab, optionally replaying
recorded lookups (`packscope lookup --json` output) and in presentation
mode — a lookup recorded on a server, stepped through in front of an
audience elsewhere."""

from __future__ import annotations

import os


def register(sub) -> None:
    p = sub.add_parser(
        "lab",
        help="open the Lookup lab (optionally replaying a recorded `lookup --json` trace)",
        description=__doc__.split("\n", 1)[1].strip(),
    )
    p.add_argument("path", nargs="?", default=None, help="repository (default: discovered from the current directory)")
    p.add_argument(
        "--replay",
        metavar="FILE",
        help="lookups recorded with `packscope lookup --json [--algorithm all] OBJECT…`, stepped as live ones",
    )
    p.add_argument("--present", action="store_true", help="presentation mode (no live panels, larger drawing)")
    p.set_defaults(func=run)


def run(args) -> int:
    from packscope.core.repo.repository import Repository
    from packscope.inspector.replay import read_recordings

    if args.replay:
        read_recordings(args.replay)  # a bad file is a command-line error, before the screen is taken
    # Cheap (a few stat calls): fail before taking over the terminal.
    Repository.discover() if args.path is None else Repository.open(args.path)
    from packscope.inspector.app import PackscopeApp  # Textual is imported only to draw

    app = PackscopeApp(os.path.abspath(args.path) if args.path else None, present=args.present, start="lab")
    app.lab_replay = os.path.abspath(os.path.expanduser(args.replay)) if args.replay else None
    app.run()
    return app.return_code or 0
