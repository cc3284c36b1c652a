"""`packscope show` against `git show`, byte for byte, on histories built
here: renames at several similarities (100, 90, 60 and 49%: a rename at
-M50 but not at -M50 when under it), copies with -C, a file renamed twice
in a row and one source taken by two destinations, an octopus merge, a
conflicted merge resolved by hand, a criss-cross history; every format
(patch, --stat, --numstat, --name-status), on the compiled and the pure
path."""

from __future__ import annotations

import random

import pytest

from packscope.core.history.renames import MAX_SCORE, chunk_counts, copied_bytes, parse_score
from tests.cli import packscope_in
from tests.repos import git, git_dated


def _lines(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [f"line {rnd.randrange(10**6)} of text {seed}\n" for _ in range(n)]


def _write(repo, path: str, text: str) -> None:
    f = repo / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)


@pytest.fixture(scope="module")
def show_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("show") / "repo"
    git("init", "-q", "-b", "main", repo)
    clock = [1_700_000_000]

    def commit(msg: str, *args: str) -> str:
        clock[0] += 60
        git("add", "-A", cwd=repo)
        return git_dated(f"{clock[0]} +0100", "commit", "-q", "-m", msg, *args, cwd=repo)

    # renames at several similarities: keep k of 100 lines
    for name, seed in (("same.txt", 1), ("s90.txt", 2), ("s60.txt", 3), ("s49.txt", 4), ("kept.c", 5)):
        _write(repo, name, "".join(_lines(100, seed)))
    _write(repo, "src/main.c", "int main(void)\n{\n\treturn 0;\n}\n")
    commit("base")
    for name, keep in (("s90.txt", 90), ("s60.txt", 60), ("s49.txt", 49)):
        old = (repo / name).read_text().splitlines(keepends=True)
        (repo / name).unlink()
        _write(repo, f"moved/{name}", "".join(old[:keep] + _lines(100 - keep, keep)))
    (repo / "same.txt").rename(repo / "moved-same.txt")
    commit("renames at 100, 90, 60 and 49%")
    git("tag", "t-renames", cwd=repo)
    # copies: a modified source copied (C), a deleted one taken twice (C then R)
    kept = (repo / "kept.c").read_text()
    _write(repo, "copies/kept-copy.c", kept + "extra\n")
    _write(repo, "kept.c", kept.replace("line", "LINE", 3))
    main_c = (repo / "src/main.c").read_text()
    (repo / "src/main.c").unlink()
    _write(repo, "a/main.c", main_c)
    _write(repo, "b/main.c", main_c.replace("0", "1"))
    commit("copies")
    git("tag", "t-copies", cwd=repo)
    # a file renamed twice in a row
    (repo / "again").mkdir()
    (repo / "moved/s90.txt").rename(repo / "again/s90.txt")
    commit("rename again")
    git("tag", "t-again", cwd=repo)
    text = (repo / "again/s90.txt").read_text()
    (repo / "again/s90.txt").unlink()
    _write(repo, "third/name.txt", text + "one more line\n")
    commit("and a third name")
    git("tag", "t-third", cwd=repo)
    # a conflicted merge, resolved by hand
    base = "int f(void)\n{\n\tint x = 1;\n\tint y = 2;\n\treturn x + y;\n}\n\nint g(void)\n{\n\treturn 7;\n}\n"
    _write(repo, "conflict.c", base)
    commit("conflict base")
    git("checkout", "-q", "-b", "side", cwd=repo)
    _write(repo, "conflict.c", base.replace("int x = 1;", "int x = 10;").replace("return 7;", "return 8;"))
    commit("side edit")
    git("checkout", "-q", "main", cwd=repo)
    _write(repo, "conflict.c", base.replace("int x = 1;", "int x = 100;"))
    _write(repo, "main-only.txt", "main\n")
    commit("main edit")
    git("merge", "-q", "--no-commit", "side", cwd=repo, check=False)
    _write(
        repo,
        "conflict.c",
        base.replace("int x = 1;", "int x = 1000;\n\tint z = 3;").replace("return 7;", "return 8;"),
    )
    commit("merge side, by hand", "--no-edit")
    git("tag", "conflicted", cwd=repo)
    # a merge whose parents lost different lines at the end of a file
    # without a final newline: --cc's hunks reach the lines lost at the end
    head = "$var\n  y = 1;\n_init:\n$var\nl44\n$var\n"
    _write(repo, "tail.txt", head + "base")
    commit("tail base")
    git("checkout", "-q", "-b", "tail-b", cwd=repo)
    _write(repo, "tail.txt", head + "l44")
    commit("tail b")
    git("checkout", "-q", "main", cwd=repo)
    _write(repo, "tail.txt", head + "$var\n\nl44")
    commit("tail a")
    git("merge", "-q", "--no-commit", "tail-b", cwd=repo, check=False)
    _write(repo, "tail.txt", head + "$var\n")
    commit("tail merge", "--no-edit")
    git("tag", "tailmerge", cwd=repo)
    git("checkout", "-q", "conflicted", cwd=repo)
    # an octopus merge of three branches
    for k in range(3):
        git("checkout", "-q", "-b", f"oct{k}", "conflicted", cwd=repo)
        _write(repo, f"oct/file{k}.txt", f"branch {k}\n")
        lines = (repo / "moved-same.txt").read_text().splitlines(keepends=True)
        lines[10 + 20 * k] = f"octopus {k}\n"
        _write(repo, "moved-same.txt", "".join(lines))
        commit(f"octopus branch {k}")
    git("checkout", "-q", "oct0", cwd=repo)
    git("merge", "-q", "--no-commit", "oct1", "oct2", cwd=repo)
    lines = (repo / "moved-same.txt").read_text().splitlines(keepends=True)
    lines[30] = "the octopus's own line\n"  # beside branch 1's change: a hunk --cc keeps
    _write(repo, "moved-same.txt", "".join(lines))
    commit("octopus", "--no-edit")
    git("tag", "octopus", cwd=repo)
    # criss-cross: two branches merging each other, then merged
    git("checkout", "-q", "-b", "cross-a", "conflicted", cwd=repo)
    _write(repo, "cross.txt", "a\nb\nc\n")
    commit("cross base")
    git("checkout", "-q", "-b", "cross-b", cwd=repo)
    _write(repo, "cross.txt", "a\nb\nc\nfrom b\n")
    commit("b1")
    git("checkout", "-q", "cross-a", cwd=repo)
    _write(repo, "cross.txt", "from a\na\nb\nc\n")
    commit("a1")
    clock[0] += 60
    git_dated(f"{clock[0]} +0100", "merge", "-q", "-m", "a merges b", "cross-b", cwd=repo)
    git("checkout", "-q", "cross-b", cwd=repo)
    clock[0] += 60
    git_dated(f"{clock[0]} +0100", "merge", "-q", "-m", "b merges a1", "cross-a~1", cwd=repo)
    _write(repo, "cross.txt", "from a\na\nb (b's)\nc\nfrom b\n")
    commit("b edits", "--amend", "--no-edit")
    git("checkout", "-q", "cross-a", cwd=repo)
    git("merge", "-q", "--no-commit", "--no-ff", "cross-b", cwd=repo, check=False)
    _write(repo, "cross.txt", "from a\na\nb (both)\nc\nfrom b\n")
    commit("criss-cross merge", "--no-edit")
    git("tag", "crisscross", cwd=repo)
    return repo


