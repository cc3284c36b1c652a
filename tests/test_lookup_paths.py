"""Untraced lookups, compiled (core/_native.c: idx_find, idx_find_many,
pack_info) and pure, on the same inputs: the same positions, the same
locations in the same pack order, the same types and sizes — and where the
compiled path declines (None) the pure one answers or raises its error.
And `cat-file --batch-check` of full ids, whose lines the store answers in
batches, equal to git's on both paths."""

from __future__ import annotations

import hashlib
import random
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packscope.core.errors import PackscopeError
from packscope.core.oid import SHA1, SHA256
from packscope.core.store import batch_lookup
from packscope.core.store import pack as pack_module
from packscope.core.store.odb import ObjectStore
from packscope.core.store.pack import Pack
from packscope.core.store.pack_entry import TYPE_NAMES
from packscope.core.store.pack_index import PackIndex
from packscope.core.store.pack_info import _type_memo
from packscope.core.store.search import binary_search
from tests.cli import packscope
from tests.delta_paths import NOT_BUILT, _native
from tests.repos import batch_contents, git, git_text, import_history, init_bare, pack_files

INDEX_FIXTURES = ["packed_repo", "idxv1_repo", "sha256_repo", "idx64_repo", "many_packs_repo"]


def _fmt(repo):
    return SHA256 if "sha256" in repo.name else SHA1


def _absent(fmt, n: int, salt: bytes = b"absent") -> list[bytes]:
    return [hashlib.new(fmt.hashname, salt + b" %d" % i).digest() for i in range(n)]


def _probes(index: PackIndex, fmt) -> tuple[list[bytes], int]:
    """Every name, the ids just beside each bucket's first and last name,
    an id in every empty bucket, the lowest and highest ids and some
    random absent ones; and how many buckets were empty."""
    names = list(index.names())
    ids = list(names)
    empty = 0
    for b in range(256):
        lo, hi = index.bucket(b)
        if lo == hi:
            empty += 1
            ids += [bytes([b]) + bytes(fmt.rawsz - 1), bytes([b]) + b"\xff" * (fmt.rawsz - 1)]
            continue
        first, last = names[lo], names[hi - 1]
        if first[-1] > 0:
            ids.append(first[:-1] + bytes([first[-1] - 1]))
        if last[-1] < 255:
            ids.append(last[:-1] + bytes([last[-1] + 1]))
    ids += [bytes(fmt.rawsz), b"\xff" * fmt.rawsz, *_absent(fmt, 100)]
    return ids, empty


@NOT_BUILT
@pytest.mark.parametrize("fixture", INDEX_FIXTURES)
def test_the_compiled_bucket_search_answers_as_the_binary_search(fixture, request):
    repo = request.getfixturevalue(fixture)
    fmt = _fmt(repo)
    empty_seen = 0
    for idx_path in sorted((repo / "objects" / "pack").glob("pack-*.idx")):
        index = PackIndex(str(idx_path), fmt).open()
        ids, empty = _probes(index, fmt)
        empty_seen += empty
        name_at = index.name_accessor()
        for oid in ids:
            lo, hi = index.bucket(oid[0])
            expected = binary_search(name_at, lo, hi, index.num_objects, oid)
            assert _native.idx_find(index.map, index._fan_at, index._names_at, index._stride, oid) == expected
        index.close()
    assert empty_seen > 0  # small packs leave buckets empty: those were probed too


@pytest.mark.parametrize("fixture", INDEX_FIXTURES)
def test_find_gives_git_show_index_offsets_on_both_paths(fixture, request, backend_path):
    from tests.repos import show_index

    repo = request.getfixturevalue(fixture)
    fmt = _fmt(repo)
    for idx_path in sorted((repo / "objects" / "pack").glob("pack-*.idx")):
        expected = show_index(idx_path, fmt.name)
        compiled, pure = PackIndex(str(idx_path), fmt), PackIndex(str(idx_path), fmt)
        pure.compiled_search = False
        pure.prefix_column_after = None  # the plain search itself
        for hexid, offset in expected.items():
            oid = bytes.fromhex(hexid)
            assert compiled.offset_of(oid) == pure.offset_of(oid) == offset
        for oid in [*_absent(fmt, 50), bytes(fmt.rawsz), b"\xff" * fmt.rawsz]:
            assert compiled.find(oid) == pure.find(oid) == -1


