"""Which path runs: the optional compiled module or pure Python — the one door.

``packscope.core._native`` (core/_native.c) holds compiled versions of the
hottest byte loops; the pure-Python code stays the reference and is used
when the module was not built (no C compiler at install time) or when the
environment variable ``PACKSCOPE_PURE`` is set to anything but ``""`` or
``0`` (so tests and benchmarks can run both paths on one install).

``backend`` is chosen once, here, at import: the compiled module typed as
``NativeApi`` (core/native_api.py, the mirror of core/_native.pyi), or None
for the pure path.  Every call site reads it when it runs::

    from packscope.core import native
    b = native.backend
    if b is not None:
        found = b.entry_header(m, offset, end, rawsz)  # checked by mypy

and falls back to its own pure code when it is None (or when a compiled
function answers None: "ask the reference").  Nothing else in core holds a
handle to the compiled module, so the tests' one switch (the ``door``
fixture, tests/conftest.py) changes the path everywhere at once.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from packscope.core.native_api import NativeApi

PURE_ENV = "PACKSCOPE_PURE"


def compiled_module() -> NativeApi | None:
    """The compiled module if it was built, whatever ``PACKSCOPE_PURE`` says
    (the tests compare both paths in one process); None if it was not."""
    try:
        from packscope.core import _native
    except ImportError:
        return None
    return _native


def _load() -> tuple[NativeApi | None, str]:
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return None, f"{PURE_ENV} is set"
    compiled = compiled_module()
    if compiled is None:
        return None, "the compiled module is not built"
    return compiled, "compiled module packscope.core._native"


backend, _why = _load()

# "compiled" or "pure": what ``packscope --version`` and ``info`` report.
PATH = "pure" if backend is None else "compiled"


def describe() -> dict[str, str]:
    """{"path": "compiled"|"pure", "reason": why} for reports."""
    return {"path": PATH, "reason": _why}
