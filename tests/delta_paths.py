"""The two paths of delta application, for tests that run both on the same
inputs: the pure-Python fast path (``apply_delta_py``) and the compiled one
(``packscope.core._native.apply_delta``), whichever path the environment
(PACKSCOPE_PURE) selects for the rest of the program."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packscope.core.oid import SHA1, SHA256
from packscope.core.store import delta as delta_module

try:
    from packscope.core import _native
except ImportError:  # no compiler when this was installed: only the pure path
    _native = None

# The reference the compiled path falls back on, kept here so a test that
# monkeypatches the module attribute cannot leak its stand-in.
REFERENCE = delta_module._apply_delta_checked

if _native is not None:
    # delta.py registers the reference only when it uses the compiled path;
    # with PACKSCOPE_PURE=1 the tests still run the compiled module.
    _native.set_delta_fallback(REFERENCE)

NOT_BUILT = pytest.mark.skipif(_native is None, reason="the compiled module is not built")


def compiled_against_pure(test):
    """A property test of the compiled module against the pure path: skipped
    when the module is not built, 800 examples, and ``fmt`` (SHA-1 or SHA-256)
    and ``data`` (to draw the rest from) as arguments; it may take the
    ``door`` fixture too (its ``path`` blocks switch and restore per example)."""
    return pytest.mark.both_paths(
        NOT_BUILT(
            settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])(
                given(fmt=st.sampled_from([SHA1, SHA256]), data=st.data())(test)
            )
        )
    )


PATHS = [
    pytest.param(delta_module.apply_delta_py, id="pure", marks=pytest.mark.both_paths),
    pytest.param(_native.apply_delta if _native else None, id="compiled", marks=[NOT_BUILT, pytest.mark.both_paths]),
]


def compiled_fallback(func):
    """Context: the compiled path calls ``func`` on doubt (then the reference again)."""

    @contextlib.contextmanager
    def swap():
        assert _native is not None
        _native.set_delta_fallback(func)
        try:
            yield
        finally:
            _native.set_delta_fallback(REFERENCE)

    return swap()
