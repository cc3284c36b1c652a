"""Ctrl-C through the compiled path: a KeyboardInterrupt (or SystemExit, or
MemoryError) raised inside a Python callback the compiled read calls must
reach the caller.  Only an ordinary exception (the inflater's zlib error)
means "doubt": the pure reference then reads the object again."""

from __future__ import annotations

from pathlib import Path

import pytest

from packscope.core.oid import SHA1
from packscope.core.store import pack as pack_module
from packscope.core.store.odb import ObjectStore
from tests import repos
from tests.delta_paths import NOT_BUILT, _native
from tests.repos import git

pytestmark = NOT_BUILT


@pytest.fixture(autouse=True)
def _compiled(door):
    """The store reads through the compiled path (whatever PACKSCOPE_PURE says)."""
    door.use("compiled")


@pytest.fixture(scope="module")
def big_blobs(tmp_path_factory) -> tuple[Path, dict[str, bytes]]:
    """A pack of blobs between 512 bytes and 64 KiB (the compiled read
    inflates those through the Python zlib call) and one over 64 KiB whose
    delta is also over 64 KiB (the capped Python inflater)."""
    repo = repos.init_bare(tmp_path_factory.mktemp("interrupts") / "r.git")
    blobs = {}
    for k in range(4):
        data = b"".join(b"line %d of blob %d, some words to make it longer\n" % (i, k) for i in range(60))
        blobs[git("hash-object", "-w", "--stdin", cwd=repo, input=data).strip().decode()] = data
    import random

    rnd = random.Random(5)
    base = bytes(rnd.randrange(256) for _ in range(200_000))
    for k in range(2):
        data = base + bytes(rnd.randrange(256) for _ in range(100_000)) * (k + 1)
        blobs[git("hash-object", "-w", "--stdin", cwd=repo, input=data).strip().decode()] = data
    # unreachable objects: packed by name, then the loose copies dropped
    git("pack-objects", "-q", repo / "objects" / "pack" / "pack", cwd=repo, input="\n".join(blobs) + "\n")
    git("prune-packed", cwd=repo)
    assert repos.pack_files(repo) and not list((repo / "objects").glob("??/*"))
    return repo, blobs


def _raising_once(real, exc: BaseException):
    calls = []

    def stand_in(*args):
        calls.append(args)
        if len(calls) == 1:
            raise exc
        return real(*args)

    return stand_in, calls


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(3), MemoryError()], ids=type)
@pytest.mark.parametrize("callback", ["_decompress", "_inflate_capped"])
def test_an_interrupt_inside_a_compiled_reads_callback_reaches_the_caller(big_blobs, monkeypatch, exc, callback):
    repo, blobs = big_blobs
    sizes = {oid: len(data) for oid, data in blobs.items()}
    # the callback the compiled read calls for objects of these sizes
    wanted = [oid for oid, n in sizes.items() if (512 < n <= 64 << 10) == (callback == "_decompress")]
    stand_in, calls = _raising_once(getattr(pack_module, callback), exc)
    monkeypatch.setattr(pack_module, callback, stand_in)
    store = ObjectStore(str(repo / "objects"), SHA1)
    try:
        with pytest.raises(type(exc)):
            for oid in wanted:
                store.read(bytes.fromhex(oid))
        assert len(calls) == 1  # raised in the first call; nothing was read again after it
    finally:
        store.close()


def test_an_ordinary_error_in_the_callback_is_doubt_and_the_reference_reads(big_blobs, monkeypatch):
    repo, blobs = big_blobs
    calls = {}
    for name in ("_decompress", "_inflate_capped"):
        stand_in, calls[name] = _raising_once(getattr(pack_module, name), ValueError("not this time"))
        monkeypatch.setattr(pack_module, name, stand_in)
    store = ObjectStore(str(repo / "objects"), SHA1)
    try:
        for oid, data in blobs.items():
            assert store.read(bytes.fromhex(oid)) == ("blob", data)
    finally:
        store.close()
    assert all(calls.values()), calls  # each raised once, and the reads went on


def test_apply_chain_passes_an_interrupt_from_its_inflater_on():
    import zlib

    # a delta from b"hello" to b"hello" + 600 "!": sizes 5 and 605, copy 5 bytes at 0, insert
    # 120 "!" five times (a delta over chain.h's SMALL_INFLATE: the reused z_stream takes smaller ones)
    delta_body = bytes([5, 0xDD, 0x04, 0x90, 5]) + (bytes([120]) + b"!" * 120) * 5
    deflated = zlib.compress(delta_body)
    pack = b"\0" * 16 + deflated + b"\0" * 20
    deltas = [(10, 16, len(delta_body))]
    end = 16 + len(deflated)

    def interrupted(*args):
        raise KeyboardInterrupt

    def broken(*args):
        raise zlib.error("bad stream")

    assert _native.apply_chain(pack, b"hello", deltas, end, 1 << 20) == [b"hello" + b"!" * 600]
    # (a delta under the one-call size goes through decompress)
    with pytest.raises(KeyboardInterrupt):
        _native.apply_chain(pack, b"hello", deltas, end, 1 << 20, interrupted)
    assert _native.apply_chain(pack, b"hello", deltas, end, 1 << 20, broken) is None
