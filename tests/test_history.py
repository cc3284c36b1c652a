"""History walks and log output, compared with ``git log`` run on the same
arguments (git is the oracle; the repositories come from tests/repos/)."""

from __future__ import annotations

import functools
import itertools

import pytest

from packscope.core.errors import MissingObjectError
from packscope.core.history.log_format import (
    SortedAbbreviator,
    UserFormat,
    default_abbrev_len,
    format_date,
    render_log,
    subject_and_body,
)
from packscope.core.history.walk import Excluded, walk
from packscope.core.history.walked import WalkedCommit
from packscope.core.objects import commit_header_fast, parse_commit
from packscope.core.oid import SHA1
from tests import repos
from tests.object_source import CountingStore, core_store
from tests.repos import git, git_text

ORDERS = {"default": [], "date": ["--date-order"], "topo": ["--topo-order"]}


# --- helpers -------------------------------------------------------------------------


def resolve(repo, revs) -> list[bytes]:
    """Command-line revisions as walk() starts, in git's argument order:
    --all is every ref by name then HEAD; A..B is ^A then B."""
    return list(_resolve(str(repo), tuple(revs)))


@functools.cache
def _resolve(repo, revs) -> tuple[bytes, ...]:

    def one(r):
        return bytes.fromhex(git_text("rev-parse", r, cwd=repo).strip())

    out: list[bytes] = []
    for r in revs:
        if r == "--all":
            out += [bytes.fromhex(x) for x in git_text("for-each-ref", "--format=%(objectname)", cwd=repo).split()]
            head = git_text("rev-parse", "--verify", "-q", "HEAD", cwd=repo, check=False).strip()
            if head:  # an unborn HEAD adds nothing
                out.append(bytes.fromhex(head))
        elif ".." in r:
            a, b = r.split("..")
            out += [Excluded(one(a)), one(b)]
        elif r.startswith("^"):
            out.append(Excluded(one(r[1:])))
        else:
            out.append(one(r))
    return tuple(out)


def git_args(revs, order="default", first_parent=False, max_count=None, paths=None) -> list[str]:
    return (
        ORDERS[order]
        + (["--first-parent"] if first_parent else [])
        + ([f"-n{max_count}"] if max_count is not None else [])
        + list(revs)
        + (["--", *paths] if paths else [])
    )


def git_log(repo, revs, **kw) -> list[str]:
    return git_text("log", "--format=%H", *git_args(revs, **kw), cwd=repo).split()


def our_log(source, repo, revs, **kw) -> list[str]:
    return [c.oid.hex() for c in walk(source, resolve(repo, revs), **kw)]


def compare(source, repo, revs, **kw) -> str | None:
    want = git_log(repo, revs, **kw)
    got = our_log(source, repo, revs, **kw)
    if want == got:
        return None
    at = next(i for i, (a, b) in enumerate(itertools.zip_longest(want, got)) if a != b)
    return f"{git_args(revs, **kw)}: git {len(want)} commits, ours {len(got)}; first difference at {at}"


@pytest.fixture(scope="module")
def big(random_history_repo):
    src = core_store(random_history_repo)
    yield random_history_repo, src
    src.close()


# --- every order and option against git, on the hand-made history --------------------

SCENARIO_REVS = [
    ["--all"],
    ["main"],
    ["b1", "b2", "b3"],
    ["b3", "b1", "b2"],
    ["main..b1"],
    ["main", "^b3"],
    ["--all", "^main"],
    ["v1..main"],
    ["v1-again"],
    ["skew"],
    ["x", "y"],
    ["old..main"],
]
SCENARIO_PATHS = [
    None,
    ["dir"],
    ["lib/x.c"],
    ["README"],
    ["gone.txt"],
    ["new.txt"],
    ["old.txt"],
    ["thing"],
    ["dir/sub", "lib"],
    ["sub"],
    ["link"],
    ["thing/inner"],
    ["nowhere"],
]
FIRST_PARENT_PATHS = [None, ["dir"], ["lib/x.c"], ["README"]]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("revs", SCENARIO_REVS, ids=" ".join)
def test_walk_lists_what_git_log_lists_on_the_scenario_history(scenario, revs, order):
    repo, src = scenario
    problems = [compare(src, repo, revs, order=order, paths=paths) for paths in SCENARIO_PATHS]
    problems += [compare(src, repo, revs, order=order, first_parent=True, paths=paths) for paths in FIRST_PARENT_PATHS]
    assert [p for p in problems if p] == []


