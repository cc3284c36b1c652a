""".gitmodules and .gitattributes blobs: checked as git fsck checks them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from packscope.core.errors import MissingObjectError
from packscope.core.fsck.special_blobs import (
    SEVERITIES,
    SpecialBlobs,
    check_gitattributes,
    check_gitmodules,
    submodule_name_ok,
    submodule_url_ok,
)
from tests import repos
from tests.cli import packscope


def ids(problems):
    return [p[0] for p in problems]


@pytest.mark.parametrize(
    "name, ok",
    [
        ("lib", True),
        ("a/b", True),
        ("..x", True),
        ("x..", True),
        ("a/..b", True),
        ("", False),
        ("..", False),
        ("../x", False),
        ("a/../b", False),
        ("a/..", False),
        ("a\\..\\b", False),
    ],
)
def test_submodule_names_that_could_escape_git_modules_are_refused(name, ok):
    assert submodule_name_ok(name) is ok


@pytest.mark.parametrize(
    "url, ok",
    [
        ("https://example.com/x.git", True),
        ("git@example.com:x.git", True),
        ("../sibling.git", True),
        ("./x", True),
        ("git://example.com/x", True),
        ("http::https://example.com/x", True),
        ("-upload-pack=evil", False),
        ("../x%0aevil", False),
        ("git://host/x%0A", False),
        ("../../../:example.com/x", False),
        ("../../..//example.com/x", False),
        ("../../a/example.com", True),
        ("https:///example.com/x", False),
        ("http::https:///x", False),
    ],
)
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
    assert ids(check_gitmodules(text)) == [
        "gitmodulesName",
        "gitmodulesPath",
        "gitmodulesName",
        "gitmodulesUrl",
        "gitmodulesName",
        "gitmodulesUpdate",
    ]
    assert check_gitmodules(b'[submodule "a"]\n\tpath = a\n') == []
    assert ids(check_gitmodules(b'[submodule "a"\n')) == ["gitmodulesParse"]


def test_gitattributes_lines_of_2048_bytes_or_more_are_refused():
    assert check_gitattributes(b"*.c diff\n" + b"x" * 2047 + b"\n") == []
    assert ids(check_gitattributes(b"*.c diff\n" + b"x" * 2048)) == ["gitattributesLineLength"]
    # What follows a NUL is never seen by a C-string parser: nor here.
    assert check_gitattributes(b"ok\n\0" + b"x" * 5000) == []


def test_collected_blobs_are_read_at_the_end_missing_promised_and_non_blobs():
    blobs = SpecialBlobs()
    a, b, c, d = (bytes([n]) * 20 for n in (1, 2, 3, 4))
    tree = b"".join(
        b"%s %s\0%s" % (mode, name, oid)
        for mode, name, oid in [
            (b"100644", b".GitModules", a),  # case folded
            (b"100644", b".gitattributes", b),
            (b"40000", b".gitattributes ", c),  # NTFS drops the trailing space; a tree here
            (b"120000", b".gitmodules", d),  # a symbolic link: the tree's problem, not a blob to check
        ]
    )
    blobs.add_tree(tree, 20)
    assert blobs.found == {a: ".gitmodules", b: ".gitattributes", c: ".gitattributes"}
    store = {a: ("blob", b'[submodule "x"]\n\tupdate = !boom\n'), c: ("tree", b"")}

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


# --- against git fsck ---------------------------------------------------------------------

GITMODULES_CASES = {
    "good": b'[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib.git\n',
    "option-url": b'[submodule "a"]\n\turl = -upload-pack=touch\n',
    "newline-url": b'[submodule "a"]\n\turl = ../x%0aevil\n',
    "hostless-url": b'[submodule "a"]\n\turl = https:///example.com/x\n',
    "helper-hostless-url": b'[submodule "a"]\n\turl = http::https:///x\n',
    "climbing-url": b'[submodule "a"]\n\turl = ../../..//example.com/x\n',
    "option-path": b'[submodule "a"]\n\tpath = -p\n',
    "command-update": b'[submodule "a"]\n\tupdate = !touch /tmp/x\n',
    "escaping-name": b'[submodule "../../modules/evil"]\n\tpath = a\n',
    "unparsable": b'[submodule "a"\n\tpath = a\n',
}


def _special_repo(root: Path) -> Path:
    repo = repos.init_bare(root / "special.git")

    def blob(data: bytes) -> str:
        return repos.git_text("hash-object", "-w", "--stdin", cwd=repo, input=data).strip()

    def tree(lines: list[str], missing: bool = False) -> str:
        args = ["mktree", "--missing"] if missing else ["mktree"]
        return repos.git_text(*args, cwd=repo, input="".join(f"{line}\n" for line in lines)).strip()

    readme = blob(b"read me\n")
    trees = [
        tree([f"100644 blob {blob(text)}\t.gitmodules", f"100644 blob {readme}\tREADME"])
        for text in GITMODULES_CASES.values()
    ]
    long_lines = blob(b"*.c diff\n" + b"x" * 3000 + b"\n")
    trees.append(tree([f"100644 blob {long_lines}\t.gitattributes"]))
    trees.append(tree([f"040000 tree {trees[0]}\t.gitmodules"]))  # not a blob
    trees.append(tree([f"100644 blob {'1' * 40}\t.gitattributes"], missing=True))  # not there at all
    ntfs = blob(b'[submodule "x"]\n\tupdate = !x\n')
    trees.append(tree([f"100644 blob {ntfs}\tGITMOD~1"]))  # an NTFS 8.3 short name
    parent = None
    for t in trees:
        args = ["commit-tree", t, "-m", "case"] + (["-p", parent] if parent else [])
        parent = repos.git_text(*args, cwd=repo).strip()
    repos.git("update-ref", "refs/heads/main", parent, cwd=repo)
    return repo


def test_special_blob_findings_are_the_ones_git_fsck_reports(tmp_path):
    repo = _special_repo(tmp_path)
    git = subprocess.run(["git", "fsck", "--no-dangling"], cwd=repo, capture_output=True, env=repos.git_env())
    text = (git.stdout + git.stderr).decode()
    special = set(SEVERITIES)
    theirs = {
        (oid, msg_id)
        for oid, msg_id in re.findall(r"(?:error|warning) in \w+ ([0-9a-f]+): (\w+)", text)
        if msg_id in special
    }
    assert {m for _, m in theirs} >= {
        "gitmodulesUrl",
        "gitmodulesPath",
        "gitmodulesUpdate",
        "gitmodulesName",
        "gitmodulesParse",
        "gitattributesLineLength",
        "gitmodulesBlob",
        "gitattributesMissing",
    }, text
    p = packscope("-C", repo, "fsck", "--json", "--no-progress", "--no-dangling", check=False)
    findings = [json.loads(line) for line in p.stdout.decode().splitlines()]
    ours = {(f["oid"], f["msg_id"]) for f in findings if f.get("msg_id") in special}
    assert ours == theirs
    assert p.returncode & 1 and git.returncode & 1  # errors in objects, for both


def test_hfs_ignorables_and_ntfs_short_names_are_candidates_random_id_bytes_are_not():
    blobs = SpecialBlobs()
    # Ids full of E2/EF bytes (the lead bytes of HFS+'s ignorables) name nothing special.
    noisy = b"".join(b"100644 file%d\0%s" % (i, bytes([0xE2, 0xEF]) * 10) for i in range(20))
    blobs.add_tree(noisy, 20)
    assert blobs.found == {}
    zwnj = "\u200c".encode()
    odd = [b".git" + zwnj + b"modules", b"GITMOD~1", b".gitattributes."]
    tree = b"".join(b"100644 %s\0%s" % (name, bytes([i + 1]) * 20) for i, name in enumerate(sorted(odd)))
    blobs.add_tree(tree, 20)
    assert len(blobs.found) == 3
