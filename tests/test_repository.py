"""Repository discovery and format checks, against git rev-parse."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from packscope.core.errors import ConfigError, NotARepositoryError, UnsupportedRepositoryError
from packscope.core.oid import SHA1, SHA256
from packscope.core.repo.repository import Repository, split_path_list, valid_head
from tests.repos import git, git_text


def git_view(cwd: Path, env: dict | None = None) -> dict:
    """What git says about the repository seen from ``cwd``."""

    def ask(*args):
        return git_text("rev-parse", *args, cwd=cwd, env=env, check=False).strip()

    top = ask("--show-toplevel")
    return {
        "git_dir": Path(ask("--absolute-git-dir")),
        "common_dir": Path(os.path.abspath(os.path.join(cwd, ask("--git-common-dir")))),
        "work_tree": Path(top) if top else None,
        "bare": ask("--is-bare-repository") == "true",
        "format": ask("--show-object-format"),
    }


def our_view(repo: Repository) -> dict:
    return {
        "git_dir": repo.git_dir,
        "common_dir": repo.common_dir,
        "work_tree": repo.work_tree,
        "bare": repo.bare,
        "format": repo.object_format.name,
    }


@pytest.fixture
def ceiling(tmp_path):
    """Keep discovery from wandering above the test's directory."""
    return {"GIT_CEILING_DIRECTORIES": str(tmp_path.parent)}


@pytest.fixture
def work(tmp_path):
    w = tmp_path / "work"
    git("init", "-q", "-b", "main", w)
    (w / "sub" / "deeper").mkdir(parents=True)
    (w / "f").write_text("x\n")
    git("add", "f", cwd=w)
    git("commit", "-q", "-m", "one", cwd=w)
    return w


# --- discovery -------------------------------------------------------------------


def test_discovers_from_a_subdirectory_of_a_work_tree(work, ceiling):
    repo = Repository.discover(work / "sub" / "deeper", env=ceiling)
    assert our_view(repo) == git_view(work / "sub" / "deeper")
    assert repo.work_tree == work and not repo.bare and not repo.is_linked_worktree
    assert repo.objects_dir == work / ".git" / "objects"
    assert repo.object_format is SHA1 and repo.format_version == 0


def test_discovers_through_a_gitfile_from_separate_git_dir(tmp_path, ceiling):
    w, store = tmp_path / "w", tmp_path / "store.git"
    git("init", "-q", "--separate-git-dir", store, w)
    (w / "d").mkdir()
    assert (w / ".git").is_file()
    repo = Repository.discover(w / "d", env=ceiling)
    assert repo.git_dir == store and repo.work_tree == w
    assert our_view(repo) == git_view(w / "d")


def test_relative_gitfile_path_is_relative_to_the_file(tmp_path, ceiling):
    w, store = tmp_path / "w", tmp_path / "store.git"
    git("init", "-q", "--separate-git-dir", store, w)
    (w / ".git").write_text("gitdir: ../store.git\n")
    assert Repository.discover(w, env=ceiling).git_dir == store


def test_discovers_a_bare_repository_from_inside_it(tmp_path, ceiling):
    bare = tmp_path / "b.git"
    git("init", "-q", "--bare", bare)
    for start in (bare, bare / "refs" / "heads"):
        repo = Repository.discover(start, env=ceiling)
        assert repo.bare and repo.work_tree is None and repo.git_dir == bare
        assert our_view(repo) == git_view(start)


def test_inside_a_dot_git_directory_there_is_no_work_tree_and_it_is_not_bare(work, ceiling):
    repo = Repository.discover(work / ".git" / "objects", env=ceiling)
    assert repo.git_dir == work / ".git" and repo.work_tree is None and repo.bare is False
    assert our_view(repo) == git_view(work / ".git" / "objects")


def test_linked_worktree_has_its_own_git_dir_and_shares_the_common_dir(work, tmp_path, ceiling):
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", "-b", "feature", wt, cwd=work)
    (wt / "inner").mkdir()
    repo = Repository.discover(wt / "inner", env=ceiling)
    assert our_view(repo) == git_view(wt / "inner")
    assert repo.git_dir == work / ".git" / "worktrees" / "wt"
    assert repo.common_dir == work / ".git" and repo.work_tree == wt
    assert repo.is_linked_worktree and repo.worktree_name == "wt"
    assert repo.objects_dir == work / ".git" / "objects"
    assert repo.head_path.read_text() == "ref: refs/heads/feature\n"


