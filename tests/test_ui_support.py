"""The UI tests' wait helper: a wait whose outcome never comes fails."""

from __future__ import annotations

import asyncio

import pytest

from tests.ui_support import until


class _Pilot:
    """Just what until() uses of a Textual Pilot."""

    def __init__(self) -> None:
        self.pauses = 0

    async def pause(self, delay: float | None = None) -> None:
        self.pauses += 1
        await asyncio.sleep(delay or 0)


def test_until_returns_the_first_true_value():
    pilot = _Pilot()
    answers = iter([None, 0, "", ["row"]])
    value = asyncio.run(until(pilot, lambda: next(answers), "a row", timeout=5))
    assert value == ["row"] and pilot.pauses == 3


def test_until_fails_the_test_when_the_outcome_never_comes():
    pilot = _Pilot()
    with pytest.raises(AssertionError, match=r"waited 0\.2 s for the history to load; the condition was still 0"):
        asyncio.run(until(pilot, lambda: 0, "the history to load", timeout=0.2, step=0.05))
    assert pilot.pauses >= 2


def test_a_predicate_that_raises_fails_at_once():
    def broken():
        raise KeyError("no such row")

    with pytest.raises(KeyError):
        asyncio.run(until(_Pilot(), broken, "a row", timeout=5))
