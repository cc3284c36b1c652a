"""``packscope --version``: the installed version and which path runs."""

from __future__ import annotations


def version_line() -> str:
    """e.g. ``packscope 0.1.0 (compiled path: compiled module packscope.core._native)``."""
    from importlib.metadata import PackageNotFoundError, version

    from packscope.core.native import describe

    try:
        number = version("packscope")
    except PackageNotFoundError:  # run from a source tree that was never installed
        number = "(not installed)"
    how = describe()
    return f"packscope {number} ({how['path']} path: {how['reason']})"