@pytest.mark.parametrize("n", [0, 1, 5, 1000])
def test_max_count_cuts_the_walk_like_git(scenario, n):
    repo, src = scenario
    for order in ORDERS:
        assert compare(src, repo, ["--all"], order=order, max_count=n) is None
        assert compare(src, repo, ["main"], order=order, max_count=n, paths=["dir"]) is None


def test_a_parent_newer_than_its_child_jumps_the_queue(scenario):
    repo, src = scenario
    got = our_log(src, repo, ["skew"])
    subjects = git_text("log", "--format=%s", "skew", cwd=repo).splitlines()
    assert subjects[:3] == ["older than its parent", "future-dated: chmod +x", "re-add gone.txt"]
    assert got == git_log(repo, ["skew"])


def test_tips_with_equal_dates_come_out_in_argument_order(scenario):
    repo, src = scenario
    a = our_log(src, repo, ["b1", "b2", "b3"])
    b = our_log(src, repo, ["b3", "b1", "b2"])
    assert a != b
    assert a == git_log(repo, ["b1", "b2", "b3"]) and b == git_log(repo, ["b3", "b1", "b2"])


def test_a_merge_treesame_to_its_side_follows_only_that_side(scenario):
    repo, src = scenario
    got = [
        git_text("log", "-1", "--format=%s", h, cwd=repo).strip()
        for h in our_log(src, repo, ["main"], paths=["lib/x.c"])
    ]
    assert "side: x1" in got and "merge side" not in got
    assert our_log(src, repo, ["main"], paths=["lib/x.c"]) == git_log(repo, ["main"], paths=["lib/x.c"])


def test_exclusion_stops_after_slop_so_skewed_commits_leak_as_in_git(tmp_path):
    # B -> I (a root); A -> a1 -> ... -> a7 -> I.  I is newer than the a-chain,
    # so git keeps I before the exclusion reaches it, then stops after five
    # uninteresting commits: I is listed although A reaches it.
    h = repos.HistoryBuilder()
    T = 1_600_000_000
    i = h.commit([], {"f": "i\n"}, T + 500, "I\n")
    b = h.derive(i, T + 600, {"f": "b\n"}, "B\n")
    prev = i
    for k in range(7, 0, -1):
        prev = h.derive(prev, T + 400 - 10 * k, {"f": f"a{k}\n"}, f"a{k}\n")
    a = h.derive(prev, T + 1000, {"f": "a\n"}, "A\n")
    h.ref("refs/heads/a", a)
    h.ref("refs/heads/b", b)
    repo = h.write(repos.init_bare(tmp_path / "leak.git"), head="refs/heads/b")
    src = core_store(repo)
    try:
        got = our_log(src, repo, ["a..b"])
        assert [git_text("log", "-1", "--format=%s", x, cwd=repo).strip() for x in got] == ["B", "I"]
        assert got == git_log(repo, ["a..b"])
        for order in ORDERS:
            assert compare(src, repo, ["a..b"], order=order) is None
    finally:
        src.close()


# --- the generated history: 3000 commits, merges, skew, same-second runs ------------------

BIG_REVS = [["--all"], ["mid..main"], ["quarter..mid"], ["^mid", "--all"]]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("revs", BIG_REVS, ids=" ".join)
def test_walk_lists_what_git_log_lists_on_a_generated_history(big, revs, order):
    repo, src = big
    cases = [dict(first_parent=False), dict(first_parent=True), dict(paths=["d0"]), dict(paths=["d1/e1", "top.txt"])]
    problems = [compare(src, repo, revs, order=order, **kw) for kw in cases]
    assert [p for p in problems if p] == []


def test_first_commits_come_out_before_the_history_is_read(big):
    repo, src = big
    store = CountingStore(src)
    it = walk(store, resolve(repo, ["--all"]))
    first = [next(it).oid.hex() for _ in range(5)]
    assert first == git_log(repo, ["--all"], max_count=5)
    assert len(store.reads) < 60  # of ~2800 commits


def test_commit_info_hook_replaces_reading_commits(big):
    repo, src = big
    info = {}
    for line in git_text("log", "--all", "--format=%H %T %ct %P", cwd=repo).splitlines():
        h, t, ct, *ps = line.split()
        info[bytes.fromhex(h)] = (bytes.fromhex(t), tuple(bytes.fromhex(p) for p in ps), int(ct), 0)
    store = CountingStore(src)
    got = [c.oid.hex() for c in walk(store, resolve(repo, ["--all"]), order="topo", commit_info=info.get)]
    assert got == git_log(repo, ["--all"], order="topo")
    assert not any(o in info for o in store.reads)


