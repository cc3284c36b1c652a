"""Which entries differ between two trees — last_modified's comparison of a
commit's directory with its parent's — from the compiled merge pass and from
the pure reference: the names git diff-tree lists on git's own trees, the
same set from both paths, and the compiled pass declining (None) exactly
for damaged trees, trees out of git's order, and one sort key spelt by two
names; TreeEntries.diff_names then answers through the reference, and a
damaged tree raises the same error on both paths.  Likewise one entry by
name (TreeEntries.entry): the compiled lookup finds the first entry so
named or declines a damaged tree, and both paths answer alike."""

from __future__ import annotations

from itertools import pairwise
from stat import S_ISDIR

import pytest
from hypothesis import strategies as st

from packscope.core.errors import CorruptObjectError
from packscope.core.history.tree_entries import TreeEntries, tree_diff_names_py
from packscope.core.objects import tree_items_py, tree_patterns
from packscope.core.oid import SHA1
from packscope.core.repo.session import open_session
from tests.delta_paths import NOT_BUILT, _native, compiled_against_pure
from tests.repos import build_packed, git, git_text


@pytest.fixture
def compiled(backend_path):
    """TreeEntries.diff_names on the compiled path or the pure one (True: compiled)."""
    return backend_path == "compiled"


def raw_tree(entries) -> bytes:
    return b"".join(m + b" " + n + b"\0" + o for m, n, o in entries)


def sort_key(mode: int, name: bytes) -> bytes:
    return name + b"/" if S_ISDIR(mode) else name


def compiled_declines(a: bytes, b: bytes, fmt) -> bool:
    """When the compiled pass must say None: what the reference refuses,
    a tree not strictly in git's order, or a key two names share."""
    if tree_diff_names_py(a, b, fmt.rawsz) is None:
        return True
    items = [tree_items_py(data, fmt) for data in (a, b)]
    named: dict[bytes, bytes] = {}
    for tree in items:
        keys = [sort_key(m, n) for m, n, _ in tree]
        if any(x >= y for x, y in pairwise(keys)):
            return True
        for (_m, n, _o), k in zip(tree, keys, strict=True):
            if named.setdefault(k, n) != n:
                return True
    return False


@st.composite
def tree_pair(draw, rawsz):
    """Two trees, usually sorted and mostly alike (a changed id or mode, an
    entry more or less), sometimes out of order, sometimes damaged, with
    names that hold '/', '.', ' ' and prefixes of each other."""
    names = st.sampled_from([b"a", b"a.c", b"a/", b"ab", b"a b", b"b", b"\xff", b"Z", b"a-", b"a0"])
    modes = st.sampled_from([b"100644", b"40000", b"040000", b"100755", b"120000", b"160000", b"100664", b"7"])
    ids = st.sampled_from([b"\1" * rawsz, b"\2" * rawsz, (b" a\0" + b"\3" * rawsz)[:rawsz]])
    entries = draw(st.lists(st.tuples(modes, names, ids), max_size=7))
    other = list(entries)
    for _ in range(draw(st.integers(0, 3))):
        what = draw(st.sampled_from(["id", "mode", "drop", "add"]))
        if what == "add" or not other:
            other.append((draw(modes), draw(names), draw(ids)))
            continue
        k = draw(st.integers(0, len(other) - 1))
        m, n, o = other[k]
        if what == "id":
            other[k] = (m, n, draw(ids))
        elif what == "mode":
            other[k] = (draw(modes), n, o)
        else:
            del other[k]
    out = []
    for tree in (entries, other):
        if draw(st.integers(0, 4)):  # mostly in git's order, as git writes trees
            tree = sorted(tree, key=lambda e: sort_key(int(e[0], 8), e[1]))
        data = raw_tree(tree)
        if not draw(st.integers(0, 9)):
            data = data[: draw(st.integers(0, len(data)))] + draw(st.binary(max_size=3))
        out.append(data)
    return out