def test_worktrees_lists_linked_worktrees_with_their_state(work, tmp_path):
    git("worktree", "add", "-q", "-b", "a", tmp_path / "wa", cwd=work)
    git("worktree", "add", "-q", "-b", "b", tmp_path / "wb", cwd=work)
    git("worktree", "lock", tmp_path / "wb", cwd=work)
    (tmp_path / "wa" / ".git").unlink()  # its work tree is gone: prunable
    repo = Repository.open(work)
    found = {w.name: w for w in repo.worktrees()}
    assert sorted(found) == ["wa", "wb"]
    assert found["wb"].locked and not found["wa"].locked
    assert found["wa"].prunable and not found["wb"].prunable
    assert found["wb"].work_tree == tmp_path / "wb"
    assert found["wb"].head_path == work / ".git" / "worktrees" / "wb" / "HEAD"
    assert found["wb"].git_dir == Repository.discover(tmp_path / "wb").git_dir


def test_git_dir_from_the_environment_with_and_without_git_work_tree(work, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"GIT_DIR": str(work / ".git")}
    repo = Repository.discover(elsewhere, env=env)
    assert repo.git_dir == work / ".git"
    assert repo.work_tree == elsewhere  # git: the current directory is the work tree
    assert our_view(repo) == git_view(elsewhere, env)
    env2 = {"GIT_DIR": "../work/.git", "GIT_WORK_TREE": "../work"}  # relative to the start
    repo2 = Repository.discover(elsewhere, env=env2)
    assert repo2.git_dir == work / ".git" and repo2.work_tree == work
    assert our_view(repo2) == git_view(elsewhere, env2)


def test_git_dir_pointing_at_a_bare_repository_is_bare(tmp_path):
    bare = tmp_path / "b.git"
    git("init", "-q", "--bare", bare)
    repo = Repository.discover(tmp_path, env={"GIT_DIR": str(bare)})
    assert repo.bare and repo.work_tree is None
    assert our_view(repo) == git_view(tmp_path, {"GIT_DIR": str(bare)})


def test_git_dir_may_name_a_gitfile(tmp_path):
    w, store = tmp_path / "w", tmp_path / "store.git"
    git("init", "-q", "--separate-git-dir", store, w)
    assert Repository.discover(tmp_path, env={"GIT_DIR": str(w / ".git")}).git_dir == store


def test_git_dir_that_is_not_a_repository_is_refused(tmp_path):
    with pytest.raises(NotARepositoryError) as e:
        Repository.discover(tmp_path, env={"GIT_DIR": str(tmp_path)})
    assert str(tmp_path) in e.value.message and "GIT_DIR" in e.value.message


