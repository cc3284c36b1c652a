"""Repositories the suite builds with git, and git run as the oracle.

Nothing here depends on ../shared: a fresh clone builds everything it tests.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import struct
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
    "é",  # 2 bytes: only a tail
    "café/naïve.txt",  # high bytes in blocks and tails, nested
    "日本/語/ファイル.txt",  # 3-byte characters
    "ÿÿÿÿ/x",  # a whole block of high bytes
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
        sides = [
            commit(
                f"refs/heads/oct{width}-{k}",
                f"octopus side {k}",
                when=t + k,
                frm=tip,
                files=[(f"oct{width}/side{k}.txt", f"side {k}\n")],
            )
            for k in range(width)
        ]
        t += 10
        on_main(
            f"octopus of {width + 1}",
            when=t,
            merges=sides,
            files=[(f"oct{width}/side{k}.txt", f"side {k}\n") for k in range(width)],
        )
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
        out.append(
            f"commit refs/heads/main\ncommitter C O Mitter <c@example.com> {start + 60 * k} +0000\n"
            f"data {len(msg)}\n{msg}"
            + ("from refs/heads/main^0\n" if k == 0 else "")
            + f"M 100644 inline {tag}/d{k % 3}/f{k}.txt\ndata {len(body)}\n{body}\n"
        )
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
    out = git(
        "diff-tree", "--stdin", "-r", "-z", "--name-only", "--no-renames", "--root", "--always", cwd=repo, input=lines
    )
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


# The first commit of build_every_change_kind: what its second commit edits,
# deletes, renames, makes executable, turns into a symlink, gives a final
# newline and changes while binary.
CHANGE_KINDS_FIRST = {
    "keep.txt": "one\ntwo\nthree\n",
    "edit.c": "int f(void)\n{\n  return 1;\n}\n\nint g(void)\n{\n  return 2;\n}\n" * 3,
    "gone.txt": "bye\n",
    "moved/old-name.txt": "moving content\nexactly the same\n",
    "script.sh": "#!/bin/sh\necho hi\n",
    "link-target": "target\n",
    "noeol.txt": "last line has no newline",
    "bin.dat": "binary\0data\n",
}


def build_every_change_kind(repo: Path, first: dict[str, str], second: dict[str, str]) -> Path:
    """Two commits on main in a new repository at ``repo``: CHANGE_KINDS_FIRST
    and ``first``, then one of every kind of change git names against it
    (A, D, M, R100, T and a mode change) with the files ``second`` written."""
    git("init", "-q", "-b", "main", repo)
    for name, text in {**CHANGE_KINDS_FIRST, **first}.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("latin-1"))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "first", cwd=repo)
    edited = CHANGE_KINDS_FIRST["edit.c"].replace("return 2;", "return 3;", 1) + "int h(void)\n{\n}\n"
    (repo / "edit.c").write_text(edited)
    (repo / "gone.txt").unlink()
    (repo / "moved/old-name.txt").rename(repo / "new-name.txt")
    (repo / "script.sh").chmod(0o755)
    (repo / "link-target").unlink()
    (repo / "link-target").symlink_to("keep.txt")
    (repo / "noeol.txt").write_text("last line has no newline\nnow it has one\n")
    (repo / "bin.dat").write_bytes(b"binary\0data changed\n")
    for name, text in second.items():
        (repo / name).write_text(text)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "second", cwd=repo)
    return repo


def git_numstat(repo: Path, old: str, new: str) -> dict[str, tuple[str, str]]:
    """{path: (added, deleted)} as ``git diff --numstat -M100%`` counts them
    ("-" for a binary file); a renamed file under its new path."""
    out = git("diff", "--numstat", "-z", "-M100%", old, new, cwd=repo).split(b"\0")
    counts = {}
    i = 0
    while i < len(out) - 1:
        added, deleted, path = out[i].decode().split("\t")
        if path == "":  # a rename: old and new paths follow
            path = out[i + 2].decode()
            i += 3
        else:
            i += 1
        counts[path] = (added, deleted)
    return counts


def commit_table(repo: Path) -> dict[str, tuple[str, tuple[str, ...], int]]:
    """{commit: (tree, parents, committer time)} for every commit reachable from any ref."""
    out = git_text("log", "--all", "--format=%H %T %ct %P", cwd=repo)
    table = {}
    for line in out.splitlines():
        parts = line.split()
        table[parts[0]] = (parts[1], tuple(parts[3:]), int(parts[2]))
    return table


# --- packs with particular shapes (delta, pack and open-file tests) ---------------


def _repacked_history(path: Path, seed: int, setting: str) -> Path:
    """40 commits of imported history, repacked from scratch under ``-c setting``."""
    repo = init_bare(path)
    import_history(repo, 40, seed=seed)
    git("-c", setting, "repack", "-a", "-d", "-f", "-q", cwd=repo)
    return repo


def build_ref_delta(root: Path) -> Path:
    """One pack whose deltas all name their base by id (REF_DELTA)."""
    return _repacked_history(root / "ref-delta.git", 6, "repack.useDeltaBaseOffset=false")


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
    return _repacked_history(root / "with-rev.git", 9, "pack.writeReverseIndex=true")


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


# --- refs and revisions (tests/test_refs.py, tests/test_revision.py) ------------


def refs_worktree(main: Path) -> Path:
    """The linked worktree build_refs_repo adds beside ``main``."""
    return main.parent / (main.name + "-wt")


def refs_repo_placeholders(path: Path) -> dict[str, str]:
    """Values for the placeholders that revision tests write in place of
    build_refs_repo's ids: ``<c1>`` (main~5), ``<c1_7>`` (its first 7 digits),
    ``<c2>``, ``<c5_7>``, ``<v1_9>``, an absent id, the null id, the linked
    worktree's name …"""

    def rp(rev: str) -> str:
        return git_text("rev-parse", rev, cwd=path).strip()

    c1, c2, c5, v1 = rp("main~5"), rp("main~4"), rp("main~2"), rp("refs/tags/v1")
    hexsz = len(c1)
    absent = ("deadbeef" * 8)[:hexsz]
    return {
        "<c1>": c1,
        "<c1_7>": c1[:7],
        "<c1_8>": c1[:8],
        "<c2>": c2,
        "<c5_7>": c5[:7],
        "<c5_12>": c5[:12],
        "<c5_10_upper>": c5[:10].upper(),
        "<v1_9>": v1[:9],
        "<absent>": absent,
        "<absent_9>": absent[:9],
        "<null>": "0" * hexsz,
        "<wt>": refs_worktree(path).name,
    }


