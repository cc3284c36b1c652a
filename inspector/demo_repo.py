"""Build a demo repository with git: a real history, many packs, loose
objects spread over the subdirectories and (optionally) a multi-pack-index.

git is needed here only: core never runs it.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Demo Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Demo Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
}


class DemoError(Exception):
    pass


def _git(repo: Path, *args: str, input: bytes | None = None, when: int | None = None) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{when} +0000"
    try:
        p = subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True, env=env)
    except FileNotFoundError:
        raise DemoError("git is not installed: `packscope demo` uses git to build its repository") from None
    if p.returncode:
        raise DemoError(f"git {' '.join(args)} failed: {p.stderr.decode(errors='replace').strip()}")
    return p.stdout


def _history_stream(commits: int, packs: int, rnd: random.Random) -> bytes:
    """fast-import input: ``commits`` commits, a checkpoint (= a new pack)
    after every commits/packs of them, a side branch and tags."""
    out: list[bytes] = []
    files = {f"src/module{i}.py": [f"line {j} of module {i}\n" for j in range(40)] for i in range(20)}
    files.update({f"docs/page{i}.md": [f"# page {i}\n"] + [f"text {j}\n" for j in range(30)] for i in range(8)})
    per_pack = max(1, commits // max(1, packs))
    t0 = 1_700_000_000
    for n in range(commits):
        path = rnd.choice(sorted(files))
        lines = files[path]
        lines[rnd.randrange(len(lines))] = f"edit {n} {rnd.random():.6f}\n"
        if rnd.random() < 0.3:
            lines.append(f"added in {n}\n")
        msg = f"Change {path} ({n})\n\nCommit number {n} of the demo history.\n".encode()
        tz = ["+0000", "+0100", "-0500", "+0530"][n % 4]
        if n % 30 == 15:  # a short feature branch off main, merged back two commits later
            out.append(_feature_branch(n, t0 + n * 3600 - 1800, rnd))
        out.append(b"commit refs/heads/main\nmark :%d\n" % (n + 1))
        out.append(b"author Demo Author <author@example.com> %d %s\n" % (t0 + n * 3600, tz.encode()))
        out.append(b"committer Demo Committer <committer@example.com> %d %s\n" % (t0 + n * 3600, tz.encode()))
        if n % 30 == 17:
            msg = f"Merge feature {n - 2} ({n})\n".encode()
        out.append(b"data %d\n%s\n" % (len(msg), msg))
        if n % 30 == 17:
            out.append(b"merge :%d\n" % (FEATURE_MARKS + n - 2 + 1))  # the feature's second commit
        targets = sorted(files) if n == 0 else [path]
        for p in targets:
            data = "".join(files[p]).encode()
            out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (p.encode(), len(data), data))
        if n % 50 == 10:
            out.append(
                b"tag v0.%d\nfrom :%d\ntagger Demo Tagger <tag@example.com> %d +0000\ndata 8\nrelease\n\n"
                % (n, n + 1, t0 + n * 3600)
            )
        if (n + 1) % per_pack == 0 and n + 1 < commits:
            out.append(b"checkpoint\n\n")
    return b"".join(out)


FEATURE_MARKS = 1_000_000  # marks of feature commits: :FEATURE_MARKS + n, +1 (n: where it branched)


def _feature_branch(n: int, when: int, rnd: random.Random) -> bytes:
    """Two commits on refs/heads/feature-N, from main's tip before commit n
    (so History's graph has lanes that fork and join)."""
    out = []
    for k in range(2):
        msg = f"Feature {n}, part {k + 1}\n".encode()
        data = "".join(f"feature {n} line {j} {rnd.random():.6f}\n" for j in range(20)).encode()
        out.append(b"commit refs/heads/feature-%d\nmark :%d\n" % (n, FEATURE_MARKS + n + k))
        out.append(b"author Demo Author <author@example.com> %d +0000\n" % (when + k * 60))
        out.append(b"committer Demo Committer <committer@example.com> %d +0000\n" % (when + k * 60))
        out.append(b"data %d\n%s\n" % (len(msg), msg))
        out.append(b"from :%d\n" % (n if k == 0 else FEATURE_MARKS + n))
        out.append(b"M 100644 inline features/feature%d.txt\ndata %d\n%s\n" % (n, len(data), data))
    return b"".join(out)


def _topic_stream(commits: int, rnd: random.Random) -> bytes:
    """A side branch, one pack per commit."""
    out = []
    t0 = 1_800_000_000
    for n in range(commits):
        msg = f"Topic work {n}\n".encode()
        data = "".join(f"topic {n} line {j} {rnd.random():.6f}\n" for j in range(50)).encode()
        out.append(b"commit refs/heads/topic\nmark :%d\n" % (n + 1))
        out.append(b"committer Demo Committer <committer@example.com> %d +0000\n" % (t0 + n * 60))
        out.append(b"data %d\n%s\n" % (len(msg), msg))
        if n:
            out.append(b"from :%d\n" % n)
        out.append(b"M 100644 inline topic/file%d.txt\ndata %d\n%s\n" % (n, len(data), data))
        out.append(b"checkpoint\n\n")
    return b"".join(out)


def build_demo(
    path: str | os.PathLike,
    *,
    commits: int = 300,
    packs: int = 20,
    loose_n: int = 4,
    midx: bool = True,
    force: bool = False,
    progress=None,
) -> Path:
    """Build the demo repository at ``path`` (bare); return its path."""
    say = progress or (lambda msg: None)
    repo = Path(path).absolute()  # git runs inside it: relative paths would not resolve there
    if commits < packs:
        say(f"{packs} packs need at least as many commits: importing {packs} commits")
        commits = packs
    if repo.exists():
        if not force and any(repo.iterdir()):
            if (repo / "HEAD").exists() and (repo / "objects").is_dir():
                return repo  # already built
            raise DemoError(f"{repo} exists and is not empty (use --force to rebuild it)")
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "--bare", "-b", "main")
    rnd = random.Random(42)
    say(f"importing {commits} commits into {packs} packs")
    _git(repo, "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", input=_history_stream(commits, packs, rnd))
    if midx and packs > 1:
        say("writing a multi-pack-index")
        _git(repo, "multi-pack-index", "write")
        # Packs written after the multi-pack-index (as fetches would add):
        # a lookup searches these one by one, most recently used first.
        say("adding 3 packs outside the multi-pack-index")
        _git(repo, "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", input=_topic_stream(3, rnd))
    say("stashing 3 changes")
    _add_stashes(repo)
    say("writing a commit-graph")
    _git(repo, "commit-graph", "write", "--reachable")
    if loose_n:
        say(f"writing {256 * loose_n} loose objects")
        blobs = "".join(f"loose demo blob {i} {rnd.random()}\n" for i in range(256 * loose_n * 2))
        tmpdir = repo / "demo-input"
        tmpdir.mkdir()
        paths = []
        for i, line in enumerate(blobs.splitlines()[: 256 * loose_n]):
            p = tmpdir / f"b{i}"
            p.write_text(line + "\n")
            paths.append(str(p))
        _git(repo, "hash-object", "-w", "--no-filters", "--stdin-paths", input=("\n".join(paths) + "\n").encode())
        shutil.rmtree(tmpdir)
    say(f"demo repository ready at {repo}")
    return repo


