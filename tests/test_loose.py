"""Loose objects and the loose name cache, with git writing the objects."""

from __future__ import annotations

import os
import random
import shutil
import zlib

import pytest

from packscope.core.errors import CorruptObjectError, LimitExceededError, MissingObjectError
from packscope.core.oid import FORMATS, SHA1, parse_prefix
from packscope.core.store.loose import LOOSE_REMEDY, LooseCache, loose_path, read_loose, read_loose_header
from packscope.core.trace import LooseCacheFilled, LooseCacheFlushed, Recorder, Tracer
from tests import repos


def repo_format(repo):
    return FORMATS[repos.git_text("rev-parse", "--show-object-format", cwd=repo).strip()]


# --- reading ----------------------------------------------------------------------------


@pytest.mark.parametrize("repo_fixture", ["loose_repo", "loose_sha256_repo"])
def test_loose_objects_read_as_git_prints_them(repo_fixture, request):
    repo = request.getfixturevalue(repo_fixture)
    fmt = repo_format(repo)
    expected = repos.batch_contents(repo)
    files = repos.loose_files(repo)
    assert set(files) == set(expected)
    assert {t for t, _ in expected.values()} == {"blob", "tree", "commit", "tag"}
    for oid_hex, path in files.items():
        assert str(path) == loose_path(str(repo / "objects"), oid_hex)
        oid = bytes.fromhex(oid_hex)
        typ, data = expected[oid_hex]
        assert read_loose(path, fmt, oid, verify=True) == (typ, data)
        assert read_loose_header(path, oid) == (typ, len(data))


@pytest.fixture
def one_blob(loose_repo, tmp_path):
    """A private copy of one loose blob: (path, id, content)."""
    files = repos.loose_files(loose_repo)
    contents = repos.batch_contents(loose_repo)
    oid_hex = next(h for h, (t, d) in sorted(contents.items()) if t == "blob" and d)
    path = tmp_path / oid_hex[2:]
    shutil.copy(files[oid_hex], path)
    os.chmod(path, 0o644)
    return path, bytes.fromhex(oid_hex), contents[oid_hex][1]


def rewrite(path, raw: bytes) -> None:
    path.write_bytes(raw)


def corrupt_kind(path, oid, **kw) -> CorruptObjectError:
    with pytest.raises(CorruptObjectError) as info:
        read_loose(path, SHA1, oid, **kw)
    err = info.value
    assert err.path == str(path) and err.oid == oid.hex() and err.remedy == LOOSE_REMEDY
    return err.kind


def test_truncated_file_is_a_zlib_error(one_blob):
    path, oid, _ = one_blob
    rewrite(path, path.read_bytes()[:-6])
    assert corrupt_kind(path, oid) == "loose-zlib"


def test_bytes_that_are_not_zlib_are_a_zlib_error(one_blob):
    path, oid, _ = one_blob
    rewrite(path, b"this is not zlib at all")
    assert corrupt_kind(path, oid) == "loose-zlib"
    with pytest.raises(CorruptObjectError):
        read_loose_header(path, oid)


def test_garbage_after_the_stream_is_a_zlib_error(one_blob):
    path, oid, _ = one_blob
    rewrite(path, path.read_bytes() + b"trailing")
    assert corrupt_kind(path, oid) == "loose-zlib"


@pytest.mark.parametrize(
    "inflated",
    [b"blub 3\0abc", b"blob3\0abc", b"blob 03\0abc", b"blob -3\0abc", b"blob 3 \0abc", b"blob " + b"1" * 40],
)
def test_malformed_headers_are_header_errors(one_blob, inflated):
    path, oid, _ = one_blob
    rewrite(path, zlib.compress(inflated))
    assert corrupt_kind(path, oid) == "loose-header"


@pytest.mark.parametrize("inflated", [b"blob 5\0abc", b"blob 2\0abc", b"blob 0\0x"])
def test_content_of_another_length_than_declared_is_a_size_error(one_blob, inflated):
    path, oid, _ = one_blob
    rewrite(path, zlib.compress(inflated))
    assert corrupt_kind(path, oid) == "loose-size"


def test_implausible_declared_size_is_refused_before_inflating(one_blob):
    path, oid, _ = one_blob
    rewrite(path, zlib.compress(b"blob 99999999999\0abc"))
    assert corrupt_kind(path, oid, max_size=1 << 50) == "loose-size"


def test_declared_size_above_the_cap_is_a_limit_error(one_blob):
    path, oid, data = one_blob
    with pytest.raises(LimitExceededError):
        read_loose(path, SHA1, oid, max_size=len(data) - 1)


def test_hash_is_checked_only_on_request(one_blob):
    path, oid, _ = one_blob
    other = zlib.compress(b"blob 5\0other")
    rewrite(path, other)
    assert read_loose(path, SHA1, oid) == ("blob", b"other")
    assert corrupt_kind(path, oid, verify=True) == "loose-hash"


def test_missing_file_is_a_missing_object(tmp_path):
    oid = b"\x12" * 20
    with pytest.raises(MissingObjectError) as info:
        read_loose(loose_path(str(tmp_path), oid.hex()), SHA1, oid)
    assert info.value.oid == oid.hex()


# --- the name cache ---------------------------------------------------------------------


@pytest.fixture
def loose_ids(loose_repo):
    return sorted(bytes.fromhex(h) for h in repos.loose_files(loose_repo))


def traced_cache(repo, strategy="per-subdir"):
    tracer = Tracer()
    recorder = Recorder()
    tracer.subscribe(recorder)
    return LooseCache(str(repo / "objects"), SHA1, strategy, tracer), recorder