def test_a_changed_path_hint_only_skips_work(big):
    repo, src = big
    want = git_log(repo, ["main"], paths=["d0"])
    # "unknown" for every commit: the walk compares trees itself
    calls = []
    got = [
        c.oid.hex()
        for c in walk(
            src, resolve(repo, ["main"]), paths=["d0"], first_parent_unchanged=lambda o: calls.append(o) or False
        )
    ]
    assert got == want and calls
    # a truthful hint (what a Bloom filter proves): d0 unchanged against the first parent
    lines = [line.split()[:2] for line in git_text("rev-list", "--parents", "main", cwd=repo).splitlines()]
    out = git_text(
        "diff-tree",
        "--stdin",
        "-r",
        "--name-only",
        "--",
        "d0",
        cwd=repo,
        input="".join(f"{c} {p}\n" for c, p in (x for x in lines if len(x) == 2)),
    )
    changed = {line for line in out.splitlines() if len(line) == 40 and not line.startswith("d0/")}
    unchanged = {bytes.fromhex(x[0]) for x in lines if len(x) == 2 and x[0] not in changed}
    assert unchanged and changed
    hinted, plain = CountingStore(src), CountingStore(src)
    got = [
        c.oid.hex()
        for c in walk(hinted, resolve(repo, ["main"]), paths=["d0"], first_parent_unchanged=unchanged.__contains__)
    ]
    assert got == want
    assert [c.oid.hex() for c in walk(plain, resolve(repo, ["main"]), paths=["d0"])] == want
    assert len(hinted.reads) < len(plain.reads)  # fewer trees read


# --- other formats, odd inputs ------------------------------------------------------------


def test_walks_work_on_sha256_repositories(sha256_repo):
    src = core_store(sha256_repo)
    try:
        for order in ORDERS:
            assert compare(src, sha256_repo, ["--all"], order=order) is None
        assert compare(src, sha256_repo, ["--all"], paths=["dir1"]) is None
    finally:
        src.close()


def test_a_missing_parent_is_an_error_on_the_interesting_side():
    commits = {}

    def add(parents, t):
        body = b"tree " + b"4b825dc642cb6eb9a060e54bf8d69288fbee4904" + b"\n"
        body += b"".join(b"parent " + p.hex().encode() + b"\n" for p in parents)
        body += b"author A <a@x> %d +0000\ncommitter C <c@x> %d +0000\n\nm\n" % (t, t)
        oid = SHA1.hash_object("commit", body)
        commits[oid] = ("commit", body)
        return oid

    class Store:
        fmt = SHA1

        def read(self, oid):
            try:
                return commits[oid]
            except KeyError:
                raise MissingObjectError("missing", oid=oid.hex()) from None

        def read_header(self, oid):
            t, d = self.read(oid)
            return t, len(d)

    ghost = bytes(range(20))
    tip = add([add([ghost], 2)], 3)
    with pytest.raises(MissingObjectError):
        list(walk(Store(), [tip]))
    # reached only from the excluded side, a missing commit is the end of the road
    base = add([], 2)
    tip2 = add([base], 3)
    other = add([ghost], 5)
    assert [c.oid for c in walk(Store(), [tip2], exclude=[other])] == [tip2, base]


def test_walk_yields_records_with_parents_and_times(scenario):
    repo, src = scenario
    first = next(walk(src, resolve(repo, ["main"])))
    assert isinstance(first, WalkedCommit)
    line = git_text("log", "-1", "--format=%H %T %ct %P", "main", cwd=repo).split()
    assert (first.oid.hex(), first.tree.hex(), first.commit_time) == (line[0], line[1], int(line[2]))
    assert [p.hex() for p in first.parents] == line[3:]


def test_unknown_order_is_refused(scenario):
    with pytest.raises(ValueError):
        walk(scenario[1], [], order="reverse")


# --- log output -------------------------------------------------------------------------------


def abbreviator(repo) -> SortedAbbreviator:
    """git's %h for this repository: auto length from the packed-object
    count, lengthened until unique among all objects."""
    oids = sorted(
        bytes.fromhex(x)
        for x in git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    )
    stats = dict(line.split(": ") for line in git_text("count-objects", "-v", cwd=repo).splitlines())
    return SortedAbbreviator(oids, default_abbrev_len(int(stats["in-pack"])))


def our_output(src, repo, revs, pretty=None, **kw) -> bytes:
    return b"".join(render_log(src, walk(src, resolve(repo, revs), **kw), abbrev=abbreviator(repo), pretty=pretty))


