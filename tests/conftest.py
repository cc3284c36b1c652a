"""Session-wide repositories, built once with git in a temp dir."""

from __future__ import annotations

import pytest

from tests import repos


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
