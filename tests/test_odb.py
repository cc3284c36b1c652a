"""The store's lookup machinery, observed through its trace."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from packscope.core import trace
from packscope.core.errors import MissingObjectError
from packscope.core.oid import SHA1
from packscope.core.store.odb import ObjectStore
from tests import repos
from tests.cli import packscope
from tests.repos import age_directories, git, git_text


def absent_ids(n: int, salt: bytes = b"") -> list[bytes]:
    return [hashlib.sha1(b"absent %s %d" % (salt, i)).digest() for i in range(n)]


def traced_store(repo: Path, **kw) -> tuple[ObjectStore, trace.Recorder]:
    rec = trace.Recorder()
    tracer = trace.Tracer()
    tracer.subscribe(rec)
    store = ObjectStore(str(repo / "objects"), SHA1, tracer=tracer, **kw)
    return store, rec


@pytest.fixture
def scratch(tmp_path, many_packs_repo):
    repo = tmp_path / "scratch.git"
    shutil.copytree(many_packs_repo, repo)
    age_directories(repo)
    return repo


def test_the_null_id_is_missing_without_any_probe(scratch):
    store, rec = traced_store(scratch, policy="git")
    rec.events.clear()
    assert store.locate(SHA1.null) is None
    assert rec.of(trace.NullOidShortcut)
    assert not rec.of(trace.PackSearched) and not rec.of(trace.LooseChecked) and not rec.of(trace.PackDirScanned)


def test_a_quick_miss_rescans_nothing(scratch):
    for policy in ("git", "gated"):
        store, rec = traced_store(scratch, policy=policy)
        rec.events.clear()
        for oid in absent_ids(20):
            assert store.locate(oid, quick=True) is None
        assert not rec.of(trace.PackDirScanned)
        assert store.counters.rescans == 0
        assert {e.method for e in rec.of(trace.LooseChecked)} == {"cache"}


def test_git_policy_rescans_on_every_miss(scratch):
    store, rec = traced_store(scratch, policy="git")
    rec.events.clear()
    for oid in absent_ids(15):
        assert store.locate(oid) is None
    scans = rec.of(trace.PackDirScanned)
    assert len(scans) == 15 and {s.reason for s in scans} == {"miss"}
    assert store.counters.rescans == 15


def test_gated_policy_never_rescans_an_unchanged_pack_directory(scratch):
    store, rec = traced_store(scratch, policy="gated")
    rec.events.clear()
    for oid in absent_ids(40) * 2:
        assert store.locate(oid) is None
    assert not rec.of(trace.PackDirScanned)
    assert store.counters.rescans == 0
    assert store.counters.negative_hits == 40  # the second round is answered from the negative cache


def test_gated_policy_finds_a_new_pack_at_the_next_miss(scratch, tmp_path):
    store, rec = traced_store(scratch, policy="gated")
    oid = bytes.fromhex(git_text("hash-object", "--stdin", cwd=scratch, input="brand new blob\n").strip())
    assert store.locate(oid) is None  # remembered as missing
    # Another process writes a pack holding it.
    src = tmp_path / "blob"
    src.write_text("brand new blob\n")
    git("hash-object", "-w", src, cwd=scratch)
    git("pack-objects", "-q", scratch / "objects" / "pack" / "pack", cwd=scratch, input=oid.hex() + "\n")
    (scratch / "objects" / oid.hex()[:2] / oid.hex()[2:]).unlink()
    rec.events.clear()
    loc = store.locate(oid)
    assert loc is not None and loc.source == "pack"
    scans = rec.of(trace.PackDirScanned)
    assert len(scans) == 1 and scans[0].reason in ("changed", "provisional") and scans[0].added


def test_a_loose_object_written_after_a_miss_is_found(scratch, tmp_path):
    for policy in ("gated", "git"):
        store, _ = traced_store(scratch, policy=policy)
        text = f"written later under {policy}\n"
        oid = bytes.fromhex(git_text("hash-object", "--stdin", cwd=scratch, input=text).strip())
        assert store.locate(oid) is None
        (tmp_path / "f").write_text(text)
        git("hash-object", "-w", tmp_path / "f", cwd=scratch)
        loc = store.locate(oid)
        assert loc is not None and loc.source == "loose"


def test_each_loose_subdirectory_fills_once(loose_repo):
    ids = [
        bytes.fromhex(x)
        for x in git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=loose_repo).split()
    ]
    for strategy in ("per-subdir", "global-resort"):
        store, rec = traced_store(loose_repo, loose_strategy=strategy)
        absent = absent_ids(300)
        for oid in (ids + absent) * 2:
            store.locate(oid, quick=True)
        fills = [e.subdir for e in rec.of(trace.LooseCacheFilled)]
        # absent ids reach the loose check in every subdirectory they name
        assert len(fills) == len(set(fills))
        assert set(fills) >= {oid.hex()[:2] for oid in absent}
        assert all(store.contains(oid, quick=True) for oid in ids)


def test_a_pack_hit_moves_the_pack_to_the_front(scratch):
    store, rec = traced_store(scratch)
    last = store.packs[-1]
    oid = next(last.index.names())
    rec.events.clear()
    loc = store.locate(oid)
    assert loc.pack is last
    moved = rec.of(trace.MruMoved)
    assert moved and moved[0].pack == last.name and moved[0].from_rank > 0
    assert store.packs[0] is last
    rec.events.clear()
    store.locate(oid)
    assert not rec.of(trace.MruMoved)
    assert len(rec.of(trace.PackSearched)) == 1  # found in the first pack probed


def test_packs_are_ordered_newest_first(scratch):
    store = ObjectStore(str(scratch / "objects"), SHA1)
    mtimes = [h.files.mtime for h in store.packs]
    assert mtimes == sorted(mtimes, reverse=True)


def test_switching_policy_at_run_time_changes_rescans(scratch):
    store, _ = traced_store(scratch, policy="gated")
    for oid in absent_ids(10):
        store.locate(oid)
    assert store.counters.rescans == 0
    store.set_policy("git")
    for oid in absent_ids(10, b"x"):
        store.locate(oid)
    assert store.counters.rescans == 10


def test_objects_outside_the_multi_pack_index_are_found(midx_repo):
    store, _ = traced_store(midx_repo)
    assert store.midxs, "the fixture has a multi-pack-index"
    ids = [
        bytes.fromhex(x)
        for x in git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=midx_repo).split()
    ]
    sources = {store.locate(oid).source for oid in ids}
    assert "midx" in sources
    assert all(store.locate(oid) is not None for oid in ids)


# --- alternates ---------------------------------------------------------------


@pytest.fixture
def alternates_chain(tmp_path, packed_repo):
    """a borrows from b, b from c, c back from a (a loop); each adds objects."""
    names = ["a", "b", "c"]
    paths = {}
    for n in names:
        p = tmp_path / f"{n}.git"
        git("init", "-q", "--bare", p)
        paths[n] = p
    shutil.rmtree(paths["c"] / "objects")
    shutil.copytree(packed_repo / "objects", paths["c"] / "objects")
    for n in names:
        f = tmp_path / f"{n}.txt"
        f.write_text(f"only in {n}\n")
        git("hash-object", "-w", f, cwd=paths[n])
    (paths["a"] / "objects/info/alternates").write_text(f"{paths['b'] / 'objects'}\n")
    (paths["b"] / "objects/info/alternates").write_text("# comment\n../../c.git/objects\n")
    (paths["c"] / "objects/info/alternates").write_text(f"{paths['a'] / 'objects'}\n")
    return paths


def test_alternates_are_followed_recursively_and_loops_are_harmless(alternates_chain):
    a = alternates_chain["a"]
    store = ObjectStore(str(a / "objects"), SHA1)
    assert len(store.object_dirs) == 3
    assert any(p.kind == "alternates-loop" for p in store.problems)
    ids = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=a).split()
    stdin = "\n".join(ids + [i[:8] for i in ids[::4]] + ["f" * 40]) + "\n"
    fmt = "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk)"
    got = packscope("-C", a, "cat-file", f"--batch-check={fmt}", input=stdin).stdout
    assert got == git("cat-file", f"--batch-check={fmt}", cwd=a, input=stdin)
    all_got = packscope("-C", a, "cat-file", "--batch-all-objects", "--batch-check").stdout
    assert all_got == git("cat-file", "--batch-all-objects", "--batch-check", cwd=a)


# --- a repack running beside the lookups ------------------------------------------


REPACKER = r"""
import subprocess, sys, os, random
repo, cycles = sys.argv[1], int(sys.argv[2])
env = dict(os.environ)
rnd = random.Random(3)
for i in range(cycles):
    # loose -> pack -> pack: explode some objects loose, repack incrementally, then fully
    if i % 3 == 0:
        subprocess.run(["git", "repack", "-a", "-d", "-q", "-f"], cwd=repo, check=True, env=env)
    elif i % 3 == 1:
        subprocess.run(["git", "repack", "-A", "-d", "-q"], cwd=repo, check=True, env=env)
        f = os.path.join(repo, f"tmp-{i}")
        with open(f, "w") as fh:
            fh.write(f"cycle {i} {rnd.random()}\n")
        subprocess.run(["git", "hash-object", "-w", f], cwd=repo, check=True, env=env, stdout=subprocess.DEVNULL)
        os.remove(f)
    else:
        subprocess.run(["git", "repack", "-d", "-q"], cwd=repo, check=True, env=env)
