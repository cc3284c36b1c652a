"""`packscope log` prints what `git log` prints, byte for byte, for the same
arguments — through the CLI, on the repositories tests/repos/ builds,
with and without a commit-graph."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from tests.cli import packscope
from tests.repos import git, git_env
from tests.test_graph_walk import build_variant

ALL_ATOMS = "%H %h %T %t [%P] [%p] %an <%ae> %at %cn <%ce> %ct%n[%s]%n[%b]%%"


def same_as_git(repo, *args, cwd=None) -> None:
    want = git("log", *args, cwd=cwd or repo)
    got = packscope("log", *args, cwd=cwd or repo)
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout == want, f"packscope log {' '.join(args)}"


SCENARIO_ARGS = [
    [],
    ["--all"],
    ["main"],
    ["b3", "b1", "b2"],
    ["main..b1"],
    ["b1..main"],
    ["main", "^b3"],
    ["^b3", "main"],
    ["--all", "^main"],
    ["^main", "--all"],
    ["v1..main"],
    ["v1-again"],
    ["skew"],
    ["old.."],
    ["..b2"],
    ["-n", "3"],
    ["-n3", "--all"],
    ["-5", "--all"],
    ["--max-count=0", "--all"],
    ["--max-count", "7", "main"],
    ["-n", "-1", "main"],
]


@pytest.mark.parametrize("order", [[], ["--date-order"], ["--topo-order"]], ids=["default", "date", "topo"])
def test_revisions_counts_and_orders_as_git(scenario_repo, order):
    for args in SCENARIO_ARGS:
        same_as_git(scenario_repo, *order, "--format=%H %P", *args)


@pytest.mark.parametrize(
    "paths", [["dir"], ["lib/x.c"], ["README", "thing"], ["gone.txt"], ["thing/inner"], ["."], ["nowhere"]]
)
def test_paths_first_parent_and_orders_as_git(scenario_repo, paths):
    for order in ([], ["--date-order"], ["--topo-order"]):
        for extra in ([], ["--first-parent"]):
            same_as_git(scenario_repo, *order, *extra, "--format=%h %s", "--all", "--", *paths)


@pytest.mark.parametrize("variant", ["bloom", "chain"])
def test_with_a_commit_graph_git_and_packscope_still_agree(scenario_repo, random_history_repo, tmp_path, variant):
    for name, src, paths in (("s", scenario_repo, ["dir"]), ("r", random_history_repo, ["d0"])):
        repo = build_variant(src, tmp_path / f"{name}.git", variant)
        for order in ([], ["--date-order"], ["--topo-order"]):
            for extra in ([], ["--first-parent"]):
                same_as_git(repo, *order, *extra, "--format=%H", "--all")
                same_as_git(repo, *order, *extra, "--format=%H", "--all", "--", *paths)


def test_the_default_format_is_gits_medium(scenario_repo, odd_commits_repo, sha256_repo):
    same_as_git(scenario_repo, "--all")
    same_as_git(scenario_repo, "main", "--", "dir")
    same_as_git(scenario_repo, "--pretty", "b1..main")
    same_as_git(odd_commits_repo, "--all")
    same_as_git(odd_commits_repo, "odd-merge")
    same_as_git(sha256_repo, "--all")


@pytest.mark.parametrize(
    "fmt",
    [
        ALL_ATOMS,
        "%ad|%cd|%ai|%ci|%aI|%cI|%as|%al|%aN|%cE|%e|%x41|%+b|%-b|% s|[%B]",
        "format:%h %s",
        "tformat:%H",
        "%s%n",
        "--pretty=medium",
        "no placeholders %",
        "",
        "--pretty=",
    ],
)
def test_user_formats_are_byte_identical(scenario_repo, odd_commits_repo, fmt):
    option = fmt if fmt.startswith("--") else f"--format={fmt}"
    for repo in (scenario_repo, odd_commits_repo):
        same_as_git(repo, option, "--all")


def test_abbreviations_follow_the_packed_object_count(random_history_repo, midx_repo):
    same_as_git(random_history_repo, "--format=%h %p %t", "--all")  # ~20000 objects: 8 digits
    same_as_git(random_history_repo, "--topo-order", "mid..main")  # Merge: lines
    same_as_git(midx_repo, "--format=%h %t %p", "--all")  # counted through the multi-pack-index


def _loose_blob_sharing(repo, oid: str, digits: int) -> str:
    """Write a loose blob whose id starts with the same ``digits`` hex digits as ``oid``."""
    import hashlib

    n = 0
    while True:
        body = b"collide %d\n" % n
        if hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()[:digits] == oid[:digits]:
            return git("hash-object", "-w", "--stdin", cwd=repo, input=body).decode().strip()
        n += 1


def test_abbreviations_grow_past_packed_and_loose_neighbours(scenario_repo, midx_repo, tmp_path):
    from tests import repos

    repo = repos.copy_repo(scenario_repo, tmp_path / "abbrev.git")
    head = git("rev-parse", "main", cwd=repo).decode().strip()
    _loose_blob_sharing(repo, head, 5)
    for value in ("4", "5", "auto", "false"):
        git("config", "core.abbrev", value, cwd=repo)
        same_as_git(repo, "--format=%h %t %p", "--all")
        same_as_git(repo, "b1..main")
    git("config", "core.abbrev", "4", cwd=repo)
    assert packscope("log", "-1", "--format=%h", "main", cwd=repo).stdout.strip() == head[:6].encode()
    midx = repos.copy_repo(midx_repo, tmp_path / "midx.git")
    git("config", "core.abbrev", "4", cwd=midx)
    same_as_git(midx, "--format=%h %t %p", "--all")  # 4 digits collide among packed objects


def test_paths_without_dashes_and_from_a_subdirectory(scenario_repo, tmp_path):
    work = tmp_path / "work"
    git("clone", "-q", "--no-local", str(scenario_repo), str(work))
    same_as_git(work, "--format=%H", "README")
    same_as_git(work, "--format=%H", "main", "dir", "lib")
    same_as_git(work, "--format=%H", "--", ".", cwd=work / "dir")
    same_as_git(work, "--format=%H", "--", "sub", "../README", cwd=work / "dir")


def test_errors_are_reported_like_git(scenario_repo, tmp_path):
    for args, status in (
        (["no-such-rev"], 128),
        (["main...b1"], 128),
        (["--bogus"], 129),
        (["-n"], 129),
        (["--format=%Cred%h"], 128),
    ):
        p = packscope("log", *args, cwd=scenario_repo, check=False)
        assert p.returncode == status and p.stdout == b"", args
        assert p.stderr
    empty = tmp_path / "empty.git"
    git("init", "-q", "--bare", str(empty))
    p = packscope("log", cwd=empty, check=False)
    assert p.returncode == 128 and b"does not have any commits yet" in p.stderr
    assert packscope("log", "--help", cwd=scenario_repo).stdout.startswith(b"usage: packscope log")


def test_a_closed_pipe_ends_quietly(random_history_repo):
    p = subprocess.Popen(
        [sys.executable, "-m", "packscope.inspector.cli", "log", "--all"],
        cwd=random_history_repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=git_env(),
    )
    first = p.stdout.readline()
    p.stdout.close()  # like `| head -1`
    err = p.stderr.read()
    p.wait(timeout=120)
    assert first.startswith(b"commit ") and p.returncode in (0, 141) and err == b""


def test_output_is_flushed_as_commits_come():
    from packscope.inspector.commands.log import write_streaming

    out = io.BytesIO()
    seen = []

    class Out:
        def write(self, b):
            out.write(b)

        def flush(self):
            seen.append(out.getvalue())

    def chunks():
        yield b"first\n"
        assert seen and seen[-1] == b"first\n"  # on screen before the next commit is even looked for
        yield b"second\n"

    write_streaming(chunks(), Out())
    assert out.getvalue() == b"first\nsecond\n"
