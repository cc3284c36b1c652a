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


# --- commit-graph, Bloom filter and multi-pack-index repositories ------------------------


HIGH_BIT_PATHS = (
    "é",                      # 2 bytes: only a tail
    "café/naïve.txt",         # high bytes in blocks and tails, nested
    "日本/語/ファイル.txt",      # 3-byte characters
    "ÿÿÿÿ/x",                 # a whole block of high bytes
    "dir/ü",
)


def graph_extras_stream(start_time: int = 1_700_000_000, *, octopus_only: bool = False) -> bytes:
    """Commits appended to an imported history's refs/heads/main that the
    commit-graph and Bloom tests need: two octopus merges (4 and 5 parents,
    so EDGE holds lists), a commit that changes nothing, paths with bytes
    >= 0x80, a commit touching more than 512 paths, and a commit dated far
    in the future followed by one dated in the past (its corrected-date
    offset overflows into GDO2; its parent's time needs all 34 bits)."""
    out: list[bytes] = []
    t = start_time
    mark = 1000
    tip = "refs/heads/main^0"  # then the mark of main's latest commit

    def commit(branch: str, msg: str, *, when: int, frm: str | None = None, merges=(), files=()) -> int:
        nonlocal mark
        mark += 1
        out.append(f"commit {branch}\nmark :{mark}\n".encode())
        out.append(f"committer C O Mitter <committer@example.com> {when} +0000\n".encode())
        m = msg.encode()
        out.append(b"data %d\n%s\n" % (len(m), m))
        if frm:
            out.append(f"from {frm}\n".encode())
        for p in merges:
            out.append(f"merge :{p}\n".encode())
        for path, content in files:
            c = content.encode()
            out.append(b"M 100644 inline " + path.encode() + b"\ndata %d\n%s\n" % (len(c), c))
        out.append(b"\n")
        return mark

    def on_main(msg: str, **kw) -> None:
        nonlocal tip
        tip = f":{commit('refs/heads/main', msg, frm=tip, **kw)}"

    for width in (3, 4):
        sides = [commit(f"refs/heads/oct{width}-{k}", f"octopus side {k}", when=t + k, frm=tip,
                        files=[(f"oct{width}/side{k}.txt", f"side {k}\n")]) for k in range(width)]
        t += 10
        on_main(f"octopus of {width + 1}", when=t, merges=sides,
                files=[(f"oct{width}/side{k}.txt", f"side {k}\n") for k in range(width)])
        t += 10
    if octopus_only:
        return b"".join(out)
    on_main("changes nothing", when=t)
    t += 10
    on_main("paths with high bytes", when=t, files=[(p, f"high {i}\n") for i, p in enumerate(HIGH_BIT_PATHS)])
    t += 10
    on_main("touches 520 paths", when=t, files=[(f"many/f{i:03d}", f"{i}\n") for i in range(520)])
    t += 10
    on_main("from the far future", when=5_000_000_000, files=[("future.txt", "2128\n")])
    on_main("back to the past", when=1_000_000_000, files=[("past.txt", "2001\n")])
    on_main("after", when=t + 10, files=[("dir0/after.txt", "after\n")])
    return b"".join(out)


def build_graph_repo(root: Path, object_format: str = "sha1", commits: int = 50) -> Path:
    """A history with merges and the graph extras, a single commit-graph
    with changed-path Bloom filters."""
    repo = init_bare(root / f"graph-{object_format}.git", object_format)
    import_history(repo, commits, seed=11)
    git("fast-import", "--quiet", cwd=repo, input=graph_extras_stream())
    git("commit-graph", "write", "--reachable", "--changed-paths", cwd=repo)
    return repo


