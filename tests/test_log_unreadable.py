"""`packscope log` where git cannot read everything: refs that name no
object under ``--all``, and a commit missing part way down the history.

git dies "bad object REF" (128) for the first ref it cannot use, and prints
the commits it reached before it dies at a missing one: packscope prints the
same bytes and exits with the same status.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli import packscope
from tests.repos import git, git_env, git_text


def run_both(repo: Path, *args):
    g = subprocess.run(["git", *args], cwd=repo, capture_output=True, env=git_env())
    p = packscope(*args, cwd=repo, check=False)
    return g, p


def linear(work: Path, commits: int) -> Path:
    git("init", "-q", "--initial-branch=main", work)
    for i in range(commits):
        (work / "f").write_text(f"{i}\n")
        git("add", "f", cwd=work)
        git("commit", "-qm", f"c{i}", cwd=work, env={"GIT_COMMITTER_DATE": f"{1600000000 + i * 60} +0000"})
    return work


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return linear(tmp_path_factory.mktemp("log-unreadable") / "base", 6)


@pytest.mark.parametrize(
    "content",
    [b"notahexsha\n", b"", b"1" * 40 + b"\n", b"ref: refs/heads/nowhere\n", None],
    ids=["not-hex", "empty", "absent-object", "dangling-symref", "good-with-trailing-text"],
)
def test_log_all_with_a_ref_git_cannot_read(base, tmp_path, content):
    repo = shutil.copytree(base, tmp_path / "r", symlinks=True)
    git("pack-refs", "--all", cwd=repo)
    if content is None:
        content = git("rev-parse", "HEAD~2", cwd=repo).strip() + b" trailing words\n"
    (repo / ".git" / "refs" / "heads" / "bad").write_bytes(content)
    (repo / ".git" / "refs" / "heads" / "zz-fine").write_bytes(git("rev-parse", "HEAD~1", cwd=repo))
    for args in (["log", "--all", "--format=%H %s"], ["log", "--all"]):
        g, p = run_both(repo, *args)
        assert (p.returncode, p.stdout) == (g.returncode, g.stdout)
        if g.returncode:
            assert g.stderr.decode().splitlines()[-1] == "fatal: bad object refs/heads/bad"
            assert p.stderr.decode().splitlines()[0] == "packscope: bad object refs/heads/bad"


@pytest.fixture(scope="module", params=["no-graph", "commit-graph"])
def missing_mid(request, tmp_path_factory) -> Path:
    repo = linear(tmp_path_factory.mktemp(f"missing-{request.param}") / "r", 8)
    if request.param == "commit-graph":
        git("commit-graph", "write", "--reachable", cwd=repo)
    gone = git_text("rev-parse", "HEAD~4", cwd=repo).strip()
    (repo / ".git" / "objects" / gone[:2] / gone[2:]).unlink()
    return repo


@pytest.mark.parametrize("order", [[], ["--topo-order"], ["--date-order"], ["--first-parent"]])
@pytest.mark.parametrize("fmt", [[], ["--format=%s"], ["--format=%H%n%b"]])
def test_log_streams_what_it_reached_before_a_missing_commit(missing_mid, order, fmt):
    g, p = run_both(missing_mid, "log", *order, *fmt)
    assert g.returncode == 128
    assert (p.returncode, p.stdout) == (g.returncode, g.stdout)
    assert b"Traceback" not in p.stderr


def test_the_missing_commit_cases_do_print_a_prefix(missing_mid):
    """Guard for the fixture: git prints commits before it dies (else the
    comparison above would pass with nothing printed)."""
    g, _ = run_both(missing_mid, "log", "--format=%s")
    assert g.stdout.startswith(b"c7\nc6\n")


@pytest.mark.parametrize("order", [[], ["--topo-order"]])
def test_path_limited_log_stops_where_git_stops(missing_mid, order):
    g, p = run_both(missing_mid, "log", *order, "--format=%s", "--", "f")
    assert g.returncode == 128
    assert (p.returncode, p.stdout) == (g.returncode, g.stdout)


@pytest.mark.parametrize("packed", [True, False], ids=["packed", "loose"])
def test_log_all_names_the_first_bad_ref_by_name_among_absent_and_broken(base, tmp_path, packed):
    """Refs naming absent objects are found in one batch lookup and broken
    ref files from the listing: git names the first of all of them in name
    order, whichever kind it is."""
    for first, second in (("a-absent", "b-broken"), ("b-absent", "a-broken")):
        repo = shutil.copytree(base, tmp_path / f"r-{first}", symlinks=True)
        heads = repo / ".git" / "refs" / "heads"
        (heads / first).write_bytes(b"2" * 40 + b"\n")
        (heads / "c-absent").write_bytes(b"3" * 40 + b"\n")
        if packed:
            git("pack-refs", "--all", cwd=repo)
        (heads / second).write_bytes(b"not an id\n")
        g, p = run_both(repo, "log", "--all", "--format=%H")
        assert g.returncode == p.returncode == 128
        want = f"refs/heads/{min(first, second)}"
        assert g.stderr.decode().splitlines()[-1] == f"fatal: bad object {want}"
        assert p.stderr.decode().splitlines()[0] == f"packscope: bad object {want}"
