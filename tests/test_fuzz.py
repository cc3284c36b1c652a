"""Fuzzing: thousands of byte-level mutations of real .idx, .pack and loose
files (and of index files, deltas and object bodies), read through core's
parsers in memory.  Whatever the bytes, only packscope's own errors
(PackscopeError) may escape, and each case must finish within a second.

The files are real ones git wrote; the mutations flip bytes, overwrite
32-bit fields with boundary values (counts, offsets, sizes), cut, insert
and delete.  Reading goes through the same code as on disk: the file
mapping is swapped for the mutated bytes (``map_readonly``), nothing is
written.  Hypothesis runs derandomized, so CI sees the same cases each run.
"""

from __future__ import annotations

import contextlib
import os
import struct
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import packscope.core.store.loose
import packscope.core.store.mapped_file
from packscope.core.errors import PackscopeError
from packscope.core.fsck.syntax import check_object, check_tree, check_tree_closely
from packscope.core.objects import commit_header_fast, parse_commit, parse_tag, tree_items
from packscope.core.oid import SHA1, parse_prefix
from packscope.core.repo.index_file import IndexFile, index_objects
from packscope.core.store.delta import delta_ops
from packscope.core.store.pack import Pack
from packscope.core.store.pack_index import PackIndex
from tests import repos
from tests.delta_paths import PATHS
from tests.repos import git, git_text

# Cases per test; PACKSCOPE_FUZZ_SCALE multiplies them (e.g. 10 for a long local run).
SCALE = float(os.environ.get("PACKSCOPE_FUZZ_SCALE", "1"))


def fuzz(examples: int):
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=1000,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


BOUNDARY = [0, 1, 2, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF]


def mutations():
    position = st.integers(min_value=0, max_value=1 << 20)
    return st.lists(
        st.one_of(
            st.tuples(st.just("flip"), position, st.integers(1, 255)),
            st.tuples(st.just("set32"), position, st.sampled_from(BOUNDARY) | st.integers(0, 0xFFFFFFFF)),
            st.tuples(st.just("truncate"), position, st.just(0)),
            st.tuples(st.just("insert"), position, st.binary(min_size=1, max_size=8)),
            st.tuples(st.just("delete"), position, st.integers(1, 64)),
        ),
        min_size=1,
        max_size=4,
    )


def mutate(data: bytes, muts, focus: int | None = None) -> bytes:
    """Apply mutations; positions wrap onto the data (onto its first
    ``focus`` bytes for half of them, where headers and tables live)."""
    out = bytearray(data)
    for k, (kind, pos, arg) in enumerate(muts):
        if not out:
            break
        span = focus if focus and k % 2 == 0 else len(out)
        pos %= min(span, len(out))
        if kind == "flip":
            out[pos] ^= arg
        elif kind == "set32":
            out[pos : pos + 4] = struct.pack(">I", arg)
        elif kind == "truncate":
            del out[pos:]
        elif kind == "insert":
            out[pos:pos] = arg
        else:
            del out[pos : pos + arg]
    return bytes(out)