REVS = [
    "t-renames",
    "t-copies",
    "t-again",  # renamed again
    "t-third",  # a third name
    "conflicted",
    "tailmerge",
    "octopus",
    "crisscross",
    "crisscross^1",
    "crisscross^2",
]
OPTIONS = [
    [],
    ["--stat"],
    ["--numstat"],
    ["--name-status"],
    ["-M50", "--name-status"],
    ["-M90%", "--name-status"],
    ["-M5", "--stat", "-p"],
    ["-M100%", "--name-status"],
    ["-C", "--name-status"],
    ["-C", "-p"],
    ["-C30%", "--numstat"],
    ["--no-renames", "--stat"],
    ["-c"],
    ["--cc", "--stat"],
    ["--format=%h %s", "--name-status"],
    ["--format=", "-p"],
    ["-s"],
]


@pytest.mark.both_paths
@pytest.mark.parametrize("path", ["compiled", "pure"])
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: " ".join(o) or "default")
def test_show_equals_git_show(show_repo, options, path):
    env = {"PACKSCOPE_PURE": "1" if path == "pure" else "0", "COLUMNS": "80"}
    for rev in REVS:
        want = git("show", *options, rev, cwd=show_repo, env=env)
        got = packscope_in(show_repo, "show", *options, rev, env=env)
        assert got.returncode == 0, got.stderr.decode()
        assert got.stdout.decode() == want.decode(), f"git show {' '.join(options)} {rev}"


def test_the_histories_hold_what_the_tests_are_about(show_repo):
    """The repository really has the cases: similarity scores at 100, 89..90,
    59..60 and under 50; a copy and a rename of one source; merges with 2
    and 3 parents whose combined diff is not empty."""
    status = git("show", "-M50", "--name-status", "--format=", "t-renames", cwd=show_repo).decode()
    scores = sorted(int(line[1:4]) for line in status.splitlines() if line.startswith("R"))
    assert scores[0] < 90 and scores[-1] == 100 and len(scores) == 3, status
    assert "D\ts49.txt" in status
    copies = git("show", "-C", "--name-status", "--format=", "t-copies", cwd=show_repo).decode()
    assert any(x.startswith("C") for x in copies.splitlines()) and "R" in copies
    for rev, parents in (("octopus", 3), ("conflicted", 2), ("crisscross", 2)):
        text = git("show", rev, cwd=show_repo).decode()
        assert "@" * (parents + 1) + " -" in text, rev


@pytest.mark.parametrize(
    ("text", "percent"),
    [("", 0), ("50", 50), ("5", 50), ("05", 5), ("90%", 90), ("9", 90), ("100%", 100), ("0.75", 75), ("1", 10)],
)
def test_similarity_arguments_read_as_git_reads_them(text, percent):
    score = parse_score(text) if text else 0
    assert score * 100 // MAX_SCORE == percent


def test_similarity_counts_lines_and_long_line_pieces():
    """Chunks are lines or 64-byte pieces; a CR before LF is not counted in
    text; what follows the last LF counts only in whole 64-byte pieces."""
    a = b"x" * 70 + b"\nshort\r\n" + b"tail"
    assert sum(chunk_counts(a).values()) == 71 + 6
    assert copied_bytes(chunk_counts(a), chunk_counts(b"short\n")) == 6
    assert sum(chunk_counts(b"y" * 130).values()) == 128
