"""last_modified (one walk for every entry) answers what git answers per entry:
``git --literal-pathspecs log -1 --format=%H REV -- DIR/ENTRY``.

Histories: the scenario (merges TREESAME to one side, an evil merge, a file
deleted and re-added, a file that becomes a directory, nested directories,
symlink and gitlink changes, clock skew, a second root), the generated one
(merges that take some files from each side), and trees written byte by
byte (a mode spelled 100664, two spellings of one directory, an empty
directory).  Each with and without a commit-graph (Bloom filters present,
partly computed, absent).
"""

from __future__ import annotations

import pytest

from packscope.core.errors import BadRevisionError, CancelledError
from packscope.core.history.graph_walk import WalkSource
from packscope.core.history.last_modified import Progress, entries_of, last_modified
from tests import repos
from tests.cli import packscope
from tests.object_source import core_store
from tests.repos import git, git_text
from tests.test_graph_walk import build_variant


def git_answers(repo, rev: str, directory: str) -> dict[bytes, str]:
    """{entry: commit} by one `git log -1` per entry (empty: git shows nothing)."""
    listing = git("ls-tree", "-z", "--name-only", f"{rev}:{directory}" if directory else rev, cwd=repo)
    out = {}
    for name in listing.split(b"\0")[:-1]:
        path = (directory.encode() + b"/" if directory else b"") + name
        out[name] = git_text(
            "--literal-pathspecs",
            "log",
            "-1",
            "--format=%H",
            rev,
            "--",
            path.decode("utf-8", "surrogateescape"),
            cwd=repo,
        ).strip()
    return out


def our_answers(store, source, repo, rev: str, directory: str) -> dict[bytes, str]:
    oid = bytes.fromhex(git_text("rev-parse", rev, cwd=repo).strip())
    return {name: (c.hex() if c else "") for name, c in last_modified(store, oid, directory, source=source)}


def directories(repo, rev: str) -> list[str]:
    rows = git_text("ls-tree", "-r", "-d", rev, cwd=repo).splitlines()
    return [""] + [r.split("\t", 1)[1] for r in rows if " tree " in r]


def mismatches(repo, revs, dirs=None) -> list[str]:
    store = core_store(repo)
    source = WalkSource.open(None, store)
    try:
        out = []
        for rev in revs:
            for d in dirs if dirs is not None else directories(repo, rev):
                want, got = git_answers(repo, rev, d), our_answers(store, source, repo, rev, d)
                out += [
                    f"{rev}:{d}/{n.decode()}: git {want[n] or '-'}, ours {got.get(n) or '-'}"
                    for n in want
                    if got.get(n) != want[n]
                ]
        return out
    finally:
        source.close()
        store.close()


@pytest.fixture(scope="module", params=["none", "bloom", "plain", "chain"])
def scenario_variant(request, scenario_repo, tmp_path_factory):
    return build_variant(scenario_repo, tmp_path_factory.mktemp("lm") / "scenario.git", request.param)


def test_every_directory_of_the_scenario_equals_git_per_entry(scenario_variant):
    assert mismatches(scenario_variant, ["main", "b1", "b3", "x", "y", "skew", "old", "orphan", "v1"]) == []


@pytest.mark.parametrize("variant", ["none", "bloom", "stale"])
def test_the_generated_history_equals_git_per_entry(random_history_repo, tmp_path, variant):
    repo = build_variant(random_history_repo, tmp_path / "big.git", variant)
    assert mismatches(repo, ["main", "mid"], ["", "d0", "d1/e1", "d3"]) == []


def test_merges_deletions_and_replacements_are_answered_as_git_does(scenario_repo):
    got = our_answers(core_store(scenario_repo), None, scenario_repo, "main", "")
    subject = {n: git_text("log", "-1", "--format=%s", c, cwd=scenario_repo).strip() for n, c in got.items()}
    assert subject[b"README"] == "merge criss-cross"  # an evil merge: changed against both parents
    assert subject[b"gone.txt"] == "re-add gone.txt"
    assert subject[b"thing"] == "thing becomes a directory"
    assert subject[b"lib"] == "merge ancient side"
    assert got == git_answers(scenario_repo, "main", "")


