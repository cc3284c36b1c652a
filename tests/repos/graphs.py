"""Commit-graphs (single, split, mixed generations), changed-path Bloom
filters and multi-pack-indexes, and what git says a commit changed."""

from __future__ import annotations

from pathlib import Path

from tests.repos.common import fast_import_stream, git, git_text, import_history, init_bare

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
