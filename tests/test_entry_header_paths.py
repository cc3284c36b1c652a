"""Pack entry headers parsed by the compiled module and by the pure
reference (Pack._header_py): the same tuple for every entry of real packs
(OFS and REF deltas, SHA-1 and SHA-256), and on arbitrary bytes either the
reference's tuple or None where the reference refuses (or needs integers
wider than 64 bits) — the pure path then raises its error."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packscope.core.errors import PackscopeError
from packscope.core.oid import SHA1, SHA256
from packscope.core.repo.session import open_session
from packscope.core.store.pack import Pack
from packscope.core.store.pack_entry import HEADER_PEEK
from tests.delta_paths import NOT_BUILT, _native
from tests.repos import build_packed, build_ref_delta


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    root = tmp_path_factory.mktemp("entry-headers")
    return [
        build_packed(root, commits=40),
        build_ref_delta(root),
        build_packed(root, commits=30, object_format="sha256"),
    ]


@NOT_BUILT
def test_every_entry_of_real_packs_parses_alike(packs):
    kinds = set()
    for repo in packs:
        session = open_session(str(repo))
        try:
            for handle in session.store.packs:
                pack, index = handle.pack, handle.index.open()
                pack.open()
                for i in range(index.num_objects):
                    offset = index.offset_at(i)
                    compiled = _native.entry_header(pack.map, offset, pack._data_end, pack.fmt.rawsz)
                    assert compiled is not None and compiled == pack._header_py(offset)
                    assert pack._header(offset) == compiled
                    kinds.add(compiled[0])
        finally:
            session.close()
    assert {1, 2, 3, 6, 7} <= kinds  # commits, trees, blobs, OFS and REF deltas were all seen


def bare_pack(data: bytes, fmt) -> Pack:
    """A Pack over ``data`` in memory, enough for _header_py."""
    pack = object.__new__(Pack)
    pack.path, pack.name, pack.fmt = "mem.pack", "mem.pack", fmt
    pack._map, pack._data_end = data, len(data) - fmt.rawsz
    return pack


def reference(pack: Pack, offset: int):
    try:
        return pack._header_py(offset)
    except PackscopeError:
        return None


entry = st.one_of(
    st.binary(min_size=0, max_size=HEADER_PEEK + 8),
    # plausible headers: a type byte, size continuation bytes, an OFS distance or a REF id
    st.builds(
        lambda t, sizes, tail: bytes([t]) + bytes(sizes) + tail,
        st.integers(0, 255),
        st.lists(st.integers(0, 255), max_size=12),
        st.binary(max_size=40),
    ),
)


@NOT_BUILT
@settings(max_examples=1500, deadline=None)
@given(st.sampled_from([SHA1, SHA256]), st.binary(max_size=80), entry, st.binary(max_size=40), st.data())
def test_compiled_header_is_the_reference_or_declines(fmt, before, body, after, data):
    blob = b"PACK" + bytes(8) + before + body + after + bytes(fmt.rawsz)
    pack = bare_pack(blob, fmt)
    start = 12 + len(before)  # mostly the entry drawn, sometimes anywhere
    offset = data.draw(st.one_of(st.just(start), st.just(start), st.integers(0, len(blob))))
    want = reference(pack, offset)
    got = _native.entry_header(blob, offset, pack._data_end, fmt.rawsz)
    if want is None:
        assert got is None
    else:
        assert got in (want, None)
        big = want[1] >= 1 << 60 or (want[3] is not None and offset - want[3] >= 1 << 50)
        assert got == want or big  # declines only what needs wide integers
