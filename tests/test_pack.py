"""Pack reading against git as the oracle, plus hand-made broken packs."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import sys
import zlib

import pytest

from packscope.core.errors import BadPackError, CorruptObjectError, DeltaError, LimitExceededError, MissingObjectError
from packscope.core.oid import FORMATS, SHA1, SHA256
from packscope.core.store.cache import DeltaBaseCache
from packscope.core.store.pack import Pack
from packscope.core.store.pack_entry import OBJ_BLOB, OBJ_OFS_DELTA, OBJ_REF_DELTA
from packscope.core.store.pack_order import pack_order as _pack_order
from packscope.core.store.pack_order import read_rev as _read_rev
from packscope.core.trace import DeltaBaseCacheEvent, Recorder, Tracer
from tests import repos
from tests.repos import flip_byte, pack_entry_header

ORACLE_REPOS = [
    "packed_repo",
    "sha256_repo",
    "idxv1_repo",
    "idx64_repo",
    "ref_delta_repo",
    "thin_completed_repo",
    "big_copies_repo",
    "rev_repo",
    "many_packs_repo",
]


def repo_format(repo):
    return FORMATS[repos.git_text("rev-parse", "--show-object-format", cwd=repo).strip()]


def open_packs(repo, **kw):
    fmt = repo_format(repo)
    return fmt, [Pack(p, fmt=fmt, **kw) for p in repos.pack_files(repo)]


# --- git as the oracle -----------------------------------------------------------------


@pytest.mark.parametrize("repo_fixture", ORACLE_REPOS)
def test_every_object_matches_git_batch_check(repo_fixture, request):
    repo = request.getfixturevalue(repo_fixture)
    expected = repos.batch_check_all(repo)
    fmt, packs = open_packs(repo, cache=DeltaBaseCache())
    seen = 0
    for pack in packs:
        for oid, offset in pack.index.open().entries():
            typ, size, disk, base = expected[oid.hex()]
            assert pack.info_at(offset) == (typ, size), oid.hex()
            assert pack.disk_size(offset) == disk, oid.hex()
            assert (pack.delta_base(offset) or fmt.null).hex() == base, oid.hex()
            seen += 1
    assert seen == len(expected)


@pytest.mark.parametrize("repo_fixture", ORACLE_REPOS)
def test_every_object_reads_as_git_batch_prints_it(repo_fixture, request):
    repo = request.getfixturevalue(repo_fixture)
    expected = repos.batch_contents(repo)
    _, packs = open_packs(repo, cache=DeltaBaseCache())
    for pack in packs:
        for oid, offset in pack.index.open().entries():
            assert pack.read_at(offset) == expected[oid.hex()], oid.hex()


def test_reading_without_a_delta_base_cache_gives_the_same_objects(packed_repo):
    fmt, (pack,) = open_packs(packed_repo)
    for oid, offset in pack.index.open().entries():
        typ, data = pack.read_at(offset)
        assert fmt.hash_object(typ, data) == oid


def test_sha256_pack_names_its_objects_with_sha256(sha256_repo):
    fmt, (pack,) = open_packs(sha256_repo)
    assert fmt is SHA256
    for oid, offset in pack.index.open().entries():
        assert SHA256.hash_object(*pack.read_at(offset)) == oid


def test_ref_delta_repo_really_uses_ref_deltas(ref_delta_repo):
    _, (pack,) = open_packs(ref_delta_repo)
    types = {pack.entry_header(o).type_num for _, o in pack.index.open().entries()}
    assert OBJ_REF_DELTA in types and OBJ_OFS_DELTA not in types


def test_thin_completed_pack_finds_bases_stored_after_their_deltas(thin_completed_repo):
    fmt, (pack,) = open_packs(thin_completed_repo)
    later = 0
    for oid, offset in pack.index.open().entries():
        header = pack.entry_header(offset)
        if header.type_num == OBJ_REF_DELTA:
            later += pack.index.offset_of(header.base_oid) > offset
        assert fmt.hash_object(*pack.read_at(offset)) == oid
    assert later, "index-pack --fix-thin should have appended some bases"


def test_big_copies_use_the_64_kib_zero_size_encoding(big_copies_repo):
    from packscope.core.store.delta import COPY_ZERO_SIZE, delta_ops

    _, (pack,) = open_packs(big_copies_repo)
    found = False
    for _, offset in pack.index.open().entries():
        h = pack.entry_header(offset)
        if h.is_delta:
            delta = pack._inflate(offset, h.data_offset, h.size)
            found |= any(
                op.kind == "copy" and op.size == COPY_ZERO_SIZE and not delta[op.at] & 0x70 for op in delta_ops(delta)
            )
    assert found


# --- deep chains -------------------------------------------------------------------------


def deepest(pack):
    """(id, offset) of the entry at the end of the longest OFS_DELTA chain."""
    index = pack.index.open()
    depth, best = {}, (-1, None, None)
    for position in pack.pack_order():  # bases precede their OFS_DELTAs
        offset = index.offset_at(position)
        header = pack.entry_header(offset)
        depth[offset] = depth[header.base_offset] + 1 if header.type_num == OBJ_OFS_DELTA else 0
        best = max(best, (depth[offset], index.name_at(position), offset))
    return best[1], best[2]


def test_1500_deep_chain_reads_iteratively(deep_chain_repo):
    fmt, (pack,) = open_packs(deep_chain_repo)
    oid, offset = deepest(pack)
    chain = pack.delta_chain(offset)
    assert len(chain) >= 1500
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # a recursive resolver could not go 1500 deep
    try:
        typ, data = pack.read_at(offset)
    finally:
        sys.setrecursionlimit(limit)
    assert fmt.hash_object(typ, data) == oid
    assert pack.info_at(offset) == (typ, len(data))


def test_whole_deep_chain_repo_matches_git(deep_chain_repo):
    expected = repos.batch_check_all(deep_chain_repo)
    fmt, (pack,) = open_packs(deep_chain_repo, cache=DeltaBaseCache())
    for offset in map(pack.index.offset_at, pack.pack_order()):
        typ, data = pack.read_at(offset)
        oid = fmt.hash_object(typ, data)
        assert expected[oid.hex()][:3] == (typ, len(data), pack.disk_size(offset))


def test_chain_deeper_than_the_cap_is_an_error(deep_chain_repo):
    _, (pack,) = open_packs(deep_chain_repo, max_chain_depth=100)
    _, offset = deepest(pack)
    with pytest.raises(DeltaError) as info:
        pack.read_at(offset)
    assert info.value.kind == "delta-too-deep" and info.value.path == pack.path


@pytest.mark.parametrize("repo_fixture", ["deep_chain_repo", "ref_delta_repo"])
def test_read_info_and_delta_chain_agree_at_the_depth_limit(repo_fixture, request):
    """A chain of ``max_chain_depth`` deltas answers in all three readers, one
    more delta fails in all three; depths are git verify-pack's."""
    repo = request.getfixturevalue(repo_fixture)
    fmt = repo_format(repo)
    (pack_path,) = repos.pack_files(repo)
    rows = repos.verify_pack_rows(pack_path)
    by_depth: dict[int, dict] = {}
    for row in rows:
        by_depth.setdefault(row["depth"], row)
    deepest_depth = max(by_depth)
    limits = sorted({1, 2, deepest_depth - 1} & {d for d in by_depth if d + 1 in by_depth})
    assert 2 in limits  # the case the depth rule once split on

    def fresh():  # no cache, no memo: each reader walks the whole chain
        return Pack(str(pack_path), fmt=fmt, max_chain_depth=limit)

    for limit in limits:
        at, over = by_depth[limit], by_depth[limit + 1]
        typ, data = fresh().read_at(at["offset"])
        assert fmt.hash_object(typ, data).hex() == at["oid"]
        assert fresh().info_at(at["offset"]) == (at["type"], len(data))  # verify-pack's size is the delta's
        assert len(fresh().delta_chain(at["offset"])) == limit + 1
        for op in (Pack.read_at, Pack.info_at, Pack.delta_chain):
            with pytest.raises(DeltaError) as info:
                op(fresh(), over["offset"])
            assert info.value.kind == "delta-too-deep", (limit, op.__name__)
            assert info.value.offset == over["offset"]