STASHES = (  # (where, the message git stash would write or None for its WIP line, what changes)
    ("main~40", None, "lookup.c"),
    ("topic", "On topic: try a bigger delta cache", "cache.c"),
    ("main", None, "README"),
)


def _add_stashes(repo: Path) -> None:
    """refs/stash and its reflog as `git stash` leaves them (a WIP commit
    whose parents are the stashed-on commit and an index commit), made with
    plumbing: the demo is bare, and git stash needs a work tree."""
    when = 1_700_000_000
    for n, (where, message, path) in enumerate(STASHES):
        try:
            base = _git(repo, "rev-parse", "--verify", "-q", f"{where}^{{commit}}").decode().strip()
        except DemoError:
            continue  # a small demo has no such commit
        subject = _git(repo, "log", "-1", "--format=%h %s", base).decode().strip()
        branch = "main" if where.startswith("main") else where
        line = message or f"WIP on {branch}: {subject}"
        blob = _git(repo, "hash-object", "-w", "--stdin", input=f"stashed change {n}\n".encode()).decode().strip()
        entries = _git(repo, "ls-tree", base).decode()
        listing = "".join(e + "\n" for e in entries.splitlines() if not e.endswith("\t" + path))
        tree = _git(repo, "mktree", input=(listing + f"100644 blob {blob}\t{path}\n").encode()).decode().strip()
        index = _git(
            repo, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m", f"index on {branch}: {subject}", when=when + n
        )
        wip = _git(repo, "commit-tree", tree, "-p", base, "-p", index.decode().strip(), "-m", line, when=when + n)
        _git(repo, "update-ref", "--create-reflog", "-m", line, "refs/stash", wip.decode().strip(), when=when + n)


def default_demo_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "packscope" / "demo.git"


if __name__ == "__main__":
    build_demo(sys.argv[1] if len(sys.argv) > 1 else default_demo_dir(), force=True, progress=print)