@compiled_against_pure
def test_compiled_pass_gives_the_references_names_or_declines_exactly_when_it_must(fmt, data):
    a, b = data.draw(tree_pair(fmt.rawsz))
    got = _native.tree_diff_names(a, b, fmt.rawsz)
    assert (got is None) == compiled_declines(a, b, fmt)
    if got is not None:
        assert got == tree_diff_names_py(a, b, fmt.rawsz)
        assert _native.tree_diff_names(b, a, fmt.rawsz) == got


@NOT_BUILT
def test_a_directory_and_a_file_named_with_its_slash_are_left_to_the_reference():
    # "a" (a directory) sorts as "a/", as a file named "a/" does: one key, two names
    one = b"\1" * 20
    a = raw_tree([(b"40000", b"a", one)])
    b = raw_tree([(b"100644", b"a/", one)])
    assert _native.tree_diff_names(a, b, 20) is None
    assert tree_diff_names_py(a, b, 20) == {b"a", b"a/"}
    assert _native.tree_diff_names(a, a, 20) == set()


NAMES = [b"a", b"a.c", b"a/", b"ab", b"a b", b"b", b"\xff", b"Z", b"a-", b"a0", b"", b"zz"]


@compiled_against_pure
def test_compiled_lookup_finds_the_first_entry_so_named_or_declines_a_damaged_tree(fmt, data):
    tree, _ = data.draw(tree_pair(fmt.rawsz))
    name = data.draw(st.sampled_from(NAMES))
    got = _native.tree_entry(tree, name, fmt.rawsz)
    patterns = tree_patterns(fmt.rawsz)
    assert (got is None) == (patterns.whole.fullmatch(tree) is None)
    if got is not None:
        assert got == next((e for e in patterns.entries.findall(tree) if e[1] == name), ())


@compiled_against_pure
def test_compiled_near_lookup_answers_as_the_references_scan_or_declines(fmt, data):
    # tree_entry_near answers TreeEntries.near's scan (an entry in the
    # tree's first eighth, every entry before it clean) and nothing else;
    # a tail of entries puts the drawn ones in that eighth
    head, _ = data.draw(tree_pair(fmt.rawsz))
    tail = raw_tree([(b"100644", b"zz%03d" % k, b"\4" * fmt.rawsz) for k in range(data.draw(st.integers(0, 60)))])
    tree = data.draw(st.sampled_from([head + tail, tail + head, head]))
    name = data.draw(st.sampled_from([*NAMES, b"zz000", b"zz007"]))
    want = TreeEntries(lambda oid: ("tree", tree), fmt)._scan(tree, name)
    got = _native.tree_entry_near(tree, name, fmt.rawsz)
    if got is not None:
        assert got == want
    elif isinstance(want, tuple) and tree_patterns(fmt.rawsz).whole.fullmatch(tree) is not None:
        raise AssertionError(f"declined {name!r}, which a clean tree has near its start: {want!r}")


def looked_up(t: TreeEntries, tree: bytes, name: bytes):
    """TreeEntries.entry's answer, or the error it raises."""
    try:
        return ("ok", t.entry(tree, name))
    except CorruptObjectError as e:
        return (type(e), e.oid, e.offset, e.message)


@NOT_BUILT
def test_both_paths_look_entries_up_alike_in_damaged_trees(door):
    one = b"\1" * 20
    good = raw_tree([(b"100644", b"a", one), (b"40000", b"b", one)])
    damaged = [good + b"10x644 c\0" + one, good + b"100644 c\0" + one[:5], b"100644 \0" + one + good, good + b" "]
    trees = {SHA1.hash_object("tree", d): d for d in damaged}
    answers = {}
    for compiled in (False, True):
        with door.path("compiled" if compiled else "pure"):
            t = TreeEntries(lambda oid: ("tree", trees[oid]), SHA1)
            answers[compiled] = [looked_up(t, tid, name) for tid in trees for name in (b"a", b"b", b"c", b"q")]
    assert answers[True] == answers[False]
    assert any(a[0] is CorruptObjectError for a in answers[True])