# --- batches over several packs: the most-recently-used order ---------------------------


@pytest.fixture(scope="module")
def overlapping_packs(tmp_path_factory):
    """Three packs sharing objects, none holding them all: which copy a
    lookup finds depends on the packs' most-recently-used order, so a batch
    must move packs to the front exactly as lookups one by one do."""
    repo = init_bare(tmp_path_factory.mktemp("overlap") / "overlap.git")
    import_history(repo, 30, seed=12)
    git("repack", "-a", "-d", "-q", cwd=repo)
    whole = pack_files(repo)
    ids = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    rnd = random.Random(5)
    rnd.shuffle(ids)
    third = len(ids) // 3
    for subset in (ids[: 2 * third], ids[third:], rnd.sample(ids, third)):
        git("pack-objects", "-q", repo / "objects" / "pack" / "pack", cwd=repo, input="\n".join(subset) + "\n")
    for pack in whole:  # the pack with every object, and its .idx, .bitmap, .rev
        for part in pack.parent.glob(pack.stem + ".*"):
            part.unlink()
    assert len(pack_files(repo)) == 3
    return repo


def _batch_ids(repo, fmt, seed: int) -> list[bytes]:
    ids = [
        bytes.fromhex(x)
        for x in git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    ]
    rnd = random.Random(seed)
    batch = ids + rnd.sample(ids, len(ids) // 2) + _absent(fmt, 100) + [fmt.null]
    rnd.shuffle(batch)
    return batch


def _where(locs):
    return [(loc.source, loc.where, loc.offset) if loc else None for loc in locs]


@NOT_BUILT
@pytest.mark.parametrize(
    "fixture", ["overlapping_packs", "many_packs_repo", "packed_repo", "sha256_repo", "idx64_repo"]
)
def test_a_compiled_batch_finds_what_pure_lookups_one_by_one_find(fixture, request, door):
    door.use("compiled")
    repo = request.getfixturevalue(fixture)
    fmt = _fmt(repo)
    ids = _batch_ids(repo, fmt, 9)
    pure = ObjectStore(str(repo / "objects"), fmt)
    for h in pure.all_packs():
        h.index.compiled_search = False
    compiled = ObjectStore(str(repo / "objects"), fmt)
    assert [h.name for h in pure.packs] == [h.name for h in compiled.packs]
    assert compiled._find_packed_compiled(ids[:1]) is not None  # the compiled batch applies here
    compiled.rescan()  # forget that first call's pack order
    expected = [pure.locate(oid) for oid in ids]
    got = compiled.locate_many(ids)
    assert _where(got) == _where(expected)
    assert [h.name for h in compiled.packs] == [h.name for h in pure.packs]
    assert compiled.counters.mru_moves == pure.counters.mru_moves
    if fixture == "overlapping_packs":
        assert pure.counters.mru_moves > 0
        assert len({loc.where for loc in expected if loc}) == 3


@NOT_BUILT
@pytest.mark.parametrize("fixture", ["overlapping_packs", "many_packs_repo", "ref_delta_repo", "deep_chain_repo"])
def test_a_batch_read_in_runs_answers_and_caches_as_reads_one_by_one(fixture, request, door):
    door.use("compiled")
    repo = request.getfixturevalue(fixture)
    fmt = _fmt(repo)
    ids = _batch_ids(repo, fmt, 5)
    runs = []

    def counting(*args):
        got = _native.read_objects(*args)
        runs.append((len(args[1]), len(got)))
        return got

    door.stub("read_objects", counting)
    one_by_one = ObjectStore(str(repo / "objects"), fmt)
    one_by_one.delta_cache.budget = 64 << 10  # small: entries are evicted too
    expected = [one_by_one.packed_read(loc) if loc else None for loc in one_by_one.locate_many(ids)]
    in_runs = ObjectStore(str(repo / "objects"), fmt)
    in_runs.delta_cache.budget = 64 << 10
    got = list(in_runs.packed_reads(in_runs.locate_many(ids)))
    assert got == expected and any(expected) and None in expected
    assert in_runs.delta_cache.stats() == one_by_one.delta_cache.stats()
    assert list(in_runs.delta_cache.table) == list(one_by_one.delta_cache.table)
    assert runs and 1 < max(n for n, _ in runs) <= batch_lookup.READ_RUN
    if fixture == "ref_delta_repo":  # a run stops at a REF_DELTA: read_at answers it, the next run goes on
        assert any(made < n for n, made in runs)
    elif fixture != "overlapping_packs":
        assert all(made == n for n, made in runs)
    if fixture == "deep_chain_repo":  # one pack, every id present: runs as long as allowed
        runs.clear()
        present = [oid for oid in ids if one_by_one.contains(oid)]
        assert len(present) > batch_lookup.READ_RUN
        assert list(in_runs.packed_reads(in_runs.locate_many(present))) == [
            one_by_one.packed_read(loc) for loc in one_by_one.locate_many(present)
        ]
        assert max(n for n, _ in runs) == batch_lookup.READ_RUN


def test_without_the_compiled_batch_the_answers_are_the_same(overlapping_packs, door):
    fmt = SHA1
    ids = _batch_ids(overlapping_packs, fmt, 4)
    door.use("compiled")
    first = ObjectStore(str(overlapping_packs / "objects"), fmt).locate_many(ids)
    door.stub("idx_find_many")
    second = ObjectStore(str(overlapping_packs / "objects"), fmt).locate_many(ids)
    assert _where(first) == _where(second)
    assert sum(loc is None for loc in first) == 101  # the absent ids and the null id


# --- types and sizes through delta chains -------------------------------------------------


def _reference_info(pack_path, fmt, offsets, door):
    """info_at of each offset on the pure path: (type, size) or the error kind."""
    out = {}
    with door.path("pure"):
        pack = Pack(str(pack_path), fmt=fmt)
        for off in offsets:
            try:
                out[off] = pack.info_at(off)
            except PackscopeError as e:
                out[off] = e.kind
        pack.close()
    return out


@NOT_BUILT
@pytest.mark.parametrize(
    "fixture", ["packed_repo", "sha256_repo", "ref_delta_repo", "thin_completed_repo", "deep_chain_repo"]
)
def test_compiled_types_and_sizes_are_the_pure_ones(fixture, request, door):
    door.use("compiled")
    repo = request.getfixturevalue(fixture)
    fmt = _fmt(repo)
    declined = answered = deltas = 0
    for pack_path in pack_files(repo):
        pack = Pack(str(pack_path), fmt=fmt).open()
        offsets = list(pack.index.open().offsets())
        expected = _reference_info(pack_path, fmt, offsets, door)
        memo = _type_memo(len(offsets))
        declined_here = 0
        for round_ in range(2):  # the second round answers from the memo
            for off in offsets:
                got = _native.pack_info(pack.map, off, pack._data_end, fmt.rawsz, pack.max_chain_depth, memo)
                if got is None:
                    declined += 1
                    declined_here += round_ == 0
                    # only a REF_DELTA on the way (its base is found through an index)
                    assert any(link.type_name in ("ref-delta", "external") for link in pack.delta_chain(off))
                else:
                    answered += 1
                    assert (TYPE_NAMES[got[0]], got[1]) == expected[off]
                    deltas += pack._header(off)[0] == 6
        # Through Pack.info_at (compiled first, the reference on decline).
        assert {off: pack.info_at(off) for off in offsets} == expected
        # The batch form: the same answers or None (declined), offsets that
        # start no entry included.
        pack._type_memo = None
        many = pack.info_many([*offsets, 5, pack._data_end])
        assert many[-2:] == [None, None]
        assert all(got is None or got == expected[off] for off, got in zip(offsets, many, strict=False))
        assert sum(got is None for got in many[:-2]) == declined_here
        pack.close()
    if fixture in ("ref_delta_repo", "thin_completed_repo"):
        assert declined > 0
    else:
        assert declined == 0 and deltas > 0
    assert answered > 0


@NOT_BUILT
def test_a_chain_deeper_than_the_limit_is_left_to_the_reference(deep_chain_repo):
    pack_path = pack_files(deep_chain_repo)[0]
    pack = Pack(str(pack_path), fmt=SHA1).open()
    index = pack.index.open()
    deepest = max(index.offsets(), key=lambda off: len(pack.delta_chain(off)))
    depth = len(pack.delta_chain(deepest)) - 1  # deltas above the base
    assert depth > 100
    args = (pack.map, deepest, pack._data_end, 20)
    assert _native.pack_info(*args, depth, None) is not None
    assert _native.pack_info(*args, depth - 1, None) is None
    pack.max_chain_depth = depth - 1
    with pytest.raises(PackscopeError) as e:
        pack.info_at(deepest)
    assert e.value.kind == "delta-too-deep"
    pack.close()


@pytest.fixture(scope="module")
def small_pack(tmp_path_factory):
    repo = init_bare(tmp_path_factory.mktemp("fuzz-pack") / "fuzz.git")
    import_history(repo, 8, seed=21)
    git("repack", "-a", "-d", "-f", "-q", "--depth=10", cwd=repo)
    pack_path = pack_files(repo)[0]
    index = PackIndex(str(pack_path.with_suffix(".idx")), SHA1).open()
    offsets = sorted(index.offsets())
    index.close()
    return pack_path.read_bytes(), offsets


def _bare_pack(data: bytes, max_depth: int) -> Pack:
    """A Pack over bytes in memory with no index: enough for info_at over OFS_DELTA chains."""
    pack = object.__new__(Pack)
    pack.path, pack.name, pack.fmt = "mem.pack", "mem.pack", SHA1
    pack._map, pack._data_end = data, len(data) - SHA1.rawsz
    pack._active, pack._delta_types, pack.cache = set(), {}, None
    pack.max_chain_depth, pack.resolve_ref, pack.resolve_ref_info = max_depth, None, None
    pack._type_memo, pack._open_files, pack.good_copies, pack._read_args = None, None, {}, None
    return pack


@NOT_BUILT
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_on_damaged_packs_the_compiled_answer_is_the_references_or_none(small_pack, door, data):
    raw, offsets = small_pack
    damaged = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(12, len(raw) - 21))
        damaged[at] = data.draw(st.integers(0, 255))
    damaged_bytes = bytes(damaged)
    max_depth = data.draw(st.sampled_from([1, 3, 10_000]))
    memo = bytearray(8 * 64)
    reference = _bare_pack(damaged_bytes, max_depth)
    for off in [*offsets, data.draw(st.integers(0, len(raw) + 5))]:
        got = _native.pack_info(damaged_bytes, off, len(raw) - 20, 20, max_depth, memo)
        if got is None:
            continue  # the reference decides (answers or raises)
        reference._delta_types.clear()
        with door.path("pure"):
            assert reference.info_at(off) == (TYPE_NAMES[got[0]], got[1])


