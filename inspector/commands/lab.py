"""`packscope lab`: open the UI on the Lookup lab, optionally replaying
recorded lookups (`packscope lookup --json` output) and in presentation
mode — a lookup recorded on a server, stepped through in front of an
audience elsewhere."""

from __future__ import annotations


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
    p.set_defaults(func=run, build_app=build_app)


def build_app(args):
    """The app this command runs (packscope.inspector.launch: the repository found once)."""
    from packscope.inspector.launch import build_app as build

    return build(args.path, present=args.present, start="lab", replay=args.replay)


def run(args) -> int:
    from packscope.inspector import launch

    return launch.run(build_app(args))