def _append_commits(repo: Path, n: int, start: int, *, tag: str) -> None:
    """``n`` more commits on refs/heads/main, each touching one file (only the
    first names its parent: fast-import continues the branch after that)."""
    out = []
    for k in range(n):
        msg = f"{tag} {k}\n"
        body = f"{tag} {k}\n"
        out.append(f"commit refs/heads/main\ncommitter C O Mitter <c@example.com> {start + 60 * k} +0000\n"
                   f"data {len(msg)}\n{msg}" + ("from refs/heads/main^0\n" if k == 0 else "") +
                   f"M 100644 inline {tag}/d{k % 3}/f{k}.txt\ndata {len(body)}\n{body}\n")
    git("fast-import", "--quiet", cwd=repo, input="".join(out))


def build_split_graph_repo(root: Path) -> Path:
    """A three-layer split commit-graph chain: layer 0 with Bloom filters,
    layer 1 without (and holding an octopus merge), layer 2 with Bloom
    filters of which only 3 were computed (--max-new-filters)."""
    repo = init_bare(root / "split-graph.git")
    import_history(repo, 30, seed=12)
    git("commit-graph", "write", "--reachable", "--split=no-merge", "--changed-paths", cwd=repo)
    git("fast-import", "--quiet", cwd=repo, input=graph_extras_stream(octopus_only=True))
    _append_commits(repo, 6, 1_700_100_000, tag="layer1")
    git("commit-graph", "write", "--reachable", "--split=no-merge", "--no-changed-paths", cwd=repo)
    _append_commits(repo, 8, 1_700_200_000, tag="layer2")
    git("commit-graph", "write", "--reachable", "--split=no-merge", "--changed-paths", "--max-new-filters=3", cwd=repo)
    return repo


def build_mixed_generation_chain(root: Path) -> Path:
    """A chain whose base layer has no corrected commit dates (GDA2)."""
    repo = init_bare(root / "mixed-generation.git")
    import_history(repo, 12, seed=13, merges=False, tags=False)
    git("-c", "commitGraph.generationVersion=1", "commit-graph", "write", "--reachable", "--split=no-merge", cwd=repo)
    _append_commits(repo, 5, 1_700_300_000, tag="top")
    git("commit-graph", "write", "--reachable", "--split=no-merge", cwd=repo)
    return repo


def build_midx_repo(root: Path, packs: int = 8, name: str = "midx", object_format: str = "sha1") -> Path:
    """``packs`` packs (one per commit) and a multi-pack-index over them all."""
    repo = init_bare(root / f"{name}.git", object_format)
    stream = fast_import_stream(packs, seed=14, merges=False, tags=False)
    parts = stream.split(b"commit refs/heads/main\n")
    joined = b"".join(b"commit refs/heads/main\n" + p + b"checkpoint\n\n" for p in parts[1:])
    git("-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", cwd=repo, input=parts[0] + joined)
    git("multi-pack-index", "write", cwd=repo)
    return repo


def build_repack_midx_repo(root: Path) -> Path:
    """`git repack -d --write-midx --write-bitmap-index` over several packs plus
    reachable loose objects (which the repack packs into one more pack)."""
    repo = build_midx_repo(root, packs=5, name="repack-midx")
    _append_commits(repo, 3, 1_700_400_000, tag="loose")  # few objects: fast-import leaves them loose
    git("repack", "-d", "-q", "--write-midx", "--write-bitmap-index", cwd=repo)
    return repo


def build_midx_chain_repo(root: Path) -> Path:
    """An incremental multi-pack-index chain (the layout of git 2.47+),
    assembled from two midx files git 2.39 writes over disjoint packs."""
    repo = build_midx_repo(root, packs=7, name="midx-chain")
    pack_dir = repo / "objects" / "pack"
    idx_names = sorted(p.name for p in pack_dir.glob("pack-*.idx"))
    chain_dir = pack_dir / "multi-pack-index.d"
    chain_dir.mkdir()
    hashes = []
    for group in (idx_names[:4], idx_names[4:]):
        git("multi-pack-index", "write", "--stdin-packs", cwd=repo, input="\n".join(group) + "\n")
        data = (pack_dir / "multi-pack-index").read_bytes()
        h = data[-20:].hex()
        (chain_dir / f"multi-pack-index-{h}.midx").write_bytes(data)
        hashes.append(h)
    (pack_dir / "multi-pack-index").unlink()
    (chain_dir / "multi-pack-index-chain").write_text("".join(h + "\n" for h in hashes))
    return repo