# --- cat-file --batch-check of full ids ------------------------------------------------------


@pytest.mark.parametrize("mode", ["--batch-check", "--batch"])
@pytest.mark.parametrize("pure", ["0", "1"])
@pytest.mark.parametrize("fixture", ["packed_repo", "sha256_repo", "ref_delta_repo", "loose_repo", "many_packs_repo"])
def test_batch_of_full_ids_equals_git_on_both_paths(fixture, pure, mode, request, tmp_path):
    src = request.getfixturevalue(fixture)
    repo = shutil.copytree(src, tmp_path / src.name, symlinks=True)
    fmt = _fmt(repo)
    ids = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    rnd = random.Random(11)
    empty_tree = fmt.empty_tree.hex()
    lines = ids + [i.upper() for i in rnd.sample(ids, min(40, len(ids)))] + rnd.sample(ids, min(40, len(ids)))
    lines += [a.hex() for a in _absent(fmt, 60)] + [a.hex().upper() for a in _absent(fmt, 5, b"upper")]
    lines += [fmt.null_hex, empty_tree]
    rnd.shuffle(lines)
    stdin = "\n".join(lines) + "\n"
    want = git("cat-file", mode, cwd=repo, input=stdin)
    got = packscope("-C", repo, "cat-file", mode, input=stdin, env={"PACKSCOPE_PURE": pure})
    assert got.stdout == want
    assert want.count(b" missing\n") == 66 and b"%s tree 0\n" % empty_tree.encode() in want


