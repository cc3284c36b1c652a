"""The store while git writes beside it: git's temporary files are never
packs, and a file that vanishes or is half-written between the scan and the
read is "changed under us" (rescan, look again), never a crash or damage."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from packscope.core.errors import PackscopeError
from packscope.core.oid import SHA1
from packscope.core.store.location import changed_under_us
from packscope.core.store.odb import ObjectStore
from packscope.core.store.pack_index import PackIndex
from tests import repos
from tests.cli import packscope
from tests.repos import git, git_text


def _ids(repo: Path) -> list[bytes]:
    return [
        bytes.fromhex(x)
        for x in git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    ]


def _side_pack(repo: Path, scratch: Path, content: bytes) -> tuple[bytes, str, Path]:
    """A pack holding one new blob, written outside ``repo`` (its id, the
    pack's hash, and where its .pack/.idx are, without extension)."""
    scratch.mkdir(exist_ok=True)
    blob = git("hash-object", "--stdin", cwd=repo, input=content).strip()
    # pack-objects packs a blob it can read: write it loose in a throwaway copy
    tmp = repos.copy_repo(repo, scratch / "side.git")
    git("hash-object", "-w", "--stdin", cwd=tmp, input=content)
    name = git("pack-objects", "-q", str(scratch / "side"), cwd=tmp, input=blob + b"\n").strip().decode()
    return bytes.fromhex(blob.decode()), name, scratch / f"side-{name}"


def test_git_temporary_files_in_the_pack_directory_are_never_packs(packed_repo, tmp_path):
    repo = repos.copy_repo(packed_repo, tmp_path / "tmpfiles.git")
    before_batch = git("cat-file", "--batch-all-objects", "--batch-check", cwd=repo)
    ids = _ids(repo)
    pack_dir = repo / "objects" / "pack"
    real = sorted(p.name for p in pack_dir.iterdir())
    blob, name, side = _side_pack(repo, tmp_path / "side", b"only in a temporary pack\n")
    idx_bytes = side.with_suffix(".idx").read_bytes()
    pack_bytes = side.with_suffix(".pack").read_bytes()
    # As git repack names pack-objects' output before renaming it into place
    # (.tmp-<pid>-pack-<hash>.*), a second one half-written (no .pack yet, a
    # cut .idx), and index-pack's / pack-objects' own temporary files.
    (pack_dir / f".tmp-22647-pack-{name}.pack").write_bytes(pack_bytes)
    (pack_dir / f".tmp-22647-pack-{name}.idx").write_bytes(idx_bytes)
    other = "1" * 40
    (pack_dir / f".tmp-22648-pack-{other}.idx").write_bytes(idx_bytes[:600])
    (pack_dir / f".tmp-22648-pack-{other}.rev").write_bytes(b"RIDX")
    (pack_dir / "tmp_pack_Xa9bQ2").write_bytes(pack_bytes[: len(pack_bytes) // 2])
    (pack_dir / "tmp_idx_k3LmZ0").write_bytes(idx_bytes[:100])
    (pack_dir / "tmp_rev_p0Q1r2").write_bytes(b"")

    store = ObjectStore(str(repo / "objects"), SHA1)
    try:
        assert sorted(h.files.idx_path for h in store.packs) == [str(pack_dir / n) for n in real if n.endswith(".idx")]
        (scan,) = store.directory_scans()
        assert scan.orphans == ()
        assert store.locate(blob) is None
        for oid in ids:
            store.read(oid)
        assert store.all_object_ids() == sorted(
            bytes.fromhex(line.split()[0]) for line in before_batch.decode().splitlines()
        )
        assert store.problems == []
    finally:
        store.close()
    # The command line: the same objects as git lists for the real packs.
    got = packscope("-C", repo, "cat-file", "--batch-all-objects", "--batch-check")
    assert got.returncode == 0, got.stderr
    assert got.stdout == before_batch


def test_an_idx_whose_pack_is_not_there_yet_is_not_a_pack(packed_repo, tmp_path):
    repo = repos.copy_repo(packed_repo, tmp_path / "idxfirst.git")
    blob, name, side = _side_pack(repo, tmp_path / "side", b"pack not renamed yet\n")
    pack_dir = repo / "objects" / "pack"
    shutil.copy(side.with_suffix(".idx"), pack_dir / f"pack-{name}.idx")
    store = ObjectStore(str(repo / "objects"), SHA1)
    try:
        assert f"pack-{name}" not in [h.name for h in store.packs]
        assert store.locate(blob) is None
        # the .pack lands: the next miss finds it
        shutil.copy(side.with_suffix(".pack"), pack_dir / f"pack-{name}.pack")
        repos.age_directories(repo, -5)  # the directory changed after the scan
        assert store.read(blob) == ("blob", b"pack not renamed yet\n")
        assert store.problems == []
    finally:
        store.close()
    assert git("cat-file", "blob", blob.hex(), cwd=repo) == b"pack not renamed yet\n"


def test_an_index_deleted_between_scan_and_open_is_rescanned_not_damage(packed_repo, tmp_path):
    repo = repos.copy_repo(packed_repo, tmp_path / "deleted.git")
    ids = _ids(repo)
    store = ObjectStore(str(repo / "objects"), SHA1)
    try:
        assert not any(h.index.is_open for h in store.packs)
        # a repack after the scan: every object in a new pack, the old one deleted
        git("hash-object", "-w", "--stdin", cwd=repo, input=b"a new object for a new pack name\n")
        git("repack", "-a", "-d", "-q", cwd=repo)
        contents = repos.batch_contents(repo)
        # listing first: the index that opens is gone, its objects are in
        # the new pack
        assert store.all_object_ids() == sorted(_ids(repo))
        for oid in ids:
            assert store.read(oid) == contents[oid.hex()]
        assert store.problems == []
        assert store.counters.rescans >= 1
    finally:
        store.close()


def test_the_abbreviation_count_skips_a_pack_a_repack_removed(packed_repo, tmp_path):
    from packscope.core.history.abbrev import approximate_object_count

    repo = repos.copy_repo(packed_repo, tmp_path / "count.git")
    store = ObjectStore(str(repo / "objects"), SHA1)
    try:
        git("hash-object", "-w", "--stdin", cwd=repo, input=b"a new object for a new pack name\n")
        git("repack", "-a", "-d", "-q", cwd=repo)
        assert approximate_object_count(store) == 0  # the one pack listed is gone, nothing raised
        store.rescan()
        in_pack = git_text("count-objects", "-v", cwd=repo).split("in-pack: ")[1].split()[0]
        assert approximate_object_count(store) == int(in_pack)
    finally:
        store.close()


def test_an_index_still_being_written_is_changed_under_us_not_damage(packed_repo, tmp_path, monkeypatch):
    repo = repos.copy_repo(packed_repo, tmp_path / "growing.git")
    ids = _ids(repo)
    contents = repos.batch_contents(repo)
    _pack, idx = repos.the_pack(repo)
    whole = idx.read_bytes()
    idx.write_bytes(whole[: len(whole) // 2])  # the writer is half-way
    parse = PackIndex._parse
    finished = []

    def parse_while_the_writer_finishes(self, m, size):
        if not finished:  # the rest lands after we mapped the first half
            finished.append(True)
            with open(self.path, "ab") as f:
                f.write(whole[len(whole) // 2 :])
        return parse(self, m, size)

    monkeypatch.setattr(PackIndex, "_parse", parse_while_the_writer_finishes)
    store = ObjectStore(str(repo / "objects"), SHA1)
    try:
        (handle,) = store.packs
        with pytest.raises(PackscopeError) as caught:
            handle.index.open()
        assert caught.value.kind == "idx-changed" and changed_under_us(caught.value)
        finished.clear()
        idx.write_bytes(whole[: len(whole) // 2])
        # through the store: every object reads, nothing is called damaged
        for oid in ids:
            assert store.read(oid) == contents[oid.hex()]
        assert finished
        assert store.problems == []
    finally:
        store.close()


def test_a_multi_pack_index_rewritten_while_it_opens_is_read_again(midx_repo, tmp_path, monkeypatch):
    from packscope.core.store import midx as midx_module

    repo = repos.copy_repo(midx_repo, tmp_path / "midx.git")
    parse = midx_module.MidxLayer._parse
    seen = []

    def rewritten_once(self, m, size):
        seen.append(self.path)
        if len(seen) == 1:  # as if git wrote a new one between our stat and our read
            raise self._error("multi-pack-index changed while it was being read", None, "midx-changed")
        return parse(self, m, size)

    monkeypatch.setattr(midx_module.MidxLayer, "_parse", rewritten_once)
    store = ObjectStore(str(repo / "objects"), SHA1)
    try:
        assert len(seen) == 2 and store.midxs and store.problems == []
        contents = repos.batch_contents(repo)
        for oid in _ids(repo):
            assert store.read(oid) == contents[oid.hex()]
    finally:
        store.close()


def test_a_truncated_index_that_stays_so_is_still_damage(packed_repo, tmp_path):
    repo = repos.copy_repo(packed_repo, tmp_path / "cut.git")
    _pack, idx = repos.the_pack(repo)
    idx.write_bytes(idx.read_bytes()[:2000])
    store = ObjectStore(str(repo / "objects"), SHA1)
    try:
        (handle,) = store.packs
        with pytest.raises(PackscopeError) as caught:
            handle.index.open()
        assert caught.value.kind == "idx-truncated" and not changed_under_us(caught.value)
    finally:
        store.close()


# --- git repack and git gc in a loop beside the store ----------------------------

WRITER = r"""
import glob, os, subprocess, sys, time
repo, cycles = sys.argv[1], int(sys.argv[2])
pack_dir = os.path.join(repo, "objects", "pack")
for i in range(cycles):
    # a new object each time, so each repack makes a pack of a new name
    subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, check=True,
                   input=f"cycle {i}\n".encode(), stdout=subprocess.DEVNULL)
    if i % 3 == 0:
        subprocess.run(["git", "gc", "-q", "--prune=now"], cwd=repo, check=True)
    elif i % 3 == 1:
        subprocess.run(["git", "repack", "-a", "-d", "-q"], cwd=repo, check=True)
    else:
        # git repack's own steps, slowed down so that the store's scans see
        # each: pack-objects writes .tmp-<pid>-pack-<hash>.pack/.idx (by way
        # of tmp_pack_*/tmp_idx_*), then the .pack is renamed into place, the
        # .idx last, then the old packs go, their .idx first
        old = sorted(glob.glob(os.path.join(pack_dir, "pack-*.pack")))
        tmp = os.path.join(pack_dir, f".tmp-{os.getpid()}-pack")
        every = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"],
                               cwd=repo, check=True, capture_output=True).stdout
        name = subprocess.run(["git", "pack-objects", "-q", tmp], cwd=repo, check=True, input=every,
                              capture_output=True).stdout.decode().strip()
        time.sleep(0.05)
        for ext in (".pack", ".idx"):
            os.rename(f"{tmp}-{name}{ext}", os.path.join(pack_dir, f"pack-{name}{ext}"))
            time.sleep(0.05)
        for pack in old:
            if not pack.endswith(f"pack-{name}.pack"):
                for ext in (".idx", ".pack"):
                    os.unlink(pack[:-5] + ext)
                    time.sleep(0.02)
        subprocess.run(["git", "prune-packed", "-q"], cwd=repo, check=True)
print("done", flush=True)
"""


def test_reads_beside_a_repack_and_gc_loop_never_fail(packed_repo, tmp_path):
    repo = repos.copy_repo(packed_repo, tmp_path / "busy.git")
    git("config", "gc.autoDetach", "false", cwd=repo)
    ids = _ids(repo)
    contents = repos.batch_contents(repo)
    # a tiny open-file budget: maps are dropped and reopened all the time,
    # so files the writer deleted are really gone for the store
    store = ObjectStore(str(repo / "objects"), SHA1, open_files_limit=2)
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(repo), "20"],
        env=repos.git_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    failures: list[str] = []
    rounds = 0
    try:
        while proc.poll() is None or rounds < 3:
            rounds += 1
            try:
                # a scan now and then lands while the writer's temporary
                # files are there (.tmp-<pid>-pack-*): none is ever a pack
                store.rescan("test")
                for h in store.packs:  # what the UI's pack lists do with each pack listed
                    if not h.name.startswith("pack-"):
                        failures.append(f"{h.name} taken for a pack")
                    try:
                        h.index.open()
                    except PackscopeError as e:
                        if not changed_under_us(e):
                            failures.append(f"{e.kind}: {e}")
                locs = store.locate_many(ids)
                for oid, loc, got in zip(ids, locs, store.packed_reads(locs), strict=True):
                    if got is None:
                        got = store.read(oid, loc)
                    if got != contents[oid.hex()]:
                        failures.append(f"{oid.hex()} read differently")
                for oid in ids[::3]:
                    type_name, size, _disk, _base = store.object_info(oid, storage=True)
                    if (type_name, size) != (contents[oid.hex()][0], len(contents[oid.hex()][1])):
                        failures.append(f"{oid.hex()} info differs")
                store.rescan("test")
                present = set(store.all_object_ids())
                failures.extend(f"{oid.hex()} not listed" for oid in ids if oid not in present)
            except Exception as e:  # any exception is the failure this test looks for
                failures.append(f"{type(e).__name__}: {e}")
    finally:
        out, err = proc.communicate()
        store.close()
    assert proc.returncode == 0, err.decode()
    assert b"done" in out
    assert failures == []
    assert store.problems == []
    assert rounds >= 3
