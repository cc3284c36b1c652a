"""Commit, tag and tree parsing, checked against git's reading of the same
objects (rev-list --timestamp, log --format, for-each-ref, ls-tree)."""

from __future__ import annotations

import pytest

from packscope.core.errors import CorruptObjectError
from packscope.core.history.tree_diff import diff_trees
from packscope.core.objects import (
    Commit,
    Ident,
    canonical_mode,
    commit_header_fast,
    iter_tree,
    mode_display,
    mode_is_tree,
    mode_type,
    parse_commit,
    parse_ident,
    parse_tag,
    tree_items,
    tree_sort_key,
    tz_minutes,
)
from packscope.core.oid import SHA1, SHA256
from tests import repos
from tests.cli import packscope_in
from tests.object_source import core_store
from tests.repos import git, git_text

TREE = b"4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # the empty tree


def all_commits(repo) -> list[str]:
    return git_text("rev-list", "--all", cwd=repo).split()


# --- commits against git ---------------------------------------------------------------


@pytest.mark.parametrize("which", ["scenario_repo", "odd_commits_repo", "sha256_repo"])
def test_fast_header_gives_the_tree_parents_and_date_git_walks_with(request, which):
    repo = request.getfixturevalue(which)
    src = core_store(repo)
    try:
        # --timestamp prints git's commit->date, the key of every date queue
        for line in git_text("rev-list", "--all", "--timestamp", "--parents", cwd=repo).splitlines():
            ts, oid, *parents = line.split()
            _, data = src.read(bytes.fromhex(oid))
            tree, got_parents, when = commit_header_fast(data, src.fmt)
            assert (when, [p.hex() for p in got_parents]) == (int(ts), parents), oid
            assert tree.hex() == git_text("rev-parse", oid + "^{tree}", cwd=repo).strip()
    finally:
        src.close()


def test_full_parse_matches_git_fields(scenario_repo):
    src = core_store(scenario_repo)
    try:
        fmt = "%H%x00%T%x00%P%x00%an%x00%ae%x00%at%x00%ad%x00%cn%x00%ce%x00%ct%x00%B%x01"
        out = git("log", "--all", "--date=raw", f"--format={fmt}", cwd=scenario_repo)
        for rec in out.split(b"\x01\n")[:-1]:
            h, t, p, an, ae, at, ad, cn, ce, ct, body = rec.split(b"\0")
            c = parse_commit(src.read(bytes.fromhex(h.decode()))[1], SHA1)
            assert c.tree.hex().encode() == t
            assert b" ".join(x.hex().encode() for x in c.parents) == p
            assert (c.author.name, c.author.email, str(c.author.time).encode()) == (an, ae, at)
            assert ad.split()[1].decode() == c.author.tz
            assert (c.committer.name, c.committer.email, str(c.committer.time).encode()) == (cn, ce, ct)
            assert c.message == body and c.problems == () and c.encoding is None
    finally:
        src.close()


@pytest.mark.parametrize(
    "raw,expected_time",
    [
        (b"author A <a@x> 5 +0000\ncommitter C <c@x> 1234 +0000\n\nm\n", 1234),
        (b"author A <a@x> 5 +0000\ncommitter C <c@x>\t  77 -0100\n\nm\n", 77),
        (b"author A <a@x> 5 +0000\ncommitter C <c@x> 1234 +0000\n", 0),  # nothing after the committer line
        (b"encoding UTF-8\nauthor A <a@x> 5 +0000\ncommitter C <c@x> 9 +0000\n\nm\n", 0),  # author not next
        (b"author A <a@x> 5 +0000\nencoding x\ncommitter C <c@x> 9 +0000\n\nm\n", 0),  # committer not next
        (b"author A <a@x> 5 +0000\ncommitter C <c@x> 12abc +0000\n\nm\n", 12),
        (b"author A <a@x> 5 +0000\ncommitter C <c@x> 1234\n\nm\n", 1234),  # no zone: still a date
        (b"author A <a@x> 5 +0000\ncommitter C <c@x> x> 55 +0000\n\nm\n", 0),  # the *first* '>' counts
        (b"author A <a@x> 5 +0000\ncommitter C no email 66\nx <y> 88 +0000\n\nm\n", 88),  # '>' on a later line
        (b"author A <a@x> 5 +0000\ncommitter C <c@x> 99999999999999999999999 +0000\n\nm\n", (1 << 64) - 1),
    ],
)
def test_commit_date_follows_git_on_odd_headers(tmp_path, raw, expected_time):
    repo = repos.init_bare(tmp_path / "dates.git")
    body = b"tree " + TREE + b"\n" + raw
    oid = git_text("hash-object", "--literally", "-t", "commit", "-w", "--stdin", cwd=repo, input=body).strip()
    git("mktree", cwd=repo, input="")
    ts = int(git_text("rev-list", "--no-walk", "--timestamp", oid, cwd=repo).split()[0])
    assert ts == expected_time
    assert commit_header_fast(body, SHA1) == (bytes.fromhex(TREE.decode()), (), expected_time)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"tre 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n",
        b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee490\n\n",
        b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee49zz\n\n",
        b"tree " + TREE + b"\nparent 1234\nauthor A <a@x> 1 +0000\n",
        b"tree " + TREE + b"\nparent " + b"g" * 40 + b"\nauthor A <a@x> 1 +0000\n",
    ],
)
def test_commits_without_a_usable_tree_or_parents_cannot_be_walked(raw):
    with pytest.raises(CorruptObjectError) as e:
        commit_header_fast(raw, SHA1, oid=b"\1" * 20)
    assert e.value.oid == "01" * 20


