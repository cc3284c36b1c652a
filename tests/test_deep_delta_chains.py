"""Delta chains deeper than any writer makes by default: git reads them (its
reader is iterative, with no depth limit), and so does packscope, on both
paths, with the same answers as git's ``cat-file``."""

from __future__ import annotations

import hashlib
import struct
import zlib
from pathlib import Path

import pytest

from tests import repos
from tests.cli import packscope_in
from tests.repos import git

DEPTH = 10_500  # deeper than the old 10,000-delta limit


def _entry_header(type_num: int, size: int) -> bytes:
    out = bytearray()
    byte = (type_num << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _ofs(distance: int) -> bytes:
    """An OFS_DELTA's base distance: big-endian 7-bit groups, each group but
    the last one less one (gitformat-pack)."""
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.insert(0, 0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(out)


def _append_one(src_size: int, byte: bytes) -> bytes:
    """A delta from ``src_size`` bytes to those bytes and ``byte``: copy all
    of the source (offset 0, so no offset bytes), insert one byte."""
    sizes = bytearray()
    flags = 0x80
    for k in range(3):
        part = (src_size >> (8 * k)) & 0xFF
        if part:
            flags |= 0x10 << k
            sizes.append(part)
    return _varint(src_size) + _varint(src_size + 1) + bytes([flags]) + bytes(sizes) + b"\x01" + byte


def write_chain_pack(path: Path, depth: int) -> list[bytes]:
    """A pack of one blob and ``depth`` OFS_DELTAs, each the one below with
    one more byte; the contents, bottom first."""
    contents = [b"base\n"]
    body = bytearray()
    offsets = []
    at = 12
    data = contents[0]
    entry = _entry_header(3, len(data)) + zlib.compress(data)
    offsets.append(at)
    body += entry
    at += len(entry)
    for k in range(depth):
        byte = bytes([0x61 + k % 26])
        delta = _append_one(len(data), byte)
        data = data + byte
        contents.append(data)
        entry = _entry_header(6, len(delta)) + _ofs(at - offsets[-1]) + zlib.compress(delta)
        offsets.append(at)
        body += entry
        at += len(entry)
    pack = b"PACK" + struct.pack(">II", 2, depth + 1) + bytes(body)
    path.write_bytes(pack + hashlib.sha1(pack).digest())
    return contents


@pytest.fixture(scope="module")
def deep_repo(tmp_path_factory) -> tuple[Path, list[bytes]]:
    repo = repos.init_bare(tmp_path_factory.mktemp("deep") / "deep.git")
    pack = repo / "objects" / "pack" / "tmp-chain.pack"
    contents = write_chain_pack(pack, DEPTH)
    name = git("index-pack", pack.name, cwd=pack.parent).decode().split()[-1]
    pack.rename(pack.with_name(f"pack-{name}.pack"))
    pack.with_suffix(".idx").rename(pack.with_name(f"pack-{name}.idx"))
    return repo, contents


@pytest.mark.both_paths
@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_objects_deep_in_a_long_chain_read_as_git_reads_them(deep_repo, pure):
    repo, contents = deep_repo
    env = {"PACKSCOPE_PURE": "1" if pure else "0"}
    want = git("cat-file", "--batch-all-objects", "--batch-check", cwd=repo)
    assert want.count(b"\n") == DEPTH + 1 and b"missing" not in want
    got = packscope_in(repo, "cat-file", "--batch-all-objects", "--batch-check", env=env)
    assert (got.returncode, got.stdout) == (0, want), got.stderr.decode(errors="replace")[-2000:]
    # the top of the chain and a few on the way, whole
    picks = [hashlib.sha1(b"blob %d\0%s" % (len(c), c)).hexdigest() for c in contents[:: DEPTH // 6]]
    picks.append(hashlib.sha1(b"blob %d\0%s" % (len(contents[-1]), contents[-1])).hexdigest())
    stdin = "\n".join(picks) + "\n"
    want = git("cat-file", "--batch", cwd=repo, input=stdin)
    got = packscope_in(repo, "cat-file", "--batch", input=stdin, env=env)
    assert (got.returncode, got.stdout) == (0, want), got.stderr.decode(errors="replace")[-2000:]
    # the top alone, first thing in a fresh process: the whole chain walked
    top = picks[-1]
    for args in (("-p", top), ("-t", top), ("-s", top)):
        got = packscope_in(repo, "cat-file", *args, env=env)
        assert (got.returncode, got.stdout) == (0, git("cat-file", *args, cwd=repo)), args
    sizes = "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)"
    want = git("cat-file", f"--batch-check={sizes}", cwd=repo, input=stdin)
    got = packscope_in(repo, "cat-file", f"--batch-check={sizes}", input=stdin, env=env)
    assert (got.returncode, got.stdout) == (0, want)