def first_parent_changes(repo: Path, commits: list[tuple[str, str | None]]) -> dict[str, list[bytes]]:
    """{commit: paths changed against its first parent (all paths for a root)},
    by git diff-tree, without rename detection: what git hashes into a
    commit's changed-path Bloom filter."""
    lines = "".join(f"{c} {p or ''}".rstrip() + "\n" for c, p in commits)
    out = git("diff-tree", "--stdin", "-r", "-z", "--name-only", "--no-renames", "--root", "--always",
              cwd=repo, input=lines)
    order = [c.encode() for c, _ in commits]
    result: dict[str, list[bytes]] = {}
    k = 0
    current = None
    for tok in out.split(b"\0"):
        # Output follows input order: each commit's id, then its paths.
        if k < len(order) and tok == order[k]:
            current = result.setdefault(tok.decode(), [])
            k += 1
        elif tok:
            current.append(tok.strip(b"\n"))
    return result


def commit_table(repo: Path) -> dict[str, tuple[str, tuple[str, ...], int]]:
    """{commit: (tree, parents, committer time)} for every commit reachable from any ref."""
    out = git_text("log", "--all", "--format=%H %T %ct %P", cwd=repo)
    table = {}
    for line in out.splitlines():
        parts = line.split()
        table[parts[0]] = (parts[1], tuple(parts[3:]), int(parts[2]))
    return table


# --- packs with particular shapes (delta, pack and open-file tests) ---------------


def build_ref_delta(root: Path) -> Path:
    """One pack whose deltas all name their base by id (REF_DELTA)."""
    repo = init_bare(root / "ref-delta.git")
    import_history(repo, 40, seed=6)
    git("-c", "repack.useDeltaBaseOffset=false", "repack", "-a", "-d", "-f", "-q", cwd=repo)
    return repo


def build_thin_completed(root: Path) -> Path:
    """A repository holding only a pack that came in thin and was completed
    by ``index-pack --fix-thin``: its deltas are REF_DELTA and the bases
    index-pack appended sit after the deltas that use them."""
    src = init_bare(root / "thin-source.git")
    import_history(src, 50, seed=7, merges=False, tags=False)
    dst = init_bare(root / "thin-target.git")
    base = git("pack-objects", "--revs", "--stdout", "-q", cwd=src, input="main~12\n")
    git("index-pack", "--stdin", cwd=dst, input=base)
    before = set(pack_files(dst))
    thin = git("pack-objects", "--revs", "--thin", "--stdout", "-q", cwd=src, input="main\n^main~12\n")
    git("index-pack", "--stdin", "--fix-thin", cwd=dst, input=thin)
    (completed,) = set(pack_files(dst)) - before
    # Keep only the completed pack: it is self-contained, so git's answers
    # about it (disk size, delta base) are unambiguous.
    repo = init_bare(root / "thin-completed.git")
    for suffix in (".pack", ".idx"):
        part = completed.with_suffix(suffix)
        shutil.copy(part, repo / "objects" / "pack" / part.name)
    return repo


def build_deep_chain(root: Path, revisions: int = 1500) -> Path:
    """One file growing by a line per commit, imported with fast-import
    --depth=4095: each version is a delta on the previous one, so the
    newest sits at the end of a ~``revisions``-deep chain."""
    repo = init_bare(root / "deep-chain.git")
    lines, out = [], []
    for n in range(revisions):
        lines.append(f"line {n}: {n * 7919 % 1000} grows the file\n")
        body = "".join(lines).encode()
        out.append(
            b"commit refs/heads/main\ncommitter C O Mitter <committer@example.com> %d +0000\ndata 2\nc\n"
            b"M 100644 inline growing.txt\ndata %d\n%s\n" % (1_600_000_000 + n, len(body), body)
        )
    git("fast-import", "--quiet", "--depth=4095", cwd=repo, input=b"".join(out))
    return repo


