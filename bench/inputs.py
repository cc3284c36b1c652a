"""Inputs: repositories built with git, the real history, and random ids.

Every repository the benchmarks need is built here with git itself
(``fast-import``, deterministic streams), once, under the work directory
(``--work-dir``, default ``~/.cache/packscope-bench``): a build goes to a
temporary name and is renamed into place when complete, so an interrupted
or concurrent build never leaves a half-made repository behind.  The real
history is only ever read.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import BinaryIO, cast

from packscope.bench.peers import bench_env
from packscope.bench.results import ScenarioResult


def build_key(source: bytes, git_version: bytes) -> str:
    """What cached repositories are keyed by: a hash of this module's source
    (the streams and builders) and of git's version, so a change to how they
    are made rebuilds them, with nothing to bump by hand."""
    return hashlib.sha256(source + b"\0" + git_version).hexdigest()[:12]


BUILD_KEY = build_key(
    Path(__file__).read_bytes(), subprocess.run(["git", "--version"], capture_output=True, check=False).stdout
)
MARKER = "bench-complete"
TYPE_CODES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}


def default_work_dir() -> Path:
    env = os.environ.get("PACKSCOPE_BENCH_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "packscope-bench"


def git(*args, cwd=None, input: bytes | None = None) -> bytes:
    p = subprocess.run(["git", *map(str, args)], cwd=cwd, input=input, capture_output=True, env=bench_env())
    if p.returncode:
        raise RuntimeError(f"git {' '.join(map(str, args[:3]))} failed: {p.stderr.decode(errors='replace')[-500:]}")
    return p.stdout


# --- cached builds ----------------------------------------------------------------------


def cached_repo(work_dir: Path, key: str, build, version: str | None = None) -> Path:
    """``work_dir/repos/KEY``, built by ``build(path)`` unless already complete
    (``version``: the build key, by default this module's)."""
    root = work_dir / "repos"
    dest = root / f"{key}-{version or BUILD_KEY}.git"
    if (dest / MARKER).exists():
        return dest
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
    try:
        t0 = time.perf_counter()
        build(tmp)
        (tmp / MARKER).write_text(f"built in {time.perf_counter() - t0:.1f} s\n")
        try:
            os.rename(tmp, dest)
        except OSError:
            if not (dest / MARKER).exists():  # not a concurrent builder's result: a stale leftover
                shutil.rmtree(dest, ignore_errors=True)
                os.rename(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def init_bare(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "--bare", path)


# --- fast-import streams --------------------------------------------------------------


class _Stream:
    """A fast-import stream writer with deterministic authors and dates."""

    def __init__(self, start: int = 1_500_000_000) -> None:
        self.parts: list[bytes] = []
        self.mark = 0
        self.time = start

    def data(self, b: bytes) -> None:
        self.parts.append(b"data %d\n%s\n" % (len(b), b))

    def commit(
        self, ref: str, msg: str, changes: list[tuple[str, bytes]], frm: int | None = None, merge: int | None = None
    ) -> int:
        self.mark += 1
        self.time += 97
        tz = ("+0000", "-0700", "+0530", "+0100")[self.mark % 4]
        self.parts.append(
            f"commit {ref}\nmark :{self.mark}\n"
            f"author A U Thor <author@example.com> {self.time} {tz}\n"
            f"committer C O Mitter <committer@example.com> {self.time} {tz}\n".encode()
        )
        self.data(msg.encode())
        if frm is not None:
            self.parts.append(b"from :%d\n" % frm)
        if merge is not None:
            self.parts.append(b"merge :%d\n" % merge)
        for path, content in changes:
            self.parts.append(f"M 100644 inline {path}\n".encode())
            self.data(content)
        self.parts.append(b"\n")
        return self.mark

    def tag(self, name: str, mark: int) -> None:
        self.parts.append(f"tag {name}\nfrom :{mark}\ntagger T Agger <tag@example.com> {self.time} +0000\n".encode())
        self.data(f"release {name}\n".encode())

    def checkpoint(self) -> None:
        self.parts.append(b"checkpoint\n\n")

    def bytes(self) -> bytes:
        return b"".join(self.parts)


def history_stream(commits: int, *, seed: int = 7, files: int = 60, checkpoint_after: int | None = None) -> bytes:
    """A history shaped like a project's: files in directories edited a few
    lines at a time (so repacking makes delta chains), new files now and
    then, a side branch merged back every 50 commits, a tag every 100.
    With ``checkpoint_after=B``, every commit after the first B ends with a
    checkpoint: one pack each (git's t/perf/lib-pack.sh trick)."""
    rnd = random.Random(seed)
    words = [f"w{i:03d}" for i in range(500)]

    def text(n: int) -> list[bytes]:
        return [" ".join(rnd.choice(words) for _ in range(8)).encode() for _ in range(n)]

    tree = {f"src/d{i % 8}/file{i}.c": text(40 + rnd.randrange(80)) for i in range(files)}
    if commits < 1:
        raise ValueError("a history needs at least one commit")
    s = _Stream()
    main: int | None = None
    for n in range(commits):
        changes = []
        if n == 0:
            changes = [(p, b"\n".join(lines) + b"\n") for p, lines in sorted(tree.items())]
        else:
            for _ in range(1 + rnd.randrange(3)):
                path = rnd.choice(sorted(tree))
                lines = tree[path]
                k = rnd.randrange(len(lines))
                lines[k : k + 1] = text(1 + rnd.randrange(3))
                changes.append((path, b"\n".join(lines) + b"\n"))
            if rnd.random() < 0.03:
                path = f"src/d{rnd.randrange(8)}/new{n}.c"
                tree[path] = text(30)
                changes.append((path, b"\n".join(tree[path]) + b"\n"))
        merge = None
        if n and n % 50 == 0:
            side = s.commit("refs/heads/side", f"side work {n}\n", [(f"side/s{n}.txt", b"side %d\n" % n)], frm=main)
            merge = side
        main = s.commit(
            "refs/heads/main",
            f"commit {n}\n\nchange {n} of the history\n",
            changes,
            frm=main if n else None,
            merge=merge,
        )
        if n % 100 == 3:
            s.tag(f"v{n}", main)
        if checkpoint_after is not None and n + 1 >= checkpoint_after:
            s.checkpoint()
    assert main is not None  # commits >= 1
    s.parts.append(b"reset refs/heads/side\nfrom :%d\n\n" % main)
    return s.bytes()


def loose_blobs_stream(start: int, stop: int) -> bytes:
    return b"".join(
        b"blob\ndata %d\n%s\n" % (len(b), b)
        for b in (b"packscope bench loose object %d\n" % i for i in range(start, stop))
    )


# --- repositories ----------------------------------------------------------------------------


def synthetic_history(ctx, commits: int) -> Path:
    """A single-pack history, repacked with deltas like a real one."""

    def build(path: Path) -> None:
        init_bare(path)
        git("fast-import", "--quiet", cwd=path, input=history_stream(commits))
        git("repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50", cwd=path)
        git("symbolic-ref", "HEAD", "refs/heads/main", cwd=path)

    return cached_repo(ctx.work_dir, f"history-{commits}", build)


def many_packs(ctx, packs: int, base_commits: int) -> Path:
    """``packs`` packs: a history of ``base_commits`` in the first, then one
    tiny pack per commit (fast-import checkpoints, as git's p5551 builds)."""

    def build(path: Path) -> None:
        init_bare(path)
        total = base_commits + packs - 1
        git(
            "-c",
            "fastimport.unpackLimit=0",
            "fast-import",
            "--quiet",
            cwd=path,
            input=history_stream(total, checkpoint_after=base_commits),
        )
        git("symbolic-ref", "HEAD", "refs/heads/main", cwd=path)
        n = len(list((path / "objects" / "pack").glob("*.pack")))
        if n != packs:
            raise RuntimeError(f"built {n} packs, wanted {packs}")

    return cached_repo(ctx.work_dir, f"packs-{packs}-base{base_commits}", build)


def loose_repo(ctx, n: int, smaller: Sequence[int] = ()) -> Path:
    """Exactly 256×n loose objects and no pack.  When a repository with
    256×m objects (m < n, in ``smaller``) is already built, start from a
    hard-linked copy of it: the sweep's repositories share most files."""

    def build(path: Path) -> None:
        base = None
        for m in sorted((m for m in smaller if m < n), reverse=True):
            cand = ctx.work_dir / "repos" / f"loose-{m}-{BUILD_KEY}.git"
            if (cand / MARKER).exists():
                base = (m, cand)
                break
        start = 0
        if base is not None:
            shutil.rmtree(path)
            subprocess.run(["cp", "-al", str(base[1]), str(path)], check=True)
            (path / MARKER).unlink()
            start = 256 * base[0]
        else:
            init_bare(path)
        git(
            "-c",
            f"fastimport.unpackLimit={256 * n + 1}",
            "fast-import",
            "--quiet",
            cwd=path,
            input=loose_blobs_stream(start, 256 * n),
        )
        packs = list((path / "objects" / "pack").glob("*.pack"))
        if packs:
            raise RuntimeError("fast-import left a pack: the loose sweep needs loose objects only")

    return cached_repo(ctx.work_dir, f"loose-{n}", build)


def object_format(repo: Path | str) -> str:
    try:
        return git("rev-parse", "--show-object-format", cwd=repo).decode().strip() or "sha1"
    except RuntimeError:
        return "sha1"


def warm(ctx, repo: Path | str) -> None:
    """Read every index and pack once so the first system measured does not
    pay for the disk while the others read from the page cache."""

    def go():
        for p in (Path(repo) / "objects" / "pack").iterdir():
            if p.suffix in (".idx", ".pack", ".rev", ".midx") or p.name == "multi-pack-index":
                with open(p, "rb") as f:
                    while f.read(1 << 20):
                        pass
        return True

    ctx.memo(("warm", str(repo)), go)


def describe(repo: Path | str) -> dict:
    pack_dir = Path(repo) / "objects" / "pack"
    packs = list(pack_dir.glob("*.pack")) if pack_dir.exists() else []
    return {"path": str(repo), "packs": len(packs), "pack_bytes": sum(p.stat().st_size for p in packs)}


# --- histories at a scale of git.git (bench/synth.py) ---------------------------------------


SYNTH_KEY = build_key(
    (Path(__file__).parent / "synth.py").read_bytes(),
    subprocess.run(["git", "--version"], capture_output=True, check=False).stdout,
)


def synthetic_scaled(ctx, shape) -> Path:
    """The repository of ``shape`` (a ``synth.Shape``), built by streaming the
    generator into ``git fast-import`` (one pack, N packs or loose), cached
    under a key of the generator's source: the same shape is built once."""
    from packscope.bench.synth import write_stream

    def build(path: Path) -> None:
        init_bare(path)
        limit = ["-c", "fastimport.unpackLimit=2147483647"] if shape.packs == 0 else []
        p = subprocess.Popen(
            ["git", *limit, "fast-import", "--quiet"],
            cwd=path,
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=bench_env(),
        )
        assert p.stdin is not None and p.stderr is not None
        try:
            written = write_stream(shape, cast(BinaryIO, p.stdin))
            p.stdin.close()
        except BrokenPipeError:
            written = {}
        err = p.stderr.read()
        if p.wait():
            raise RuntimeError(f"git fast-import failed: {err.decode(errors='replace')[-500:]}")
        git("symbolic-ref", "HEAD", "refs/heads/main", cwd=path)
        (path / "synth.txt").write_text("".join(f"{k} {v}\n" for k, v in written.items()))

    return cached_repo(ctx.work_dir, shape.key, build, SYNTH_KEY)


def with_commit_graph(ctx, base: Path) -> Path:
    """``base`` with a commit-graph (``--reachable --changed-paths``), as
    ``git gc`` or ``git maintenance`` leave one: a hard-linked copy of
    ``base`` (git writes only objects/info), cached beside it."""

    def build(path: Path) -> None:
        shutil.rmtree(path)
        subprocess.run(["cp", "-al", str(base), str(path)], check=True)
        (path / MARKER).unlink()
        git("commit-graph", "write", "--reachable", "--changed-paths", cwd=path)

    key = base.name.removesuffix(".git").rsplit("-", 1)[0] + "-graph"
    return cached_repo(ctx.work_dir, key, build, SYNTH_KEY)


def scaled_input(ctx, scale: float, packs: int = 1, commit_graph: bool = False) -> Input:
    """git.git's size times ``scale`` (``--scale``), as ``synth.shape_for_scale``;
    with ``commit_graph``, the same store with a commit-graph beside it."""
    from packscope.bench.synth import shape_for_scale

    shape = shape_for_scale(scale, packs=packs)
    layout = "loose" if packs == 0 else f"{packs} pack" + ("s" if packs > 1 else "")
    if commit_graph:
        layout += ", commit-graph"
    label = f"synthetic {scale:g}× git.git ({shape.commits:,} commits, {shape.merges:,} merges, {layout})"
    path = synthetic_scaled(ctx, shape)
    return Input(label, with_commit_graph(ctx, path) if commit_graph else path, True)


# --- object tables and random ids ------------------------------------------------------------


@dataclass
class ObjectTable:
    ids: list[bytes]
    kinds: bytes  # TYPE_CODES per id
    deltas: bytes  # 1 where git stores the object as a delta
    rawsz: int

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def id_set(self) -> set[bytes]:
        return set(self.ids)

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "id_set"}  # the cache is not pickled

    def counts(self) -> dict:
        names = {v: k for k, v in TYPE_CODES.items()}
        out = {names[c]: self.kinds.count(c) for c in sorted(set(self.kinds))}
        out["deltas"] = self.deltas.count(1)
        return out


def object_table(ctx, repo: Path | str) -> ObjectTable:
    """Every object of ``repo`` (id, type, delta or not), from git, cached."""
    repo = Path(repo).resolve()

    def make() -> ObjectTable:
        pack_dir = repo / "objects" / "pack"
        stamp = sorted((p.name, p.stat().st_size) for p in pack_dir.iterdir()) if pack_dir.exists() else []
        loose = sum(1 for d in (repo / "objects").glob("[0-9a-f][0-9a-f]") for _ in d.iterdir())
        key = hashlib.sha1(repr((str(repo), stamp, loose)).encode()).hexdigest()[:16]
        cache = ctx.work_dir / "tables" / f"{key}.pickle"
        if cache.exists():
            with open(cache, "rb") as f:
                return pickle.load(f)
        out = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype) %(deltabase)", cwd=repo)
        ids, kinds, deltas = [], bytearray(), bytearray()
        null = None
        for line in out.splitlines():
            name, typ, base = line.split()
            if null is None:
                null = b"0" * len(name)
            ids.append(bytes.fromhex(name.decode()))
            kinds.append(TYPE_CODES[typ.decode()])
            deltas.append(0 if base == null else 1)
        table = ObjectTable(ids, bytes(kinds), bytes(deltas), len(ids[0]) if ids else 20)
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "wb") as f:
            pickle.dump(table, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, cache)
        return table

    return ctx.memo(("table", str(repo)), make)


