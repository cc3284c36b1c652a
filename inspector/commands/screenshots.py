"""`packscope screenshots [DIR]`: regenerate the README's SVG screenshots of
every screen (120×36), from a fresh demo repository or the one given."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("screenshots", help="regenerate SVG screenshots of every screen", description=__doc__)
    p.add_argument("dir", nargs="?", default="screenshots", help="where to write them (default: ./screenshots)")
    p.add_argument("--repo", default=None, help="repository to show (default: build a demo repository)")
    p.set_defaults(func=run)


def run(args) -> int:
    from packscope.inspector.screenshots import regenerate

    regenerate(args.dir, args.repo)
    return 0
