"""Which path runs: the optional compiled module or pure Python.

``packscope.core._native`` (core/_native.c) holds compiled versions of the
hottest byte loops; the pure-Python code stays the reference and is used
when the module was not built (no C compiler at install time) or when the
environment variable ``PACKSCOPE_PURE`` is set to anything but ``""`` or
``0`` (so tests and benchmarks can run both paths on one install).

Modules with a compiled version import ``native`` from here and fall back
to their own pure code when it is None.
"""

from __future__ import annotations

import os
from types import ModuleType

PURE_ENV = "PACKSCOPE_PURE"


def _load() -> tuple[ModuleType | None, str]:
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return None, f"{PURE_ENV} is set"
    try:
        from packscope.core import _native
    except ImportError:
        return None, "the compiled module is not built"
    return _native, "compiled module packscope.core._native"


native, _why = _load()

# "compiled" or "pure": what ``packscope --version`` and ``info`` report.
PATH = "pure" if native is None else "compiled"


def describe() -> dict[str, str]:
    """{"path": "compiled"|"pure", "reason": why} for reports."""
    return {"path": PATH, "reason": _why}