def rng_for(ctx, *parts) -> random.Random:
    """Fresh but reproducible randomness for one repetition of one case."""
    return random.Random(":".join(map(str, (ctx.seed, *parts))))


def sample_present(table: ObjectTable, rnd: random.Random, n: int) -> list[bytes]:
    return [table.ids[i] for i in rnd.sample(range(len(table)), min(n, len(table)))]


def absent_ids(rnd: random.Random, n: int, rawsz: int, present: ObjectTable | None = None) -> list[bytes]:
    known = present.id_set if present is not None else set()
    out: list[bytes] = []
    while len(out) < n:
        oid = rnd.randbytes(rawsz)
        if oid not in known and any(oid):  # the null id has its own fast path: not a miss to measure
            out.append(oid)
    return out


def write_ids(ctx, ids: list[bytes], *, hex_lines: bool) -> str:
    """A file of ids: hex lines (a process's stdin) or raw bytes (a worker's)."""
    fd, path = tempfile.mkstemp(prefix="bench-ids-", dir=ctx.scratch_root())
    with os.fdopen(fd, "wb") as f:
        if hex_lines:
            f.write(b"".join(oid.hex().encode() + b"\n" for oid in ids))
        else:
            f.write(b"".join(ids))
    return path


# --- the two standard inputs -------------------------------------------------------------


