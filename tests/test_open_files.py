"""The open-file LRU: many packs under a small descriptor limit."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from packscope.core.oid import SHA1
from packscope.core.store.cache import DeltaBaseCache, OpenFiles
from packscope.core.store.pack import Pack
from packscope.core.store.pack_index import PackIndex
from tests import repos

ROOT = Path(__file__).resolve().parent.parent


class Owner:
    """Stands in for a pack or an index."""

    def __init__(self, files: OpenFiles, name: str) -> None:
        self.files, self.name, self.open = files, name, False

    def use(self) -> None:
        if not self.open:
            self.open = True
            self.files.opened(self)
        else:
            self.files.touch(self)

    def close(self) -> None:
        self.open = False
        self.files.closed(self)


def test_least_recently_used_owner_is_closed_over_the_limit():
    files = OpenFiles(limit=2)
    a, b, c = (Owner(files, n) for n in "abc")
    a.use()
    b.use()
    a.use()  # b is now the least recently used
    c.use()
    assert (a.open, b.open, c.open) == (True, False, True)
    assert len(files) == 2 and files.evictions == 1
    b.use()  # reopens, evicting a
    assert (a.open, b.open, c.open) == (False, True, True)


def test_close_all_and_relieve_close_owners():
    files = OpenFiles(limit=10)
    owners = [Owner(files, str(i)) for i in range(6)]
    for o in owners:
        o.use()
    assert files.relieve()
    assert sum(o.open for o in owners) == 3 and not owners[0].open
    files.close_all()
    assert not any(o.open for o in owners) and len(files) == 0


def test_packs_and_indexes_reopen_transparently_under_a_tiny_limit(many_packs_repo):
    files = OpenFiles(limit=2)
    cache = DeltaBaseCache()
    packs = []
    for path in repos.pack_files(many_packs_repo):
        index = PackIndex(str(path)[:-5] + ".idx", SHA1, open_files=files)
        packs.append(Pack(path, index, open_files=files, cache=cache))
    expected = repos.batch_check_all(many_packs_repo)
    read = 0
    for _ in range(2):  # the second round reopens what the first closed
        for pack in packs:
            for oid, offset in pack.index.entries():
                typ, data = pack.read_at(offset)
                assert SHA1.hash_object(typ, data) == oid
                assert pack.index.find(oid) >= 0
                read += 1
            assert len(files) <= 2
    assert read == 2 * len(expected)
    assert files.evictions > 0


def test_reads_keep_the_least_recently_read_pack_first_to_close(many_packs_repo):
    # A read of the pack already most recent skips its touch (``newest``);
    # a read of any other pack must still move it last.
    files = OpenFiles(limit=2)
    packs = []
    for path in repos.pack_files(many_packs_repo)[:3]:
        index = PackIndex(str(path)[:-5] + ".idx", SHA1)  # (not in the LRU: only the packs are)
        packs.append(Pack(path, index, open_files=files, cache=DeltaBaseCache()))
    a, b, c = packs
    first = 12  # every pack's first entry starts after its 12-byte header
    a.read_at(first)
    b.read_at(first)
    assert files.newest is b
    b.read_at(first)
    a.read_at(first)  # a is the most recent again: b is the one to close
    assert files.newest is a
    c.read_at(first)
    assert a._map is not None and b._map is None and c._map is not None
    b.read_at(first)  # reopens b, closing a (read before c)
    assert a._map is None and files.newest is b
    for pack in packs:
        pack.close()
    assert files.newest is None and len(files) == 0


CHILD = textwrap.dedent(
    """
    import json, resource, sys
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from packscope.core.store.cache import DeltaBaseCache, OpenFiles
    from packscope.core.errors import BadPackError, BadPackIndexError
    from packscope.core.oid import SHA1
    from packscope.core.store.pack import Pack
    from packscope.core.store.pack_index import PackIndex

    repo, limit = Path(sys.argv[2]), int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    paths = sorted((repo / "objects" / "pack").glob("pack-*.pack"))

    def open_all(files):
        packs = []
        for path in paths:
            index = PackIndex(str(path)[:-5] + ".idx", SHA1, open_files=files)
            packs.append(Pack(path, index, open_files=files, cache=cache, resolve_ref=resolve))
        return packs

    def resolve(oid):
        for pack in packs:
            offset = pack.index.offset_of(oid)
            if offset is not None:
                return pack.read_at(offset)
        raise KeyError(oid.hex())

    cache = DeltaBaseCache()
    files = OpenFiles(limit=limit)
    packs = open_all(files)
    rows, most_open = [], 0
    for pack in packs:
        for oid, offset in pack.index.entries():
            typ, data = pack.read_at(offset)
            ok = SHA1.hash_object(typ, data) == oid
            rows.append([oid.hex(), typ, len(data), ok])
            most_open = max(most_open, len(files))

    # Without the LRU the same reads run out of descriptors.
    files.close_all()
    without = None
    try:
        bare = [Pack(p, PackIndex(str(p)[:-5] + ".idx", SHA1)) for p in paths]
        for pack in bare:
            pack.read_at(pack.index.offset_at(0))
    except (BadPackError, BadPackIndexError) as e:
        without = e.kind
    print(json.dumps({"rows": rows, "most_open": most_open, "evictions": files.evictions, "without": without}))
    """
)


def run_child(repo, limit):
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT), str(repo), str(limit)], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("limit", [32, 10_000])
def test_300_packs_read_completely_with_64_descriptors(three_hundred_packs_repo, limit):
    """limit 32: the LRU keeps under the descriptor limit.  limit 10000: the
    LRU is too generous, and running out of descriptors (EMFILE) makes it
    close half its files and retry."""
    repo = three_hundred_packs_repo
    assert len(repos.pack_files(repo)) == 300
    result = run_child(repo, limit)
    expected = repos.batch_check_all(repo)
    rows = result["rows"]
    assert all(ok for *_, ok in rows)
    assert {oid: (typ, size) for oid, typ, size, _ in rows} == {k: v[:2] for k, v in expected.items()}
    assert len(rows) == len(expected)
    assert result["most_open"] <= min(limit, 64)
    assert result["evictions"] > 0
    assert result["without"] in ("pack-unreadable", "idx-unreadable")
