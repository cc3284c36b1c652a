"""What-if models held against the layouts git really writes: the model's
replay of a proposed index (one multi-pack-index, one pack, the geometric
roll-up) is compared with a replay on a copy where git wrote that layout."""

from __future__ import annotations

import shutil

import pytest

from packscope.core.advise.whatif import _Model, search_real, whatif
from packscope.core.repo.session import open_session
from tests.repos import build_many_packs, git

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    root = tmp_path_factory.mktemp("whatif")
    repo = build_many_packs(root, packs=12)
    git("repack", "-d", "-q", cwd=repo)  # the loose objects into one more pack
    return repo


def replay_after(repo, tmp_path, ids, *git_args):
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    git(*git_args, cwd=copy)
    with open_session(str(copy)) as s:
        m = _Model(s)
        return m.replay_current(ids, m.current_order())


def test_the_real_replay_finds_what_the_index_finds(many):
    with open_session(str(many)) as s:
        m = _Model(s)
        for h in m.packs:
            for i in range(0, h.index.num_objects, 7):
                oid = h.index.name_at(i)
                _, _, rank, found = search_real(h.index, oid)
                lo = h.index.fanout[oid[0] - 1] if oid[0] else 0
                assert found and lo + rank == h.index.find(oid)


def test_one_midx_model_equals_the_midx_git_writes(many, tmp_path):
    with open_session(str(many)) as s:
        m = _Model(s)
        ids = m.sample()
        current = m.replay_current(ids, m.current_order())
        proposed = m.replay_layout(ids, [h.index for h in m.packs], [])
    real = replay_after(many, tmp_path, ids, "multi-pack-index", "write")
    assert proposed.probes_per_lookup == real.probes_per_lookup
    assert proposed.packs_searched == real.packs_searched == 1.0
    assert proposed.rescans == real.rescans == current.rescans
    assert current.packs_searched > 3  # 13 packs searched one by one before
    assert abs(proposed.pages_per_lookup - real.pages_per_lookup) < 0.5


def test_one_pack_model_equals_git_repack_a(many, tmp_path):
    with open_session(str(many)) as s:
        m = _Model(s)
        ids = m.sample()
        proposed = m.replay_layout(ids, [h.index for h in m.packs], [])
    real = replay_after(many, tmp_path, ids, "repack", "-a", "-d", "-q")
    assert proposed.probes_per_lookup == real.probes_per_lookup
    assert proposed.packs_searched == real.packs_searched == 1.0


def test_the_document_has_every_layout_current_beside_proposed(many):
    with open_session(str(many)) as s:
        rows = [w.to_dict() for w in whatif(s)]
    assert [r["layout"] for r in rows] == ["multi-pack-index", "one-pack", "geometric", "commit-graph"]
    for r in rows:
        assert (
            set(r["current"])
            == set(r["proposed"])
            == {
                "probes_per_lookup",
                "pages_per_lookup",
                "packs_searched",
                "rescans",
            }
        )
    geo = rows[2]
    assert geo["proposed"]["packs_searched"] < geo["current"]["packs_searched"]