print("done", flush=True)
"""


def test_a_concurrent_repack_never_causes_a_false_missing(tmp_path, packed_repo):
    repo = tmp_path / "busy.git"
    shutil.copytree(packed_repo, repo)
    ids = [
        bytes.fromhex(x)
        for x in git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    ]
    # Start with every object loose, so they move loose -> pack -> pack.
    for pack in repos.pack_files(repo):
        data = pack.read_bytes()
        for f in pack.parent.glob(pack.stem + ".*"):
            f.unlink()
        git("unpack-objects", "-q", cwd=repo, input=data)
    # A tiny open-file budget: mappings are dropped and reopened all the
    # time, so packs deleted by the repack are really gone for the store.
    store = ObjectStore(str(repo / "objects"), SHA1, policy="gated", open_files_limit=2)
    proc = subprocess.Popen(
        [sys.executable, "-c", REPACKER, str(repo), "50"],
        env=repos.git_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lookups = 0
    missing = []
    while proc.poll() is None or lookups < 10_000:
        for k, oid in enumerate(ids):
            try:
                if k % 4:
                    store.object_info(oid)
                elif store.locate(oid) is None:
                    missing.append(oid.hex())
            except MissingObjectError:
                missing.append(oid.hex())
            lookups += 1
            if lookups % 500 == 0 and proc.poll() is not None and lookups >= 10_000:
                break
    out, err = proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert b"done" in out
    assert lookups >= 10_000
    assert missing == []
    assert store.counters.rescans > 0, store.counters  # the store did notice the repacks


def test_an_incremental_multi_pack_index_chain_is_used(midx_chain_repo):
    store, _ = traced_store(midx_chain_repo)
    assert store.midxs and store.midxs[0].is_chain
    ids = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=midx_chain_repo).split()
    sources = {store.locate(bytes.fromhex(i)).source for i in ids}
    assert "midx" in sources
    fmt = "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk)"
    got = packscope("-C", midx_chain_repo, "cat-file", "--batch-all-objects", f"--batch-check={fmt}").stdout
    assert got == git("cat-file", "--batch-all-objects", f"--batch-check={fmt}", cwd=midx_chain_repo)


# --- batches --------------------------------------------------------------------


def _ids_of(repo: Path) -> list[bytes]:
    return [
        bytes.fromhex(x)
        for x in git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    ]


@pytest.mark.parametrize("quick", [False, True])
def test_a_batch_finds_each_id_where_one_by_one_lookups_do(scratch, tmp_path, quick):
    # Packs and loose objects side by side, plus absent and null ids.
    loose = [bytes.fromhex(h) for h in repos.add_loose(scratch, 40, seed=11)]
    ids = _ids_of(scratch) + absent_ids(200) + [SHA1.null] + loose[:5]
    one_by_one = ObjectStore(str(scratch / "objects"), SHA1, quick=quick)
    batch = ObjectStore(str(scratch / "objects"), SHA1, quick=quick)
    expected = [one_by_one.locate(oid) for oid in ids]
    got = batch.locate_many(ids)
    assert [(e.source, e.where, e.offset) if e else None for e in expected] == [
        (g.source, g.where, g.offset) if g else None for g in got
    ]
    assert {g.source for g in got if g} == {"pack", "loose"}
    assert batch.counters.lookups == len(ids)
    assert batch.counters.misses == sum(e is None for e in expected) == 201
    assert batch.counters.rescans == 0


def test_a_batch_checks_the_pack_directory_once_not_once_per_miss(scratch):
    store = ObjectStore(str(scratch / "objects"), SHA1)
    store.locate_many(absent_ids(5, b"warm"))
    before = store.counters.stats
    store.locate_many(absent_ids(2000))
    # One stat of objects/pack per batch, one per objects/xx subdirectory
    # named (at most 256) — not several per miss.
    assert store.counters.stats - before <= 1 + 256
    assert store.counters.rescans_skipped >= 1
    # The misses are remembered: a one-by-one lookup is a negative-cache hit.
    assert store.locate(absent_ids(2000)[7]) is None and store.counters.negative_hits == 1


def test_a_batch_sees_a_pack_and_a_loose_object_written_since_the_last_batch(scratch, tmp_path):
    store = ObjectStore(str(scratch / "objects"), SHA1)
    packed = bytes.fromhex(git_text("hash-object", "--stdin", cwd=scratch, input="packed later\n").strip())
    loose = bytes.fromhex(git_text("hash-object", "--stdin", cwd=scratch, input="loose later\n").strip())
    assert store.locate_many([packed, loose]) == [None, None]
    for text in ("packed later\n", "loose later\n"):
        (tmp_path / "f").write_text(text)
        git("hash-object", "-w", tmp_path / "f", cwd=scratch)
    git("pack-objects", "-q", scratch / "objects" / "pack" / "pack", cwd=scratch, input=packed.hex() + "\n")
    (scratch / "objects" / packed.hex()[:2] / packed.hex()[2:]).unlink()
    found = store.locate_many([packed, loose])
    assert [loc.source for loc in found] == ["pack", "loose"]


def test_a_traced_batch_is_traced_lookup_by_lookup(scratch):
    store, rec = traced_store(scratch)
    ids = _ids_of(scratch)[:3] + absent_ids(2)
    store.locate_many(ids)
    assert len(rec.of(trace.LookupFinished)) == 5
