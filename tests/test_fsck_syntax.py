"""Object syntax checks against git fsck: the same objects get the same
message ids (and severities) as git's, in git's order."""

from __future__ import annotations

import re

import pytest

from packscope.core.fsck.syntax import (
    check_commit,
    check_object,
    check_tag,
    check_tree,
    check_tree_closely,
)
from packscope.core.oid import SHA1, SHA256
from tests import repos
from tests.repos import git_fsck, git_text

T = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # the empty tree
P = "ab" * 20
TREE_LINE = b"tree " + T.encode() + b"\n"
OBJECT_LINE = b"object " + P.encode() + b"\n"


def commit(
    author=b"A U Thor <a@example.com> 1600000000 +0000",
    committer=b"C O <c@example.com> 1600000000 +0000",
    head=TREE_LINE,
    message=b"\nmessage\n",
) -> bytes:
    out = head
    if author is not None:
        out += b"author " + author + b"\n"
    if committer is not None:
        out += b"committer " + committer + b"\n"
    return out + message


def tag(
    obj=OBJECT_LINE,
    typ=b"type commit\n",
    name=b"tag v1\n",
    tagger=b"tagger T <t@example.com> 1600000000 +0000\n",
    message=b"\nmessage\n",
) -> bytes:
    return obj + typ + name + tagger + message


def tree(*entries: tuple[bytes, bytes, str]) -> bytes:
    return b"".join(mode + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)


B = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # the empty blob

COMMITS = {
    "good": commit(),
    "date zero": commit(author=b"A <a@b> 0 +0000"),
    "missing name": commit(author=b"<a@b> 1 +0000"),
    "bad name": commit(author=b"A>x <a@b> 1 +0000"),
    "missing email": commit(author=b"A 1 +0000"),
    "no space before email": commit(author=b"A<a@b> 1 +0000"),
    "bad email": commit(author=b"A <a@b 1 +0000"),
    "no space before date": commit(author=b"A <a@b>1 +0000"),
    "zero padded date": commit(author=b"A <a@b> 0123 +0000"),
    "date overflow": commit(author=b"A <a@b> 99999999999999999999 +0000"),
    "bad date": commit(author=b"A <a@b> 12x +0000"),
    "letters for date": commit(author=b"A <a@b> abc +0000"),
    "short zone": commit(author=b"A <a@b> 1 +000"),
    "zone without sign": commit(author=b"A <a@b> 1 0000"),
    "long zone": commit(author=b"A <a@b> 1 +00000"),
    "no author": commit(author=None),
    "two authors": commit(author=b"A <a@b> 1 +0000\nauthor B <b@c> 1 +0000"),
    "no committer": commit(committer=None),
    "bad committer": commit(committer=b"C <c@d> x +0000"),
    "nul in header": commit(author=b"A <a@b> 1 +0000\0"),
    "nul in message": commit(message=b"\nmess\0age\n"),
    "unterminated header": commit(message=b"")[:-1],
    "no message": commit(message=b""),
}

TAGS = {
    "good": tag(),
    "bad tag name": tag(name=b"tag a..b\n"),
    "no tagger": tag(tagger=b""),
    "bad tagger email": tag(tagger=b"tagger T <t@x 1 +0000\n"),
    "extra header": tag(message=b"extra header\n\nmessage\n"),
}

TREES = {
    "good": tree((b"100644", b"a", B), (b"40000", b"d", T)),
    "zero padded mode": tree((b"0100644", b"a", B)),
    "bad mode": tree((b"100600", b"a", B)),
    "group writable mode": tree((b"100664", b"a", B)),
    "full path": tree((b"100644", b"a/b", B)),
    "dot": tree((b"100644", b".", B)),
    "dotdot": tree((b"100644", b"..", B)),
    "dotgit": tree((b"100644", b".git", B)),
    "dotgit upper case": tree((b"100644", b".GIT", B)),
    "dotgit ntfs short name": tree((b"100644", b"git~1", B)),
    "dotgit hfs ignorable": tree((b"100644", ".g\u200cit".encode(), B)),
    "null id": tree((b"100644", b"a", "00" * 20)),
    "duplicate": tree((b"100644", b"a", B), (b"100644", b"a", B)),
    "file and dir of one name": tree((b"100644", b"a", B), (b"100644", b"a.c", B), (b"40000", b"a", T)),
    "unsorted": tree((b"100644", b"b", B), (b"100644", b"a", B)),
    "dir sorts with slash": tree((b"40000", b"foo", T), (b"100644", b"foo-bar", B)),
    "several warnings": tree((b"0100644", b"..", B), (b"100644", b"a/b", "00" * 20)),
    "gitmodules symlink": tree((b"120000", b".gitmodules", B)),
    "mailmap symlink": tree((b"120000", b".mailmap", B)),
    "malformed mode": tree((b"100648", b"a", B)),
    "truncated": tree((b"100644", b"a", B))[:-3],
}