def absent_ids(ids, count=300, seed=11):
    rnd = random.Random(seed)
    present = set(ids)
    out = []
    while len(out) < count:
        candidate = bytes(rnd.getrandbits(8) for _ in range(20))
        if candidate not in present:
            out.append(candidate)
    return out


def test_cache_knows_every_loose_object_and_nothing_else(loose_repo, loose_ids):
    cache, _ = traced_cache(loose_repo)
    assert all(cache.contains(oid) for oid in loose_ids)
    assert not any(cache.contains(oid) for oid in absent_ids(loose_ids))
    assert cache.count == len(loose_ids)


def test_each_subdirectory_is_read_once(loose_repo, loose_ids):
    cache, recorder = traced_cache(loose_repo)
    for _ in range(3):
        for oid in loose_ids + absent_ids(loose_ids):
            cache.contains(oid)
            cache.matches(parse_prefix(oid.hex()[:5], SHA1))
    fills = recorder.of(LooseCacheFilled)
    subdirs = [e.subdir for e in fills]
    assert len(subdirs) == len(set(subdirs)) == cache.fills == cache.subdirs_seen
    by_subdir = {e.subdir: e.added for e in fills}
    for oid in loose_ids:
        assert cache.seen(oid[0]) and cache.seen(oid.hex()[:2])
    assert sum(by_subdir.values()) == len(loose_ids)
    assert all(e.strategy == "per-subdir" and e.seconds >= 0 for e in fills)


def test_matches_lists_every_id_with_the_prefix(loose_repo, loose_ids):
    cache, _ = traced_cache(loose_repo)
    for oid in loose_ids[::7]:
        for digits in (4, 5, 40):
            prefix = parse_prefix(oid.hex()[:digits], SHA1)
            assert cache.matches(prefix) == [x for x in loose_ids if x.hex().startswith(prefix.hex)]


def test_global_resort_strategy_gives_identical_answers(loose_repo, loose_ids):
    per_subdir, _ = traced_cache(loose_repo, "per-subdir")
    resort, recorder = traced_cache(loose_repo, "global-resort")
    queries = loose_ids + absent_ids(loose_ids)
    random.Random(12).shuffle(queries)
    for oid in queries:
        assert per_subdir.contains(oid) == resort.contains(oid)
        prefix = parse_prefix(oid.hex()[:4], SHA1)
        assert per_subdir.matches(prefix) == resort.matches(prefix)
    for n in range(256):
        assert per_subdir.entries(n) == resort.entries(n)
    assert per_subdir.count == resort.count == len(loose_ids)
    assert {e.strategy for e in recorder.of(LooseCacheFilled)} == {"global-resort"}


def test_flush_forgets_and_the_next_question_reads_again(loose_repo, loose_ids):
    cache, recorder = traced_cache(loose_repo)
    oid = loose_ids[0]
    assert cache.contains(oid)
    cache.flush("test")
    assert not cache.seen(oid[0]) and cache.count == 0
    assert cache.contains(oid)
    assert [e.reason for e in recorder.of(LooseCacheFlushed)] == ["test"]
    assert [e.subdir for e in recorder.of(LooseCacheFilled)] == [oid.hex()[:2]] * 2


def test_switching_strategy_flushes(loose_repo, loose_ids):
    cache, recorder = traced_cache(loose_repo)
    cache.contains(loose_ids[0])
    cache.set_strategy("global-resort")
    assert cache.strategy == "global-resort" and cache.subdirs_seen == 0
    assert cache.contains(loose_ids[0])
    assert [e.reason for e in recorder.of(LooseCacheFlushed)] == ["strategy"]
    with pytest.raises(ValueError):
        cache.set_strategy("psychic")


def test_objects_written_after_a_fill_appear_only_after_a_flush(loose_repo, tmp_path):
    objects = tmp_path / "objects"
    shutil.copytree(loose_repo / "objects", objects)
    cache = LooseCache(str(objects), SHA1)
    data = b"written later\n"
    oid = SHA1.hash_object("blob", data)
    cache.fill(oid[0])
    path = loose_path(str(objects), oid.hex())
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(zlib.compress(b"blob %d\0" % len(data) + data))
    assert not cache.contains(oid)
    cache.flush("outside-change")
    assert cache.contains(oid)


def test_temp_files_and_odd_names_are_ignored(loose_repo, loose_ids, tmp_path):
    objects = tmp_path / "objects"
    shutil.copytree(loose_repo / "objects", objects)
    sub = objects / loose_ids[0].hex()[:2]
    for name in ("tmp_obj_Ab12Cd", "z" * 38, " " * 2 + "a" * 36, "a" * 37, "a" * 39):
        (sub / name).write_bytes(b"junk")
    cache = LooseCache(str(objects), SHA1)
    in_subdir = [oid for oid in loose_ids if oid[0] == loose_ids[0][0]]
    assert cache.entries(sub.name) == in_subdir
    assert cache.fill_all() == len(loose_ids) - len(in_subdir)
    assert cache.counts().entries == len(loose_ids)


def test_count_in_a_subdirectory_matches_its_entries_for_both_strategies(loose_repo):
    from packscope.core.oid import SHA1
    from packscope.core.store.loose import LooseCache

    for strategy in ("per-subdir", "global-resort"):
        cache = LooseCache(str(loose_repo / "objects"), SHA1, strategy=strategy)
        assert cache.count_in(0x3A) is None  # not read yet, and asking does not read it
        for sub in range(256):
            cache.fill(sub)
        for sub in range(256):
            assert cache.count_in(sub) == len(cache.entries(sub))