# --- contents: delta chains applied in one call ------------------------------------------------


def _read_all(pack_path, fmt, offsets):
    """read_at of each offset on a fresh pack with no cache: (type, bytes) or the error kind."""
    pack = Pack(str(pack_path), fmt=fmt)
    out = {}
    for off in offsets:
        try:
            out[off] = pack.read_at(off)
        except PackscopeError as e:
            out[off] = e.kind
    pack.close()
    return out


@NOT_BUILT
@pytest.mark.parametrize("fixture", ["packed_repo", "sha256_repo", "deep_chain_repo", "big_copies_repo"])
def test_chains_applied_in_one_compiled_call_make_the_pure_objects(fixture, request, door):
    repo = request.getfixturevalue(fixture)
    fmt = _fmt(repo)
    calls = []

    def counting(*args):
        calls.append(len(args[2]))
        return _native.apply_chain(*args)

    for pack_path in pack_files(repo):
        index = PackIndex(str(pack_path.with_suffix(".idx")), fmt).open()
        offsets = list(index.offsets())
        index.close()
        with door.path("pure"):
            pure = _read_all(pack_path, fmt, offsets)
        with door.path("compiled"):
            door.stub("apply_chain", counting)
            compiled = _read_all(pack_path, fmt, offsets)
        assert compiled == pure
        # And against git's contents.
        git_objects = batch_contents(repo)
        names = {off: name for name, off in zip(_names(pack_path, fmt), _offsets(pack_path, fmt), strict=True)}
        assert all(compiled[off] == git_objects[names[off].hex()] for off in offsets)
    assert calls and max(calls) > 1  # whole chains went through the compiled call


