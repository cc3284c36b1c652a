"""The walk's compiled commit read (core/_native.c commit_lookup) against the
commit reader's Python path: for every object of every kind of repository —
packs of both formats and index versions, 64-bit offsets, deltified and
REF_DELTA commits, octopus merges and headers longer than the prefix read,
many packs, a multi-pack-index, damaged entries — the same answer (or the
same None), and git's own walk order on both paths."""

from __future__ import annotations

import pytest

from packscope.core.history.commit_reader import CommitHeaderReader
from tests.cli import packscope
from tests.delta_paths import NOT_BUILT, _native
from tests.object_source import core_store
from tests.repos import all_objects, copy_repo, flip_byte, git, git_text, init_bare, the_pack, verify_pack_rows

pytestmark = NOT_BUILT


def answers(repo, *, compiled: bool, door, ids_from=None) -> tuple[dict[bytes, object], int, int]:
    """Every object's answer (the objects of ``ids_from``, default ``repo``)
    from a fresh reader on one path: (answers, commits the compiled lookup
    answered, commits declined)."""
    answered = 0

    def counted(*args):
        nonlocal answered
        got = _native.commit_lookup(*args)
        answered += type(got) is tuple
        return got

    door.use("compiled" if compiled else "pure")
    if compiled:
        door.stub("commit_lookup", counted)
    store = core_store(repo)
    try:
        reader = CommitHeaderReader(store)
        out = {}
        for hex_id, _, _ in all_objects(ids_from or repo):
            oid = bytes.fromhex(hex_id)
            got = reader(oid)
            out[oid] = None if got is None else (got[0], tuple(got[1]), got[2])
        return out, answered, reader.declined
    finally:
        store.close()


def both_paths(repo, door) -> int:
    compiled, answered, declined = answers(repo, compiled=True, door=door)
    pure, none_compiled, pure_declined = answers(repo, compiled=False, door=door)
    assert none_compiled == 0
    assert compiled == pure
    assert declined == pure_declined
    return answered


@pytest.mark.parametrize(
    "fixture",
    [
        "packed_repo",
        "sha256_repo",
        "idxv1_repo",
        "idx64_repo",
        "ref_delta_repo",
        "deep_chain_repo",
        "many_packs_repo",
        "midx_repo",
        "scenario_repo",
    ],
)
def test_compiled_lookup_answers_as_the_python_path(request, fixture, door):
    repo = request.getfixturevalue(fixture)
    assert both_paths(repo, door) > 0


@pytest.fixture(scope="module")
def long_headers_repo(tmp_path_factory):
    """Packed commits the prefix read cannot hold: an octopus of ten
    parents, an author name longer than the prefix, a multi-line header."""
    repo = init_bare(tmp_path_factory.mktemp("long-headers") / "long.git")
    tree = git_text("mktree", cwd=repo, input="").strip()

    def commit(parents, author="A U <a@x>", extra=b"", when=1_600_000_000):
        raw = b"tree %s\n" % tree.encode()
        raw += b"".join(b"parent %s\n" % p.encode() for p in parents)
        raw += b"author %s %d +0000\ncommitter C O <c@x> %d +0000\n" % (author.encode(), when, when)
        raw += extra + b"\nmessage\n"
        return git_text("hash-object", "-t", "commit", "-w", "--stdin", cwd=repo, input=raw).strip()

    roots = [commit([], when=1_600_000_000 + k) for k in range(10)]
    octopus = commit(roots, when=1_600_001_000)
    long_name = commit([octopus], author="N" * 600 + " <n@x>", when=1_600_002_000)
    signed = commit(
        [long_name], extra=b"gpgsig -----BEGIN-----\n " + b"s" * 400 + b"\n -----END-----\n", when=1_600_003_000
    )
    git("update-ref", "refs/heads/main", signed, cwd=repo)
    git("repack", "-adq", cwd=repo)
    git("prune-packed", cwd=repo)
    return repo


def test_headers_longer_than_the_prefix_read_are_left_to_the_python_path(long_headers_repo, door):
    both_paths(long_headers_repo, door)
    expected = git("rev-list", "--all", cwd=long_headers_repo)
    for env in ({}, {"PACKSCOPE_PURE": "1"}):
        assert packscope("-C", long_headers_repo, "log", "--all", "--format=%H", env=env).stdout == expected


@pytest.mark.parametrize("where", ["zlib", "header"])
def test_a_damaged_commit_entry_is_declined_alike(packed_repo, tmp_path, door, where):
    repo = copy_repo(packed_repo, tmp_path / "damaged.git")
    pack, _ = the_pack(repo)
    row = next(r for r in verify_pack_rows(pack) if r["type"] == "commit" and r["depth"] == 0 and r["packed"] > 20)
    # "zlib": a byte inside the deflate stream; "header": the entry's type bits
    flip_byte(pack, row["offset"] + (12 if where == "zlib" else 0), 0x55 if where == "zlib" else 0x70)
    compiled, _, declined = answers(repo, compiled=True, door=door, ids_from=packed_repo)
    pure, _, _ = answers(repo, compiled=False, door=door, ids_from=packed_repo)
    assert compiled == pure
    assert compiled[bytes.fromhex(row["oid"])] is None
    assert declined > 0
