"""Session-wide repositories, built once with git in a temp dir."""

from __future__ import annotations

import pytest

from tests import repos
from tests.object_source import core_store


@pytest.fixture(scope="session")
def repo_root(tmp_path_factory):
    return tmp_path_factory.mktemp("repos")


@pytest.fixture(scope="session")
def packed_repo(repo_root):
    return repos.build_packed(repo_root)


@pytest.fixture(scope="session")
def sha256_repo(repo_root):
    return repos.build_packed(repo_root, commits=30, object_format="sha256")


@pytest.fixture(scope="session")
def idxv1_repo(repo_root):
    return repos.build_idx_v1(repo_root)


@pytest.fixture(scope="session")
def idx64_repo(repo_root):
    return repos.build_idx_64(repo_root)


@pytest.fixture(scope="session")
def many_packs_repo(repo_root):
    return repos.build_many_packs(repo_root)


# --- commit-graph, Bloom and multi-pack-index repositories ------------------------


@pytest.fixture(scope="session")
def graph_repo(repo_root):
    return repos.build_graph_repo(repo_root)


@pytest.fixture(scope="session")
def graph_sha256_repo(repo_root):
    return repos.build_graph_repo(repo_root, object_format="sha256", commits=20)


@pytest.fixture(scope="session")
def split_graph_repo(repo_root):
    return repos.build_split_graph_repo(repo_root)


@pytest.fixture(scope="session")
def mixed_generation_repo(repo_root):
    return repos.build_mixed_generation_chain(repo_root)


@pytest.fixture(scope="session")
def midx_repo(repo_root):
    return repos.build_midx_repo(repo_root)


@pytest.fixture(scope="session")
def repack_midx_repo(repo_root):
    return repos.build_repack_midx_repo(repo_root)


@pytest.fixture(scope="session")
def midx_chain_repo(repo_root):
    return repos.build_midx_chain_repo(repo_root)


@pytest.fixture(scope="session")
def ref_delta_repo(repo_root):
    return repos.build_ref_delta(repo_root)


@pytest.fixture(scope="session")
def thin_completed_repo(repo_root):
    return repos.build_thin_completed(repo_root)


@pytest.fixture(scope="session")
def deep_chain_repo(repo_root):
    return repos.build_deep_chain(repo_root)


@pytest.fixture(scope="session")
def big_copies_repo(repo_root):
    return repos.build_big_copies(repo_root)


@pytest.fixture(scope="session")
def rev_repo(repo_root):
    return repos.build_with_rev(repo_root)


@pytest.fixture(scope="session")
def three_hundred_packs_repo(repo_root):
    root = repo_root / "three-hundred-packs"
    root.mkdir(exist_ok=True)
    return repos.build_many_packs(root, packs=300)


@pytest.fixture(scope="session")
def loose_repo(repo_root):
    return repos.build_loose(repo_root)


@pytest.fixture(scope="session")
def loose_sha256_repo(repo_root):
    return repos.build_loose(repo_root, "sha256", blobs=200)


@pytest.fixture(scope="session", params=["sha1", "sha256"])
def refs_repo(request, repo_root):
    """build_refs_repo in both object formats (a work tree; its linked
    worktree is repos.refs_worktree(path))."""
    return repos.build_refs_repo(repo_root, request.param)


# --- histories for walks, tree diffs and log formats ------------------------------------


@pytest.fixture(scope="session")
def scenario_repo(repo_root):
    return repos.build_scenario_repo(repo_root)


@pytest.fixture(scope="session")
def random_history_repo(repo_root):
    return repos.build_random_history_repo(repo_root)


@pytest.fixture(scope="module")
def scenario(scenario_repo):
    """(scenario_repo, an ObjectStore open on it)."""
    src = core_store(scenario_repo)
    yield scenario_repo, src
    src.close()


@pytest.fixture(scope="session")
def odd_commits_repo(repo_root):
    return repos.build_odd_commits_repo(repo_root)


# --- the UI's repositories ------------------------------------------------------------


@pytest.fixture(scope="session")
def ui_repo(repo_root):
    return repos.build_ui_repo(repo_root)


@pytest.fixture
def ui_repo_copy(ui_repo, tmp_path):
    """A private copy, for tests that change the repository under the UI."""
    import shutil

    dest = tmp_path / "ui-copy.git"
    shutil.copytree(ui_repo, dest)
    return dest


# --- fsck -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def fsck_base(repo_root):
    return repos.build_fsck_base(repo_root)


@pytest.fixture(scope="session")
def fsck_base_sha256(repo_root):
    return repos.build_fsck_base(repo_root, "sha256")


@pytest.fixture(scope="session")
def fsck_worktree(repo_root):
    return repos.build_fsck_worktree(repo_root)


@pytest.fixture(scope="session")
def run_fsck():
    """run_fsck(repo, **options) -> (exit status, [Finding]) through core's API."""
    from packscope.core.fsck.verify import Fsck
    from packscope.core.repo.session import open_session

    def run(repo, **options):
        with open_session(str(repo)) as session:
            checker = Fsck(session.repo, session.store, session.refs, **options)
            findings = list(checker.run())
        return checker.exit_status, findings

    return run
