"""`packscope bench`: packscope against git, dulwich and pygit2 on the same input.

Each scenario runs every system on the same repository and the same ids in
the same run; each repetition is a fresh process with fresh random ids;
results are the median and min–max of the repetitions, with ratios
packscope/peer.  Scenarios: exists-mixed, read-random, walk, graph-walks, fsck, startup,
rescan, loose-sweep, idx-search, last-modified, blame, history-search, history-last-commits,
commit-open, tracing-overhead, ui-startup, scale-growth, history-250k, history-tig
(all by default).  `--json` prints one JSON document for scripts; `--markdown` the
tables as in bench/RESULTS.md.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path


def register(sub) -> None:
    from packscope.bench.scenarios import SCENARIOS

    p = sub.add_parser(
        "bench", help="benchmarks against git, dulwich and pygit2", description=__doc__.split("\n\n", 1)[1]
    )
    p.add_argument(
        "scenarios", nargs="*", metavar="SCENARIO", help=f"scenarios to run (default: all): {', '.join(SCENARIOS)}"
    )
    p.add_argument(
        "--repo",
        default=os.environ.get("PACKSCOPE_BENCH_REPO"),
        help="a real history to measure on (default: $PACKSCOPE_BENCH_REPO; else a synthetic one is built)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    p.add_argument("--markdown", action="store_true", help="print the tables as Markdown (for bench/RESULTS.md)")
    p.add_argument("--reps", type=int, default=None, help="repetitions per system (default 5; 1 with --tiny)")
    p.add_argument(
        "--tiny", action="store_true", help="tiny sizes, one repetition: checks that every scenario still runs (CI)"
    )
    p.add_argument(
        "--budget",
        type=float,
        default=120.0,
        help="seconds one system may spend on one case before its repetitions stop (default 120)",
    )
    p.add_argument(
        "--work-dir",
        default=None,
        help="where built repositories are cached (default: $PACKSCOPE_BENCH_DIR or ~/.cache/packscope-bench)",
    )
    p.add_argument(
        "--scale",
        action="append",
        default=None,
        metavar="X[,Y…]",
        help="scale-growth's sizes, times git.git's commit and object counts (default 0.1,1; e.g. --scale 3)",
    )
    p.add_argument(
        "--commit-graph",
        action="store_true",
        help="scale-growth's inputs with a commit-graph (--reachable --changed-paths), as gc leaves one",
    )
    p.add_argument("-o", "--output", default=None, help="also write the JSON document to this file")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on standard error")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument(
        "--count", type=int, default=1000, help="fuzz: how many damaged copies to check against git (default 1000)"
    )
    p.add_argument("--seed", type=int, default=1, help="fuzz: the seed that picks the damage (default 1)")
    p.set_defaults(func=run)


def run(args) -> int:
    from packscope.bench.inputs import default_work_dir
    from packscope.bench.runner import Context
    from packscope.bench.scenarios import SCENARIOS, load
    from packscope.bench.suite import run_suite

    if args.list:
        for name in SCENARIOS:
            print(f"{name:18} {load(name).TITLE}")
        print(f"{'fuzz':18} damaged copies of a small repository against git (bench fuzz --count N --seed S)")
        return 0
    if args.scenarios == ["fuzz"]:  # not a timing: every mismatch with git, printed (packscope.bench.fuzz)
        from packscope.bench.fuzz import main as fuzz_main

        return fuzz_main(args.count, args.seed, quiet=args.quiet)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        print(
            f"packscope bench: unknown scenario {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}",
            file=sys.stderr,
        )
        return 129
    reps = args.reps if args.reps is not None else (1 if args.tiny else 5)
    if reps < 1:
        print("packscope bench: --reps must be at least 1", file=sys.stderr)
        return 129
    if args.repo and not os.path.isdir(args.repo):
        print(f"packscope bench: --repo {args.repo!r} is not a directory", file=sys.stderr)
        return 129

    try:
        scales = tuple(float(x) for arg in args.scale or () for x in arg.split(",") if x.strip())
    except ValueError:
        scales = (0.0,)
    if any(x <= 0 for x in scales):
        print("packscope bench: --scale takes positive numbers (e.g. --scale 0.1,1,3)", file=sys.stderr)
        return 129

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    ctx = Context(
        reps=reps,
        tiny=args.tiny,
        budget=args.budget,
        work_dir=Path(args.work_dir) if args.work_dir else default_work_dir(),
        repo=os.path.abspath(args.repo) if args.repo else None,
        progress=(lambda msg: None) if args.quiet else progress,
    )
    if scales:
        ctx.scales = scales
    ctx.scale_graph = args.commit_graph
    doc = run_suite(args.scenarios, ctx, command=shlex.join(["packscope", *sys.argv[1:]]))
    if args.output:
        Path(args.output).write_text(json.dumps(doc, indent=1) + "\n")
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    elif args.markdown:
        from packscope.bench.report import render_markdown

        sys.stdout.write(render_markdown(doc))
    else:
        from packscope.bench.report import render_rich

        render_rich(doc)
    return 0