def build_merge_sides_repo(root):
    """A merge that takes each entry from a different side: ``a`` from the
    first parent, ``b`` from the second (changed there), ``e`` from the
    second (changed on the first parent only: the merge undoes it), ``c``
    unchanged on both, ``d`` changed by the merge alone; under ``sub/`` the
    same split one level down."""
    h = repos.HistoryBuilder()
    base = {"a": "1", "b": "1", "c": "1", "d": "1", "e": "1", "sub/x": "1", "sub/y": "1"}
    root_c = h.commit([], base, 1_600_000_000, "root\n")
    side = h.derive(root_c, 1_600_000_100, {"b": "side", "sub/y": "side"}, "side\n")
    main = h.derive(root_c, 1_600_000_200, {"a": "main", "e": "main", "sub/x": "main"}, "main\n")
    merged = dict(h.files[main], b="side", e="1", d="merge")
    merged["sub/y"] = "side"
    h.ref("refs/heads/side", side)
    h.ref("refs/heads/main", h.commit([main, side], merged, 1_600_000_300, "merge\n"))
    return h.write(repos.init_bare(root / "sides.git"))


def test_a_merge_follows_the_parent_each_entry_is_treesame_to(tmp_path):
    repo = build_merge_sides_repo(tmp_path)
    subject = {}
    for d in ("", "sub"):
        want = git_answers(repo, "main", d)
        assert our_answers(core_store(repo), None, repo, "main", d) == want
        subject.update({(d, n): git_text("log", "-1", "--format=%s", c, cwd=repo).strip() for n, c in want.items()})
    assert subject == {  # what git says, spelt out
        ("", b"a"): "main",
        ("", b"b"): "side",
        ("", b"c"): "root",
        ("", b"d"): "merge",
        ("", b"e"): "root",
        ("", b"sub"): "merge",
        ("sub", b"x"): "main",
        ("sub", b"y"): "side",
    }


def test_both_ways_of_comparing_trees_give_gits_answers(scenario_repo, random_history_repo, backend_path):
    assert mismatches(scenario_repo, ["main", "x", "skew"]) == []
    assert mismatches(random_history_repo, ["main"], ["", "d1/e1"]) == []


def _tree(repo, entries) -> str:
    """A tree written byte for byte: [(mode text, name, id hex)] in git's order."""
    body = b"".join(m.encode() + b" " + n.encode() + b"\0" + bytes.fromhex(o) for m, n, o in entries)
    return git_text("hash-object", "-t", "tree", "-w", "--literally", "--stdin", cwd=repo, input=body).strip()


def build_spellings_repo(root):
    """c1 → c2 → c3: in c2 a file's mode is respelled 100664 and a directory
    is rewritten with such a mode (no change to git) and an empty directory
    appears (no change either); c3 really changes one file."""
    repo = repos.init_bare(root / "spellings.git")
    one = git_text("hash-object", "-w", "--stdin", cwd=repo, input="one\n").strip()
    two = git_text("hash-object", "-w", "--stdin", cwd=repo, input="two\n").strip()
    empty = _tree(repo, [])
    sub_a = _tree(repo, [("100644", "x", one)])
    sub_b = _tree(repo, [("100664", "x", one)])
    t1 = _tree(repo, [("40000", "d", sub_a), ("100644", "f", one), ("100644", "keep", two)])
    t2 = _tree(repo, [("40000", "d", sub_b), ("40000", "e", empty), ("100664", "f", one), ("100644", "keep", two)])
    t3 = _tree(repo, [("40000", "d", sub_b), ("40000", "e", empty), ("100664", "f", one), ("100644", "keep", one)])
    parent = None
    for k, tree in enumerate((t1, t2, t3)):
        text = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "")
        text += f"author A <a@x> {1_600_000_000 + k} +0000\ncommitter C <c@x> {1_600_000_000 + k} +0000\n\nc{k + 1}\n"
        parent = git_text("hash-object", "-t", "commit", "-w", "--literally", "--stdin", cwd=repo, input=text).strip()
    git("update-ref", "refs/heads/main", parent, cwd=repo)
    return repo


def test_mode_spellings_and_empty_directories_are_no_change_as_in_git(tmp_path):
    repo = build_spellings_repo(tmp_path)
    want = git_answers(repo, "main", "")
    subjects = {n: git_text("log", "-1", "--format=%s", c, cwd=repo).strip() if c else "" for n, c in want.items()}
    assert subjects == {b"d": "c1", b"e": "", b"f": "c1", b"keep": "c3"}  # what git says
    assert our_answers(core_store(repo), None, repo, "main", "") == want
    out = packscope("last-modified", cwd=repo).stdout.decode()
    assert [line.split("\t")[1] for line in out.splitlines()] == ["d", "f", "keep"]  # nothing for e, as git


