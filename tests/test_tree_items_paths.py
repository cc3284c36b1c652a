"""Tree entries split by the compiled module and by the pure path: the same
list for every well-formed tree (against git ls-tree on real trees), the
same error (class, kind, offset, message) for every damaged one, and the
compiled splitter declines exactly what the pure whole-tree match refuses."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from packscope.core import objects
from packscope.core.errors import PackscopeError
from packscope.core.oid import SHA1
from packscope.core.repo.session import open_session
from tests.delta_paths import NOT_BUILT, _native, compiled_against_pure
from tests.repos import build_packed, git, ids_of_type


def compiled_tree_items(data, fmt, oid=None):
    assert _native is not None
    items = _native.tree_items(data, fmt.rawsz)
    return items if items is not None else objects._tree_items_careful(data, fmt, oid)


PATHS = [
    pytest.param(objects.tree_items_py, id="pure"),
    pytest.param(compiled_tree_items, id="compiled", marks=NOT_BUILT),
]


def outcome(fn, data, fmt):
    try:
        return ("ok", fn(data, fmt, b"\1" * fmt.rawsz))
    except PackscopeError as e:
        return (type(e), e.kind, e.offset, e.message)


@st.composite
def tree_bytes(draw, rawsz):
    """Entries in git's shape, some damaged: odd modes, empty or NUL-less
    names, short ids, stray bytes."""
    out = bytearray()
    for _ in range(draw(st.integers(0, 6))):
        mode = draw(st.sampled_from([b"100644", b"40000", b"120000", b"160000", b"0", b"7" * 15, b"", b"8", b"10 0"]))
        name = draw(st.one_of(st.sampled_from([b"a", b"name with space", b"", b"\xff\xfe"]), st.binary(max_size=6)))
        oid = draw(st.binary(min_size=rawsz - 2, max_size=rawsz + 2))
        out += mode + b" " + name + b"\0" + oid
    if draw(st.booleans()):
        out += draw(st.binary(max_size=4))
    return bytes(out)


@compiled_against_pure
def test_compiled_splitter_declines_exactly_what_the_whole_match_refuses(fmt, data):
    body = data.draw(tree_bytes(fmt.rawsz))
    whole = objects.tree_patterns(fmt.rawsz).whole.fullmatch(body)
    split = _native.tree_items(body, fmt.rawsz)
    assert (split is None) == (whole is None)
    if split is not None:
        assert split == objects.tree_items_py(body, fmt)


@compiled_against_pure
def test_both_paths_give_the_same_entries_or_the_same_error(fmt, data):
    body = data.draw(tree_bytes(fmt.rawsz))
    assert outcome(compiled_tree_items, body, fmt) == outcome(objects.tree_items_py, body, fmt)


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """Every tree of a generated history: (store, [(id, body)], git's ls-tree per id)."""
    repo = build_packed(tmp_path_factory.mktemp("trees"), commits=40)
    ids = ids_of_type(repo, "tree")
    session = open_session(str(repo))
    bodies = [(i, session.store.read(bytes.fromhex(i))[1]) for i in ids]
    session.close()
    listings = {i: git("ls-tree", "--full-tree", i, cwd=repo) for i in ids}
    return bodies, listings


@pytest.mark.parametrize("tree_items", PATHS)
def test_every_tree_splits_as_git_lists_it(trees, tree_items):
    bodies, listings = trees
    for oid, body in bodies:
        ours = b"".join(
            b"%s %s %s\t%s\n"
            % (
                objects.mode_display(mode).encode(),
                b"tree" if mode == 0o40000 else b"commit" if mode == 0o160000 else b"blob",
                entry.hex().encode(),
                name,
            )
            for mode, name, entry in tree_items(body, SHA1)
        )
        assert ours == listings[oid]