def _names(pack_path, fmt):
    index = PackIndex(str(pack_path.with_suffix(".idx")), fmt).open()
    names = list(index.names())
    index.close()
    return names


def _offsets(pack_path, fmt):
    index = PackIndex(str(pack_path.with_suffix(".idx")), fmt).open()
    offsets = list(index.offsets())
    index.close()
    return offsets


def _bare_read_pack(data: bytes) -> Pack:
    pack = _bare_pack(data, 10_000)
    pack.max_object_size = 1 << 30
    pack.index = None  # REF_DELTA bases are not looked for (an AttributeError on both paths)
    return pack


def _outcome(pack: Pack, off: int):
    try:
        return pack.read_at(off)
    except (PackscopeError, AttributeError) as e:
        return type(e).__name__, getattr(e, "kind", None)


@NOT_BUILT
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_on_damaged_packs_a_compiled_chain_reads_as_the_pure_loop(small_pack, door, data):
    raw, offsets = small_pack
    damaged = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        damaged[data.draw(st.integers(12, len(raw) - 21))] = data.draw(st.integers(0, 255))
    damaged_bytes = bytes(damaged)
    for off in offsets:
        with door.path("compiled"):
            compiled = _outcome(_bare_read_pack(damaged_bytes), off)
        with door.path("pure"):
            pure = _outcome(_bare_read_pack(damaged_bytes), off)
        assert compiled == pure


def _cached_outcomes(data: bytes, offsets, budget: int):
    from packscope.core.store.cache import DeltaBaseCache

    pack = _bare_read_pack(data)
    pack.cache = DeltaBaseCache(budget)
    out = [_outcome(pack, off) for off in offsets]
    return out, pack.cache.stats(), list(pack.cache.table)


@NOT_BUILT
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_on_damaged_packs_a_compiled_read_answers_and_caches_as_the_pure_loop(small_pack, door, data):
    raw, offsets = small_pack
    damaged = bytearray(raw)
    for _ in range(data.draw(st.integers(0, 4))):
        damaged[data.draw(st.integers(12, len(raw) - 21))] = data.draw(st.integers(0, 255))
    order = data.draw(st.permutations(offsets))
    budget = data.draw(st.sampled_from([2 << 10, 64 << 10]))
    with door.path("compiled"):
        compiled = _cached_outcomes(bytes(damaged), order, budget)
    with door.path("pure"):
        pure = _cached_outcomes(bytes(damaged), order, budget)
    assert compiled == pure


