"""git run as the oracle (a fixed environment), fast-import streams and the
small helpers every builder uses (init_bare, import_history, pack_files, …)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_AUTHOR_NAME": "A U Thor",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "C O Mitter",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "LC_ALL": "C",
    "TZ": "UTC",
}


def git_env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    if extra:
        env.update(extra)
    return env


def git(*args, cwd=None, input: bytes | str | None = None, env: dict | None = None, check=True) -> bytes:
    """Run git as the oracle; its stdout as bytes."""
    if isinstance(input, str):
        input = input.encode()
    p = subprocess.run(
        ["git", *map(str, args)],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=git_env(env),
    )
    if check and p.returncode:
        raise RuntimeError(
            f"git {' '.join(map(str, args))} failed ({p.returncode}): {p.stderr.decode(errors='replace')}"
        )
    return p.stdout


def git_text(*args, **kw) -> str:
    return git(*args, **kw).decode()


def git_dated(stamp: str, *args, cwd) -> str:
    """``git ARGS`` (a commit or a merge) authored and committed at ``stamp``
    (``"<seconds> <zone>"``); the new HEAD's id."""
    git(*args, cwd=cwd, env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
    return git_text("rev-parse", "HEAD", cwd=cwd).strip()


# --- history streams ---------------------------------------------------------


def fast_import_stream(
    commits: int,
    *,
    seed: int = 1,
    files: int = 12,
    branch: str = "refs/heads/main",
    start_time: int = 1_600_000_000,
    merges: bool = True,
    tags: bool = True,
) -> bytes:
    """A deterministic fast-import stream: a history with edits (so deltas
    form), a side branch merged back, annotated tags, odd timezones, an
    executable, a symlink, tree-order traps and a large file."""
    rnd = random.Random(seed)
    out = []
    mark = 0
    words = [f"word{i}" for i in range(400)]
    contents = {f"dir{i % 3}/file{i}.txt": "\n".join(rnd.choice(words) for _ in range(60)) + "\n" for i in range(files)}
    contents["foo-bar"] = "dash\n"
    contents["foo.txt"] = "dot\n"
    contents["foo/inner"] = "slash\n"
    contents["big.bin"] = "".join(chr(65 + rnd.randrange(26)) for _ in range(70_000))
    tz = ["+0000", "-0700", "+0530", "+1400", "-1200", "+0100"]
    last = {}
    side_from = None
    for n in range(commits):
        mark += 1
        t = start_time + n * 60
        path = rnd.choice(sorted(contents))
        lines = contents[path].split("\n")
        k = rnd.randrange(len(lines))
        lines[k] = f"edit {n} " + rnd.choice(words)
        contents[path] = "\n".join(lines)
        out.append(f"commit {branch}\nmark :{mark}\n")
        out.append(f"author A U Thor <author@example.com> {t} {tz[n % len(tz)]}\n")
        out.append(f"committer C O Mitter <committer@example.com> {t} {tz[(n + 1) % len(tz)]}\n")
        msg = f"commit {n}: edit {path}\n\nBody line for {n}.\n"
        out.append(f"data {len(msg.encode())}\n{msg}\n")
        if n == 0:
            for p, c in sorted(contents.items()):
                b = c.encode()
                out.append(f"M 100644 inline {p}\ndata {len(b)}\n")
                out.append(b.decode() + "\n")
            out.append("M 100755 inline run.sh\ndata 10\n#!/bin/sh\n\n")
            out.append("M 120000 inline link\ndata 7\nfoo.txt\n")
            out.append("M 100644 inline empty\ndata 0\n\n")
        else:
            if merges and side_from is not None and n == side_from + 3:
                out.append(f"merge :{last['side']}\n")
                side_from = None
            b = contents[path].encode()
            out.append(f"M 100644 inline {path}\ndata {len(b)}\n")
            out.append(b.decode() + "\n")
        last["main"] = mark
        if merges and n % 17 == 5 and side_from is None and n + 3 < commits:
            # a side-branch commit off this one, merged three commits later
            mark += 1
            out.append(f"commit refs/heads/side\nmark :{mark}\n")
            out.append(
                f"author S Ide <side@example.com> {t + 30} +0200\ncommitter S Ide <side@example.com> {t + 30} +0200\n"
            )
            m2 = f"side work at {n}\n"
            out.append(f"data {len(m2)}\n{m2}from :{mark - 1}\n")
            out.append(f"M 100644 inline side/s{n}.txt\ndata 5\nside\n\n")
            last["side"] = mark
            side_from = n
            out.append(f"reset {branch}\nfrom :{mark - 1}\n\n")
        if tags and n % 25 == 3:
            out.append(
                f"tag v{n}\nfrom :{last['main']}\ntagger T Agger <tag@example.com> {t} +0000\ndata 8\nrelease\n\n"
            )
    return "".join(out).encode()


def work_tree_with_commits(work: Path, commits: int, after_each: Callable[[int], object] | None = None) -> Path:
    """A new work tree on ``main`` with commits c0, c1, … each adding a file
    f<i> that holds "<i>"; ``after_each(i)`` runs after commit i."""
    git("init", "-q", "-b", "main", work)
    for i in range(commits):
        (work / f"f{i}").write_text(f"{i}\n")
        git("add", f"f{i}", cwd=work)
        git("commit", "-q", "-m", f"c{i}", cwd=work)
        if after_each is not None:
            after_each(i)
    return work


def init_bare(path: Path, object_format: str = "sha1") -> Path:
    if path.exists():
        shutil.rmtree(path)
    git("init", "-q", "--bare", "--initial-branch=main", f"--object-format={object_format}", path)
    return path


def import_history(repo: Path, commits: int, **kw) -> None:
    git("fast-import", "--quiet", cwd=repo, input=fast_import_stream(commits, **kw))


def age_directories(repo: Path, seconds: int = 60) -> None:
    """Make the object directories look untouched for a while: a scan of a
    directory changed less than 2 s ago is provisional (the next miss rescans)."""
    import time

    past = time.time() - seconds
    for d in [repo / "objects", *(repo / "objects").iterdir()]:
        if d.is_dir():
            os.utime(d, (past, past))


def pack_files(repo: Path) -> list[Path]:
    return sorted((repo / "objects" / "pack").glob("pack-*.pack"))


def all_objects(repo: Path) -> list[tuple[str, str, int]]:
    """(id, type, size) of every object, from git."""
    out = git_text("cat-file", "--batch-all-objects", "--batch-check", cwd=repo)
    rows = []
    for line in out.splitlines():
        oid, typ, size = line.split()
        rows.append((oid, typ, int(size)))
    return rows


def ids_of_type(repo: Path, type_name: str) -> list[str]:
    """The ids of every ``type_name`` object, from git."""
    return [oid for oid, typ, _ in all_objects(repo) if typ == type_name]


def show_index(idx: Path, object_format: str = "sha1") -> dict[str, int]:
    """{id: offset} of an .idx, according to git show-index."""
    with open(idx, "rb") as f:
        out = git_text("show-index", f"--object-format={object_format}", input=f.read())
    result = {}
    for line in out.splitlines():
        parts = line.split()
        result[parts[1]] = int(parts[0])
    return result


def hash_literally(repo: Path, type_name: str, body: bytes) -> str:
    """Write any bytes as a loose object of ``type_name`` (git's checks off)."""
    return git_text("hash-object", "-t", type_name, "-w", "--stdin", "--literally", cwd=repo, input=body).strip()