def test_a_commit_without_a_tree_is_unusable_but_other_faults_are_problems():
    with pytest.raises(CorruptObjectError):
        parse_commit(b"author A <a@x> 1 +0000\n\nm\n", SHA1, oid=b"\2" * 20)
    c = parse_commit(b"tree " + TREE + b"\nparent nothex\nauthor Broken <x 1 +0000\ncommitter C <c@x> 5\n\nmsg\n", SHA1)
    assert c.parents == () and c.author is None and c.committer == Ident(b"C", b"c@x", 0, "+0000", 0, False)
    assert [f for f, _ in c.problems] == ["parent", "author", "committer"]
    assert c.message == b"msg\n"


def test_unknown_and_multi_line_headers_are_kept_in_order():
    raw = (
        b"tree " + TREE + b"\nparent " + b"a" * 40 + b"\nparent " + b"b" * 40 + b"\n"
        b"author A U Thor <a@x> 1600000000 +0530\ncommitter C <c@x> 1600000001 -0000\n"
        b"encoding ISO-8859-1\nmergetag object " + b"c" * 40 + b"\n type commit\n tag v1\n \n sig\n"
        b"gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n"
        b"x-unknown one\n two\n\nsubject\n\nbody\n"
    )
    c = parse_commit(raw, SHA1)
    assert c.parents == (b"\xaa" * 20, b"\xbb" * 20)
    assert c.author == Ident(b"A U Thor", b"a@x", 1600000000, "+0530", 330)
    assert c.committer.tz == "-0000" and c.committer.tz_offset_minutes == 0
    assert c.encoding == b"ISO-8859-1"
    assert [k for k, _ in c.extra_headers] == [b"mergetag", b"gpgsig", b"x-unknown"]
    assert c.extra_headers[0][1] == b"object " + b"c" * 40 + b"\ntype commit\ntag v1\n\nsig"
    assert c.extra_headers[1][1] == b"-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----"
    assert c.extra_headers[2][1] == b"one\ntwo"
    assert c.message == b"subject\n\nbody\n" and c.problems == ()


def test_a_late_parent_line_is_a_header_not_a_parent_as_in_git():
    c = parse_commit(
        b"tree " + TREE + b"\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 1 +0000\nparent " + b"a" * 40 + b"\n\nm\n", SHA1
    )
    assert c.parents == () and c.extra_headers == ((b"parent", b"a" * 40),) and c.problems


def test_odd_commits_parse_with_problems_reported(odd_commits_repo):
    src = core_store(odd_commits_repo)
    try:
        by_subject = {}
        for h in all_commits(odd_commits_repo):
            c = parse_commit(src.read(bytes.fromhex(h))[1], SHA1)
            by_subject[c.message.split(b"\n")[0]] = c
        latin = by_subject[b"caf\xe9 in latin-1"]
        assert latin.encoding == b"ISO-8859-1" and latin.author.name == b"Jos\xe9 M\xfcller"
        assert by_subject[b"signed, with an unknown header"].author.tz_offset_minutes == 5 * 60 + 90
        assert by_subject[b"author line without a closing >"].author is None
        nozone = by_subject[b"time without a zone; unknown encoding \xff"]
        assert not nozone.author.has_date and ("author", "ident has no time zone") in nozone.problems
        two = by_subject[b"subject split"]
        assert two.author.email == b"one@example.com" and two.extra_headers[0][0] == b"author"
        assert by_subject[b"no trailing newline"].author.name == b""
        assert by_subject[b"no trailing newline"].committer.name == b"NoSpace"
        assert by_subject[b"nul in the body"].message == b"nul in the body\n\nbefore\0after\n"
    finally:
        src.close()