def fill_placeholders(text: str, values: dict[str, str]) -> str:
    for k, v in values.items():
        text = text.replace(k, v)
    return text


# Refs build_refs_repo makes that name one ref each: HEAD and @, main by
# its short and longer names, a symbolic ref, a branch moved after packing
# and one only in a loose file, lightweight and annotated tags (one of them a
# tag of a tag, one written after packing).
REFS_REPO_NAMES = [
    "HEAD",
    "@",
    "main",
    "heads/main",
    "refs/heads/main",
    "alias",
    "side",
    "loose-only",
    "light",
    "v1",
    "v1-outer",
    "v2",
]

# Names that build_refs_repo gives several refs, one per rule of git's dwim
# order (refs/X, refs/tags/X, refs/heads/X, refs/remotes/X, its HEAD), and
# the pseudo refs it writes: which commit a name resolves to tells the rule.
REFS_REPO_CLASHES = ["x1", "x2", "x3", "x4", "origin", "origin/main", "remotes/x3", "ORIG_HEAD", "bisect/main-bisect"]

# <revision>:<path> forms over build_refs_repo's trees (spaces, non-ASCII,
# trailing slashes, through a tag, a merge's second parent and a tree).
REFS_REPO_PATHS = [
    "HEAD:",
    "HEAD:a.txt",
    "HEAD:dir",
    "HEAD:dir/",
    "HEAD:dir/sub/c.txt",
    "HEAD:sp ace.txt",
    "HEAD:uni-\u00e9.txt",
    "v1:dir/b.txt",
    "tree-tag:dir/sub",
    "HEAD~3^2:side.txt",
    "HEAD^{tree}:dir",
]


