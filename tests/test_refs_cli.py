"""`packscope for-each-ref` and `packscope reflog` print what git prints,
byte for byte, on repositories built here: branches (loose and packed),
annotated and lightweight tags, a remote with its symbolic HEAD, a stash,
a tag and a branch of one name, a history of commits, resets, checkouts,
an amend and a branch rename; and a reflog read from a reftable stack."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli import packscope
from tests.repos import git, git_dated, git_text


def _build(root: Path) -> Path:
    work = root / "refs-work"
    git("init", "-q", "--initial-branch=main", work)
    stamp = 1_700_000_000
    for i in range(4):
        (work / "f").write_text(f"{i}\n")
        git("add", "f", cwd=work)
        git_dated(f"{stamp + i * 100} +0200", "commit", "-qm", f"c{i}\n\nbody {i}", cwd=work)
    git("checkout", "-qb", "topic", "HEAD~2", cwd=work)
    (work / "g").write_text("t\n")
    git("add", "g", cwd=work)
    git_dated(f"{stamp + 1000} -0500", "commit", "-qm", "topic work ", cwd=work)
    git("checkout", "-q", "main", cwd=work)
    git("tag", "v1.0", "HEAD~1", cwd=work)
    git("tag", "-a", "-m", "release two\n\nnotes", "v2.0", cwd=work)
    git("tag", "v1.1", "HEAD~3", cwd=work)
    git("reset", "-q", "--hard", "HEAD~1", cwd=work)
    git_dated(f"{stamp + 2000} +0000", "commit", "-q", "--amend", "-m", "amended", cwd=work)
    git("branch", "-m", "topic", "topic2", cwd=work)
    git("branch", "side", "HEAD~1", cwd=work)
    git("update-ref", "-m", "fetched", "refs/remotes/origin/main", "HEAD~1", cwd=work)
    git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main", cwd=work)
    git("tag", "side", "HEAD", cwd=work)  # a tag named like a branch: refname:short says heads/side
    git("pack-refs", "--all", cwd=work)  # these now packed, those after loose
    git("branch", "late", "HEAD~2", cwd=work)
    # a subject over two lines with spaces at their ends, kept as written (no cleanup)
    tree = git_text("rev-parse", "HEAD^{tree}", cwd=work).strip()
    verbatim = git_text(
        "commit-tree",
        tree,
        "-p",
        "HEAD",
        input="two-line  \nsubject \n\nbody\n",
        cwd=work,
        env={"GIT_AUTHOR_DATE": f"{stamp + 3000} +0100", "GIT_COMMITTER_DATE": f"{stamp + 3000} +0100"},
    ).strip()
    git("update-ref", "refs/heads/verbatim", verbatim, cwd=work)
    # upstreams: through a fetch refspec, from the repository itself (remote "."), and one no refspec maps
    git("config", "remote.origin.url", "https://example.invalid/x.git", cwd=work)
    git("config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*", cwd=work)
    git("config", "branch.topic2.remote", "origin", cwd=work)
    git("config", "branch.topic2.merge", "refs/heads/main", cwd=work)
    git("config", "branch.side.remote", ".", cwd=work)
    git("config", "branch.side.merge", "refs/heads/main", cwd=work)
    git("config", "branch.late.remote", "origin", cwd=work)
    git("config", "branch.late.merge", "refs/tags/v1.0", cwd=work)
    (work / "f").write_text("dirty\n")
    git("stash", "-q", cwd=work)
    git("checkout", "-q", "topic2", cwd=work)
    git("checkout", "-q", "main", cwd=work)
    return work


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("refs-cli"))


def same_as_git(repo: Path, *args: str) -> None:
    want = git(*args, cwd=repo, check=False)
    got = packscope(*args, cwd=repo)
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout == want, f"packscope {' '.join(args)}"
    assert want, "the comparison needs output to compare"


FOR_EACH_REF_ARGS = [
    [],
    ["refs/heads"],
    ["refs/heads/"],
    ["refs/tags/v1*"],
    ["refs/*/side"],
    ["refs/**/main"],
    ["refs/remotes", "refs/stash"],
    ["--sort=-refname"],
    ["--sort=committerdate"],
    ["--sort=-committerdate"],
    ["--sort=objecttype", "--sort=-committerdate"],
    ["--format=%(refname:short)"],
    ["--format=%(objectname:short) %(objecttype) %(refname)"],
    ["--format=%(committerdate)|%(subject)|%(HEAD)%(refname)"],
    ["--format=%%%(refname)%09%(objectname)%0a"],
    ["--format=%(refname) [%(upstream)] [%(upstream:short)]"],
]


@pytest.mark.parametrize("args", FOR_EACH_REF_ARGS, ids=" ".join)
def test_for_each_ref_prints_what_git_prints(repo, args) -> None:
    same_as_git(repo, "for-each-ref", *args)


def test_for_each_ref_without_matches_prints_nothing_as_git(repo) -> None:
    got = packscope("for-each-ref", "refs/heads/ma", cwd=repo)  # a prefix, not a whole component
    assert got.stdout == git("for-each-ref", "refs/heads/ma", cwd=repo) == b""


@pytest.mark.parametrize("args", [["--format=%(bogus)"], ["--sort=nosuch"]])
def test_for_each_ref_refuses_unknown_fields_as_git(repo, args) -> None:
    want = git_text_result(repo, "for-each-ref", *args)
    got = packscope("for-each-ref", *args, cwd=repo, check=False)
    assert (got.returncode, got.stderr.decode().strip()) == want


def git_text_result(repo: Path, *args: str) -> tuple[int, str]:
    import subprocess

    from tests.repos import git_env

    p = subprocess.run(["git", *args], cwd=repo, capture_output=True, env=git_env())
    return p.returncode, p.stderr.decode().strip()


REFLOG_ARGS = [
    ["reflog"],
    ["reflog", "show"],
    ["reflog", "show", "HEAD"],
    ["reflog", "show", "main"],
    ["reflog", "show", "refs/heads/main"],
    ["reflog", "topic2"],
    ["reflog", "show", "stash"],
    ["reflog", "show", "origin/main"],
    ["reflog", "show", "-n", "3"],
    ["reflog", "show", "-n", "2", "topic2"],
]


@pytest.mark.parametrize("args", REFLOG_ARGS, ids=" ".join)
def test_reflog_prints_what_git_prints(repo, args) -> None:
    same_as_git(repo, *args)


def test_reflog_of_a_ref_without_one_prints_nothing_and_unknown_fails_as_git(repo) -> None:
    assert packscope("reflog", "show", "v1.0", cwd=repo).stdout == git("reflog", "show", "v1.0", cwd=repo) == b""
    got = packscope("reflog", "show", "nosuch", cwd=repo, check=False)
    assert (got.returncode, got.stdout) == (128, b"")
    assert git_text_result(repo, "reflog", "show", "nosuch")[0] == 128


def test_reflog_read_from_a_reftable_stack_equals_the_same_log_in_files(tmp_path, repo) -> None:
    from tests.reftable_writer import Rec, write_stack, write_table

    files = tmp_path / "files.git"
    git("clone", "-q", "--bare", repo, files)
    main = git_text("rev-parse", "main", cwd=files).strip()
    ids = git_text("rev-list", "main", cwd=files).split()[:3][::-1]
    zero = "0" * 40
    logs = []
    lines = []
    for n, (old, new) in enumerate(zip([zero, *ids[:-1]], ids, strict=True), 1):
        logs.append(("refs/heads/main", n, bytes.fromhex(old), bytes.fromhex(new)))
        # what the test writer stores: name A, email a, 1_700_000_000 + n, -0800, message "log"
        lines.append(f"{old} {new} A <a> {1_700_000_000 + n} -0800\tlog\n")
    log_file = files / "logs" / "refs" / "heads" / "main"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.write_text("".join(lines))
    want = git("reflog", "show", "main", cwd=files)
    assert want.count(b"\n") == 3

    table = shutil.copytree(files, tmp_path / "table.git")
    shutil.rmtree(table / "refs")
    shutil.rmtree(table / "logs")
    (table / "refs").mkdir()
    (table / "packed-refs").unlink(missing_ok=True)
    git("config", "-f", table / "config", "core.repositoryformatversion", "1")
    git("config", "-f", table / "config", "extensions.refStorage", "reftable")
    (table / "reftable").mkdir()
    name = "0x000000000001-0x000000000003-0001.ref"
    recs = [Rec("refs/heads/main", 1, bytes.fromhex(main)), Rec("HEAD", 1, target="refs/heads/main")]
    write_table(table / "reftable" / name, recs, min_update_index=1, max_update_index=3, logs=logs)
    write_stack(table / "reftable", [name])
    got = packscope("reflog", "show", "main", cwd=table)
    assert got.stdout == want
