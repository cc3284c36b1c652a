"""`packscope demo`: build a demo repository with git and open packscope on it."""

from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("demo", help="build a demo repository with git and open packscope on it", description=__doc__)
    p.add_argument(
        "dir",
        nargs="?",
        default=None,
        help="where to build it (default: ~/.cache/packscope/demo.git; reused if present)",
    )
    p.add_argument("--packs", type=int, default=20, help="number of packs (default 20)")
    p.add_argument("--loose-n", type=int, default=4, help="256×N loose objects (default N=4)")
    p.add_argument("--commits", type=int, default=300, help="commits in the history (default 300)")
    p.add_argument("--no-midx", action="store_true", help="do not write a multi-pack-index")
    p.add_argument("--force", action="store_true", help="rebuild even if the directory exists")
    p.add_argument("--no-ui", action="store_true", help="only build it and print a summary")
    p.set_defaults(func=run, build_app=build_app)


def run(args) -> int:
    if not args.no_ui:
        from packscope.inspector import launch

        try:
            app = build_app(args)
        except DemoFailed as e:
            return e.status
        return launch.run(app)
    try:
        repo = build(args)
    except DemoFailed as e:
        return e.status
    return _summary(str(repo))


class DemoFailed(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


def build_app(args):
    """The app this command runs (packscope.inspector.launch: the repository found once)."""
    from packscope.inspector.launch import build_app as build_ui

    return build_ui(str(build(args)))


def build(args):
    """The demo repository, built (or reused); DemoFailed after saying why."""
    from packscope.inspector.demo_repo import DemoError, build_demo, default_demo_dir

    for name in ("packs", "loose_n", "commits"):
        if getattr(args, name) < (1 if name != "loose_n" else 0):
            print(f"packscope demo: --{name.replace('_', '-')} must be positive", file=sys.stderr)
            raise DemoFailed(2)
    target = args.dir or default_demo_dir()
    try:
        return build_demo(
            target,
            commits=args.commits,
            packs=args.packs,
            loose_n=args.loose_n,
            midx=not args.no_midx,
            force=args.force,
            progress=lambda m: print(f"packscope demo: {m}", file=sys.stderr),
        )
    except DemoError as e:
        print(f"packscope demo: {e}", file=sys.stderr)
        raise DemoFailed(2) from e


def _summary(repo: str) -> int:
    """With --no-ui: what the store sees, and one traced lookup."""
    from rich.console import Console

    from packscope.core import trace
    from packscope.core.repo.session import open_session

    console = Console(highlight=False)
    recorder = trace.Recorder()
    tracer = trace.Tracer()
    tracer.subscribe(recorder)
    session = open_session(repo, tracer=tracer)
    store = session.store
    console.print(f"[bold]{repo}[/]: {len(store.packs)} packs, {len(store.midxs)} multi-pack-index")
    absent = bytes.fromhex("ab" * store.fmt.rawsz)
    store.locate(absent)
    store.locate(absent)
    console.print(
        f"lookups {store.counters.lookups}, rescans {store.counters.rescans}, "
        f"skipped rescans {store.counters.rescans_skipped}, negative-cache hits {store.counters.negative_hits}"
    )
    console.print(f"Try: packscope -C {repo} lookup --algorithm all <id>")
    session.close()
    return 0
