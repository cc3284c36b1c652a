"""Repositories the suite builds with git, and git run as the oracle.

Nothing here depends on ../shared: a fresh clone builds everything it tests.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
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
        ["git", *map(str, args)], cwd=cwd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=git_env(env),
    )
    if check and p.returncode:
        raise RuntimeError(f"git {' '.join(map(str, args))} failed ({p.returncode}): {p.stderr.decode(errors='replace')}")
    return p.stdout


def git_text(*args, **kw) -> str:
    return git(*args, **kw).decode()


# --- history streams ---------------------------------------------------------


def fast_import_stream(commits: int, *, seed: int = 1, files: int = 12, branch: str = "refs/heads/main",
                       start_time: int = 1_600_000_000, merges: bool = True, tags: bool = True) -> bytes:
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
            out.append(f"author S Ide <side@example.com> {t + 30} +0200\ncommitter S Ide <side@example.com> {t + 30} +0200\n")
            m2 = f"side work at {n}\n"
            out.append(f"data {len(m2)}\n{m2}from :{mark - 1}\n")
            out.append(f"M 100644 inline side/s{n}.txt\ndata 5\nside\n\n")
            last["side"] = mark
            side_from = n
            out.append(f"reset {branch}\nfrom :{mark - 1}\n\n")
        if tags and n % 25 == 3:
            out.append(f"tag v{n}\nfrom :{last['main']}\ntagger T Agger <tag@example.com> {t} +0000\ndata 8\nrelease\n\n")
    return "".join(out).encode()


def init_bare(path: Path, object_format: str = "sha1") -> Path:
    if path.exists():
        shutil.rmtree(path)
    git("init", "-q", "--bare", f"--object-format={object_format}", path)
    return path


def import_history(repo: Path, commits: int, **kw) -> None:
    git("fast-import", "--quiet", cwd=repo, input=fast_import_stream(commits, **kw))


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


def show_index(idx: Path, object_format: str = "sha1") -> dict[str, int]:
    """{id: offset} of an .idx, according to git show-index."""
    with open(idx, "rb") as f:
        out = git_text("show-index", f"--object-format={object_format}", input=f.read())
    result = {}
    for line in out.splitlines():
        parts = line.split()
        result[parts[1]] = int(parts[0])
    return result


# --- the standard set ------------------------------------------------------------


def build_packed(root: Path, commits: int = 60, object_format: str = "sha1") -> Path:
    repo = init_bare(root / f"packed-{object_format}.git", object_format)
    import_history(repo, commits)
    git("repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50", cwd=repo)
    return repo


def build_idx_v1(root: Path) -> Path:
    repo = init_bare(root / "idxv1.git")
    import_history(repo, 40, seed=2)
    git("-c", "pack.indexVersion=1", "repack", "-a", "-d", "-q", cwd=repo)
    return repo


def build_idx_64(root: Path) -> Path:
    """idx v2 whose offsets above 64 bytes all sit in the large-offset table."""
    repo = init_bare(root / "idx64.git")
    import_history(repo, 40, seed=3)
    git("repack", "-a", "-d", "-q", cwd=repo)
    pack = pack_files(repo)[0]
    idx = pack.with_suffix(".idx")
    tmp = idx.with_suffix(".tmp-idx")
    git("index-pack", "--index-version=2,64", "-o", tmp, pack, cwd=repo)
    os.chmod(idx, 0o644)
    os.replace(tmp, idx)
    return repo


def build_many_packs(root: Path, packs: int = 25) -> Path:
    """One pack per commit (incremental repacks), plus a few loose objects."""
    repo = init_bare(root / "many-packs.git")
    stream = fast_import_stream(packs, seed=4, merges=False, tags=False)
    # fast-import's checkpoint writes one pack per commit.
    parts = stream.split(b"commit refs/heads/main\n")
    joined = b"".join(b"commit refs/heads/main\n" + p + b"checkpoint\n\n" for p in parts[1:])
    git("-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", cwd=repo, input=parts[0] + joined)
    return repo


def add_loose(repo: Path, count: int, seed: int = 5) -> list[str]:
    """Write ``count`` loose blobs; their ids."""
    rnd = random.Random(seed)
    data = "".join(f"loose blob {rnd.random()}\n" for _ in range(count))
    tmp = repo / "loose-input"
    tmp.mkdir(exist_ok=True)
    paths = []
    for i, line in enumerate(data.splitlines()):
        p = tmp / f"b{i}"
        p.write_text(line + "\n")
        paths.append(str(p))
    out = git_text("hash-object", "-w", "--no-filters", "--stdin-paths", cwd=repo, input="\n".join(paths) + "\n")
    shutil.rmtree(tmp)
    return out.split()
