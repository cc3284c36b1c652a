"""Shallow clones, replace refs and grafts: packscope reads history as git
does (git 2.39 as the oracle) — `log` in every order and path-limited,
`last-modified`, revisions, `cat-file`, `fsck`'s exit status — on
repositories built here with `git clone --depth`, `git replace` and an
`info/grafts` file."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.cli import packscope_in
from tests.repos import git, git_dated, git_env, git_text

LOG_ARGS = [
    [],
    ["--topo-order"],
    ["--date-order"],
    ["--first-parent"],
    ["--all"],
    ["--all", "--topo-order", "--format=%H %P"],
    ["--format=%H %P %s", "--date-order", "--all"],
    ["--format=%h %s", "--", "dir"],
    ["--format=%h %s", "--first-parent", "--", "dir/a.txt"],
    ["--format=%h %s", "--topo-order", "--all", "--", "top.txt"],
]


def oracle(repo, *args, env: dict | None = None, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *map(str, args)], cwd=repo, capture_output=True, env=git_env(env), input=input)


def same_as_git(repo, *args, env: dict | None = None, input: bytes | None = None) -> None:
    want = oracle(repo, *args, env=env, input=input)
    got = packscope_in(repo, *args, env=env, input=input)
    what = f"{' '.join(map(str, args))} {env or ''}"
    assert want.returncode == 0, f"git {what}: {want.stderr.decode()}"
    assert got.returncode == 0, f"packscope {what}: {got.stderr.decode()}"
    assert got.stdout == want.stdout, f"packscope {what}"


def commit(repo, when: int, msg: str, files: dict[str, str]) -> str:
    for path, text in files.items():
        p = repo / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        git("add", path, cwd=repo)
    return git_dated(f"{when} +0000", "commit", "-q", "-m", msg, cwd=repo)


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory):
    """main: c1 … c8 with a side branch merged at c6 (dir/ changes on both
    sides), and a branch `other` forking at c3."""
    repo = tmp_path_factory.mktemp("rewrites") / "base"
    git("init", "-q", "--initial-branch=main", repo)
    t = 1_600_000_000
    commit(repo, t, "c1", {"top.txt": "1\n", "dir/a.txt": "a1\n"})
    commit(repo, t + 100, "c2", {"dir/b.txt": "b1\n"})
    commit(repo, t + 200, "c3", {"top.txt": "3\n"})
    git("branch", "other", cwd=repo)
    git("branch", "side", cwd=repo)
    commit(repo, t + 300, "c4", {"dir/a.txt": "a4\n"})
    commit(repo, t + 400, "c5", {"other.txt": "5\n"})
    git("checkout", "-q", "side", cwd=repo)
    commit(repo, t + 350, "s1", {"dir/b.txt": "b-side\n"})
    commit(repo, t + 450, "s2", {"side.txt": "s\n"})
    git("checkout", "-q", "main", cwd=repo)
    git_dated(f"{t + 500} +0000", "merge", "-q", "--no-ff", "-m", "c6 merge", "side", cwd=repo)
    commit(repo, t + 600, "c7", {"dir/a.txt": "a7\n"})
    commit(repo, t + 700, "c8", {"top.txt": "8\n"})
    git("checkout", "-q", "other", cwd=repo)
    commit(repo, t + 250, "o1", {"top.txt": "o\n"})
    git("checkout", "-q", "main", cwd=repo)
    git("tag", "-a", "-m", "v1", "v1", "HEAD~1", cwd=repo)
    return repo


def entries_agree_with_git(repo, rev: str = "HEAD", directory: str = "") -> None:
    """`last-modified` against `git log -1 -- ENTRY` for every entry."""
    got = packscope_in(repo, "last-modified", rev, directory)
    assert got.returncode == 0, got.stderr.decode()
    ours = dict(line.split("\t")[::-1] for line in got.stdout.decode().splitlines())
    listing = git_text("ls-tree", "--name-only", f"{rev}:{directory}" if directory else rev, cwd=repo).split()
    for name in listing:
        path = f"{directory}/{name}" if directory else name
        want = git_text("log", "-1", "--format=%H", rev, "--", path, cwd=repo).strip()
        assert ours.get(path) == want, path


# --- shallow clones ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shallow_repos(base_repo, tmp_path_factory):
    root = tmp_path_factory.mktemp("shallow")
    out = {}
    for name, args in (
        ("depth2", ["--depth", "2"]),  # the boundary is the merge's first parent … and c7
        ("depth3", ["--depth", "3"]),  # cuts both sides of the merge
        ("all-branches", ["--depth", "2", "--no-single-branch"]),
    ):
        dest = root / name
        git("clone", "-q", *args, f"file://{base_repo}", dest)
        out[name] = dest
    bare = root / "bare-depth4.git"
    git("clone", "-q", "--bare", "--depth", "4", f"file://{base_repo}", bare)
    out["bare"] = bare
    return out


@pytest.mark.parametrize("name", ["depth2", "depth3", "all-branches", "bare"])
def test_shallow_clone_logs_end_at_the_boundary_as_gits(shallow_repos, name):
    repo = shallow_repos[name]
    assert (repo / ("shallow" if name == "bare" else ".git/shallow")).is_file()
    for args in LOG_ARGS:
        same_as_git(repo, "log", *args)


@pytest.mark.parametrize("name", ["depth2", "depth3"])
def test_shallow_clone_last_modified_and_revisions_as_gits(shallow_repos, name):
    repo = shallow_repos[name]
    entries_agree_with_git(repo)
    entries_agree_with_git(repo, "HEAD", "dir")
    # a boundary commit has no parents for revisions either
    boundary = (repo / ".git" / "shallow").read_text().split()[0]
    assert oracle(repo, "rev-parse", "--verify", "-q", f"{boundary}^").returncode != 0
    assert packscope_in(repo, "cat-file", "-t", f"{boundary}^").returncode != 0
    same_as_git(repo, "cat-file", "-p", f"{boundary}^{{tree}}")


@pytest.mark.parametrize("name", ["depth2", "depth3", "bare"])
def test_fsck_of_a_shallow_clone_exits_zero_and_calls_nothing_missing(shallow_repos, name):
    repo = shallow_repos[name]
    want = oracle(repo, "fsck")
    got = packscope_in(repo, "fsck", "--no-progress")
    assert want.returncode == 0
    assert got.returncode == want.returncode, got.stdout.decode() + got.stderr.decode()
    ours = sorted(line for line in got.stdout.decode().splitlines() if line.startswith("dangling "))
    theirs = sorted(line for line in want.stdout.decode().splitlines() if line.startswith("dangling "))
    assert ours == theirs
    assert b"missing" not in got.stdout + got.stderr


def test_a_shallow_clone_whose_cut_objects_exist_still_ends_there(base_repo, tmp_path):
    """A shallow file over a full repository: the parents are present, git
    still stops at the listed commits (and ignores the commit-graph)."""
    repo = tmp_path / "full-but-shallow"
    git("clone", "-q", "--no-local", base_repo, repo)
    git("commit-graph", "write", "--reachable", cwd=repo)
    cut = git_text("rev-parse", "HEAD~2", "origin/side", cwd=repo).split()
    (repo / ".git" / "shallow").write_text("".join(c + "\n" for c in cut))
    for args in LOG_ARGS:
        same_as_git(repo, "log", *args)
    entries_agree_with_git(repo)
    assert packscope_in(repo, "fsck", "--no-progress").returncode == oracle(repo, "fsck").returncode == 0


# --- replace refs ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def replaced_repo(base_repo, tmp_path_factory):
    """c8 replaced by o1 (another commit), a blob replaced by another, and
    c4 grafted onto c1 with `git replace --graft`."""
    repo = tmp_path_factory.mktemp("replace") / "r"
    git("clone", "-q", "--no-local", base_repo, repo)
    git("branch", "-q", "other", "origin/other", cwd=repo)

    def rev(r: str) -> str:  # as stored: the replacements below must not change the answers
        return git_text("rev-parse", r, cwd=repo, env={"GIT_NO_REPLACE_OBJECTS": "1"}).strip()

    git("tag", "c7", rev("HEAD~1"), cwd=repo)
    git("replace", rev("HEAD"), rev("other"), cwd=repo)
    git("replace", rev("HEAD~2:dir/a.txt"), rev("HEAD~2:dir/b.txt"), cwd=repo)
    git("replace", "--graft", rev("HEAD~4"), rev("HEAD~6"), cwd=repo)
    git("commit-graph", "write", "--reachable", cwd=repo)  # written before … and not to be used
    assert len(git_text("replace", "-l", cwd=repo).split()) == 3
    return repo


NO_REPLACE = [None, {"GIT_NO_REPLACE_OBJECTS": "1"}]


@pytest.mark.parametrize("env", NO_REPLACE, ids=["replace", "no-replace"])
def test_logs_read_replacements_unless_turned_off(replaced_repo, env):
    for args in LOG_ARGS:
        same_as_git(replaced_repo, "log", *args, env=env)
    same_as_git(replaced_repo, "log", "--format=%H %T %P %an %s", "HEAD~3", "main~1..other", env=env)


@pytest.mark.parametrize("env", NO_REPLACE, ids=["replace", "no-replace"])
def test_cat_file_reads_the_replacement_unless_turned_off(replaced_repo, env):
    # (c7 is not replaced: the names below mean something in both modes)
    names = ["HEAD", "c7~1:dir/a.txt", "c7~3", "c7", "main^{tree}", "v1^{}", "c7~3^", "c7~3:dir", "HEAD^"]
    stored = {"GIT_NO_REPLACE_OBJECTS": "1"}
    hexes = git_text("rev-parse", "HEAD", "HEAD~2:dir/a.txt", "HEAD~4", cwd=replaced_repo, env=stored).split()
    for text in names + hexes:
        for mode in ("-t", "-s", "-p"):
            same_as_git(replaced_repo, "cat-file", mode, text, env=env)
    batch = ("\n".join(names + hexes) + "\n").encode()
    same_as_git(replaced_repo, "cat-file", "--batch", input=batch, env=env)
    same_as_git(replaced_repo, "cat-file", "--batch-check", input=batch, env=env)
    # git turns replace refs off for --batch-all-objects
    same_as_git(replaced_repo, "cat-file", "--batch-all-objects", "--batch-check", env=env)


def test_last_modified_follows_replacements(replaced_repo):
    entries_agree_with_git(replaced_repo)
    entries_agree_with_git(replaced_repo, "HEAD~1", "dir")


def test_core_use_replace_refs_false_and_another_ref_base(replaced_repo, tmp_path):
    repo = tmp_path / "copy"
    shutil.copytree(replaced_repo, repo, symlinks=True)
    git("config", "core.useReplaceRefs", "false", cwd=repo)
    for args in LOG_ARGS[:5]:
        same_as_git(repo, "log", *args)
    same_as_git(repo, "cat-file", "-p", "HEAD")
    git("config", "--unset", "core.useReplaceRefs", cwd=repo)
    # GIT_REPLACE_REF_BASE: refs elsewhere are read, refs/replace/ ones are not
    for line in git_text("for-each-ref", "--format=%(objectname) %(refname)", "refs/replace/", cwd=repo).splitlines():
        oid, name = line.split()
        git("update-ref", "refs/alt/" + name.rsplit("/", 1)[1], oid, cwd=repo)
    git(
        "update-ref",
        "-d",
        "refs/replace/" + git_text("rev-parse", "HEAD", cwd=repo, env={"GIT_NO_REPLACE_OBJECTS": "1"}).strip(),
        cwd=repo,
    )
    for env in ({"GIT_REPLACE_REF_BASE": "refs/alt/"}, None):
        for args in LOG_ARGS[:5]:
            same_as_git(repo, "log", *args, env=env)
        same_as_git(repo, "cat-file", "-p", "HEAD", env=env)


def test_a_replace_chain_is_followed_as_git_follows_it(base_repo, tmp_path):
    repo = tmp_path / "chain"
    git("clone", "-q", "--no-local", base_repo, repo)
    ids = git_text("rev-parse", "HEAD", "HEAD~1", "HEAD~2", "HEAD~3", cwd=repo).split()
    git("update-ref", f"refs/replace/{ids[0]}", ids[1], cwd=repo)
    git("update-ref", f"refs/replace/{ids[1]}", ids[2], cwd=repo)
    same_as_git(repo, "log", "--format=%H %P %s")
    same_as_git(repo, "cat-file", "-p", ids[0])


# --- grafts ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def grafted_repo(base_repo, tmp_path_factory):
    """c7 grafted onto c3 alone (the merge disappears from its history), s2
    made a root, and the merge c6 given a third parent (o1)."""
    repo = tmp_path_factory.mktemp("grafts") / "g"
    git("clone", "-q", "--no-local", base_repo, repo)
    git("branch", "-q", "other", "origin/other", cwd=repo)
    git("config", "advice.graftFileDeprecated", "false", cwd=repo)
    git("commit-graph", "write", "--reachable", cwd=repo)  # to be ignored, as git does
    rev = lambda r: git_text("rev-parse", r, cwd=repo).strip()  # noqa: E731
    for n in (1, 2, 3):
        git("tag", f"c{8 - n}", rev(f"HEAD~{n}"), cwd=repo)  # names that grafts do not move
    lines = [
        "# grafts written by hand",
        f"{rev('HEAD~1')} {rev('HEAD~5')}",
        f"{rev('origin/side')}",
        f"{rev('HEAD~2')} {rev('HEAD~3')} {rev('origin/side')} {rev('other')}",
        "",
        "not a graft line",
    ]
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "grafts").write_text("\n".join(lines) + "\n")
    return repo


def test_logs_follow_grafts_as_gits(grafted_repo):
    for args in LOG_ARGS:
        same_as_git(grafted_repo, "log", *args)
    # grafts hold with replace refs turned off too (git 2.39)
    same_as_git(grafted_repo, "log", "--all", "--format=%H %P", env={"GIT_NO_REPLACE_OBJECTS": "1"})


def test_revisions_last_modified_and_fsck_follow_grafts(grafted_repo, tmp_path):
    for text in ("c7^", "c6^3", "c6^2", "c6~2", "origin/side^{tree}", "HEAD~2"):
        same_as_git(grafted_repo, "cat-file", "-p", text)
    entries_agree_with_git(grafted_repo)
    entries_agree_with_git(grafted_repo, "HEAD", "dir")
    # fsck without the commit-graph: git 2.39 checks a graph's parents
    # against the grafted ones and fails (bit 16) — not a grafts question.
    repo = tmp_path / "no-graph"
    shutil.copytree(grafted_repo, repo, symlinks=True)
    (repo / ".git" / "objects" / "info" / "commit-graph").unlink()
    want, got = oracle(repo, "fsck"), packscope_in(repo, "fsck", "--no-progress")
    assert got.returncode == want.returncode == 0, got.stdout.decode()
    ours = sorted(line for line in got.stdout.decode().splitlines() if line.startswith("dangling "))
    assert ours == sorted(line for line in want.stdout.decode().splitlines() if line.startswith("dangling "))


def test_a_graft_file_named_by_the_environment(grafted_repo, tmp_path):
    grafts = tmp_path / "elsewhere"
    shutil.copy(grafted_repo / ".git" / "info" / "grafts", grafts)
    repo = tmp_path / "copy"
    shutil.copytree(grafted_repo, repo, symlinks=True)
    (repo / ".git" / "info" / "grafts").unlink()
    env = {"GIT_GRAFT_FILE": str(grafts)}
    same_as_git(repo, "log", "--all", "--format=%H %P", env=env)
    same_as_git(repo, "log", "--all", "--format=%H %P")  # without it: no grafts


# --- info --json --------------------------------------------------------------------------------------


def test_info_json_names_the_shallow_boundary_replace_refs_and_grafts(shallow_repos, replaced_repo, grafted_repo):
    import json

    def doc(repo, env=None):
        p = packscope_in(repo, "info", "--json", env=env)
        assert p.returncode == 0, p.stderr.decode()
        return json.loads(p.stdout)

    d = doc(shallow_repos["depth3"])
    boundary = (shallow_repos["depth3"] / ".git" / "shallow").read_text().split()
    assert d["schema"] == 2
    assert d["shallow"]["present"] and d["shallow"]["commits"] == len(boundary)
    assert d["replace_refs"]["count"] == 0 and not d["grafts"]["present"]

    d = doc(replaced_repo)
    listed = git_text("replace", "-l", "--format=medium", cwd=replaced_repo).splitlines()
    assert sorted(f"{r['original']} -> {r['replacement']}" for r in d["replace_refs"]["list"]) == sorted(listed)
    assert d["replace_refs"]["used"] and not d["shallow"]["present"]
    assert doc(replaced_repo, {"GIT_NO_REPLACE_OBJECTS": "1"})["replace_refs"]["used"] is False

    d = doc(grafted_repo)
    assert d["grafts"]["present"] and d["grafts"]["commits"] == 3
    assert any(p["kind"] == "bad-graft" and "not a graft line" in p["message"] for p in d["problems"])