class Mapped(bytes):
    """Bytes that stand in for a read-only mmap (which has close())."""

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """A small history (deltas of both kinds, a tag, trees of several
    entries) packed once with OFS_DELTA and once with REF_DELTA, and loose."""
    root = tmp_path_factory.mktemp("fuzz")
    repo = repos.init_bare(root / "fuzz.git")
    stream = []
    text = {f"f{i}.txt": "".join(f"line {j} of file {i}\n" for j in range(40)) for i in range(3)}
    for n in range(10):
        name = f"f{n % 3}.txt"
        text[name] = text[name].replace(f"line {n}", f"edited {n}")
        body = text[name].encode()
        stream.append(
            b"commit refs/heads/main\ncommitter C <c@e> %d +0000\ndata 2\nc\n"
            b"M 100644 inline %s\ndata %d\n%s\n" % (1_600_000_000 + n, name.encode(), len(body), body)
        )
    git("fast-import", "--quiet", cwd=repo, input=b"".join(stream))
    git("tag", "-a", "-m", "t", "v1", "main", cwd=repo)
    loose = {oid: path.read_bytes() for oid, path in repos.loose_files(repo).items()}
    packs = {}
    for kind, flag in (("ofs", "true"), ("ref", "false")):
        git("-c", f"repack.useDeltaBaseOffset={flag}", "repack", "-a", "-d", "-f", "-q", "--depth=10", cwd=repo)
        pack, idx = repos.the_pack(repo)
        packs[kind] = (pack.read_bytes(), idx.read_bytes())
    oids = sorted(
        bytes.fromhex(o)
        for o in git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    )
    bodies = repos.batch_contents(repo)
    return {"packs": packs, "loose": loose, "oids": oids, "bodies": bodies, "path": root / "pack-fuzz.pack"}


@pytest.fixture
def in_memory(monkeypatch):
    """files[path] = bytes: what map_readonly returns for ``path``."""
    files: dict[str, bytes] = {}

    def fake_map(path, open_files=None):
        data = files[str(path)]
        return (Mapped(data), len(data)) if data else (None, 0)

    monkeypatch.setattr(packscope.core.store.mapped_file, "map_readonly", fake_map)
    return files


def read_everything(pack: Pack, index: PackIndex, oids) -> None:
    """Every reader of a pack and its index, over every entry."""
    index.open()
    n = index.num_objects
    for i in range(min(n, 200)):
        index.name_at(i)
        index.crc_at(i)
        offset = index.offset_at(i)
        for op in (pack.read_at, pack.info_at, pack.delta_chain, pack.delta_base, pack.disk_size):
            with contextlib.suppress(PackscopeError):
                op(offset)
        with contextlib.suppress(PackscopeError):
            pack.crc_ok(i)
    for oid in oids[:20]:
        index.find(oid)
        index.find_prefix(parse_prefix(oid.hex()[:5], SHA1))
    for op in (index.verify_checksum, pack.verify_checksum):
        with contextlib.suppress(PackscopeError):
            op()


def only_our_errors(fn) -> None:
    """Anything but a PackscopeError escapes (and fails the test)."""
    with contextlib.suppress(PackscopeError):
        fn()


@pytest.mark.parametrize("kind", ["ofs", "ref"])  # 2 x 2000 pack mutations
@fuzz(2000)
@given(muts=mutations())
def test_mutated_pack_yields_only_packscope_errors(sample, in_memory, kind, muts):
    pack_bytes, idx_bytes = sample["packs"][kind]
    path = str(sample["path"])
    in_memory[path] = mutate(pack_bytes, muts, focus=64)
    in_memory[path[:-5] + ".idx"] = idx_bytes
    only_our_errors(lambda: read_everything(Pack(path, fmt=SHA1), PackIndex(path[:-5] + ".idx", SHA1), sample["oids"]))


@fuzz(3000)
@given(muts=mutations())
def test_mutated_index_yields_only_packscope_errors(sample, in_memory, muts):
    pack_bytes, idx_bytes = sample["packs"]["ofs"]
    path = str(sample["path"])
    in_memory[path] = pack_bytes
    in_memory[path[:-5] + ".idx"] = mutate(idx_bytes, muts, focus=8 + 1024 + 64)
    only_our_errors(lambda: read_everything(Pack(path, fmt=SHA1), PackIndex(path[:-5] + ".idx", SHA1), sample["oids"]))