@pytest.mark.parametrize(
    "text,name,email,time,tz",
    [
        (b"A U Thor <a@x> 1 +0100", b"A U Thor", b"a@x", 1, "+0100"),
        (b"  Spaced   <a@x>   7   -0230  ", b"  Spaced", b"a@x", 7, "-0230"),
        (b"<a@x> 1 +0000", b"", b"a@x", 1, "+0000"),
        (b"Two <a@x> <b@y> 9 +0000", b"Two", b"a@x", 9, "+0000"),  # date read after the last '>'
        (b"Odd <a@x> 9 +05300", b"Odd", b"a@x", 9, "+05300"),
    ],
)
def test_idents_split_like_git(text, name, email, time, tz):
    ident, _ = parse_ident(text)
    assert (ident.name, ident.email, ident.time, ident.tz) == (name, email, time, tz)


def test_time_zones_convert_like_git():
    assert tz_minutes("+0530") == 330 and tz_minutes("-0700") == -420 and tz_minutes("+0590") == 390
    assert tz_minutes("+1400") == 840 and tz_minutes("-0000") == 0 and tz_minutes("bogus") == 0


# --- tags ------------------------------------------------------------------------------


def test_tags_match_for_each_ref(scenario_repo):
    src = core_store(scenario_repo)
    try:
        fmt = "%(objectname) %(objecttype) %(object) %(type) %(tag)"
        for line in git_text("for-each-ref", f"--format={fmt}", "refs/tags", cwd=scenario_repo).splitlines():
            oid, typ, *rest = line.split()
            if typ != "tag":
                continue
            target, ttype, name = rest
            t = parse_tag(src.read(bytes.fromhex(oid))[1], SHA1)
            assert (t.object.hex(), t.type, t.tag.decode()) == (target, ttype, name)
            assert t.tagger.name == b"T Agger" and t.problems == ()
    finally:
        src.close()


def test_tag_faults_are_reported_and_a_tag_without_object_is_unusable():
    t = parse_tag(b"object " + b"a" * 40 + b"\ntype gizmo\n\nold style tag\n", SHA1)
    assert t.tagger is None and t.tag == b"" and t.message == b"old style tag\n"
    assert {f for f, _ in t.problems} == {"type", "tag"}
    signed = parse_tag(
        b"object " + b"a" * 40 + b"\ntype commit\ntag v\ntagger T <t@x> 1 +0000\n\nmsg\n"
        b"-----BEGIN PGP SIGNATURE-----\nsig\n-----END PGP SIGNATURE-----\n",
        SHA1,
    )
    assert signed.message.startswith(b"msg\n-----BEGIN") and signed.problems == ()
    with pytest.raises(CorruptObjectError):
        parse_tag(b"type commit\ntag v\n\n", SHA1)


# --- trees -------------------------------------------------------------------------------


@pytest.mark.parametrize("which,fmt", [("scenario_repo", SHA1), ("sha256_repo", SHA256)])
def test_tree_entries_match_ls_tree(request, which, fmt):
    repo = request.getfixturevalue(which)
    src = core_store(repo)
    try:
        trees = repos.ids_of_type(repo, "tree")
        assert trees
        for t in trees[:40]:
            want = git("ls-tree", "-z", t, cwd=repo).split(b"\0")[:-1]
            typ, data = src.read(bytes.fromhex(t))
            assert typ == "tree"
            got = [
                b"%s %s %s\t%s" % (mode_display(e.mode).encode(), e.type.encode(), e.oid.hex().encode(), e.name)
                for e in iter_tree(data, fmt)
            ]
            assert got == want
    finally:
        src.close()


def test_non_canonical_modes_display_as_git_shows_them(tmp_path):
    repo = repos.init_bare(tmp_path / "modes.git")
    blob = bytes.fromhex(git_text("hash-object", "-w", "--stdin", cwd=repo, input="x").strip())
    raw = (
        b"100664 a\0" + blob + b"100775 b\0" + blob + b"40000 d\0" + bytes.fromhex(TREE.decode()) + b"120777 l\0" + blob
    )
    oid = git_text("hash-object", "--literally", "-t", "tree", "-w", "--stdin", cwd=repo, input=raw).strip()
    git("mktree", cwd=repo, input="")
    want = [line.split()[0] for line in git_text("ls-tree", oid, cwd=repo).splitlines()]
    got = [mode_display(e.mode) for e in iter_tree(raw, SHA1)]
    assert got == want == ["100644", "100755", "040000", "120000"]
    assert [e.mode for e in iter_tree(raw, SHA1)] == [0o100664, 0o100775, 0o40000, 0o120777]


