"""Repositories for the History and Health UI tests, built with git.

* :func:`build_history_repo` — a small history with directories, a side
  branch merged back, tags (annotated and lightweight), and hostile text:
  a subject with Rich markup, an escape sequence and a bidi override, an
  author name that is not valid UTF-8, a latin-1 commit with an
  ``encoding`` header, a path and a branch name with a bidi override.
* :func:`build_long_history` — N commits of a one-file tree through
  fast-import (20k in ~2 s), for scrolling and deep searches.
* :func:`corrupt_copies` — copies of a healthy repository, each with one
  defect made by byte surgery.

Every date is fixed, so ids are the same on every run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.repos import git, git_text, init_bare

HOSTILE_SUBJECT = "[bold red]boom[/] \x1b[31mred \u202eevil\u202c end"
LATIN1_SUBJECT = "caf\xe9 cr\xe8me"
BIDI_BRANCH = "evil\u202ebranch"
BIDI_PATH = "docs/\u202etxt.exe"


def _commit(
    out: list,
    branch: str,
    n: int,
    msg: str,
    files: dict,
    *,
    author="A U Thor <author@example.com>",
    merge: str | None = None,
    from_: str | None = None,
    tz="+0200",
) -> None:
    t = 1_600_000_000 + n * 3600
    out.append(f"commit {branch}\nmark :{n + 1}\n")
    out.append(f"author {author} {t} {tz}\ncommitter C O Mitter <committer@example.com> {t} -0500\n")
    data = msg.encode()
    out.append(f"data {len(data)}\n{msg}\n")
    if from_:
        out.append(f"from {from_}\n")
    if merge:
        out.append(f"merge {merge}\n")
    for path, content in files.items():
        b = content.encode()
        out.append(f"M 100644 inline {path}\ndata {len(b)}\n{content}\n")
    out.append("\n")


def build_history_repo(root: Path, name: str = "history.git") -> Path:
    repo = init_bare(root / name)
    out: list[str] = []
    n = 0
    for n in range(40):
        files = {f"dir{n % 3}/file{n % 5}.txt": f"edit {n}\n"}
        if n == 0:
            files.update({"README": "readme\n", "dir1/sub/deep.txt": "deep\n", BIDI_PATH: "x\n"})
        if n == 17:
            files["dir1/sub/deep.txt"] = "deeper\n"
        _commit(out, "refs/heads/main", n, f"commit {n}: edit\n\nbody {n}\n", files)
        if n == 10:
            out.append("reset refs/heads/side\nfrom :11\n\n")
    # a side branch merged back
    _commit(
        out,
        "refs/heads/side",
        40,
        "side work\n",
        {"side.txt": "side\n"},
        from_=":11",
        author="S Ide <side@example.com>",
    )
    _commit(out, "refs/heads/main", 41, "Merge side\n", {}, merge=":41", from_=":40")
    _commit(out, "refs/heads/main", 42, HOSTILE_SUBJECT + "\n\nthe body\n", {"dir2/hostile.txt": "h\n"})
    out.append("tag v1.0\nfrom :20\ntagger T Agger <tag@example.com> 1600100000 +0000\ndata 8\nrelease\n\n")
    git("fast-import", "--quiet", cwd=repo, input="".join(out).encode())
    git("update-ref", "refs/tags/light", "main~5", cwd=repo)
    # Bytes that fast-import would not take: written literally on top.
    head = git_text("rev-parse", "main", cwd=repo).strip()
    tree = git_text("rev-parse", "main^{tree}", cwd=repo).strip()
    latin = (
        f"tree {tree}\nparent {head}\n".encode()
        + b"author Ren\xe9 Lat <rene@example.com> 1600200000 +0100\n"
        + b"committer Ren\xe9 Lat <rene@example.com> 1600200000 +0100\n"
        + b"encoding ISO-8859-1\n\n"
        + LATIN1_SUBJECT.encode("latin-1")
        + b"\n"
    )
    c1 = git_text("hash-object", "--literally", "-t", "commit", "-w", "--stdin", cwd=repo, input=latin).strip()
    bad = (
        f"tree {tree}\nparent {c1}\n".encode()
        + b"author Bad \xff\xfe Name <bad@example.com> 1600300000 -0330\n"
        + b"committer Bad \xff\xfe Name <bad@example.com> 1600300000 -0330\n\ninvalid \xc3\x28 utf-8\n"
    )
    c2 = git_text("hash-object", "--literally", "-t", "commit", "-w", "--stdin", cwd=repo, input=bad).strip()
    git("update-ref", "refs/heads/main", c2, cwd=repo)
    git("update-ref", f"refs/heads/{BIDI_BRANCH}", "main~3", cwd=repo)
    git("repack", "-a", "-d", "-q", cwd=repo)
    git("commit-graph", "write", "--reachable", cwd=repo)
    return repo


def build_long_history(root: Path, commits: int, name: str | None = None) -> Path:
    """``commits`` commits on main, each changing the one file; subjects
    ``step N``; commit-graph written (for the estimate)."""
    repo = init_bare(root / (name or f"long-{commits}.git"))
    parts = []
    for n in range(commits):
        t = 1_500_000_000 + n * 60
        msg = f"step {n}\n"
        body = f"{n}\n"
        parts.append(
            f"commit refs/heads/main\nmark :{n + 1}\ncommitter L Ong <long@example.com> {t} +0000\n"
            f"data {len(msg)}\n{msg}" + (f"from :{n}\n" if n else "") + f"M 100644 inline f\ndata {len(body)}\n{body}\n"
        )
    git("fast-import", "--quiet", "--depth=50", cwd=repo, input="".join(parts).encode())
    git("commit-graph", "write", "--reachable", cwd=repo)
    return repo


# --- corrupt copies -----------------------------------------------------------------------


def _copy(src: Path, dst: Path) -> Path:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    for dirpath, _dirs, files in os.walk(dst):
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o644)
    return dst


def _pack(repo: Path) -> tuple[Path, Path]:
    pack = sorted((repo / "objects" / "pack").glob("pack-*.pack"))[0]
    return pack, pack.with_suffix(".idx")


def corrupt_copies(base: Path, root: Path) -> dict[str, Path]:
    """One repository per defect: name -> path."""
    out = {}
    # a pack cut short
    r = out["truncated-pack"] = _copy(base, root / "truncated-pack.git")
    pack, _ = _pack(r)
    data = pack.read_bytes()
    pack.write_bytes(data[: len(data) * 2 // 3])
    # one byte flipped in the middle of the pack
    r = out["flipped-byte"] = _copy(base, root / "flipped-byte.git")
    pack, _ = _pack(r)
    data = bytearray(pack.read_bytes())
    data[len(data) // 2] ^= 0xFF
    pack.write_bytes(bytes(data))
    # a loose object that is not zlib at all
    r = out["garbage-loose"] = _copy(base, root / "garbage-loose.git")
    blob = git_text("hash-object", "-w", "--stdin", cwd=r, input="to be damaged\n").strip()
    path = r / "objects" / blob[:2] / blob[2:]
    os.chmod(path, 0o644)
    path.write_bytes(b"this is not zlib \x00\xff garbage")
    # a ref to nothing, and a ref file that is not a ref
    r = out["broken-ref"] = _copy(base, root / "broken-ref.git")
    (r / "refs" / "heads" / "broken").write_text("deadbeef" * 5 + "\n")
    (r / "refs" / "heads" / "garbage").write_text("not a ref at all\n")
    # an index left without its pack
    r = out["idx-without-pack"] = _copy(base, root / "idx-without-pack.git")
    pack, idx = _pack(r)
    shutil.copy(idx, idx.with_name("pack-" + "1" * 40 + ".idx"))
    return out