@fuzz(3000)
@given(muts=mutations(), which=st.integers(0, 1 << 16), raw=st.booleans())
def test_mutated_loose_object_yields_only_packscope_errors(sample, monkeypatch, muts, which, raw):
    oids = sorted(sample["loose"])
    oid = oids[which % len(oids)]
    data = sample["loose"][oid]
    if raw:  # damage the inflated form, so header and size parsing see the bytes
        data = zlib.compress(mutate(zlib.decompress(data), muts, focus=32))
    else:
        data = mutate(data, muts, focus=16)
    monkeypatch.setattr(
        packscope.core.store.loose, "_read_file", lambda path, oid, limit=-1: data if limit < 0 else data[:limit]
    )
    only_our_errors(lambda: packscope.core.store.loose.read_loose("x", SHA1, bytes.fromhex(oid), verify=True))
    only_our_errors(lambda: packscope.core.store.loose.read_loose_header("x"))


@fuzz(1500)
@given(muts=mutations(), which=st.integers(0, 1 << 16))
def test_mutated_object_bodies_yield_only_typed_errors_and_syntax_checks_never_raise(sample, muts, which):
    items = sorted(sample["bodies"].items())
    _, (_, body) = items[which % len(items)]
    body = mutate(body, muts, focus=64)
    for t in ("commit", "tree", "tag", "blob"):
        check_object(t, body, SHA1)  # reports problems, never raises
    # the whole-tree fast path agrees with the entry-by-entry check
    assert check_tree(body, SHA1) == check_tree_closely(body, SHA1)
    only_our_errors(lambda: parse_commit(body, SHA1))
    only_our_errors(lambda: commit_header_fast(body, SHA1))
    only_our_errors(lambda: parse_tag(body, SHA1))
    only_our_errors(lambda: tree_items(body, SHA1))


def delta_outcome(apply_delta, base: bytes, delta: bytes):
    """The result, or the error as (class, kind, offset, message)."""
    try:
        return apply_delta(base, delta, max_size=1 << 20)
    except PackscopeError as e:
        return (type(e), e.kind, e.offset, e.message)


@pytest.mark.parametrize("apply_delta", PATHS)  # pure Python and compiled
@fuzz(1500)
@given(muts=mutations(), base=st.binary(max_size=64))
def test_mutated_deltas_yield_only_packscope_errors(apply_delta, muts, base):
    delta = bytes([len(base), 40, 0x90 | 0x01, 0, len(base) or 1]) + bytes([20]) + b"x" * 20
    delta = mutate(delta, muts)
    only_our_errors(lambda: apply_delta(base, delta, max_size=1 << 20))
    only_our_errors(lambda: delta_ops(delta))


@fuzz(1500)
@given(muts=mutations(), base=st.binary(max_size=64))
def test_mutated_deltas_give_the_same_bytes_or_error_on_both_paths(muts, base):
    delta = bytes([len(base), 40, 0x90 | 0x01, 0, len(base) or 1]) + bytes([20]) + b"x" * 20
    delta = mutate(delta, muts)
    answers = [delta_outcome(p.values[0], base, delta) for p in PATHS if p.values[0] is not None]
    assert all(a == answers[0] for a in answers)


@pytest.fixture(scope="module")
def index_files(tmp_path_factory):
    work = tmp_path_factory.mktemp("fuzz-index") / "work"
    git("init", "-q", "-b", "main", work)
    for i in range(8):
        (work / f"d{i % 3}").mkdir(exist_ok=True)
        (work / f"d{i % 3}" / f"file-{i}.txt").write_text(f"{i}\n")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "c", cwd=work)
    git("write-tree", cwd=work)
    out = {}
    for version in (2, 4):
        git("update-index", "--index-version", str(version), cwd=work)
        out[version] = (work / ".git" / "index").read_bytes()
    return out


@pytest.mark.parametrize("version", [2, 4])
@fuzz(1500)
@given(muts=mutations())
def test_mutated_index_file_yields_only_packscope_errors(index_files, version, muts):
    data = mutate(index_files[version], muts, focus=12 + 80)

    def read():
        index = IndexFile("index", SHA1, data)
        index.checksum_ok()
        list(index_objects(index))

    only_our_errors(read)