def test_delta_chain_lists_links_top_first_and_marks_cached_ones(packed_repo):
    cache = DeltaBaseCache()
    _, (pack,) = open_packs(packed_repo, cache=cache)
    entries = list(pack.index.open().entries())
    _, offset = max(entries, key=lambda e: len(pack.delta_chain(e[1])))
    before = pack.delta_chain(offset)
    assert [link.depth for link in before] == list(range(len(before)))
    assert before[0].offset == offset and before[-1].type_name in ("commit", "tree", "blob", "tag")
    assert not any(link.cached for link in before)
    pack.read_at(offset)
    after = pack.delta_chain(offset)
    assert not after[0].cached and all(link.cached for link in after[1:])


# --- the delta base cache --------------------------------------------------------------


def test_delta_base_cache_serves_bases_and_reports_events(packed_repo):
    tracer = Tracer()
    recorder = Recorder()
    tracer.subscribe(recorder)
    cache = DeltaBaseCache(tracer=tracer)
    _, (pack,) = open_packs(packed_repo, cache=cache)
    offsets = [o for _, o in pack.index.open().entries()]
    for offset in offsets:
        pack.read_at(offset)
    stats = cache.stats()
    assert stats.fills > 0 and stats.hits > 0 and stats.evictions == 0
    assert 0 < stats.bytes <= stats.budget and stats.entries == len(cache)
    actions = {e.action for e in recorder.of(DeltaBaseCacheEvent)}
    assert actions == {"fill", "hit"}


