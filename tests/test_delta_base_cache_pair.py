"""The delta-base cache's rules are written once per language: DeltaBaseCache
(core/store/cache.py) is the reference, core/native_c/cache.c its compiled
mirror, which the compiled read uses.  Driven with the same puts (and gets
between them), the two keep the same entries in the same order and count
the same hits, misses, fills, evictions and bytes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from packscope.core.store.cache import DeltaBaseCache
from packscope.core.trace import Tracer
from tests.delta_paths import NOT_BUILT, _native

PACKS = ["pack-a", "pack-b"]

put = st.tuples(
    st.just("put"),
    st.sampled_from(PACKS),
    st.integers(0, 12),  # few offsets: keys are put again, replacing their entries
    st.sampled_from(["commit", "tree", "blob", "tag"]),
    st.integers(0, 700),  # up to past the budget: such an entry is not kept
)
get = st.tuples(st.just("get"), st.sampled_from(PACKS), st.integers(0, 12))


def _state(cache: DeltaBaseCache) -> tuple[list, tuple]:
    return list(cache.table.items()), tuple(cache.stats())


@NOT_BUILT
@settings(max_examples=300, deadline=None)
@given(ops=st.lists(st.one_of(put, get), max_size=60), budget=st.sampled_from([0, 100, 512, 2048]))
def test_the_compiled_put_keeps_and_evicts_as_the_python_put(ops, budget):
    python, compiled = DeltaBaseCache(budget), DeltaBaseCache(budget)
    for op in ops:
        if op[0] == "put":
            _, pack, offset, type_name, size = op
            data = bytes([offset]) * size
            python.put(pack, offset, type_name, data)
            assert _native.cache_put(compiled, pack, offset, type_name, data) is True
        else:
            _, pack, offset = op
            assert python.get(pack, offset) == compiled.get(pack, offset)
        assert _state(compiled) == _state(python)


@NOT_BUILT
def test_the_compiled_put_leaves_a_watched_cache_to_python():
    """While a tracer listens the Python cache emits the events: the compiled put does nothing."""
    tracer = Tracer()
    events: list = []
    tracer.subscribe(events.append)
    cache = DeltaBaseCache(1024, tracer=tracer)
    assert _native.cache_put(cache, "pack-a", 12, "blob", b"x" * 10) is False
    assert _state(cache) == _state(DeltaBaseCache(1024))
    assert events == []
