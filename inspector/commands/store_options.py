"""The store settings every command that looks things up accepts."""

from __future__ import annotations

import argparse


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """--policy, --quick and --loose-cache, as ``open_session`` takes them."""
    parser.add_argument(
        "--policy",
        choices=("git", "gated"),
        default="gated",
        help="miss policy: git rescans the pack directory on every miss; gated only when it changed",
    )
    parser.add_argument(
        "--quick", action="store_true", help="expect misses: never rescan, check loose objects through the cache"
    )
    parser.add_argument(
        "--loose-cache",
        dest="loose_strategy",
        choices=("per-subdir", "global-resort"),
        default="per-subdir",
        help="loose name cache strategy",
    )
