""".gitmodules and .gitattributes blobs: checked as git fsck checks them."""

from __future__ import annotations

import pytest

from core.errors import MissingObjectError
from core.fsck_special_blobs import (
    SpecialBlobs,
    check_gitattributes,
    check_gitmodules,
    submodule_name_ok,
    submodule_url_ok,
)


def ids(problems):
    return [p[0] for p in problems]


@pytest.mark.parametrize("name, ok", [
    ("lib", True), ("a/b", True), ("..x", True), ("x..", True), ("a/..b", True),
    ("", False), ("..", False), ("../x", False), ("a/../b", False), ("a/..", False), ("a\\..\\b", False),
])
def test_submodule_names_that_could_escape_git_modules_are_refused(name, ok):
    assert submodule_name_ok(name) is ok


@pytest.mark.parametrize("url, ok", [
    ("https://example.com/x.git", True), ("git@example.com:x.git", True), ("../sibling.git", True),
    ("./x", True), ("git://example.com/x", True), ("http::https://example.com/x", True),
    ("-upload-pack=evil", False), ("../x%0aevil", False), ("git://host/x%0A", False),
    ("../../../:example.com/x", False), ("../../..//example.com/x", False), ("../../a/example.com", True),
    ("https:///example.com/x", False), ("http::https:///x", False),
])
def test_submodule_urls_follow_gits_rules(url, ok):
    assert submodule_url_ok(url) is ok


def test_gitmodules_content_checks_name_url_path_update():
    text = b"""[submodule "good"]
\tpath = lib
\turl = https://example.com/lib.git
[submodule "../escape"]
\tpath = -evil
\turl = --upload-pack=touch
\tupdate = !rm -rf /
"""
    # git checks the name at each of the section's keys, then the key itself.
    assert ids(check_gitmodules(text)) == ["gitmodulesName", "gitmodulesPath", "gitmodulesName", "gitmodulesUrl",
                                           "gitmodulesName", "gitmodulesUpdate"]
    assert check_gitmodules(b"[submodule \"a\"]\n\tpath = a\n") == []
    assert ids(check_gitmodules(b"[submodule \"a\"\n")) == ["gitmodulesParse"]


def test_gitattributes_lines_of_2048_bytes_or_more_are_refused():
    assert check_gitattributes(b"*.c diff\n" + b"x" * 2047 + b"\n") == []
    assert ids(check_gitattributes(b"*.c diff\n" + b"x" * 2048)) == ["gitattributesLineLength"]
    # What follows a NUL is never seen by a C-string parser: nor here.
    assert check_gitattributes(b"ok\n\0" + b"x" * 5000) == []


def test_collected_blobs_are_read_at_the_end_missing_promised_and_non_blobs():
    blobs = SpecialBlobs()
    a, b, c, d = (bytes([n]) * 20 for n in (1, 2, 3, 4))
    tree = b"".join(b"%s %s\0%s" % (mode, name, oid) for mode, name, oid in [
        (b"100644", b".GitModules", a),       # case folded
        (b"100644", b".gitattributes", b),
        (b"40000", b".gitattributes ", c),     # NTFS drops the trailing space; a tree here
        (b"120000", b".gitmodules", d),        # a symbolic link: the tree's problem, not a blob to check
    ])
    blobs.add_tree(tree, 20)
    assert blobs.found == {a: ".gitmodules", b: ".gitattributes", c: ".gitattributes"}
    store = {a: ("blob", b"[submodule \"x\"]\n\tupdate = !boom\n"), c: ("tree", b"")}

    def read(oid):
        if oid not in store:
            raise MissingObjectError("gone")
        return store[oid]

    found = [(p.oid, p.msg_id) for p in blobs.finish(read, lambda oid: False)]
    assert found == [(a, "gitmodulesUpdate"), (b, "gitattributesMissing"), (c, "gitattributesBlob")]
    promised = [(p.oid, p.msg_id) for p in blobs.finish(read, lambda oid: oid == b)]
    assert (b, "gitattributesMissing") not in promised


def test_trees_without_candidate_names_are_skipped_in_c():
    blobs = SpecialBlobs()
    blobs.add_tree(b"100644 README\0" + bytes(20) + b"100644 .gitignore\0" + bytes([9]) * 20, 20)
    assert blobs.found == {}