@NOT_BUILT
def test_compiled_pass_refuses_a_wrong_call():
    with pytest.raises(TypeError):
        _native.tree_diff_names(b"", b"")
    with pytest.raises(ValueError):
        _native.tree_diff_names(b"", b"", 0)
    assert _native.tree_diff_names("not bytes", b"", 20) is None
    with pytest.raises(TypeError):
        _native.tree_entry(b"", "a", 20)
    with pytest.raises(ValueError):
        _native.tree_entry(b"", b"a", 65)
    with pytest.raises(TypeError):
        _native.tree_entry_near(b"", "a", 20)
    with pytest.raises(ValueError):
        _native.tree_entry_near(b"", b"a", 65)
    assert _native.tree_entry_near("not bytes", b"a", 20) is None


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A generated history's commits as (tree, parent's tree) and their bodies."""
    repo = build_packed(tmp_path_factory.mktemp("diffnames"), commits=40)
    pairs = []
    for line in git_text("log", "--format=%T %P", "--all", cwd=repo).splitlines():
        tree, *parents = line.split()
        for p in parents:
            pairs.append((tree, git_text("rev-parse", f"{p}^{{tree}}", cwd=repo).strip()))
    session = open_session(str(repo))
    bodies = {t: session.store.read(bytes.fromhex(t))[1] for pair in pairs for t in pair}
    session.close()
    return repo, pairs, bodies


def test_the_names_are_what_git_diff_tree_lists(history, compiled):
    repo, pairs, bodies = history
    t = TreeEntries(lambda oid: ("tree", bodies[oid.hex()]), SHA1)
    assert len(pairs) > 30
    for here, there in pairs:
        want = set(git("diff-tree", "--name-only", "-z", there, here, cwd=repo).split(b"\0")[:-1])
        assert t.diff_names(bytes.fromhex(there), bytes.fromhex(here)) == want
        assert t.diff_names(None, bytes.fromhex(here)) == {n for _m, n, _o in tree_items_py(bodies[here], SHA1)}
        if compiled:  # git's trees never make the compiled pass decline
            assert _native.tree_diff_names(bodies[there], bodies[here], 20) is not None
        for m, n, o in tree_items_py(bodies[here], SHA1):
            assert t.entry(bytes.fromhex(here), n) == (b"%o" % m, n, o)
        assert t.entry(bytes.fromhex(here), b"no such entry") is None


def test_trees_out_of_order_are_compared_by_the_reference(compiled):
    one, two = b"\1" * 20, b"\2" * 20
    a = raw_tree([(b"100644", b"b", one), (b"100644", b"a", one)])  # out of git's order
    b = raw_tree([(b"100644", b"a", one), (b"100644", b"b", two), (b"40000", b"c", two)])
    trees = {SHA1.hash_object("tree", d): d for d in (a, b)}
    ta, tb = list(trees)
    t = TreeEntries(lambda oid: ("tree", trees[oid]), SHA1)
    assert t.diff_names(ta, tb) == {b"b", b"c"}
    assert t.diff_names(ta, ta) == set()


def test_a_damaged_tree_raises_the_same_error_on_both_paths(compiled):
    good = raw_tree([(b"100644", b"a", b"\1" * 20)])
    bad = good + b"10x644 b\0" + b"\2" * 20
    trees = {SHA1.hash_object("tree", d): d for d in (good, bad)}
    tg, tb = list(trees)
    t = TreeEntries(lambda oid: ("tree", trees[oid]), SHA1)
    with pytest.raises(CorruptObjectError) as e:
        t.diff_names(tg, tb)
    assert e.value.oid == tb.hex() and e.value.message == "malformed mode in tree entry at byte 29"
