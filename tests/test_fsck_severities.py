"""The severity fsck reports for each of git's message ids is the word git
prints: git's "info" messages (badFilemode, missingTaggerEntry, badTagName,
gitignoreSymlink, ...) come out as warnings ("warning in tree ID:
badFilemode: ..."), never failing fsck; errors as errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli import packscope_in
from tests.repos import git, git_fsck, git_text, hash_literally

REPORTED = re.compile(r"^(error|warning) in \w+ ([0-9a-f]{40}): (\w+):", re.M)


def _tree(repo: Path, *entries: tuple[str, str, str]) -> str:
    body = b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    return hash_literally(repo, "tree", body)


def _repo(root: Path) -> Path:
    """One object for each severity class git has, all reachable."""
    repo = root / "sev"
    git("init", "-q", repo)
    blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input="x\n").strip()
    trees = [
        _tree(repo, ("100600", "f", blob)),  # badFilemode: info
        _tree(repo, ("040000", "d", "4b825dc642cb6eb9a060e54bf8d69288fbee4904")),  # zeroPaddedFilemode: warning
        _tree(repo, ("120000", ".gitignore", blob)),  # gitignoreSymlink: info
        _tree(repo, ("100644", "b", blob), ("100644", "a", blob)),  # treeNotSorted: error
    ]
    git("mktree", cwd=repo, input="")  # the empty tree, which the zero-padded entry names
    parent = None
    for t in trees:
        parent = git_text("commit-tree", t, "-m", "c", *(["-p", parent] if parent else []), cwd=repo).strip()
    git("update-ref", "refs/heads/main", parent, cwd=repo)
    untagged = hash_literally(repo, "tag", f"object {parent}\ntype commit\ntag v1\n\nno tagger\n".encode())
    badname = hash_literally(
        repo, "tag", f"object {parent}\ntype commit\ntag a..b\ntagger T <t@x> 1600000000 +0000\n\nm\n".encode()
    )
    git("update-ref", "refs/tags/v1", untagged, cwd=repo)
    git("update-ref", "refs/tags/v2", badname, cwd=repo)
    return repo


def test_each_message_has_the_severity_git_prints(tmp_path):
    repo = _repo(tmp_path)
    status, text = git_fsck(repo)
    theirs = {(oid, msg_id): word for word, oid, msg_id in REPORTED.findall(text)}
    assert {m for _, m in theirs} >= {
        "badFilemode",
        "missingTaggerEntry",
        "badTagName",
        "gitignoreSymlink",
        "zeroPaddedFilemode",
        "treeNotSorted",
    }, text
    p = packscope_in(repo, "fsck", "--json", "--no-progress", "--no-dangling")
    findings = [json.loads(line) for line in p.stdout.decode().splitlines()]
    ours = {(f["oid"], f["msg_id"]): f["severity"] for f in findings if f.get("msg_id")}
    assert ours == theirs
    assert p.returncode == status  # only treeNotSorted fails, for both


def test_info_messages_do_not_fail_fsck(tmp_path):
    repo = tmp_path / "info-only"
    git("init", "-q", repo)
    blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input="x\n").strip()
    c = git_text("commit-tree", _tree(repo, ("100600", "f", blob)), "-m", "c", cwd=repo).strip()
    git("update-ref", "refs/heads/main", c, cwd=repo)
    status, text = git_fsck(repo)
    p = packscope_in(repo, "fsck", "--no-progress")
    assert (status, p.returncode) == (0, 0)
    assert "warning in tree" in text and p.stdout.decode().startswith("warning: badFilemode:")