def _run_outcomes(data: bytes, offsets, budget: int, step: int):
    """Pack.read_run over ``offsets`` in runs of ``step``, read_at where a run stops."""
    from packscope.core.store.cache import DeltaBaseCache

    pack = _bare_read_pack(data)
    pack.cache = DeltaBaseCache(budget)
    out: list = []
    i = 0
    while i < len(offsets):
        chunk = offsets[i : i + step]
        run = pack.read_run(chunk)
        out += run
        i += len(run)
        if len(run) < len(chunk):
            out.append(_outcome(pack, offsets[i]))
            i += 1
    return out, pack.cache.stats(), list(pack.cache.table)


@NOT_BUILT
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_on_damaged_packs_reads_in_runs_answer_and_cache_as_the_pure_loop(small_pack, door, data):
    raw, offsets = small_pack
    damaged = bytearray(raw)
    for _ in range(data.draw(st.integers(0, 4))):
        damaged[data.draw(st.integers(12, len(raw) - 21))] = data.draw(st.integers(0, 255))
    order = data.draw(st.permutations(offsets))
    budget = data.draw(st.sampled_from([2 << 10, 64 << 10]))
    step = data.draw(st.integers(1, 9))
    with door.path("compiled"):
        in_runs = _run_outcomes(bytes(damaged), order, budget, step)
    with door.path("pure"):
        pure = _cached_outcomes(bytes(damaged), order, budget)
    assert in_runs == pure


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_one_call_inflate_answers_as_inflate_entry_or_leaves_it_to_it(small_pack, data):
    from packscope.core.store.pack_inflate import inflate_entry

    raw, offsets = small_pack
    damaged = bytearray(raw)
    for _ in range(data.draw(st.integers(0, 3))):
        damaged[data.draw(st.integers(12, len(raw) - 21))] = data.draw(st.integers(0, 255))
    end = len(raw) - 20
    pack = _bare_pack(bytes(damaged), 10_000)
    for off in offsets:
        try:
            _, size, start, _, _ = pack._header(off)
        except PackscopeError:
            continue
        size = data.draw(st.sampled_from([size, size, max(0, size - 1), size + 1]))
        args = (bytes(damaged), off, start, size, end, 1 << 30, "mem.pack")
        expected = _inflated(inflate_entry, args)
        assert _inflated(pack_module._inflate, args) == expected
        # apply_chain's inflate for big deltas: inflate_entry's bytes, or None where it raises
        window = memoryview(bytes(damaged))[start : min(end, start + size + (size >> 3) + 64)]
        capped = pack_module._inflate_capped(window, size)
        assert capped is None or capped == expected