ALL_ATOMS = "%H %h %T %t [%P] [%p] %an <%ae> %at %cn <%ce> %ct%n[%s]%n[%b]%%"
MORE_ATOMS = "%ad|%cd|%ai|%ci|%aI|%cI|%as|%al|%aN|%cE|%e|%x41%x00|%+b|%-b|% s|[%B]|%z"


@pytest.mark.parametrize(
    "revs,paths", [(["--all"], None), (["main"], ["dir"]), (["b1..main"], None)], ids=["all", "main-dir", "range"]
)
def test_default_log_output_is_byte_identical(scenario, revs, paths):
    repo, src = scenario
    want = git("log", *revs, *(["--", *paths] if paths else []), cwd=repo)
    assert our_output(src, repo, revs, paths=paths) == want


def test_default_log_output_of_odd_commits_is_byte_identical(odd_commits_repo):
    src = core_store(odd_commits_repo)
    try:
        for revs in (["odd-merge"], ["--all"]):
            assert our_output(src, odd_commits_repo, revs) == git("log", *revs, cwd=odd_commits_repo)
    finally:
        src.close()


@pytest.mark.parametrize("fmt", [ALL_ATOMS, MORE_ATOMS, "format:%h %s", "tformat:%H", "%s%n", "no placeholders %"])
def test_format_atoms_are_byte_identical(scenario, odd_commits_repo, fmt):
    for repo in (scenario[0], odd_commits_repo):
        src = core_store(repo)
        try:
            want = git("log", f"--format={fmt}", "--all", cwd=repo)
            assert our_output(src, repo, ["--all"], pretty=fmt) == want
        finally:
            src.close()


def test_abbreviations_grow_with_the_object_count(big):
    repo, src = big
    want = git("log", "--format=%h %p %t", "-n", "50", "--all", cwd=repo)
    got = our_output(src, repo, ["--all"], pretty="%h %p %t", max_count=50)
    assert got == want
    assert len(got.split()[0]) == 8  # ~20000 packed objects: 8 hex digits, not 7


def test_medium_format_shows_a_merge_line_and_the_authors_zone():
    assert format_date(1_600_000_000, "+0200") == "Sun Sep 13 14:26:40 2020 +0200"
    assert format_date(1_600_000_000, "-0730") == "Sun Sep 13 04:56:40 2020 -0730"
    assert format_date(0, "+0000") == "Thu Jan 1 00:00:00 1970 +0000"
    assert format_date(253_402_300_800, "+0000") == "Sat Jan 1 00:00:00 10000 +0000"  # beyond datetime's range


def test_subject_joins_the_first_paragraph_and_body_follows_the_blank_lines():
    assert subject_and_body(b"\n \nline one  \nline two\n\n\n  body\n\nmore\n") == (
        b"line one line two",
        b"  body\n\nmore\n",
    )
    assert subject_and_body(b"only") == (b"only", b"")


def test_format_placeholders_git_knows_but_we_do_not_are_refused():
    for spec in ("%ar", "%d", "%Cred%h", "%w(20)%s", "%<(10)%s", "%(trailers)"):
        with pytest.raises(ValueError):
            UserFormat(spec)
    assert UserFormat("%q %").ops == [("lit", b"%q %", "")]


def test_abbreviation_lengthens_until_unique():
    ids = sorted(bytes.fromhex(h) for h in ("1234567aa" + "0" * 31, "1234567ab" + "0" * 31, "ffff" + "0" * 36))
    ab = SortedAbbreviator(ids, 7)
    assert ab(ids[0]) == "1234567aa" and ab(ids[1]) == "1234567ab" and ab(ids[2]) == "ffff000"
    assert default_abbrev_len(0) == 7 and default_abbrev_len(16383) == 7 and default_abbrev_len(16384) == 8
    assert default_abbrev_len(1 << 20) == 11


# --- speed ------------------------------------------------------------------------------------


def test_fast_commit_headers_agree_with_the_full_parse(scenario):
    """The walk's fast header parse gives what the full parse gives (its
    speed is measured in bench/, not asserted here)."""
    repo, src = scenario
    for h in git_text("rev-list", "--all", cwd=repo).split():
        data = src.read(bytes.fromhex(h))[1]
        tree, parents, commit_time = commit_header_fast(data, SHA1)
        full = parse_commit(data, SHA1)
        assert (tree, tuple(parents), commit_time) == (full.tree, tuple(full.parents), full.committer.time)