def build_refs_repo(root: Path, object_format: str = "sha1") -> Path:
    """A work tree repository whose refs exercise every lookup rule.

    History on main (HEAD): c1 - c2 - c4 (merges side: s1 - s2 off c1) - c5
    - c6 (octopus of c5, o1, o2) - c7 (adds a gitlink).  Tags: ``light``
    (lightweight), ``v1`` (annotated, c4), ``v1-outer`` (a tag of v1),
    ``tree-tag``, ``blob-tag``, and ``v2`` written after packing.  Refs are
    packed with ``git pack-refs --all``, then ``side`` moves and
    ``loose-only`` appears loosely.  Clashing names x1..x4 test the dwim
    order; a branch named like a hex abbreviation of c1 points at c5, and one
    named with c2's full id points at c5 too.  A linked worktree (branch
    ``feature``) has its own refs/bisect and refs/worktree refs.
    """
    main = root / f"refs-{object_format}"
    wt = refs_worktree(main)
    for p in (main, wt):
        if p.exists():
            shutil.rmtree(p)
    git("init", "-q", "-b", "main", f"--object-format={object_format}", main)
    clock = [1_600_000_000]

    def an_hour_later(*args):
        clock[0] += 3600
        return git_dated(f"{clock[0]} +0200", *args, cwd=main)

    def commit(*args):
        return an_hour_later("commit", "-q", *args)

    def write(rel, text):
        p = main / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    write("a.txt", "alpha\n")
    write("dir/b.txt", "beta\n")
    write("dir/sub/c.txt", "gamma\n")
    write("sp ace.txt", "space\n")
    write("uni-\u00e9.txt", "unicode\n")
    git("add", "-A", cwd=main)
    c1 = commit("-m", "c1")
    write("a.txt", "alpha 2\n")
    git("add", "-A", cwd=main)
    c2 = commit("-m", "c2")
    git("checkout", "-q", "-b", "side", c1, cwd=main)
    write("side.txt", "side 1\n")
    git("add", "-A", cwd=main)
    commit("-m", "s1")
    write("side.txt", "side 2\n")
    git("add", "-A", cwd=main)
    commit("-m", "s2")
    git("checkout", "-q", "main", cwd=main)
    c4 = an_hour_later("merge", "-q", "--no-ff", "-m", "c4 merge side", "side")
    write("dir/b.txt", "beta 2\n")
    git("add", "-A", cwd=main)
    c5 = commit("-m", "c5")
    for name in ("o1", "o2"):
        git("checkout", "-q", "-b", name, c5, cwd=main)
        write(f"{name}.txt", name + "\n")
        git("add", "-A", cwd=main)
        commit("-m", name)
    git("checkout", "-q", "main", cwd=main)
    an_hour_later("merge", "-q", "--no-ff", "-m", "c6 octopus", "o1", "o2")
    fake = "5" * (40 if object_format == "sha1" else 64)
    git("update-index", "--add", "--cacheinfo", f"160000,{fake},mod/ule", cwd=main)
    commit("-m", "c7 gitlink")

    tag_env = {"GIT_COMMITTER_DATE": f"{clock[0] + 60} +0000"}
    git("tag", "light", c2, cwd=main)
    git("tag", "-a", "-m", "v1", "v1", c4, cwd=main, env=tag_env)
    git("-c", "advice.nestedTag=false", "tag", "-a", "-m", "outer", "v1-outer", "v1", cwd=main, env=tag_env)
    git("tag", "-a", "-m", "a tree", "tree-tag", f"{c5}^{{tree}}", cwd=main, env=tag_env)
    git("tag", "-a", "-m", "a blob", "blob-tag", f"{c1}:a.txt", cwd=main, env=tag_env)
    git("update-ref", "refs/remotes/origin/main", c2, cwd=main)
    git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main", cwd=main)
    git("symbolic-ref", "refs/heads/alias", "refs/heads/main", cwd=main)
    # Name clashes for the dwim order: refs/X, tags, heads, remotes.
    for ref, rev in [
        ("refs/x1", "main~1"),
        ("refs/tags/x1", c1),
        ("refs/heads/x1", c2),
        ("refs/tags/x2", c1),
        ("refs/heads/x2", c2),
        ("refs/heads/x3", c1),
        ("refs/remotes/x3", c2),
        ("refs/remotes/x4", c1),
    ]:
        git("update-ref", ref, rev, cwd=main)
    git("branch", c1[:8], c5, cwd=main)  # a branch that looks like an abbreviation
    git("branch", c2, c5, cwd=main)  # a branch named with a full id
    git("pack-refs", "--all", cwd=main)
    git("update-ref", "refs/heads/side", c5, cwd=main)  # loose, hiding the packed one
    git("branch", "loose-only", c2, cwd=main)
    git("tag", "-a", "-m", "v2", "v2", c5, cwd=main, env=tag_env)
    git("update-ref", "ORIG_HEAD", c1, cwd=main)
    git("update-ref", "refs/bisect/main-bisect", c4, cwd=main)
    git("worktree", "add", "-q", "-b", "feature", wt, c2, cwd=main)
    git("update-ref", "refs/bisect/bad", c1, cwd=wt)
    git("update-ref", "refs/worktree/mine", c4, cwd=wt)
    return main


# --- histories with exact shapes and dates (walks, tree diffs, log formats) ----------


class HistoryBuilder:
    """A fast-import stream where every commit's parents, whole tree and dates
    are stated: each commit lists its full tree (``deleteall`` + ``M`` lines),
    so merges resolve exactly as told and any date (clock skew, equal
    seconds) is possible.  Files map path -> content, or -> (mode, content)
    (mode 160000: content is the gitlink's hex id)."""

    AUTHOR = "A U Thor <author@example.com>"
    COMMITTER = "C O Mitter <committer@example.com>"

    def __init__(self) -> None:
        self._out: list[bytes] = []
        self._mark = 0
        self._blobs: dict[bytes, int] = {}
        self.files: dict[int, dict] = {}
        self.when: dict[int, int] = {}

    def _next(self) -> int:
        self._mark += 1
        return self._mark

    def _blob(self, content) -> int:
        if isinstance(content, str):
            content = content.encode()
        m = self._blobs.get(content)
        if m is None:
            m = self._blobs[content] = self._next()
            self._out.append(b"blob\nmark :%d\ndata %d\n%s\n" % (m, len(content), content))
        return m

    def commit(
        self,
        parents: list[int],
        files: dict,
        when: int,
        msg: str | None = None,
        *,
        tz: str = "+0000",
        author_when: int | None = None,
        author_tz: str | None = None,
        author: str | None = None,
    ) -> int:
        lines = []
        for path in sorted(files):
            v = files[path]
            mode, content = v if isinstance(v, tuple) else ("100644", v)
            if mode == "160000":
                lines.append(f"M 160000 {content} {path}\n".encode())
            else:
                lines.append(f"M {mode} :{self._blob(content)} {path}\n".encode())
        mark = self._next()
        msg = msg if msg is not None else f"commit {mark}\n"
        mb = msg.encode()
        head = (
            f"reset refs/builder/tmp\ncommit refs/builder/tmp\nmark :{mark}\n"
            f"author {author or self.AUTHOR} {author_when if author_when is not None else when} {author_tz or tz}\n"
            f"committer {self.COMMITTER} {when} {tz}\n"
        ).encode()
        body = b"data %d\n%s\n" % (len(mb), mb)
        rel = b"".join((b"from :%d\n" if i == 0 else b"merge :%d\n") % p for i, p in enumerate(parents))
        self._out.append(head + body + rel + b"deleteall\n" + b"".join(lines) + b"\n")
        self.files[mark] = dict(files)
        self.when[mark] = when
        return mark

    def derive(
        self, parents: int | list[int], when: int, changes: dict | None = None, msg: str | None = None, **kw
    ) -> int:
        """A commit whose tree is the first parent's with ``changes``
        applied (a value of None deletes the path)."""
        parents = [parents] if isinstance(parents, int) else parents
        files = dict(self.files[parents[0]])
        for path, v in (changes or {}).items():
            if v is None:
                files.pop(path, None)
            else:
                files[path] = v
        return self.commit(parents, files, when, msg, **kw)

    def ref(self, name: str, mark: int) -> None:
        self._out.append(f"reset {name}\nfrom :{mark}\n\n".encode())

    def tag(self, name: str, mark: int, when: int, message: str = "tag\n") -> None:
        mb = message.encode()
        self._out.append(
            f"tag {name}\nfrom :{mark}\ntagger T Agger <tag@example.com> {when} +0000\n".encode()
            + b"data %d\n%s\n" % (len(mb), mb)
        )

    def stream(self) -> bytes:
        return b"".join(self._out)

    def write(self, repo: Path, head: str = "refs/heads/main") -> Path:
        git("fast-import", "--quiet", cwd=repo, input=self.stream())
        git("update-ref", "-d", "refs/builder/tmp", cwd=repo)
        git("symbolic-ref", "HEAD", head, cwd=repo)
        return repo