@pytest.mark.parametrize("kind", ["random", "text"])
def test_the_capped_inflate_makes_exactly_the_size_fed_in_one_or_two_parts(kind):
    import zlib

    rnd = random.Random(5)
    if kind == "random":  # barely compresses: the stream runs past the first half
        body = rnd.randbytes(50_000)
    else:  # ends well within the first half
        body = "".join(f"line {rnd.randrange(1000)}\n" for _ in range(6000)).encode()
    stream = zlib.compress(body)
    assert (len(stream) > len(body) // 2 + 64) == (kind == "random")
    after = stream + rnd.randbytes(len(body))  # the next entries of a pack
    window = memoryview(after)[: len(body) + (len(body) >> 3) + 64]
    assert pack_module._inflate_capped(window, len(body)) == body
    assert pack_module._inflate_capped(window, len(body) + 1) is None  # shorter than declared
    assert pack_module._inflate_capped(window, len(body) - 1) is None  # longer than declared
    assert pack_module._inflate_capped(memoryview(stream)[: len(stream) - 9], len(body)) is None  # cut


def _inflated(inflate, args):
    try:
        return inflate(*args)
    except PackscopeError as e:
        return e.kind


# --- the batch output ------------------------------------------------------------------------------


def test_batch_output_writes_every_byte_when_writev_writes_only_part(monkeypatch, tmp_path):
    import os

    from packscope.inspector.commands import cat_file

    real = os.writev
    calls = []

    def stingy(fd, parts):  # at most 1000 bytes per call, as a full pipe may take
        calls.append(len(parts))
        return real(fd, [bytes(b"".join(bytes(p) for p in parts)[:1000])])

    monkeypatch.setattr(cat_file.os, "writev", stingy)
    path = tmp_path / "out"
    rnd = random.Random(2)
    expected = []
    with open(path, "wb") as f:
        out = cat_file._BatchOutput(f)
        for k in range(300):
            data = rnd.randbytes(rnd.randrange(0, 5000))
            out.write_object(b"header %d\n" % k, data)
            expected += [b"header %d\n" % k, data, b"\n"]
        out.write(b"a last line\n")
        out.flush()
    assert path.read_bytes() == b"".join(expected) + b"a last line\n"
    assert len(calls) > 300  # writev ran, and mostly in part


@NOT_BUILT
@pytest.mark.parametrize(
    ("fixture", "budget"),
    [
        ("packed_repo", 8 << 10),
        ("deep_chain_repo", 256 << 10),
        ("big_copies_repo", 700 << 10),
        ("ref_delta_repo", 8 << 10),
    ],
)
def test_a_compiled_walk_or_read_leaves_the_delta_base_cache_as_the_pure_loop_does(fixture, budget, request, door):
    from packscope.core.store.cache import DeltaBaseCache

    repo = request.getfixturevalue(fixture)
    pack_path = pack_files(repo)[0]
    offsets = _offsets(pack_path, SHA1)
    rnd = random.Random(8)
    # Revisits are what fill, hit and evict the cache; 1,500 reads are enough
    # of them (a deep chain's 4,500 objects thrice took minutes on the pure path).
    sequence = [rnd.choice(offsets) for _ in range(min(3 * len(offsets), 1500))]
    walks = []

    def counting_walk(*args):
        got = _native.walk_chain(*args)
        walks.append(got is not None)
        return got

    def run(walk, chain, read=None):
        # Pure when nothing is given; else the compiled functions given, the
        # others declining (each call site's pure code answers for them).
        with door.path("pure" if walk is chain is read is None else "compiled"):
            if walk is not chain or chain is not read:
                door.stub("read_object", read)
                door.stub("walk_chain", walk)
                door.stub("apply_chain", chain)
            cache = DeltaBaseCache(budget)  # small: entries are evicted too
            pack = Pack(str(pack_path), fmt=SHA1, cache=cache)
            objects = [pack.read_at(off, keep=k % 7 == 0) for k, off in enumerate(sequence)]
            pack.close()
        return objects, cache.stats(), list(cache.table)

    pure = run(None, None)
    compiled = run(counting_walk, _native.apply_chain)
    assert compiled[0] == pure[0]
    assert compiled[1] == pure[1]  # hits, misses, fills, evictions, bytes, entries
    assert compiled[2] == pure[2]  # the same entries in the same LRU order
    assert pure[1].hits > 0 and pure[1].evictions > 0
    if fixture == "ref_delta_repo":
        assert any(walks) and not all(walks)  # whole objects walk; a REF_DELTA is left to the loop
    else:
        assert all(walks) and len(walks) == len(sequence)
    # The whole read in one call (read_object), cache bookkeeping included.
    reads = []

    def counting_read(*args):
        got = _native.read_object(*args)
        reads.append(got is not None)
        return got

    one_call = run(None, None, counting_read)
    assert one_call[0] == pure[0]
    assert one_call[1] == pure[1]
    assert one_call[2] == pure[2]
    if fixture == "ref_delta_repo":
        assert any(reads) and not all(reads)  # a REF_DELTA on the way is left to the loop
    else:
        assert all(reads) and len(reads) == len(sequence)


@pytest.fixture(scope="module")
def big_deltas_repo(tmp_path_factory):
    """Versions of a file sharing 250 KB and each ending in ~100 KB of its
    own: whichever version is the base, a delta inserts the other's own
    part, more than ONE_CALL_INFLATE."""
    repo = init_bare(tmp_path_factory.mktemp("big-deltas") / "big-deltas.git")
    rnd = random.Random(17)
    shared = "".join(f"{rnd.getrandbits(64):016x}\n" for _ in range(15000))
    stream = []
    for n in range(4):
        body = (shared + "".join(f"{rnd.getrandbits(64):016x}\n" for _ in range(6000))).encode()
        stream.append(
            b"commit refs/heads/main\ncommitter C O Mitter <committer@example.com> %d +0000\ndata 2\nc\n"
            b"M 100644 inline big.txt\ndata %d\n%s\n" % (1_600_000_000 + n, len(body), body)
        )
    git("fast-import", "--quiet", cwd=repo, input=b"".join(stream))
    git("repack", "-a", "-d", "-f", "-q", cwd=repo)
    return repo


@NOT_BUILT
def test_big_deltas_go_through_the_capped_inflate_and_make_git_s_objects(big_deltas_repo, door):
    pack_path = pack_files(big_deltas_repo)[0]
    offsets = _offsets(pack_path, SHA1)
    sizes = []

    def counting(data, size):
        sizes.append(size)
        return pack_module._inflate_capped(data, size)

    real = _native.apply_chain
    with door.path("compiled"):
        door.stub("apply_chain", lambda *a: real(*a[:6], counting))
        compiled = _read_all(pack_path, SHA1, offsets)
    with door.path("pure"):
        assert compiled == _read_all(pack_path, SHA1, offsets)
    git_objects = batch_contents(big_deltas_repo)
    names = dict(zip(_offsets(pack_path, SHA1), _names(pack_path, SHA1), strict=True))
    assert all(compiled[off] == git_objects[names[off].hex()] for off in offsets)
    assert sizes and min(sizes) > pack_module.ONE_CALL_INFLATE


@NOT_BUILT
def test_big_objects_and_deltas_read_in_one_call_are_git_s(big_deltas_repo, monkeypatch, door):
    from packscope.core.store.cache import DeltaBaseCache

    pack_path = pack_files(big_deltas_repo)[0]
    offsets = _offsets(pack_path, SHA1)
    sizes = []

    def counting(data, size):
        sizes.append(size)
        return pack_module._inflate_capped(data, size)

    monkeypatch.setattr(pack_module, "_inflate_capped", counting)
    door.use("compiled")
    door.stub("walk_chain")  # read_object or the loop, nothing between
    pack = Pack(str(pack_path), fmt=SHA1, cache=DeltaBaseCache(1 << 20))
    objects = {off: pack.read_at(off) for off in offsets}
    pack.close()
    git_objects = batch_contents(big_deltas_repo)
    names = dict(zip(offsets, _names(pack_path, SHA1), strict=True))
    assert all(objects[off] == git_objects[names[off].hex()] for off in offsets)
    assert sizes and max(sizes) > 250_000 and min(sizes) > pack_module.ONE_CALL_INFLATE  # whole ones and deltas


def test_what_a_batch_found_in_a_pack_removed_since_is_read_through_a_rescan(tmp_path):
    repo = init_bare(tmp_path / "moving.git")
    import_history(repo, 6, seed=3)
    git("repack", "-a", "-d", "-q", cwd=repo)
    ids = [
        bytes.fromhex(x)
        for x in git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    ]
    store = ObjectStore(str(repo / "objects"), SHA1)
    locs = store.locate_many(ids)
    assert all(loc is not None and loc.source == "pack" for loc in locs)
    git("repack", "-a", "-d", "-f", "-q", "--depth=5", cwd=repo)  # a new pack; the one the batch found is deleted
    # The batch answers decline (the pack data was never opened, and is gone)...
    assert store.packed_headers(locs) == [None] * len(locs)
    assert all(store.packed_read(loc) is None for loc in locs)
    # ...and the store's own readers, given the same stale locations (as
    # cat-file's fallback gives them), answer through a rescan, as git does.
    expected = batch_contents(repo)
    for oid, loc in zip(ids, locs, strict=True):
        assert store.object_info(oid, False, loc)[:2] == (expected[oid.hex()][0], len(expected[oid.hex()][1]))
        assert store.read(oid, loc) == expected[oid.hex()]
    assert store.counters.rescans >= 1
    store.close()