def test_mode_helpers():
    assert [mode_type(m) for m in (0o100644, 0o100755, 0o120000, 0o40000, 0o160000)] == [
        "blob",
        "blob",
        "blob",
        "tree",
        "commit",
    ]
    assert canonical_mode(0o100600) == 0o100644 and canonical_mode(0o100700) == 0o100755
    assert canonical_mode(0o170000) == 0o160000
    assert tree_sort_key(b"foo", 0o40000) == b"foo/" and tree_sort_key(b"foo", 0o100644) == b"foo"


@pytest.mark.parametrize(
    "raw",
    [
        b"100644 a\0" + b"\1" * 19,  # truncated id
        b"100644a\0" + b"\1" * 20,  # no space
        b"10064x a\0" + b"\1" * 20,  # not octal
        b"+10064 a\0" + b"\1" * 20,
        b"100644 \0" + b"\1" * 20,  # empty name
        b"100644 a" + b"\1" * 20,  # no NUL
        b" a\0" + b"\1" * 20,  # no mode
    ],
)
def test_malformed_trees_raise_with_the_oid(raw):
    with pytest.raises(CorruptObjectError) as e:
        list(iter_tree(b"100644 ok\0" + b"\2" * 20 + raw, SHA1, oid=b"\3" * 20))
    assert e.value.oid == "03" * 20


def test_records_are_frozen():
    c = parse_commit(b"tree " + TREE + b"\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 1 +0000\n\nm\n", SHA1)
    assert isinstance(c, Commit)
    with pytest.raises(AttributeError):
        c.tree = b""  # type: ignore[misc]


def test_a_mode_wider_than_32_bits_reads_as_git_reads_it(tmp_path):
    """git reads a mode into 32 bits (the rest wraps away); the file type of
    what is left decides, in ls-tree, diff-tree, tree order and the walks."""
    repo = repos.init_bare(tmp_path / "wide.git")
    blob = bytes.fromhex(repos.hash_literally(repo, "blob", b"x\n"))
    sub = bytes.fromhex(repos.hash_literally(repo, "tree", b"100644 y\0" + blob))
    wide_dir = b"%o" % ((1 << 33) | 0o40000)
    wide_file = b"%o" % ((1 << 40) | 0o100755)
    data = wide_dir + b" d\0" + sub + wide_file + b" f\0" + blob
    tree = repos.hash_literally(repo, "tree", data)
    items = tree_items(data, SHA1)
    assert [f"{mode_display(m)} {mode_type(m)} {o.hex()}\t{n.decode()}" for m, n, o in items] == git_text(
        "ls-tree", tree, cwd=repo
    ).splitlines()
    assert [mode_is_tree(e.mode) for e in iter_tree(data, SHA1)] == [True, False]
    assert tree_sort_key(b"d", items[0][0]) == b"d/"
    # Spelled plainly, the same tree is no change for git nor for us.
    plain = repos.hash_literally(repo, "tree", b"40000 d\0" + sub + b"100755 f\0" + blob)
    assert git("diff-tree", "-r", tree, plain, cwd=repo) == b""
    store = core_store(repo)
    assert list(diff_trees(store, bytes.fromhex(tree), bytes.fromhex(plain))) == []
    assert [c.path for c in diff_trees(store, bytes.fromhex(tree), SHA1.hash_object("tree", b""))] == [b"d/y", b"f"]


def test_a_commit_read_without_its_idents_keeps_every_other_field(odd_commits_repo):
    # log formats that print no ident (--oneline, %h %s) parse none: the
    # same commit with author and committer None and no ident problems
    src = core_store(odd_commits_repo)
    try:
        for h in all_commits(odd_commits_repo):
            data = src.read(bytes.fromhex(h))[1]
            full = parse_commit(data, SHA1)
            light = parse_commit(data, SHA1, idents=False)
            # (a second author line is a header, and its problem is kept)
            idents = [p for p in full.problems if p[0] in ("author", "committer") and not p[1].startswith("unexpected")]
            kept = tuple(p for p in full.problems if p not in idents)
            assert light == full._replace(author=None, committer=None, problems=kept)
    finally:
        src.close()
    for fmt in ("--oneline", "--format=%h %s%n%b%e|%T %P"):
        want = git("log", "--all", fmt, cwd=odd_commits_repo)
        got = packscope_in(odd_commits_repo, "log", "--all", fmt)
        assert got.returncode == 0, got.stderr
        assert got.stdout == want