GITLINK = "0123456789abcdef0123456789abcdef01234567"


# Pathspecs for the scenario repository: files, directories, a file turned
# directory, a symlink, a gitlink, several at once, and paths it never has.
SCENARIO_PATHSPECS = [
    ["dir"],
    ["lib/x.c"],
    ["README"],
    ["gone.txt", "new.txt"],
    ["thing"],
    ["thing/inner"],
    ["sub", "link"],
    ["link"],
    ["sub"],
    ["dir/sub", "lib"],
    ["dir/sub/b.txt"],
    ["."],
    ["nowhere"],
    ["nowhere/deeper"],
    ["dir/a.txt/deeper"],
]
SCENARIO_PATHSPECS_NEVER_CHANGED = (["nowhere"], ["nowhere/deeper"], ["dir/a.txt/deeper"])


def scenario_history() -> HistoryBuilder:
    """A small history holding the cases git's walks are particular about:
    same-second commits, clock skew (a parent newer than its child, and a
    child far older than its parent), a criss-cross merge, merges TREESAME to
    one side for some paths, a rename, a file deleted and re-added, a file
    replaced by a directory, a symlink/gitlink/mode change, branch tips with
    exactly equal dates, a second root, and annotated tags (one of a tag)."""
    h = HistoryBuilder()
    T = 1_600_000_000
    base = {
        "README": "readme 0\n",
        "dir/a.txt": "a0\n",
        "dir/sub/b.txt": "b0\n",
        "old.txt": "old\n",
        "gone.txt": "gone 0\n",
        "lib/x.c": "x0\n",
        "thing": "thing file\n",
        "link": ("120000", "README"),
        "sub": ("160000", GITLINK),
        "run.sh": "#!/bin/sh\n",
    }
    c1 = h.commit([], base, T, "root\n")
    c2 = h.derive(c1, T + 60, {"dir/a.txt": "a1\n"}, "edit a\n", tz="+0530", author_tz="-0700")
    c3 = h.derive(c2, T + 120, {"old.txt": None, "new.txt": "old\n"}, "rename old.txt to new.txt\n")
    c4 = h.derive(c3, T + 180, {"gone.txt": None}, "delete gone.txt\n")
    s1 = h.derive(c2, T + 150, {"lib/x.c": "x1\n"}, "side: x1\n", author_tz="+1400", author_when=T - 86_400)
    s2 = h.derive(s1, T + 150, {"dir/sub/b.txt": "b1\n"}, "side: b1 (same second)\n")
    s3 = h.derive(s2, T + 150, {"README": "readme side\n"}, "side: readme (same second)\n")
    # merge: lib/x.c and dir/sub/b.txt from the side, README kept from main
    m1 = h.derive([c4, s3], T + 240, {"lib/x.c": "x1\n", "dir/sub/b.txt": "b1\n"}, "merge side\n")
    c5 = h.derive(m1, T + 300, {"gone.txt": "gone again\n"}, "re-add gone.txt\n")
    c6 = h.derive(c5, T + 5000, {"run.sh": ("100755", "#!/bin/sh\n")}, "future-dated: chmod +x\n")
    c7 = h.derive(c6, T + 400, {"dir/a.txt": "a2\n"}, "older than its parent\n", author_tz="-1200")
    c8 = h.derive(c7, T + 460, {"link": "now a file\n"}, "symlink becomes a file\n")
    # criss-cross
    x1 = h.derive(c8, T + 500, {"README": "readme x\n"}, "x1\n")
    y1 = h.derive(c8, T + 500, {"lib/x.c": "x-y\n"}, "y1\n")
    x2 = h.derive([x1, y1], T + 560, {"lib/x.c": "x-y\n"}, "x2: merge y1\n")
    y2 = h.derive([y1, x1], T + 560, {"README": "readme y\n"}, "y2: merge x1\n")
    m2 = h.derive([x2, y2], T + 620, {"README": "readme xy\n"}, "merge criss-cross\n")
    c9 = h.derive(
        m2,
        T + 680,
        {"thing": None, "thing/inner": "inner\n", "sub": "gitlink now a file\n"},
        "thing becomes a directory\n",
    )
    # merge that brings nothing under dir/ from the side (TREESAME to the first parent there)
    t1 = h.derive(c9, T + 700, {"lib/x.c": "x-t\n"}, "t1\n")
    m3 = h.derive([c9, t1], T + 720, {"lib/x.c": "x-t\n"}, "merge t1\n")
    c10 = h.derive(m3, T + 800, {"dir/a.txt": "a3\n"}, "main tip\n")
    b1a = h.derive(c9, T + 800, {"dir/b1": "b1\n"}, "b1a\n")
    b1 = h.derive(b1a, T + 800, {"dir/b1": "b1 again\n"}, "b1 tip (same second)\n")
    b2 = h.derive(c9, T + 800, {"lib/b2": "b2\n"}, "b2 tip\n")
    b3 = h.derive(c8, T + 800, {"README": "readme b3\n"}, "b3 tip\n")
    old1 = h.derive(c1, T - 100_000, {"lib/old": "old side\n"}, "ancient side 1\n")
    old2 = h.derive(old1, T - 90_000, {"lib/old": "old side 2\n"}, "ancient side 2\n")
    m4 = h.derive([c10, old2], T + 900, {"lib/old": "old side 2\n"}, "merge ancient side\n")
    r1 = h.commit([], {"other/root.txt": "second root\n"}, T + 200, "second root\n")
    r2 = h.derive(r1, T + 800, {"other/root.txt": "second root 2\n"}, "second root tip\n")
    h.ref("refs/heads/main", m4)
    h.ref("refs/heads/b1", b1)
    h.ref("refs/heads/b2", b2)
    h.ref("refs/heads/b3", b3)
    h.ref("refs/heads/side", s3)
    h.ref("refs/heads/old", old2)
    h.ref("refs/heads/orphan", r2)
    h.ref("refs/heads/skew", c7)
    h.ref("refs/heads/x", x2)
    h.ref("refs/heads/y", y2)
    h.ref("refs/tags/light", s1)
    h.tag("v1", c5, T + 310)
    h.tag("v2", c9, T + 690)
    h.marks = dict(
        c1=c1,
        c2=c2,
        c3=c3,
        c4=c4,
        c5=c5,
        c6=c6,
        c7=c7,
        c8=c8,
        c9=c9,
        c10=c10,
        s1=s1,
        s2=s2,
        s3=s3,
        m1=m1,
        m2=m2,
        m3=m3,
        m4=m4,
        x1=x1,
        x2=x2,
        y1=y1,
        y2=y2,
        t1=t1,
        b1=b1,
        b2=b2,
        b3=b3,
        old1=old1,
        old2=old2,
        r1=r1,
        r2=r2,
    )
    return h