@pytest.fixture(scope="module")
def syntax_repo(tmp_path_factory):
    """Every case written loose into one repository: (repo, {(type, case): object id})."""
    repo = repos.init_bare(tmp_path_factory.mktemp("syntax") / "syntax.git")
    ids = {}
    for type_name, cases in (("commit", COMMITS), ("tag", TAGS), ("tree", TREES)):
        for name, body in cases.items():
            ids[(type_name, name)] = repos.hash_literally(repo, type_name, body)
    return repo, ids


def git_says(repo, *args) -> tuple[dict[str, list[str]], dict[tuple[str, str], str], set[str]]:
    """What one git fsck run says: ({id: message ids in order}, {(id, message id):
    "error" or "warning"}, {ids git could not parse})."""
    _, out = git_fsck(repo, "--no-dangling", *args)
    said: dict[str, list[str]] = {}
    level: dict[tuple[str, str], str] = {}
    unparsed = set()
    for line in out.splitlines():
        m = re.match(r"(error|warning) in (?:commit|tag|tree|blob) ([0-9a-f]+): (\w+):", line)
        if m:
            said.setdefault(m.group(2), []).append(m.group(3))
            level[(m.group(2), m.group(3))] = m.group(1)
        m = re.match(r"error: ([0-9a-f]{40}): object could not be parsed", line)
        if m:
            unparsed.add(m.group(1))
    return said, level, unparsed


@pytest.fixture(scope="module")
def oracle(syntax_repo):
    """{(type, case): (object id, git's message ids, git could not parse it)} from one git fsck run."""
    repo, ids = syntax_repo
    said, _, unparsed = git_says(repo)
    return {key: (oid, said.get(oid, []), oid in unparsed) for key, oid in ids.items()}


CASES = [("commit", n) for n in COMMITS] + [("tag", n) for n in TAGS] + [("tree", n) for n in TREES]
BODIES = {"commit": COMMITS, "tag": TAGS, "tree": TREES}


@pytest.mark.parametrize("type_name,case", CASES, ids=[f"{t}: {c}" for t, c in CASES])
def test_message_ids_match_git_fsck(oracle, type_name, case):
    _oid, git_ids, unparsed = oracle[(type_name, case)]
    ours = check_object(type_name, BODIES[type_name][case], SHA1)
    if unparsed:
        # git gave up before its syntax checks; ours name the defect, and fail as git does
        assert any(p.fails for p in ours), ours
    else:
        assert [p.msg_id for p in ours] == git_ids


def test_commits_git_cannot_parse_get_a_precise_message_id():
    bad_tree = commit(head=b"tree " + b"z" * 40 + b"\n")
    no_tree = commit(head=b"")
    bad_parent = commit(head=b"tree " + T.encode() + b"\nparent 123\n")
    assert [p.msg_id for p in check_commit(bad_tree, SHA1)] == ["badTreeSha1"]
    assert [p.msg_id for p in check_commit(no_tree, SHA1)] == ["missingTree"]
    assert [p.msg_id for p in check_commit(bad_parent, SHA1)] == ["badParentSha1"]


def test_tags_git_cannot_parse_get_a_precise_message_id():
    assert [p.msg_id for p in check_tag(tag(obj=b""), SHA1)] == ["missingObject"]
    assert [p.msg_id for p in check_tag(tag(obj=b"object 12\n"), SHA1)] == ["badObjectSha1"]
    assert [p.msg_id for p in check_tag(tag(typ=b""), SHA1)] == ["missingTypeEntry"]
    assert [p.msg_id for p in check_tag(tag(typ=b"type blobby\n"), SHA1)] == ["badType"]
    assert [p.msg_id for p in check_tag(tag(name=b""), SHA1)] == ["missingTagEntry"]