def test_delta_base_cache_evicts_least_recently_used_within_budget():
    cache = DeltaBaseCache(budget_bytes=10)
    cache.put("p", 1, "blob", b"aaaa")
    cache.put("p", 2, "blob", b"bbbb")
    assert cache.get("p", 1) == ("blob", b"aaaa")  # 1 is now the most recent
    cache.put("p", 3, "blob", b"cccc")
    assert ("p", 2) not in cache and ("p", 1) in cache and ("p", 3) in cache
    assert cache.bytes == 8 and cache.evictions == 1
    cache.put("p", 4, "blob", b"x" * 11)  # larger than the whole budget: not kept
    assert ("p", 4) not in cache
    assert cache.get("p", 9) is None and cache.misses == 1


def test_cache_emits_nothing_once_the_listener_leaves():
    tracer = Tracer()
    recorder = Recorder()
    unsubscribe = tracer.subscribe(recorder)
    cache = DeltaBaseCache(tracer=tracer)
    cache.put("p", 1, "blob", b"a")
    unsubscribe()
    cache.put("p", 2, "blob", b"b")
    assert cache.get("p", 1) == ("blob", b"a")
    assert [(e.action, e.offset) for e in recorder.events] == [("fill", 1)]


# --- pack order: .rev, checksums, CRCs -----------------------------------------------------


def test_rev_file_and_sorted_index_give_the_same_pack_order(rev_repo, tmp_path):
    _, (pack,) = open_packs(rev_repo)
    rev_path = pack.path[: -len(".pack")] + ".rev"
    index = pack.index.open()
    assert _read_rev(rev_path, index) is not None, "the .rev file should be usable"
    sorted_offsets = sorted(index.offset_at(i) for i in range(index.num_objects))
    from_rev = _pack_order(index, rev_path)
    from_sort = _pack_order(index, str(tmp_path / "absent.rev"))
    assert list(from_rev[0]) == list(from_sort[0]) == sorted_offsets
    assert list(from_rev[1]) == list(from_sort[1]) == pack.pack_order()
    assert _read_rev(str(tmp_path / "absent.rev"), index) is None


