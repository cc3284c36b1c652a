"""Ref decorations are git log's %d: the same refs (git's default
decoration filter: no refs/pull/…, no refs/notes/…), in git's order, with
HEAD -> branch, origin/HEAD, tags peeled, refs/stash and replace refs;
and the config that changes them (log.initialDecorationSet,
log.excludeDecoration, log.decorate)."""

from __future__ import annotations

import shutil

import pytest

from packscope.core.history.decorate import format_decorations, ref_decorations
from packscope.core.objects import parse_tag
from packscope.core.repo.session import open_session
from tests.repos import git, git_text


@pytest.fixture(scope="module")
def decorated(tmp_path_factory):
    """A root commit only a pull-request ref names, branches, remote refs
    with origin/HEAD, annotated, lightweight and nested tags, a stash ref,
    a notes ref and a replace ref."""
    work = tmp_path_factory.mktemp("decorate") / "work"
    git("init", "-q", "-b", "main", work)
    for i in range(6):
        (work / "f").write_text(f"{i}\n")
        git("add", "f", cwd=work)
        git("commit", "-q", "-m", f"c{i}", cwd=work)
    ids = git_text("rev-list", "--reverse", "HEAD", cwd=work).split()
    for name, target in (
        ("refs/pull/456/head", ids[0]),
        ("refs/remotes/origin/main", ids[5]),
        ("refs/remotes/origin/old", ids[3]),
        ("refs/heads/feature", ids[5]),
        ("refs/heads/zzz", ids[4]),
        ("refs/stash", ids[2]),
        ("refs/prefetch/remotes/origin/main", ids[2]),
    ):
        git("update-ref", name, target, cwd=work)
    git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main", cwd=work)
    git("tag", "light", ids[4], cwd=work)
    git("tag", "-a", "-m", "annotated", "v1.0", ids[4], cwd=work)
    git("tag", "-a", "-m", "of a tag", "v1.0-signed", "v1.0", cwd=work)
    git("tag", "-a", "-m", "later", "v2.0", ids[5], cwd=work)
    git("notes", "add", "-m", "a note", ids[1], cwd=work)
    git("replace", ids[1], ids[0], cwd=work)
    return work


def _ours(repo) -> dict[str, str]:
    with open_session(str(repo)) as s:
        fmt = s.store.fmt
        found = ref_decorations(
            s.refs,
            s.store.read,
            lambda data: parse_tag(data, fmt).object,
            s.repo.config,
            replace_refs=bool(s.replace_refs),
        )
    return {oid.hex(): format_decorations(d) for oid, d in found.items()}


def _gits(repo, env: dict | None = None) -> dict[str, str]:
    lines = git_text("log", "--all", "--format=%H%d", cwd=repo, env=env).splitlines()
    return {line[:40]: line[40:] for line in lines}


def _compare(repo, env: dict | None = None) -> None:
    want = _gits(repo, env)
    got = _ours(repo)
    assert {oid: got.get(oid, "") for oid in want} == want


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"log.initialDecorationSet": "all"},
        {"log.excludeDecoration": "refs/tags/v*"},
        {"log.excludeDecoration": "refs/remotes/origin"},
        {"log.decorate": "full"},
    ],
    ids=["default", "initialDecorationSet=all", "exclude-glob", "exclude-prefix", "decorate=full"],
)
def test_decorations_are_git_logs_percent_d(decorated, tmp_path, config):
    repo = tmp_path / "repo"
    shutil.copytree(decorated, repo, symlinks=True)
    for key, value in config.items():
        git("config", key, value, cwd=repo)
    _compare(repo)


def test_default_decorations_leave_out_pull_request_refs_and_join_head_and_branch(decorated):
    ids = git_text("--no-replace-objects", "rev-list", "--reverse", "HEAD", cwd=decorated).split()
    got = _ours(decorated)
    assert got.get(ids[0], "") == ""  # only refs/pull/456/head names the root commit: git shows nothing
    assert got[ids[5]] == " (HEAD -> main, tag: v2.0, origin/main, origin/HEAD, feature)"
    assert got[ids[2]] == " (refs/stash)"  # (refs/prefetch/… leaves it alone)
    assert got[ids[1]] == " (replaced)"


def test_detached_head_and_no_replace_refs(decorated, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(decorated, repo, symlinks=True)
    git("checkout", "-q", "--detach", "HEAD~1", cwd=repo)
    _compare(repo)
    monkeypatch.setenv("GIT_NO_REPLACE_OBJECTS", "1")
    _compare(repo, {"GIT_NO_REPLACE_OBJECTS": "1"})


@pytest.mark.asyncio
async def test_history_rows_show_git_logs_decorations(decorated):
    from tests.ui_support import list_text, open_history, running

    want = _gits(decorated)
    async with running(decorated, poll_seconds=60) as (app, pilot):
        screen = await open_history(app, pilot)
        rows = dict(zip((c.oid.hex() for c in screen.history.rows), list_text(screen.vlist), strict=True))
    assert rows
    for oid, row in rows.items():
        if want[oid] == " (replaced)":  # the UI says more: by what
            assert "(replaced by " in row, row
        elif want[oid]:
            assert f"{want[oid].strip()} " in row, (row, want[oid])
        else:
            assert "(" not in row, row
