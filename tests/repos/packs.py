"""Packs: the standard packed, idx v1/64-bit and many-pack repositories,
loose objects, and packs of particular shapes (REF_DELTA, thin, deep chains,
big copies, .rev) with git's batch answers about them."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

from tests.repos.common import fast_import_stream, git, git_text, import_history, init_bare, pack_files

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