def test_checksum_and_crcs_verify_and_catch_a_flipped_byte(packed_repo, tmp_path):
    fmt, (pack,) = open_packs(packed_repo)
    pack.verify_checksum()
    n = pack.index.open().num_objects
    assert all(pack.crc_ok(i) for i in range(n))

    copy = copy_pack(pack.path, tmp_path)
    position = max(range(n), key=lambda i: pack.disk_size(pack.index.offset_at(i)))
    offset = pack.index.offset_at(position)
    flip_byte(copy, offset + pack.disk_size(offset) // 2)
    broken = Pack(copy, fmt=fmt)
    with pytest.raises(BadPackError) as info:
        broken.verify_checksum()
    assert info.value.kind == "pack-checksum"
    assert broken.crc_ok(position) is False
    assert broken.crc_ok((position + 1) % n) is True


def test_idx_v1_has_no_crcs(idxv1_repo):
    _, (pack,) = open_packs(idxv1_repo)
    assert pack.crc_ok(0) is None
    pack.verify_checksum()


def test_ordinary_reads_do_not_check_the_trailer(packed_repo, tmp_path):
    fmt, (pack,) = open_packs(packed_repo)
    copy = copy_pack(pack.path, tmp_path)
    size = os.path.getsize(copy)
    flip_byte(copy, size - 1)
    # the .idx records the same (wrong) trailer: the pair agrees, the hash is never computed on reads
    idx = copy.with_suffix(".idx")
    flip_byte(idx, os.path.getsize(idx) - fmt.rawsz - 1)
    broken = Pack(copy, fmt=fmt)
    for oid, offset in broken.index.open().entries():
        assert fmt.hash_object(*broken.read_at(offset)) == oid
    with pytest.raises(BadPackError):
        broken.verify_checksum()


def test_a_pack_whose_trailer_is_not_its_index_record_is_refused(packed_repo, tmp_path):
    """As git ("packfile ... does not match index"): not one object is read from it."""
    fmt, (pack,) = open_packs(packed_repo)
    copy = copy_pack(pack.path, tmp_path)
    flip_byte(copy, os.path.getsize(copy) - 1)
    broken = Pack(copy, fmt=fmt)
    offset = broken.index.open().offset_at(0)
    with pytest.raises(BadPackError) as e:
        broken.read_at(offset)
    assert e.value.kind == "pack-index-mismatch"


def copy_pack(pack_path, tmp_path):
    dst = tmp_path / "pack-copy.pack"
    shutil.copy(pack_path, dst)
    shutil.copy(str(pack_path)[:-5] + ".idx", tmp_path / "pack-copy.idx")
    return dst


# --- hand-made packs --------------------------------------------------------------------


def write_pack(path, entries, fmt=SHA1):
    """Write ``path`` (.pack) and its v2 .idx from (id, raw entry bytes) in pack order."""
    body = bytearray(b"PACK" + (2).to_bytes(4, "big") + len(entries).to_bytes(4, "big"))
    offsets = []
    for _, raw in entries:
        offsets.append(len(body))
        body += raw
    pack_sum = hashlib.new(fmt.hashname, body).digest()
    path.write_bytes(bytes(body) + pack_sum)
    order = sorted(range(len(entries)), key=lambda i: entries[i][0])
    fanout = [0] * 256
    for oid, _ in entries:
        for b in range(oid[0], 256):
            fanout[b] += 1
    idx = bytearray(b"\377tOc" + (2).to_bytes(4, "big"))
    idx += b"".join(n.to_bytes(4, "big") for n in fanout)
    idx += b"".join(entries[i][0] for i in order)
    idx += b"".join((zlib.crc32(entries[i][1]) & 0xFFFFFFFF).to_bytes(4, "big") for i in order)
    idx += b"".join(offsets[i].to_bytes(4, "big") for i in order)
    idx += pack_sum
    idx += hashlib.new(fmt.hashname, idx).digest()
    path.with_suffix(".idx").write_bytes(bytes(idx))
    return path


def blob_entry(data: bytes, declared: int | None = None) -> tuple[bytes, bytes]:
    size = len(data) if declared is None else declared
    return SHA1.hash_object("blob", data), pack_entry_header(OBJ_BLOB, size) + zlib.compress(data)


def ref_delta_entry(oid: bytes, base_oid: bytes, delta: bytes) -> tuple[bytes, bytes]:
    return oid, pack_entry_header(OBJ_REF_DELTA, len(delta)) + base_oid + zlib.compress(delta)


def test_ref_delta_bases_outside_the_pack_come_from_resolve_ref(ref_delta_repo, tmp_path):
    _, (full,) = open_packs(ref_delta_repo)
    deltas = [(oid, off) for oid, off in full.index.open().entries() if full.entry_header(off).is_delta]
    raw = [(oid, full.map[off : off + full.disk_size(off)]) for oid, off in sorted(deltas, key=lambda e: e[1])]
    path = write_pack(tmp_path / "pack-thin.pack", raw)

    def resolve(oid):
        offset = full.index.offset_of(oid)
        if offset is None:
            raise MissingObjectError("not here", oid=oid.hex())
        return full.read_at(offset)

    def resolve_info(oid):
        return full.info_at(full.index.offset_of(oid))

    thin = Pack(path, fmt=SHA1, resolve_ref=resolve, resolve_ref_info=resolve_info, cache=DeltaBaseCache())
    external = 0
    for oid, offset in thin.index.open().entries():
        typ, data = thin.read_at(offset)
        assert SHA1.hash_object(typ, data) == oid
        assert thin.info_at(offset) == (typ, len(data))
        external += thin.delta_chain(offset)[-1].type_name == "external"
    assert external == len(raw)

    orphan = Pack(path, fmt=SHA1)
    with pytest.raises(DeltaError) as info:
        orphan.read_at(thin.index.offset_at(0))
    assert info.value.kind == "delta-missing-base"


def test_ref_delta_loop_inside_a_pack_is_detected(tmp_path):
    a, b = b"\x11" * 20, b"\x22" * 20
    delta = bytes([1, 1, 0x90, 1])  # copy one byte: never applied, the loop is found first
    path = write_pack(tmp_path / "pack-loop.pack", [ref_delta_entry(a, b, delta), ref_delta_entry(b, a, delta)])
    pack = Pack(path, fmt=SHA1)
    for name in (a, b):
        with pytest.raises(DeltaError) as info:
            pack.read_at(pack.index.offset_of(name))
        assert info.value.kind == "delta-loop"
    with pytest.raises(DeltaError):
        pack.info_at(pack.index.offset_of(a))


def test_ref_delta_loop_through_two_packs_is_detected(tmp_path):
    a, b = b"\x11" * 20, b"\x22" * 20
    delta = bytes([1, 1, 0x90, 1])
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one = Pack(write_pack(tmp_path / "one" / "pack-one.pack", [ref_delta_entry(a, b, delta)]), fmt=SHA1)
    two = Pack(write_pack(tmp_path / "two" / "pack-two.pack", [ref_delta_entry(b, a, delta)]), fmt=SHA1)
    one.resolve_ref = lambda oid: two.read_at(two.index.offset_of(oid))
    two.resolve_ref = lambda oid: one.read_at(one.index.offset_of(oid))
    with pytest.raises(DeltaError) as info:
        one.read_at(one.index.offset_of(a))
    assert info.value.kind == "delta-loop"
    assert not one._active and not two._active  # the guard is cleaned up


@pytest.mark.parametrize(
    "declared, kind, error",
    [(5, "pack-size", CorruptObjectError), (500, "pack-size", CorruptObjectError)],
)
def test_entry_inflating_to_other_than_its_declared_size_is_corrupt(tmp_path, declared, kind, error):
    data = b"x" * 100
    path = write_pack(tmp_path / "pack-size.pack", [blob_entry(data, declared)])
    pack = Pack(path, fmt=SHA1)
    with pytest.raises(error) as info:
        pack.read_at(12)
    assert info.value.kind == kind and info.value.offset == 12 and info.value.path == pack.path


def test_damaged_zlib_stream_is_a_corrupt_object(tmp_path):
    oid, raw = blob_entry(bytes(range(256)) * 8)
    raw = raw[:10] + bytes(b ^ 0x55 for b in raw[10:30]) + raw[30:]
    pack = Pack(write_pack(tmp_path / "pack-zlib.pack", [(oid, raw)]), fmt=SHA1)
    with pytest.raises(CorruptObjectError) as info:
        pack.read_at(12)
    assert info.value.kind in ("pack-zlib", "pack-size", "pack-truncated") and info.value.offset == 12


def test_truncated_zlib_stream_is_reported(tmp_path):
    oid, raw = blob_entry(bytes(range(256)) * 8)
    pack = Pack(write_pack(tmp_path / "pack-trunc.pack", [(oid, raw[: len(raw) // 2])]), fmt=SHA1)
    with pytest.raises(CorruptObjectError) as info:
        pack.read_at(12)
    assert info.value.kind in ("pack-zlib", "pack-truncated")


def test_declared_size_above_the_cap_fails_before_inflating(tmp_path):
    path = write_pack(tmp_path / "pack-cap.pack", [blob_entry(b"y" * 5000)])
    with pytest.raises(LimitExceededError) as info:
        Pack(path, fmt=SHA1, max_object_size=1000).read_at(12)
    assert info.value.kind == "object-too-large"


def test_declared_size_no_stream_could_inflate_to_is_refused(tmp_path):
    path = write_pack(tmp_path / "pack-huge.pack", [blob_entry(b"z" * 10, declared=1 << 40)])
    with pytest.raises(LimitExceededError) as info:
        Pack(path, fmt=SHA1, max_object_size=1 << 50).read_at(12)
    assert info.value.kind == "implausible-size"


def test_delta_errors_name_the_pack_and_entry(tmp_path):
    base_oid, base_raw = blob_entry(b"abc")
    bad = ref_delta_entry(b"\x99" * 20, base_oid, bytes([3, 4, 0x90, 4]))  # copies past the base's end
    path = write_pack(tmp_path / "pack-bad-delta.pack", [(base_oid, base_raw), bad])
    pack = Pack(path, fmt=SHA1)
    offset = pack.index.offset_of(b"\x99" * 20)
    with pytest.raises(DeltaError) as info:
        pack.read_at(offset)
    assert info.value.kind == "delta-copy-out-of-range"
    assert info.value.path == pack.path and info.value.offset == offset


@pytest.mark.parametrize(
    "patch, kind",
    [
        (lambda b: b"JUNK" + b[4:], "pack-signature"),
        (lambda b: b[:4] + (4).to_bytes(4, "big") + b[8:], "pack-version"),
        (lambda b: b[:8] + (7).to_bytes(4, "big") + b[12:], "pack-count"),
        (lambda b: b[:20], "pack-truncated"),
    ],
)
def test_bad_pack_headers_are_typed_errors(tmp_path, patch, kind):
    path = write_pack(tmp_path / "pack-hdr.pack", [blob_entry(b"hello")])
    path.write_bytes(patch(path.read_bytes()))
    with pytest.raises(BadPackError) as info:
        Pack(path, fmt=SHA1).read_at(12)
    assert info.value.kind == kind and info.value.path == str(path)


def test_offsets_outside_the_entries_are_rejected(tmp_path):
    pack = Pack(write_pack(tmp_path / "pack-off.pack", [blob_entry(b"hello")]), fmt=SHA1)
    for offset in (0, 11, pack.size - 20, pack.size + 5):
        with pytest.raises(BadPackError) as info:
            pack.entry_header(offset)
        assert info.value.kind == "pack-offset"


def flushed_every_byte(data: bytes) -> bytes:
    """A valid zlib stream far larger than its content (a flush per byte),
    as an unusual encoder might write."""
    c = zlib.compressobj()
    return b"".join(c.compress(data[i : i + 1]) + c.flush(zlib.Z_FULL_FLUSH) for i in range(len(data))) + c.flush()


def test_streams_larger_than_their_content_and_big_entries_inflate(tmp_path):
    rnd = random.Random(13)
    noise = rnd.randbytes(3 << 20)  # incompressible: the stream spans several input chunks
    cases = [
        (b"tiny but padded " * 4, flushed_every_byte),
        (noise, lambda d: zlib.compress(d, 0)),
        (noise, zlib.compress),
        (bytes(5 << 20), zlib.compress),  # compresses ~1000:1
    ]
    entries = [
        (SHA1.hash_object("blob", data), pack_entry_header(OBJ_BLOB, len(data)) + deflate(data))
        for data, deflate in cases
    ]
    entries.sort(key=lambda e: e[0])  # any order will do; keep ids unique
    pack = Pack(write_pack(tmp_path / "pack-big.pack", entries), fmt=SHA1)
    for oid, offset in pack.index.open().entries():
        assert SHA1.hash_object(*pack.read_at(offset)) == oid


def test_base_offsets_are_exactly_the_bases_git_verify_pack_lists(packed_repo, ref_delta_repo):
    for repo in (packed_repo, ref_delta_repo):
        fmt, packs = open_packs(repo)
        for pack in packs:
            rows = [line.split() for line in repos.git_text("verify-pack", "-v", pack.path[:-5] + ".idx").splitlines()]
            offset_of = {r[0]: int(r[4]) for r in rows if len(r) >= 5 and len(r[0]) == fmt.hexsz}
            expected = {offset_of[r[6]] for r in rows if len(r) >= 7 and len(r[0]) == fmt.hexsz and r[6] in offset_of}
            assert expected, "the fixture has deltas"
            assert pack.base_offsets() == expected


def test_a_kept_object_stays_in_the_cache_for_the_deltas_built_on_it(packed_repo):
    _, packs = open_packs(packed_repo)
    pack = packs[0]
    bases = pack.base_offsets()
    whole_base = next(off for off in sorted(bases) if pack._header(off)[0] < OBJ_OFS_DELTA)
    pack.cache = DeltaBaseCache(64 << 20)
    got = pack.read_at(whole_base)
    assert pack.cache.peek(pack.name, whole_base) is None  # a plain read caches nothing
    assert pack.read_at(whole_base, keep=True) == got
    assert pack.cache.peek(pack.name, whole_base) == got