def test_answers_arrive_while_the_walk_runs_and_progress_is_reported(random_history_repo):
    store = core_store(random_history_repo)
    rev = bytes.fromhex(git_text("rev-parse", "main", cwd=random_history_repo).strip())
    reports: list[Progress] = []
    it = last_modified(store, rev, "", progress=reports.append)
    first = next(it)
    at_first = reports[-1].commits
    rest = list(it)
    assert first[1] is not None and len(rest) + 1 == len(entries_of(store, rev, ""))
    assert reports[-1].answered == reports[-1].total and reports[-1].commits > at_first


def test_a_cancel_check_stops_the_walk(random_history_repo):
    store = core_store(random_history_repo)
    rev = bytes.fromhex(git_text("rev-parse", "main", cwd=random_history_repo).strip())
    with pytest.raises(CancelledError):
        list(last_modified(store, rev, "", cancelled=lambda: True))


def test_a_path_that_is_not_a_directory_is_refused(scenario_repo):
    store = core_store(scenario_repo)
    rev = bytes.fromhex(git_text("rev-parse", "main", cwd=scenario_repo).strip())
    for path in ("README", "nowhere", "dir/a.txt"):
        with pytest.raises(BadRevisionError):
            list(last_modified(store, rev, path))


# --- the command --------------------------------------------------------------------------


def git_lines(repo, rev: str, directory: str) -> str:
    want = git_answers(repo, rev, directory)
    # `git ls-tree REV DIR/` prints each DIR/ENTRY as git quotes paths
    listing = git_text("ls-tree", "--name-only", rev, *([directory + "/"] if directory else []), cwd=repo)
    quoted = dict(zip(want, listing.splitlines(), strict=True))
    return "".join(f"{c}\t{quoted[n]}\n" for n, c in want.items() if c)


@pytest.mark.parametrize(
    "args,rev,directory",
    [
        ((), "HEAD", ""),
        (("b1",), "b1", ""),
        (("dir",), "HEAD", "dir"),
        (("v1", "dir/sub"), "v1", "dir/sub"),
        (("main", "--", "lib"), "main", "lib"),
    ],
)
def test_the_command_prints_gits_answers_in_tree_order(scenario_repo, args, rev, directory):
    assert packscope("last-modified", *args, cwd=scenario_repo).stdout.decode() == git_lines(
        scenario_repo, rev, directory
    )


def test_the_command_quotes_paths_as_git_and_reads_a_chain(split_graph_repo, graph_repo):
    for repo in (graph_repo, split_graph_repo):
        assert packscope("last-modified", cwd=repo).stdout.decode() == git_lines(repo, "HEAD", "")
    # names with bytes above 0x7f, in a directory so named: C-quoted, as git prints them
    out = packscope("last-modified", "HEAD", "caf\u00e9", cwd=graph_repo).stdout.decode()
    assert out == git_lines(graph_repo, "HEAD", "caf\u00e9") and '"caf\\303\\251/na\\303\\257ve.txt"' in out
    assert packscope("last-modified", "HEAD", "dir", cwd=graph_repo).stdout.decode() == git_lines(
        graph_repo, "HEAD", "dir"
    )


def test_directories_are_relative_to_where_you_stand(scenario_repo, tmp_path):
    work = tmp_path / "work"
    git("clone", "-q", str(scenario_repo), str(work))
    got = packscope("last-modified", ".", cwd=work / "dir").stdout.decode()
    assert got == git_lines(work, "HEAD", "dir")
    assert packscope("last-modified", "HEAD", "sub", cwd=work / "dir").stdout.decode() == git_lines(
        work, "HEAD", "dir/sub"
    )


def test_the_command_refuses_a_file_and_too_many_arguments(scenario_repo):
    p = packscope("last-modified", "HEAD", "README", cwd=scenario_repo, check=False)
    assert p.returncode == 128 and b"not a directory" in p.stderr
    assert packscope("last-modified", "a", "b", "c", cwd=scenario_repo, check=False).returncode == 129
