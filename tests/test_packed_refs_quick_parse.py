"""packed-refs read in one pass when every line is plainly good: the refs,
traits and (no) problems are exactly what the line-by-line parse gives, on
generated files good and hostile; anything it cannot vouch for goes to the
line-by-line parse, which names the problems."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from packscope.core.repo.packed_refs import _parse_good_file, _parse_lines, parse_packed_refs
from tests.repos import git, git_text
from tests.test_refs import git_for_each_ref, ours_resolved, store_for

NAMES = [
    "refs/heads/main",
    "refs/heads/x",
    "refs/tags/v1.0",
    "refs/pull/12/head",
    "refs/heads/a..b",
    "refs/heads/end.",
    "refs/heads/x.lock",
    "refs/heads/x.lock/y",
    "refs/heads/.dot",
    "refs/heads/sp ace",
    "refs/heads/caf\u00e9",
    "refs/heads/at@{x",
    "refs//empty",
    "refs",
    "HEAD",
    "refs/heads/_-_",
]
HEXES = ["1" * 40, "2" * 40, "ab" * 20, "AB" * 20, "zz" + "0" * 38, "3" * 39, "4" * 41, "5" * 64]

entry = st.builds(lambda h, n: f"{h} {n}\n".encode(), st.sampled_from(HEXES), st.sampled_from(NAMES))
peeled = st.builds(lambda h: f"^{h}\n".encode(), st.sampled_from(HEXES))
line = st.one_of(
    entry,
    entry,
    peeled,
    st.just(b"# pack-refs with: peeled fully-peeled sorted \n"),
    st.just(b"# a comment\n"),
    st.just(b"6" * 40 + b"\trefs/heads/tab\n"),
    st.just(b"\n"),
)


def problems(parsed):
    refs, traits, found = parsed
    return refs, traits, [(str(p), p.offset, p.line, p.kind) for p in found]


@settings(max_examples=1500, deadline=None)
@given(
    st.sampled_from([b"", b"# pack-refs with: peeled fully-peeled sorted \n", b"# pack-refs with:"]),
    st.lists(line, max_size=8),
    st.sampled_from([b"", b"7" * 40 + b" refs/heads/unterminated"]),
)
def test_the_one_pass_read_is_the_line_by_line_parse(header, lines, tail):
    data = header + b"".join(lines) + tail
    want = problems(_parse_lines(data, 40, "packed-refs"))
    quick = _parse_good_file(data, 40)
    if quick is not None:
        assert problems(quick) == want
        assert not want[2]  # the one-pass read answers only files without problems
    assert problems(parse_packed_refs(data, 40, "packed-refs")) == want


def test_plain_files_are_read_in_one_pass():
    """The usual file takes the quick path (else the test above proves little)."""
    data = b"# pack-refs with: peeled fully-peeled sorted \n" + b"1" * 40 + b" refs/heads/main\n"
    data += b"2" * 40 + b" refs/tags/v1.0\n^" + b"3" * 40 + b"\n" + b"4" * 40 + b" refs/pull/12/head\n"
    quick = _parse_good_file(data, 40)
    assert quick is not None
    assert problems(quick) == problems(_parse_lines(data, 40, "packed-refs"))
    assert quick[0]["refs/tags/v1.0"].peeled == b"\x33" * 20
    sha256 = b"5" * 64 + b" refs/heads/main\n^" + b"6" * 64 + b"\n"
    assert _parse_good_file(sha256, 64) == _parse_lines(sha256, 64, "packed-refs")


def test_a_packed_refs_file_git_wrote_reads_as_git_lists_it(tmp_path):
    repo = tmp_path / "r"
    git("init", "-q", "--initial-branch=main", repo)
    git("commit", "-q", "--allow-empty", "-m", "c", cwd=repo)
    head = git_text("rev-parse", "HEAD", cwd=repo).strip()
    updates = "".join(f"create refs/pull/{i}/head {head}\n" for i in range(300))
    git("update-ref", "--stdin", cwd=repo, input=updates.encode())
    git("tag", "-a", "-m", "t", "v1.0", cwd=repo)
    git("tag", "light", cwd=repo)
    git("pack-refs", "--all", cwd=repo)
    data = (repo / ".git" / "packed-refs").read_bytes()
    assert _parse_good_file(data, 40) is not None
    store = store_for(repo)
    assert ours_resolved(store) == git_for_each_ref(repo)
    peeled = git_text("for-each-ref", "--format=%(refname) %(*objectname)", cwd=repo).splitlines()
    ours = [f"{r.name} {r.peeled.hex() if r.peeled else ''}" for r in store.iter_refs("refs/")]
    assert ours == peeled
