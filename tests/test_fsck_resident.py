"""Every caller of the check gets its resident-set rules (core/fsck/resident.py):
mapped pack pages given back at each phase, a smaller delta-base cache for the
connectivity walk — with or without a progress callback of its own."""

from __future__ import annotations

from packscope.core.fsck.resident import WALK_DELTA_CACHE
from packscope.core.fsck.verify import Fsck
from packscope.core.repo.session import open_session
from packscope.core.store.odb import ObjectStore
from tests import repos


def test_a_check_without_progress_gives_pages_back_at_each_phase_and_shrinks_the_walk_cache(tmp_path, monkeypatch):
    repo = repos.build_packed(tmp_path, commits=20)
    releases: list[str] = []
    seen: list[str] = []
    real = ObjectStore.release_mapped_pages

    def spy(self):
        releases.append(seen[-1] if seen else "")
        return real(self)

    monkeypatch.setattr(ObjectStore, "release_mapped_pages", spy)
    session = open_session(str(repo))
    try:
        checker = Fsck(session.repo, session.store, session.refs, progress=lambda d, t, phase: seen.append(phase))
        list(checker.run())
        assert checker.exit_status == 0
        phases = list(dict.fromkeys(seen))
        assert "packs" in phases and "connectivity" in phases
        # a release at the start of every phase (reported before the caller hears of it)
        assert len(releases) >= len(phases)
        assert session.store.delta_cache.budget <= WALK_DELTA_CACHE
    finally:
        session.close()

    # the same without any progress callback (the store of a plain fsck run)
    releases.clear()
    session = open_session(str(repo))
    try:
        list(Fsck(session.repo, session.store, session.refs).run())
        assert len(releases) >= len(phases)
        assert session.store.delta_cache.budget <= WALK_DELTA_CACHE
    finally:
        session.close()
