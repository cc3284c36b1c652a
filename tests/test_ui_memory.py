"""Memory of History's long walks: the pages of the packs they read are
given back to the kernel as they go (a walk over git.git otherwise keeps
~180 MB of the pack resident), the walks' session keeps a small delta base
cache, and the last-commit column's tree cache is bounded."""

from __future__ import annotations

import os

import pytest

from packscope.core.repo.session import open_session
from packscope.core.store.odb import ObjectStore
from packscope.inspector import last_commits
from packscope.inspector.core_access import BULK_DELTA_BASE_BUDGET
from packscope.inspector.screens.commit import CommitScreen
from tests.repos import build_packed, git_text, pack_files
from tests.ui_support import running, until


def mapped_rss_kb(path) -> int:
    """Resident kB of this process's mappings of ``path`` (/proc/self/smaps)."""
    total, inside = 0, False
    target = os.path.realpath(path)
    with open("/proc/self/smaps") as f:
        for line in f:
            first = line.split()[0]
            if "-" in first and not first.endswith(":"):  # a mapping's header line
                inside = line.rstrip("\n").endswith(target)
            elif inside and first == "Rss:":
                total += int(line.split()[1])
    return total


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    return build_packed(tmp_path_factory.mktemp("mem"), commits=400)


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="needs /proc/self/smaps")
def test_release_mapped_pages_gives_back_what_reads_made_resident(packed):
    session = open_session(str(packed))
    pack = next(p for p in pack_files(packed) if p.suffix == ".pack")
    ids = git_text("rev-list", "--objects", "--all", cwd=packed).split()
    for oid in ids:
        if len(oid) == 40:
            session.store.read(bytes.fromhex(oid))
    idx = pack.with_suffix(".idx")
    assert mapped_rss_kb(pack) > 0 and mapped_rss_kb(idx) > 0
    session.store.release_mapped_pages()
    assert mapped_rss_kb(pack) == 0 and mapped_rss_kb(idx) == 0
    # reads go on as before (the pages come back from the page cache)
    head = bytes.fromhex(git_text("rev-parse", "HEAD", cwd=packed).strip())
    assert session.store.read(head)[0] == "commit"
    session.close()


@pytest.mark.asyncio
async def test_the_last_commit_column_releases_pack_pages_as_it_walks(packed, monkeypatch):
    released = []
    original = ObjectStore.release_mapped_pages

    def counting(self):
        released.append(self)
        original(self)

    monkeypatch.setattr(ObjectStore, "release_mapped_pages", counting)
    monkeypatch.setattr(last_commits, "SHED_EVERY", 64)
    async with running(packed) as (app, pilot):
        assert app.core.bulk.store.delta_cache.budget == BULK_DELTA_BASE_BUDGET
        head = git_text("rev-parse", "HEAD", cwd=packed).strip()
        app.push_screen(CommitScreen(bytes.fromhex(head)))
        screen = await until(
            pilot,
            lambda: isinstance(app.screen, CommitScreen) and app.screen.last_done and app.screen,
            "the last-commit column to complete",
            timeout=30,
        )
        assert len(screen.last) == len(screen.view.entries)
        assert released and all(s is app.core.bulk.store for s in released)
