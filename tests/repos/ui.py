"""The UI's repositories (hostile names and messages, packs beside a midx)."""

from __future__ import annotations

from pathlib import Path

from tests.repos.common import fast_import_stream, git
from tests.repos.graphs import build_midx_repo
from tests.repos.packs import add_loose

# --- the UI's repositories ------------------------------------------------------------

UI_HOSTILE_MESSAGE = "[bold red]boom[/] \x1b[31mred\x1b[0m \u202eevil\u202c end\n"
UI_HOSTILE_NAME = "[red]name"


def build_ui_repo(root: Path, name: str = "ui") -> Path:
    """For the UI tests: 8 packs under a multi-pack-index, 2 packs outside
    it (one holding a commit whose message and tree entry carry Rich markup,
    an escape sequence and a bidi override), 40 loose blobs, a commit-graph."""
    repo = build_midx_repo(root, packs=8, name=name)
    msg = UI_HOSTILE_MESSAGE.encode()
    content = b"hello\n"
    stream = (
        b"commit refs/heads/odd\nmark :1\ncommitter X <x@example.com> 1600000000 +0000\n"
        + b"data %d\n%s\n" % (len(msg), msg)
        + b"M 100644 inline %s\ndata %d\n%s\n" % (UI_HOSTILE_NAME.encode(), len(content), content)
        + b"checkpoint\n\n"
        + b"commit refs/heads/odd\nmark :2\ncommitter X <x@example.com> 1600000100 +0000\ndata 7\nsecond\n"
        + b"from :1\nM 100644 inline other.txt\ndata 6\nworld\n\ncheckpoint\n\n"
    )
    git("-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", cwd=repo, input=stream)
    add_loose(repo, 40, seed=21)
    git("commit-graph", "write", "--reachable", cwd=repo)
    return repo


def add_pack_beside(repo: Path, branch: str = "refs/heads/later", seed: int = 31) -> None:
    """Another process writes a new pack (as a fetch would)."""
    stream = fast_import_stream(2, seed=seed, branch=branch, merges=False, tags=False)
    git("-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", cwd=repo, input=stream)
