"""One ref read from packed-refs without parsing every line: the answer is
the full parse's (checked on hostile files), and against git on a
repository with thousands of packed refs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import packscope.core.repo.refs as refs_module
from packscope.core.repo.packed_refs import UNSURE, find_packed_ref, parse_packed_refs
from tests.repos import git, git_text
from tests.test_refs import git_for_each_ref, ours_resolved, store_for

NAMES = ["refs/heads/main", "refs/heads/x", "refs/tags/t", "refs/heads/a..b", "refs/heads/main2", "refs/replace/r"]
HEXES = ["1" * 40, "2" * 40, "ab" * 20, "zz" + "0" * 38, "3" * 39]

line = st.one_of(
    st.builds(lambda h, n: f"{h} {n}\n".encode(), st.sampled_from(HEXES), st.sampled_from(NAMES)),
    st.builds(lambda h: f"^{h}\n".encode(), st.sampled_from(HEXES)),
    st.builds(lambda n: f"{'4' * 40}\t{n}\n".encode(), st.sampled_from(NAMES)),
    st.just(b"# pack-refs with: peeled fully-peeled sorted \n"),
    st.just(b"garbage refs/heads/main\n"),
    st.just(b"\n"),
)


@settings(max_examples=600, deadline=None)
@given(st.lists(line, max_size=8), st.sampled_from([b"", b"5" * 40 + b" refs/heads/x"]), st.sampled_from(NAMES))
def test_the_byte_search_gives_the_full_parse_answer_or_says_unsure(lines, tail, name):
    data = b"".join(lines) + tail
    quick = find_packed_ref(data, name, 40)
    if quick is not UNSURE:
        assert quick == parse_packed_refs(data, 40, "packed-refs")[0].get(name)


def test_plain_entries_are_found_without_the_full_parse():
    data = b"# pack-refs with: peeled \n" + b"1" * 40 + b" refs/tags/t\n^" + b"2" * 40 + b"\n"
    data += b"3" * 40 + b" refs/heads/main\n"
    expected = parse_packed_refs(data, 40, "packed-refs")[0]
    for name in ("refs/tags/t", "refs/heads/main"):
        assert find_packed_ref(data, name, 40) == expected[name]
    assert find_packed_ref(data, "refs/heads/absent", 40) is None
    assert find_packed_ref(data + b"3" * 40 + b" refs/heads/main\n", "refs/heads/main", 40) is UNSURE


@pytest.fixture(scope="module")
def many_refs(tmp_path_factory):
    """3,000 packed branches and tags (some annotated), a few loose refs on top."""
    r = tmp_path_factory.mktemp("many-refs") / "repo"
    git("init", "-q", "-b", "main", r)
    git("commit", "-q", "--allow-empty", "-m", "one", cwd=r)
    git("commit", "-q", "--allow-empty", "-m", "two", cwd=r)
    head = git_text("rev-parse", "HEAD", cwd=r).strip()
    cmds = "".join(f"create refs/heads/b{i:04d} {head}\n" for i in range(2500))
    cmds += "".join(f"create refs/tags/l{i:03d} HEAD~1\n" for i in range(500))
    git("update-ref", "--stdin", cwd=r, input=cmds)
    for i in range(20):
        git("tag", "-a", "-m", "t", f"a{i:02d}", cwd=r)
    git("pack-refs", "--all", cwd=r)
    git("branch", "loose-one", cwd=r)
    git("update-ref", "refs/heads/b0007", "HEAD~1", cwd=r)  # a loose ref hiding its packed entry
    return r


def test_resolving_one_ref_does_not_parse_all_of_packed_refs(many_refs, monkeypatch):
    def refuse(*args):
        raise AssertionError("parsed all of packed-refs to read one ref")

    monkeypatch.setattr(refs_module, "parse_packed_refs", refuse)
    store = store_for(many_refs)
    for name in ("HEAD", "refs/heads/b1234", "refs/heads/b0007", "refs/tags/l499", "refs/tags/a07", "loose-one"):
        want = git_text("rev-parse", name, cwd=many_refs).strip()
        assert store.resolve(name if name.startswith(("refs/", "HEAD")) else f"refs/heads/{name}").hex() == want
    assert store.read("refs/tags/a07").peeled.hex() == git_text("rev-parse", "a07^{}", cwd=many_refs).strip()
    assert store.read("refs/heads/nope") is None
    # a namespace with no packed entries is listed without the parse too
    assert list(store.iter_refs("refs/replace/")) == []


def test_listing_after_quick_reads_matches_for_each_ref(many_refs):
    store = store_for(many_refs)
    store.resolve("refs/heads/b0001")
    assert ours_resolved(store) == git_for_each_ref(many_refs)
    assert store.packed_traits >= {"peeled"}
