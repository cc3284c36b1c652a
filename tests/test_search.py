"""The three bucket searches agree with a linear scan and keep lo <= mi < hi."""

from __future__ import annotations

import bisect
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packscope.core.store.search import ALGORITHMS, Steps, search_function, traced_search

ids20 = st.binary(min_size=20, max_size=20)


def linear(table, target):
    for i, name in enumerate(table):
        if name == target:
            return i
    return -bisect.bisect_left(table, target) - 1


@settings(max_examples=300, deadline=None)
@given(st.lists(ids20, max_size=200, unique=True), ids20, st.sampled_from(ALGORITHMS))
def test_searches_agree_with_linear_scan_on_random_tables(names, absent, algorithm):
    table = sorted(names)
    search = search_function(algorithm)
    for target in [*table[:20], absent]:
        assert search(table.__getitem__, 0, len(table), len(table), target) == linear(table, target)


@settings(max_examples=200, deadline=None)
@given(st.lists(ids20, min_size=1, max_size=300, unique=True), st.data())
def test_every_probe_stays_inside_the_window(names, data):
    table = sorted(names)
    target = data.draw(st.one_of(st.sampled_from(table), ids20))
    for algorithm in ALGORITHMS:
        path = traced_search(algorithm, table.__getitem__, 0, len(table), len(table), target)
        for p in path.probes:
            assert p.lo <= p.mi < p.hi
        assert (path.found is not None) == (target in table)
        if path.found is None:
            assert path.insert_at == bisect.bisect_left(table, target)


@settings(max_examples=100, deadline=None)
@given(st.lists(ids20, min_size=2, max_size=300, unique=True), st.data())
def test_sub_windows_are_searched_like_a_fanout_bucket(names, data):
    """Inside [lo, hi) with a real name at hi, as a bucket of an index is."""
    table = sorted(names)
    lo = data.draw(st.integers(0, len(table) - 1))
    hi = data.draw(st.integers(lo, len(table)))
    window = table[lo:hi]
    target = data.draw(st.one_of(st.sampled_from(window), ids20) if window else ids20)
    if window and not (window[0] <= target < (table[hi] if hi < len(table) else b"\xff" * 21)):
        return  # a bucket only ever holds targets in its own range
    for algorithm in ALGORITHMS:
        pos = search_function(algorithm)(table.__getitem__, lo, hi, len(table), target)
        if target in window:
            assert pos == lo + window.index(target)
        else:
            assert pos < 0 and lo <= -pos - 1 <= hi


def test_interpolation_takes_fewer_probes_than_binary_on_uniform_ids():
    rnd = os.urandom
    table = sorted(rnd(20) for _ in range(50_000))
    mean = {}
    for algorithm in ALGORITHMS:
        total = 0
        for target in table[::97]:
            total += len(traced_search(algorithm, table.__getitem__, 0, len(table), len(table), target).probes)
        mean[algorithm] = total / len(table[::97])
    assert mean["interpolation"] < mean["binary"]
    assert mean["hedged"] < mean["binary"]


def test_untraced_search_builds_no_probe_records(monkeypatch):
    import packscope.core.trace

    def refuse(*a):
        raise AssertionError("a probe record was built on the untraced path")

    monkeypatch.setattr(packscope.core.trace, "Probe", refuse)  # the class the searches build records with
    table = sorted(os.urandom(20) for _ in range(1000))
    for algorithm in ALGORITHMS:
        for target in [*table[::50], os.urandom(20)]:
            search_function(algorithm)(table.__getitem__, 0, 1000, 1000, target)
    with pytest.raises(AssertionError):
        search_function("binary")(table.__getitem__, 0, 1000, 1000, table[3], Steps())


def test_unknown_algorithm_is_a_clear_error():
    with pytest.raises(ValueError, match="binary"):
        search_function("ternary")