@dataclass
class Input:
    label: str
    path: Path
    synthetic: bool
    note: str | None = None


def real_history(ctx) -> Input:
    """The real history (--repo / PACKSCOPE_BENCH_REPO), else a synthetic one
    built here — said so in the results, since it flatters nobody equally."""
    if ctx.repo:
        path = Path(ctx.repo).resolve()
        return Input(f"real: {path.name}", path, False)
    commits = ctx.size(20_000, 150)
    path = synthetic_history(ctx, commits)
    return Input(
        f"synthetic history ({commits} commits)",
        path,
        True,
        "no real history given (--repo PATH or PACKSCOPE_BENCH_REPO): a synthetic one built with fast-import",
    )


def thousand_packs(ctx) -> Input:
    packs = ctx.size(1000, 20)
    base = ctx.size(3000, 40)
    return Input(f"{packs} packs", many_packs(ctx, packs, base), True)


def on_real_history(ctx, name: str, title: str, **result_options) -> tuple[ScenarioResult, Input, str]:
    """A scenario's start on the real history: its result (noting where the
    history came from), the history, and its path, warmed into the page cache."""
    res = ScenarioResult(name, title, **result_options)
    source = real_history(ctx)
    if source.note:
        res.notes.append(source.note)
    repo = str(source.path)
    warm(ctx, repo)
    return res, source, repo
