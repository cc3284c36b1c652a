"""The walk's quick commit reader (packscope.core.history.commit_reader) answers exactly what
reading each commit through the store answers — or steps aside."""

from __future__ import annotations

import pytest

from packscope.core.history.commit_reader import CommitHeaderReader
from packscope.core.objects import commit_header_fast
from packscope.core.repo.repository import Repository
from packscope.core.store.odb import ObjectStore
from packscope.core.trace import Recorder
from tests.delta_paths import NOT_BUILT
from tests.object_source import core_store
from tests.repos import all_objects, git_text, ids_of_type


def check(store, repo) -> int:
    """Every commit: the reader's answer (or None) against the store's; every
    other object: None.  Returns how many commits the reader answered."""
    reader = CommitHeaderReader(store)
    answered = 0
    for hex_id, typ, _ in all_objects(repo):
        oid = bytes.fromhex(hex_id)
        got = reader(oid)
        if typ != "commit":
            assert got is None
            assert reader.read(oid) == store.read(oid)
            assert reader.read_header(oid) == store.read_header(oid)
            continue
        want = commit_header_fast(store.read(oid)[1], store.fmt, oid)
        assert got is None or tuple(got) == want, oid.hex()
        answered += got is not None
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
        "odd_commits_repo",
    ],
)
def test_answers_equal_the_stores_for_every_commit(request, fixture):
    repo = request.getfixturevalue(fixture)
    store = core_store(repo)
    try:
        commits = len(ids_of_type(repo, "commit"))
        answered = check(store, repo)
        if fixture not in ("odd_commits_repo",):  # (written loose, byte by byte)
            assert answered == commits
    finally:
        store.close()


def test_loose_commits_are_left_to_the_store(loose_repo):
    store = core_store(loose_repo)
    assert check(store, loose_repo) == 0


def test_a_traced_store_sees_every_lookup(scenario_repo):
    r = Repository.open(scenario_repo)
    store = ObjectStore(r.objects_dir, r.object_format)
    reader = CommitHeaderReader(store)
    head = bytes.fromhex(git_text("rev-parse", "main", cwd=scenario_repo).strip())
    assert reader(head) is not None
    rec = Recorder()
    unsubscribe = store.tracer.subscribe(rec)
    try:
        assert reader(head) is None
        assert reader.read(head) == store.read(head)
        assert len(rec.events) > 2  # reader.read went through the traced store too
    finally:
        unsubscribe()
    assert reader(head) is not None


def test_mappings_closed_by_the_open_file_limit_are_fetched_again(many_packs_repo):
    r = Repository.open(many_packs_repo)
    store = ObjectStore(r.objects_dir, r.object_format, open_files_limit=2)
    try:
        assert check(store, many_packs_repo) > 0
        assert check(store, many_packs_repo) > 0  # after the LRU closed and reopened files
    finally:
        store.close()


@NOT_BUILT
@pytest.mark.parametrize("fixture", ["packed_repo", "idx64_repo", "idxv1_repo", "sha256_repo"])
def test_reads_by_id_find_the_offset_in_one_compiled_call(request, fixture, door):
    # reader.read (the trees and tags a walk reads) locates an object with
    # the compiled search and offset (idx_find_many, large offsets through
    # the index), and answers what the store does, as the pure lines do
    repo = request.getfixturevalue(fixture)
    calls = []

    def counted(*args):
        calls.append(args)
        return door.compiled.idx_find_many(*args)

    for path in ("compiled", "pure"):
        with door.path(path):
            if path == "compiled":
                door.stub("idx_find_many", counted)
            store = core_store(repo)
            try:
                check(store, repo)
            finally:
                store.close()
    assert calls and all(len(c[1]) == 1 for c in calls)