def build_scenario_repo(root: Path) -> Path:
    repo = init_bare(root / "scenario.git")
    scenario_history().write(repo)
    # a tag of a tag, for peeling
    v1 = git_text("rev-parse", "refs/tags/v1", cwd=repo).strip()
    obj = f"object {v1}\ntype tag\ntag v1-again\ntagger T Agger <tag@example.com> 1600000999 +0000\n\na tag of a tag\n"
    oid = git_text("hash-object", "-t", "tag", "-w", "--stdin", cwd=repo, input=obj).strip()
    git("update-ref", "refs/tags/v1-again", oid, cwd=repo)
    return repo


def random_history(commits: int, seed: int = 7) -> HistoryBuilder:
    """A generated history: several branches forking from old commits and
    merging (sometimes criss-cross), dates mostly rising a minute at a time
    but with same-second runs, backwards skew and future-dated commits."""
    rnd = random.Random(seed)
    h = HistoryBuilder()
    T = 1_650_000_000
    paths = [f"d{i % 4}/e{i % 3}/f{i}.txt" for i in range(24)] + ["top.txt", "d0/top0"]
    files = {p: f"{p} 0\n" for p in paths[:16]}
    first = h.commit([], files, T, "root\n")
    all_marks = [first]
    heads = {"main": first}
    clock = T
    names = 0
    for n in range(commits - 1):
        roll = rnd.random()
        clock += 60
        if roll < 0.15:
            when = h.when[all_marks[-1]]  # the same second as the previous commit
        elif roll < 0.19:
            when = clock - rnd.randrange(3600, 200_000)  # clock skew into the past
        elif roll < 0.21:
            when = clock + rnd.randrange(3600, 50_000)  # a future-dated commit
        else:
            when = clock
        action = rnd.random()
        branch = rnd.choice(sorted(heads))
        tip = heads[branch]
        if action < 0.12 and len(heads) > 1:
            other = rnd.choice([b for b in sorted(heads) if b != branch])
            o = heads[other]
            if o == tip:
                continue
            merged = dict(h.files[tip])
            for p, v in h.files[o].items():
                if p not in merged or rnd.random() < 0.5:
                    merged[p] = v
            for p in list(merged):
                if p not in h.files[o] and rnd.random() < 0.3:
                    del merged[p]
            if rnd.random() < 0.3:
                p = rnd.choice(paths)
                merged[p] = f"{p} resolved {n}\n"
            mark = h.commit([tip, o], merged, when, f"merge {other} into {branch} ({n})\n")
            heads[branch] = mark
            if rnd.random() < 0.2:
                # criss-cross: the other branch merges the old tip of this one
                heads[other] = h.commit([o, tip], dict(h.files[o]), when, f"criss-cross {n}\n")
                all_marks.append(heads[other])
        elif action < 0.16 and len(heads) < 7:
            names += 1
            start = rnd.choice(all_marks[-200:])
            mark = h.derive(start, when, {rnd.choice(paths): f"branch {names}\n"}, f"start b{names} ({n})\n")
            heads[f"b{names}"] = mark
        elif action < 0.17 and len(heads) > 3 and branch != "main":
            del heads[branch]  # reachable only through merges from now on (or not at all)
            if names % 3 == 0:
                h.ref(f"refs/heads/done-{branch}", tip)
            continue
        else:
            changes = {}
            for _ in range(rnd.choice((1, 1, 2, 3))):
                p = rnd.choice(paths)
                changes[p] = None if (p in h.files[tip] and rnd.random() < 0.1) else f"{p} {n}\n"
            mark = h.derive(tip, when, changes, f"change {n} on {branch}\n\nbody {n}\n")
            heads[branch] = mark
        all_marks.append(mark)
    for name, mark in sorted(heads.items()):
        h.ref(f"refs/heads/{name}", mark)
    h.ref("refs/heads/mid", all_marks[len(all_marks) // 2])
    h.ref("refs/heads/quarter", all_marks[len(all_marks) // 4])
    h.marks = {"all": all_marks}
    return h


def build_random_history_repo(root: Path, commits: int = 3000, seed: int = 7) -> Path:
    repo = init_bare(root / f"random-history-{commits}.git")
    random_history(commits, seed).write(repo)
    return repo


ODD_COMMITS = [
    # (headers after tree/parent, message) — each becomes one commit of a chain
    (
        b"author Jos\xe9 M\xfcller <jose@example.com> 1600000000 +0100\n"
        b"committer C O Mitter <committer@example.com> 1600000000 +0100\nencoding ISO-8859-1\n",
        b"caf\xe9 in latin-1\n\nna\xefve body\n",
    ),
    (
        b"author A U Thor <author@example.com> 1600000100 +0590\n"
        b"committer C O Mitter <committer@example.com> 1600000100 -0730\n"
        b"x-custom first line\n continued\n  indented more\n"
        b"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n",
        b"signed, with an unknown header\n",
    ),
    (
        b"author A U Thor <author@example.com> 1600000200 +1400\n"
        b"committer C O Mitter <committer@example.com> 1600000200 -1200\n",
        b"\n\n  leading blank lines and\ttabs  \n\xe6\x97\xa5\xe6\x9c\xac\tafter wide chars\nab\tc\td\n"
        b"   \n\n\nparagraph   \n\tindented by tab\n\n\n",
    ),
    (
        b"author Two Authors <one@example.com> 1600000300 +0000\n"
        b"author Second Author <two@example.com> 1600000301 +0200\n"
        b"committer C O Mitter <committer@example.com> 1600000300 +0000\n",
        b"subject split\nover two lines\n\nbody para 1\n\nbody para 2\n\n",
    ),
    (
        b"author <noname@example.com> 1600000400 +0000\ncommitter NoSpace<committer@example.com> 1600000400 +0000\n",
        b"no trailing newline",
    ),
    (
        b"author Broken Ident <broken 1600000500 +0000\n"
        b"committer C O Mitter <committer@example.com> 1600000500 +0000\n",
        b"author line without a closing >\n",
    ),
    (
        b"author No Zone <nozone@example.com> 1600000600\n"
        b"committer C O Mitter <committer@example.com> 1600000600 +0000\nencoding bogus-encoding\n",
        b"time without a zone; unknown encoding \xff\n",
    ),
    (
        b"author A U Thor <author@example.com> 1600000700 +0000\n"
        b"committer C O Mitter <committer@example.com> 1600000700 +0000\n",
        b"",
    ),
    (
        b"author A U Thor <author@example.com> 1600000800 +0000\n"
        b"committer C O Mitter <committer@example.com> 1600000800 +0000\nencoding UTF-8\n",
        b"windows\r\nline endings\r\n\r\nbody\r\n",
    ),
    (
        b"author A U Thor <author@example.com> 1600000900 +0000\n"
        b"committer C O Mitter <committer@example.com> 1600000900 +0000\n",
        b"nul in the body\n\nbefore\0after\n",
    ),
    (
        b"author A U Thor <author@example.com> 1600001000 +0000\n"
        b"committer C O Mitter <committer@example.com> 1600001000 +0000\n",
        b"percent %s and %n in a message\n\n\t\n   \n",
    ),
]


def build_odd_commits_repo(root: Path) -> Path:
    """A chain of commits written byte for byte (hash-object --literally):
    other encodings, odd zones, unknown and multi-line headers, duplicated
    and broken idents, messages with tabs, wide characters, CRLF, NUL, no
    trailing newline or no message; tip at refs/heads/odd (also HEAD), a
    merge of the chain with the scenario-like side at refs/heads/odd-merge."""
    repo = init_bare(root / "odd-commits.git")
    tree = git_text("mktree", cwd=repo, input="").strip()
    blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input="x\n").strip()
    tree2 = git_text("mktree", cwd=repo, input=f"100644 blob {blob}\tx\n").strip()
    parent = None
    for k, (headers, message) in enumerate(ODD_COMMITS):
        raw = b"tree %s\n" % (tree2 if k % 2 else tree).encode()
        if parent:
            raw += b"parent %s\n" % parent.encode()
        raw += headers
        if message or k % 2:
            raw += b"\n" + message
        parent = hash_literally(repo, "commit", raw)
    git("update-ref", "refs/heads/odd", parent, cwd=repo)
    side = hash_literally(
        repo,
        "commit",
        f"tree {tree2}\nauthor S Ide <side@example.com> 1600002000 +0000\n"
        "committer S Ide <side@example.com> 1600002000 +0000\n\nside root\n".encode(),
    )
    merge = hash_literally(
        repo,
        "commit",
        f"tree {tree2}\nparent {parent}\nparent {side}\n"
        "author M Erge <merge@example.com> 1600003000 +0000\n"
        "committer M Erge <merge@example.com> 1600003000 +0000\n\nmerge odd and side\n".encode(),
    )
    git("update-ref", "refs/heads/odd-merge", merge, cwd=repo)
    git("symbolic-ref", "HEAD", "refs/heads/odd", cwd=repo)
    return repo


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


# --- fsck: healthy bases and byte surgery --------------------------------------------------
#
# Corrupt repositories are built per *class* of defect from a healthy base:
# copy it, then damage one thing with plain file operations.  Pack surgery
# recomputes whatever checksums the defect class says must stay valid, so
# that each repository holds exactly one defect.


def build_fsck_base(root: Path, object_format: str = "sha1") -> Path:
    """A bare repository with merges, annotated tags, one pack (with deltas)
    and a few loose objects (a blob, a tree and a commit on a side branch)."""
    repo = init_bare(root / f"fsck-base-{object_format}.git", object_format)
    import_history(repo, 24, seed=21)
    git("repack", "-a", "-d", "-q", "--depth=20", cwd=repo)
    git(
        "fast-import",
        "--quiet",
        cwd=repo,
        input=(
            "commit refs/heads/loose\ncommitter C O Mitter <committer@example.com> 1700000000 +0000\n"
            "data 6\nloose\nfrom refs/heads/main^0\nM 100644 inline loose/file.txt\ndata 17\nloose file body.\n\n"
        ),
    )
    return repo


def build_fsck_worktree(root: Path) -> Path:
    """A non-bare repository (index, reflogs) with a linked worktree whose
    index stages a file of its own."""
    work = root / "fsck-work"
    if work.exists():
        shutil.rmtree(work)
    git("init", "-q", "-b", "main", work)
    for i in range(3):
        (work / f"f{i}.txt").write_text(f"file {i}\n" * (i + 1))
        git("add", ".", cwd=work)
        git("commit", "-q", "-m", f"commit {i}", cwd=work)
    git("worktree", "add", "-q", "-b", "side", root / "fsck-linked", cwd=work)
    (root / "fsck-linked" / "staged.txt").write_text("only in the linked worktree's index\n")
    git("add", "staged.txt", cwd=root / "fsck-linked")
    return work


def copy_repo(src: Path, dst: Path) -> Path:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True)
    return dst


def the_pack(repo: Path) -> tuple[Path, Path]:
    (pack,) = pack_files(repo)
    return pack, pack.with_suffix(".idx")


def verify_pack_rows(pack: Path) -> list[dict]:
    """Per object of ``pack``, from git verify-pack -v: id, type, size,
    size in pack, offset, and delta depth/base (0/None when whole)."""
    out = git_text("verify-pack", "-v", pack.with_suffix(".idx"), cwd=pack.parent.parent.parent)
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 5 or len(parts[0]) not in (40, 64) or parts[1] not in ("commit", "tree", "blob", "tag"):
            continue
        rows.append(
            {
                "oid": parts[0],
                "type": parts[1],
                "size": int(parts[2]),
                "packed": int(parts[3]),
                "offset": int(parts[4]),
                "depth": int(parts[5]) if len(parts) > 5 else 0,
                "base": parts[6] if len(parts) > 6 else None,
            }
        )
    return rows


def swap_idx_neighbours(repo: Path) -> bytes:
    """Swap two neighbouring entries (id, CRC and offset) of the one pack's
    v2 .idx whose ids share a first byte, and rewrite its checksum: the ids
    are out of order and the fanout still holds.  Returns the id that was
    first of the two."""
    _, idx = the_pack(repo)
    data = bytearray(idx.read_bytes())
    n = struct.unpack(">I", data[8 + 1020 : 8 + 1024])[0]
    names_at, crcs_at = 8 + 1024, 8 + 1024 + 20 * n
    offs_at = crcs_at + 4 * n
    names = [bytes(data[names_at + 20 * i : names_at + 20 * i + 20]) for i in range(n)]
    i = next(i for i in range(n - 1) if names[i][0] == names[i + 1][0])
    for at, width in ((names_at, 20), (crcs_at, 4), (offs_at, 4)):
        a, b = at + width * i, at + width * (i + 1)
        data[a : a + width], data[b : b + width] = data[b : b + width], data[a : a + width]
    data[-20:] = hashlib.sha1(bytes(data[:-20])).digest()
    os.chmod(idx, 0o644)
    idx.write_bytes(bytes(data))
    return names[i]


def flip_byte(path: Path, offset: int, mask: int = 0xFF) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    os.chmod(path, 0o644)
    path.write_bytes(bytes(data))


def rehash_pack(pack: Path, object_format: str = "sha1") -> None:
    """After surgery inside a pack's entries: recompute its trailer, the
    copy the .idx keeps and the .idx's own checksum, so only the entry's
    CRC32 and content disagree."""
    import hashlib

    rawsz = 32 if object_format == "sha256" else 20
    name = "sha256" if object_format == "sha256" else "sha1"
    body = pack.read_bytes()[:-rawsz]
    trailer = hashlib.new(name, body).digest()
    os.chmod(pack, 0o644)
    pack.write_bytes(body + trailer)
    idx = pack.with_suffix(".idx")
    data = idx.read_bytes()
    content = data[: -2 * rawsz] + trailer
    os.chmod(idx, 0o644)
    idx.write_bytes(content + hashlib.new(name, content).digest())


def hash_literally(repo: Path, type_name: str, body: bytes) -> str:
    """Write any bytes as a loose object of ``type_name`` (git's checks off)."""
    return git_text("hash-object", "-t", type_name, "-w", "--stdin", "--literally", cwd=repo, input=body).strip()


def pack_entry_header(type_num: int, size: int) -> bytes:
    out = bytearray()
    c = (type_num << 4) | (size & 15)
    size >>= 4
    while size:
        out.append(c | 0x80)
        c = size & 0x7F
        size >>= 7
    out.append(c)
    return bytes(out)


def insert_delta(base_size: int, result: bytes, declared: int | None = None) -> bytes:
    """A delta that inserts ``result`` (under 128 bytes) whole on a base of
    ``base_size`` bytes; its header may declare another result size."""

    def size(n: int) -> bytes:
        out = bytearray()
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)

    return size(base_size) + size(len(result) if declared is None else declared) + bytes([len(result)]) + result


def write_raw_pack(
    repo: Path,
    entries: list[tuple[bytes, int, bytes, bytes | None]],
    *,
    object_format: str = "sha1",
    declared_sizes: dict | None = None,
) -> tuple[Path, Path]:
    """A pack (and v2 .idx) from raw entries ``(id, type number, payload,
    REF_DELTA base id or None)``; payloads are deflated here.  The ids are
    taken as given: this writes packs git would refuse to (delta loops)."""
    import hashlib
    import struct
    import zlib

    name = "sha256" if object_format == "sha256" else "sha1"
    body = bytearray(b"PACK" + struct.pack(">II", 2, len(entries)))
    rows = []
    for oid, type_num, payload, base in entries:
        at = len(body)
        size = (declared_sizes or {}).get(oid, len(payload))
        chunk = pack_entry_header(type_num, size) + (base or b"") + zlib.compress(payload)
        body += chunk
        rows.append((oid, zlib.crc32(chunk) & 0xFFFFFFFF, at))
    trailer = hashlib.new(name, bytes(body)).digest()
    rows.sort()
    fanout = [0] * 256
    for oid, _, _ in rows:
        fanout[oid[0]] += 1
    for i in range(1, 256):
        fanout[i] += fanout[i - 1]
    idx = bytearray(b"\377tOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout))
    idx += b"".join(oid for oid, _, _ in rows)
    idx += b"".join(struct.pack(">I", crc) for _, crc, _ in rows)
    idx += b"".join(struct.pack(">I", off) for _, _, off in rows)
    idx += trailer
    idx += hashlib.new(name, bytes(idx)).digest()
    base = repo / "objects" / "pack" / f"pack-{trailer.hex()}"
    base.with_suffix(".pack").write_bytes(bytes(body) + trailer)
    base.with_suffix(".idx").write_bytes(bytes(idx))
    return base.with_suffix(".pack"), base.with_suffix(".idx")


def git_fsck(repo: Path, *args) -> tuple[int, str]:
    """git fsck --full's exit status and its output (stdout then stderr)."""
    p = subprocess.run(["git", "fsck", "--full", "--no-progress", *args], cwd=repo, capture_output=True, env=git_env())
    return p.returncode, (p.stdout + p.stderr).decode(errors="replace")