def build_big_copies(root: Path) -> Path:
    """Blobs of ~300 KB that differ in a few places: their deltas copy
    64 KiB runs (size field 0 = 0x10000) from offsets beyond 64 KiB."""
    repo = init_bare(root / "big-copies.git")
    rnd = random.Random(8)
    text = "".join(f"{rnd.getrandbits(64):016x}\n" for _ in range(18_000))
    stream = []
    for n in range(4):
        cut = 40_000 + n * 61_000
        text = text[:cut] + f"change {n}\n" + text[cut:]
        body = text.encode()
        stream.append(
            b"commit refs/heads/main\ncommitter C O Mitter <committer@example.com> %d +0000\ndata 2\nc\n"
            b"M 100644 inline big.txt\ndata %d\n%s\n" % (1_600_000_000 + n, len(body), body)
        )
    git("fast-import", "--quiet", cwd=repo, input=b"".join(stream))
    git("repack", "-a", "-d", "-f", "-q", cwd=repo)
    return repo


def build_with_rev(root: Path) -> Path:
    """A pack with a reverse index (.rev) beside it."""
    repo = init_bare(root / "with-rev.git")
    import_history(repo, 40, seed=9)
    git("-c", "pack.writeReverseIndex=true", "repack", "-a", "-d", "-f", "-q", cwd=repo)
    return repo


def batch_check_all(repo: Path) -> dict[str, tuple[str, int, int, str]]:
    """{id: (type, size, disk size, delta base)} of every object, from git."""
    fmt = "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)"
    out = git_text("cat-file", "--batch-all-objects", f"--batch-check={fmt}", cwd=repo)
    rows = {}
    for line in out.splitlines():
        oid, typ, size, disk, base = line.split()
        rows[oid] = (typ, int(size), int(disk), base)
    return rows


def batch_contents(repo: Path) -> dict[str, tuple[str, bytes]]:
    """{id: (type, content)} of every object, from ``git cat-file --batch``."""
    out = git("cat-file", "--batch-all-objects", "--batch", cwd=repo)
    result = {}
    pos = 0
    while pos < len(out):
        eol = out.index(b"\n", pos)
        oid, typ, size = out[pos:eol].decode().split()
        start = eol + 1
        result[oid] = (typ, out[start : start + int(size)])
        pos = start + int(size) + 1
    return result


def build_loose(root: Path, object_format: str = "sha1", blobs: int = 600) -> Path:
    """Loose objects only, of all four types (and an empty blob), spread
    over most of the 256 subdirectories."""
    repo = init_bare(root / f"loose-{object_format}.git", object_format)
    ids = add_loose(repo, blobs, seed=10)
    empty = git_text("hash-object", "-w", "--stdin", cwd=repo, input=b"").strip()
    tree = git_text("mktree", cwd=repo, input=f"100644 blob {ids[0]}\ta\n100644 blob {empty}\tb\n").strip()
    commit = git_text("commit-tree", tree, "-m", "loose commit", cwd=repo).strip()
    tag = f"object {commit}\ntype commit\ntag v1\ntagger T Agger <tag@example.com> 1600000000 +0000\n\nloose tag\n"
    git("mktag", cwd=repo, input=tag)
    return repo


def loose_files(repo: Path) -> dict[str, Path]:
    """{id: path} of every loose object file."""
    found = {}
    for sub in sorted((repo / "objects").glob("[0-9a-f][0-9a-f]")):
        for f in sub.iterdir():
            found[sub.name + f.name] = f
    return found