def test_object_directory_and_alternates_from_the_environment(work, tmp_path):
    env = {
        "GIT_OBJECT_DIRECTORY": str(tmp_path / "objs"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": f'{tmp_path}/alt1:rel:"{tmp_path}/with\\"quote:colon"',
    }
    (tmp_path / "objs").mkdir()
    repo = Repository.discover(work, env=env)
    assert repo.objects_dir == tmp_path / "objs"
    assert repo.env_alternates == (tmp_path / "alt1", work / "rel", tmp_path / 'with"quote:colon')


def test_split_path_list_handles_empty_entries_and_quotes():
    assert split_path_list("") == []
    assert split_path_list("a::b") == ["a", "b"]
    assert split_path_list('"x:y":z') == ["x:y", "z"]


def test_ceiling_directories_stop_the_walk(work, ceiling):
    env = {"GIT_CEILING_DIRECTORIES": str(work)}
    with pytest.raises(NotARepositoryError) as e:
        Repository.discover(work / "sub" / "deeper", env=env)
    assert "GIT_CEILING_DIRECTORIES" in e.value.message
    assert git("rev-parse", "--git-dir", cwd=work / "sub" / "deeper", env=env, check=False) == b""


def test_not_a_repository_names_the_searched_path(tmp_path, ceiling):
    (tmp_path / "plain" / "x").mkdir(parents=True)
    with pytest.raises(NotARepositoryError) as e:
        Repository.discover(tmp_path / "plain" / "x", env=ceiling)
    assert e.value.path == str(tmp_path / "plain" / "x")
    assert str(tmp_path / "plain" / "x") in e.value.message
    assert e.value.remedy


def test_a_dot_git_with_an_invalid_head_is_skipped(tmp_path, ceiling):
    outer = tmp_path / "outer"
    git("init", "-q", outer)
    inner = outer / "inner"
    git("init", "-q", inner)
    (inner / ".git" / "HEAD").write_text("garbage\n")
    repo = Repository.discover(inner, env=ceiling)
    assert repo.git_dir == outer / ".git"
    assert our_view(repo) == git_view(inner)


@pytest.mark.parametrize(
    "head, ok",
    [
        ("ref: refs/heads/main\n", True),
        ("ref:refs/heads/x", True),
        ("ref: \t refs/heads/x  \n", True),
        ("ref: HEADX\n", False),
        ("0123456789012345678901234567890123456789\n", True),
        ("012345678901234567890123456789012345678\n", False),
        ("0" * 64 + "\n", True),
        ("", False),
    ],
)
def test_head_is_validated_like_git(tmp_path, ceiling, head, ok):
    w = tmp_path / "w"
    git("init", "-q", w)
    (w / ".git" / "HEAD").write_text(head)
    assert valid_head(w / ".git" / "HEAD") is ok
    gits = git("rev-parse", "--git-dir", cwd=w, env=ceiling, check=False) != b""
    assert gits is ok


def test_invalid_gitfile_is_an_error_not_skipped(tmp_path, ceiling):
    w = tmp_path / "w"
    w.mkdir()
    (w / ".git").write_text("not a gitfile\n")
    with pytest.raises(NotARepositoryError, match="invalid gitfile"):
        Repository.discover(w, env=ceiling)
    (w / ".git").write_text("gitdir: /nonexistent/path\n")
    with pytest.raises(NotARepositoryError, match="nonexistent"):
        Repository.discover(w, env=ceiling)


# --- open ----------------------------------------------------------------------------


def test_open_accepts_a_work_tree_a_dot_git_a_gitfile_and_a_bare_repository(work, tmp_path):
    assert Repository.open(work).work_tree == work
    assert Repository.open(work / ".git").git_dir == work / ".git"
    bare = tmp_path / "b.git"
    git("init", "-q", "--bare", bare)
    assert Repository.open(bare).bare
    w, store = tmp_path / "w", tmp_path / "store.git"
    git("init", "-q", "--separate-git-dir", store, w)
    r = Repository.open(w / ".git")
    assert r.git_dir == store and r.work_tree == w


def test_open_does_not_walk_up(work):
    with pytest.raises(NotARepositoryError):
        Repository.open(work / "sub")


def test_open_ignores_git_dir_in_the_environment(work, tmp_path):
    bare = tmp_path / "b.git"
    git("init", "-q", "--bare", bare)
    assert Repository.open(work, env={"GIT_DIR": str(bare)}).git_dir == work / ".git"


# --- work tree settings ------------------------------------------------------------------


def test_core_bare_true_on_a_dot_git_means_no_work_tree(work, ceiling):
    git("config", "core.bare", "true", cwd=work)
    repo = Repository.discover(work / "sub", env=ceiling)
    assert repo.bare and repo.work_tree is None
    assert our_view(repo) == git_view(work / "sub")


def test_core_worktree_is_relative_to_the_git_dir(work, tmp_path, ceiling):
    other = tmp_path / "other"
    other.mkdir()
    git("config", "core.worktree", "../../other", cwd=work)
    repo = Repository.discover(work, env=ceiling)
    assert repo.work_tree == other
    assert our_view(repo) == git_view(work)


def test_worktree_config_is_read_when_the_extension_is_on(work, tmp_path):
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", "-b", "feature", wt, cwd=work)
    git("config", "extensions.worktreeConfig", "true", cwd=work)
    git("config", "--worktree", "x.y", "per-worktree", cwd=wt)
    repo = Repository.discover(wt)
    assert repo.config.get("x", "y") == "per-worktree"
    assert Repository.discover(work).config.get("x", "y") is None


# --- format and extensions -------------------------------------------------------------


def test_sha256_repository_is_detected(tmp_path, ceiling):
    r = tmp_path / "r"
    git("init", "-q", "--object-format=sha256", r)
    repo = Repository.discover(r, env=ceiling)
    assert repo.object_format is SHA256 and repo.format_version == 1
    assert repo.extension("objectFormat") == "sha256"
    assert our_view(repo) == git_view(r)


def _bare_with(tmp_path, *settings) -> Path:
    r = tmp_path / "r.git"
    git("init", "-q", "--bare", r)
    for key, value in settings:
        git("config", "-f", r / "config", key, value)  # -f: git refuses to work inside a refused repo
    return r


def _git_accepts(r: Path) -> bool:
    return git("rev-parse", "--git-dir", cwd=r, check=False) != b""


@pytest.mark.parametrize(
    "settings, refused",
    [
        (
            [("core.repositoryformatversion", "1"), ("extensions.frobnicate", "x"), ("extensions.zap", "1")],
            "frobnicate, zap",
        ),
        ([("core.repositoryformatversion", "2")], "version 2"),
        ([("extensions.objectFormat", "sha256")], "v1-only extension found: objectformat"),
        ([("core.repositoryformatversion", "1"), ("extensions.objectFormat", "sha512")], "sha512"),
        ([("core.repositoryformatversion", "1"), ("extensions.objectFormat", "SHA256")], "SHA256"),
    ],
)
def test_unsupported_formats_and_unknown_extensions_are_refused_by_name(tmp_path, settings, refused):
    r = _bare_with(tmp_path, *settings)
    with pytest.raises(UnsupportedRepositoryError) as e:
        Repository.open(r)
    assert refused in e.value.message
    assert e.value.path == str(r / "config")
    assert not _git_accepts(r)


@pytest.mark.parametrize(
    "settings",
    [
        [("extensions.frobnicate", "x")],  # version 0 ignores unknown extensions
        [
            ("core.repositoryformatversion", "1"),
            ("extensions.noop", "true"),
            ("extensions.preciousObjects", "true"),
            ("extensions.partialClone", "origin"),
            ("extensions.worktreeConfig", "true"),
        ],
        [("core.repositoryformatversion", "1"), ("extensions.noop-v1", "true")],
        [("extensions.preciousObjects", "true")],
        [("core.repositoryformatversion", "-1")],
    ],
)
def test_known_extensions_are_accepted(tmp_path, settings):
    r = _bare_with(tmp_path, *settings)
    Repository.open(r)
    assert _git_accepts(r)


def test_refstorage_files_and_reftable_are_accepted_and_others_refused(tmp_path):
    r = _bare_with(tmp_path, ("core.repositoryformatversion", "1"), ("extensions.refStorage", "files"))
    assert Repository.open(r).ref_storage == "files"
    git("config", "-f", r / "config", "extensions.refStorage", "reftable")
    assert Repository.open(r).ref_storage == "reftable"  # read by core.repo.reftable (tests/test_reftable.py)
    git("config", "-f", r / "config", "extensions.refStorage", "lmdb")
    with pytest.raises(UnsupportedRepositoryError, match="lmdb"):
        Repository.open(r)


def test_unparseable_format_version_is_a_config_error(tmp_path):
    r = _bare_with(tmp_path, ("core.repositoryformatversion", "abc"))
    with pytest.raises(ConfigError):
        Repository.open(r)


def test_promisor_remotes_come_from_partial_clone_and_promisor_settings(tmp_path):
    r = _bare_with(
        tmp_path,
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", "x"),
        ("remote.origin.promisor", "true"),
        ("remote.other.url", "y"),
        ("remote.other.promisor", "true"),
        ("remote.plain.url", "z"),
    )
    assert Repository.open(r).promisor_remotes() == ["origin", "other"]
    assert Repository.open(_bare_with(tmp_path / "x", ("remote.a.url", "u"))).promisor_remotes() == []


def test_a_session_closes_its_store_when_its_with_block_ends(packed_repo):
    from packscope.core.repo.session import open_session

    head = bytes.fromhex(git_text("rev-parse", "HEAD", cwd=packed_repo).strip())
    with open_session(str(packed_repo)) as session:
        assert session.store.read(head)[0] == "commit"
        packs = list(session.store.all_packs())
        assert any(h.index.is_open for h in packs)
    assert packs and not any(h.index.is_open for h in packs)