def test_severities_follow_gits_defaults(syntax_repo):
    """git prints fatals and errors as errors and infos as warnings, and
    --strict turns warnings (not infos) into errors: so the two runs tell
    every severity class apart, for each message git gives."""
    repo, ids = syntax_repo
    _, plain, _ = git_says(repo)
    _, strict, _ = git_says(repo, "--strict")
    ours = {
        (oid, p.msg_id): p.severity
        for (type_name, case), oid in ids.items()
        for p in check_object(type_name, BODIES[type_name][case], SHA1)
    }
    classes = {
        ("error", "error"): {"fatal", "error"},
        ("warning", "error"): {"warning"},
        ("warning", "warning"): {"info"},
    }
    for key, level in plain.items():
        assert ours.get(key) in classes[(level, strict[key])], (key, level, strict[key], ours.get(key))
    assert {ours[key] for key in plain} == {"fatal", "error", "warning", "info"}  # every class is exercised
    # an "ignore" is neither reported by git nor by us
    tag_id = ids[("tag", "extra header")]
    assert not [k for k in plain if k[0] == tag_id] and check_object("tag", TAGS["extra header"], SHA1) == []


def test_only_errors_and_fatals_fail():
    problems = check_tree(tree((b"0100644", b"a", B), (b"100644", b"a", B)), SHA1)
    assert [(p.msg_id, p.fails) for p in problems] == [("zeroPaddedFilemode", False), ("duplicateEntries", True)]


def test_an_object_stops_at_its_first_error_but_not_at_warnings():
    both = commit(author=b"A <a@b 1 +0000", committer=b"C <c@d> x +0000")
    assert [p.msg_id for p in check_commit(both, SHA1)] == ["badEmail"]


def test_severity_overrides_work_like_fsck_config():
    body = tree((b"0100644", b"a", B))
    assert [p.severity for p in check_tree(body, SHA1, {"zeroPaddedFilemode": "error"})] == ["error"]
    assert check_tree(body, SHA1, {"zeroPaddedFilemode": "ignore"}) == []


def test_sha256_trees_and_commits_are_checked_with_their_id_size():
    blob = "ab" * 32
    good = b"100644 a\0" + bytes.fromhex(blob)
    assert check_tree(good, SHA256) == []
    assert [p.msg_id for p in check_tree(good, SHA1)] == ["badTree"]
    body = b"tree " + b"cd" * 32 + b"\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n"
    assert check_commit(body, SHA256) == []


def test_unknown_type_is_an_error():
    assert [p.msg_id for p in check_object("widget", b"", SHA1)] == ["unknownType"]
    assert check_object("blob", b"\0anything", SHA1) == []


def test_messages_name_the_offset_of_the_problem():
    body = commit(author=b"A <a@b 1 +0000")
    (p,) = check_commit(body, SHA1)
    assert body.index(b"author") < p.offset <= body.index(b"\ncommitter")  # inside the author line


def test_real_history_is_clean(packed_repo):
    out = git_text("cat-file", "--batch-all-objects", "--batch-check", cwd=packed_repo)
    from packscope.core.repo.repository import Repository
    from packscope.core.store.odb import ObjectStore

    repo = Repository.open(packed_repo)
    store = ObjectStore(str(repo.objects_dir), repo.object_format)
    try:
        for line in out.splitlines():
            oid, typ, _ = line.split()
            if typ != "blob":
                type_name, body = store.read(bytes.fromhex(oid))
                assert check_object(type_name, body, SHA1) == [], oid
                if type_name == "tree":
                    assert check_tree_closely(body, SHA1) == [], oid
    finally:
        store.close()


@pytest.mark.parametrize("case", list(TREES))
def test_the_fast_path_for_trees_agrees_with_the_close_look(case):
    assert check_tree(TREES[case], SHA1) == check_tree_closely(TREES[case], SHA1)
