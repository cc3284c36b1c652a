"""The ``packscope`` command's entry point (pyproject's [project.scripts]).

The command line's modules load with the cyclic collector paused: loading
makes thousands of objects (classes, functions, constants) and no garbage
cycles, and the collector's passes over them cost a one-shot command about
3 ms of its ~45 ms start-up.  What loaded is then frozen out of the
collector's sight (packscope.inspector.collector)."""

from __future__ import annotations

from packscope.inspector.collector import collector_paused


def main() -> int:
    with collector_paused(freeze_after=True):
        from packscope.inspector.cli import main as cli_main
    return cli_main()


if __name__ == "__main__":  # `python -m packscope.inspector.entry`: each `packscope serve` session
    import sys

    sys.exit(main())
