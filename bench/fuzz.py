"""Mutation fuzzing against git: damaged copies of one small repository,
each read by packscope (compiled and pure) and by git.

The repository holds every file kind packscope reads: two packs with
deltas, loose objects, a split commit-graph (a chain of two layers), a
multi-pack-index, ``packed-refs``, loose refs, ``HEAD``, ``config`` and an
``objects/info/alternates`` naming a second repository.  Each case copies
it, mutates one file (a byte flipped, the file cut short, bytes inserted
or deleted), and runs ``fsck``, ``cat-file --batch-all-objects --batch``,
``log --all`` and ``info --json``.  What is checked (:func:`verdicts`):

* no Python traceback, ever;
* the compiled and the pure path print the same bytes and exit alike;
* fsck's exit status is git fsck's (exact bits), and ``log --all``'s and
  ``cat-file --batch-all-objects``'s are git's (0, or 128 where git dies) —
  except for the known, explained differences in :data:`ALLOWED` (each
  says why; the test prints those it met).

packscope runs in two long-lived worker processes (one per path: the path
is chosen when ``packscope.core.native`` is imported), each running the
CLI's ``main`` in-process with its output redirected, so a case costs no
interpreter start-up.  Everything is seeded: a seed and a count give the
same cases on every machine.

Used by tests/test_mutation_fuzz.py (a bounded run) and by
``packscope bench fuzz --count N --seed S`` (a longer one).
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "A U Thor",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "C O Mitter",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "GIT_AUTHOR_DATE": "1600000000 +0000",
    "GIT_COMMITTER_DATE": "1600000000 +0000",
    "LC_ALL": "C",
    "TZ": "UTC",
}
COMMANDS: dict[str, list[str]] = {
    "fsck": ["fsck", "--no-progress"],
    "batch": ["cat-file", "--batch-all-objects", "--batch"],
    "log": ["log", "--all"],
    "info": ["info", "--json"],
}
GIT_COMMANDS: dict[str, list[str]] = {
    "fsck": ["fsck", "--full", "--no-progress"],
    "batch": ["cat-file", "--batch-all-objects", "--batch"],
    "log": ["log", "--all"],
}
CASE_TIMEOUT = 30.0  # seconds one command may take on one case before it counts as hung


@dataclass(frozen=True)
class Known:
    """A known, explained difference from git's exit status: for these
    commands and damaged file kinds, when ``when(git's, ours)`` holds."""

    commands: tuple[str, ...]
    kinds: tuple[str, ...]  # () = any kind
    when: Callable[[int, int], bool]
    why: str


def _git_died(theirs: int, ours: int) -> bool:
    return theirs == 128 or theirs < 0


def _extra_bits(allowed: int) -> Callable[[int, int], bool]:
    """packscope sets only bits of ``allowed`` that git does not, and none fewer."""
    return lambda theirs, ours: theirs >= 0 and theirs & ~ours == 0 and (ours & ~theirs) & ~allowed == 0


def _fewer_bits(allowed: int) -> Callable[[int, int], bool]:
    """git sets every bit packscope sets, and beyond them only bits of ``allowed``."""
    return lambda theirs, ours: theirs >= 0 and ours & ~theirs == 0 and (theirs & ~ours) & ~allowed == 0


ALLOWED: tuple[Known, ...] = (
    Known(
        ("fsck",),
        (),
        lambda theirs, ours: _git_died(theirs, ours) and ours != 0,
        "git dies (fatal, or crashes) on this damage in the middle of its check; packscope reports it and "
        "finishes the check, so its exit bits say what it found",
    ),
    Known(
        ("fsck",),
        ("idx",),
        _extra_bits(2 | 16),
        "git reads objects through the multi-pack-index, which still names the object whose name the .idx lost; "
        "packscope's fsck reads each pack through its own index, so the object is missing there (bit 2) and "
        "the commit-graph cannot be compared with it (bit 16)",
    ),
    Known(
        ("log", "batch"),
        ("idx",),
        lambda theirs, ours: theirs == 0 and ours == 128,
        "git reads through the multi-pack-index, which is intact; packscope's reads stop at the damaged .idx",
    ),
    Known(
        ("fsck",),
        ("midx",),
        _fewer_bits(16 | 8),
        "git 2.39 loads a multi-pack-index whose chunk sizes, fanout and offsets it does not check and reads "
        "objects through it: its commit-graph verify (16) and its object reads (8) then fail too; packscope "
        "refuses the file, a cache (32 in both), and reads the packs",
    ),
    Known(
        ("log", "batch"),
        ("midx",),
        lambda theirs, ours: _git_died(theirs, ours) and ours == 0,
        "git 2.39 reads objects through a multi-pack-index whose chunk sizes, fanout and offsets it does not "
        "check, and dies on what it finds there (bad pack-int-id, offset beyond the pack, bad object) or "
        "crashes; packscope refuses the file, a cache, and reads the packs.  Where git dies loading the file "
        "(signature, version, a required chunk missing, pack names out of order) packscope exits 128 as git "
        "(midx.git_dies_loading)",
    ),
    Known(
        ("log",),
        ("graph", "graph-chain"),
        lambda theirs, ours: _git_died(theirs, ours) and ours == 0,
        "git 2.39 loads a commit-graph layer whose chunk sizes and offsets it does not check (a chunk moved by "
        "an inserted byte) and dies on the parents, positions or generations it then reads, or crashes; "
        "packscope's reading refuses the layer and reads the commits themselves.  A parent position beyond "
        "the graph in a layer both load is git's death in packscope's log too (log.GIT_DIES_ON_GRAPH)",
    ),
)


def known_difference(command: str, kind: str, theirs: int, ours: int) -> str | None:
    for k in ALLOWED:
        if command in k.commands and (not k.kinds or kind in k.kinds) and k.when(theirs, ours):
            return k.why
    return None


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    return env


def _git(*args: str, cwd: Path | str, input: bytes | None = None) -> bytes:
    p = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, env=git_env())
    if p.returncode:
        raise RuntimeError(f"git {' '.join(args)} failed: {p.stderr.decode(errors='replace')}")
    return p.stdout


def _commit_files(work: Path, step: int, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git("add", "-A", cwd=work)
    stamp = f"{1600000000 + step * 3600} +0000"
    subprocess.run(
        ["git", "commit", "-q", "-m", f"step {step}"],
        cwd=work,
        check=True,
        capture_output=True,
        env={**git_env(), "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
    )


def _text(step: int, name: str) -> str:
    """A file that changes a little each step: deltas in the packs."""
    lines = [f"{name} line {i}: {'abcdefgh' * 4} {i * 7 % 13}" for i in range(60)]
    for k in range(step + 1):
        lines[(k * 11) % 60] = f"{name} changed at step {k}"
    return "\n".join(lines) + "\n"


def build_base(root: Path) -> Path:
    """The repository every case copies (``root/base``: a work tree whose
    objects borrow from ``root/alt.git``)."""
    alt = root / "alt.git"
    seed = root / "alt-work"
    _git("init", "-q", "-b", "main", str(seed), cwd=root)
    for step in range(3):
        _commit_files(seed, step, {"shared.txt": _text(step, "shared")})
    _git("clone", "-q", "--bare", "--no-local", str(seed), str(alt), cwd=root)
    _git("repack", "-a", "-d", "-q", cwd=alt)
    shutil.rmtree(seed)

    work = root / "base"
    _git("clone", "-q", "--shared", str(alt), str(work), cwd=root)  # objects/info/alternates -> alt.git
    step = 3
    for _ in range(6):
        _commit_files(work, step, {"a.txt": _text(step, "a"), f"d/f{step % 3}.txt": _text(step, "f")})
        step += 1
    _git("repack", "-d", "-q", "--depth=20", cwd=work)  # pack 1: the local objects, with deltas
    _git("tag", "-a", "-m", "a tag", "v1", cwd=work)
    _git("branch", "side", "HEAD~2", cwd=work)
    _git("pack-refs", "--all", cwd=work)
    _git("commit-graph", "write", "--reachable", "--split=no-merge", cwd=work)
    for _ in range(4):
        _commit_files(work, step, {"a.txt": _text(step, "a"), "b.txt": _text(step, "b")})
        step += 1
    _git("repack", "-d", "-q", cwd=work)  # pack 2
    _git("commit-graph", "write", "--reachable", "--split=no-merge", cwd=work)  # a second layer
    _git("multi-pack-index", "write", cwd=work)
    for _ in range(2):  # loose objects on top, one branch loose
        _commit_files(work, step, {"c.txt": _text(step, "c")})
        step += 1
    _git("branch", "loose-branch", cwd=work)
    _git("hash-object", "-w", "--stdin", cwd=work, input=b"a dangling blob\n")
    return work


# --- mutations ---------------------------------------------------------------------------------


def targets(base: Path) -> list[tuple[str, str]]:
    """(kind, path relative to the repository) of every file a case may damage."""
    git_dir = base / ".git"
    out: list[tuple[str, str]] = []

    def add(kind: str, path: Path) -> None:
        if path.is_file():
            out.append((kind, str(path.relative_to(base))))

    objects = git_dir / "objects"
    for p in sorted((objects / "pack").glob("*.pack")):
        add("pack", p)
    for p in sorted((objects / "pack").glob("*.idx")):
        add("idx", p)
    add("midx", objects / "pack" / "multi-pack-index")
    chain = objects / "info" / "commit-graphs"
    add("graph-chain", chain / "commit-graph-chain")
    for p in sorted(chain.glob("*.graph")):
        add("graph", p)
    add("alternates", objects / "info" / "alternates")
    for p in sorted(objects.glob("[0-9a-f][0-9a-f]/*"))[:3]:
        add("loose", p)
    add("packed-refs", git_dir / "packed-refs")
    add("HEAD", git_dir / "HEAD")
    add("loose-ref", git_dir / "refs" / "heads" / "loose-branch")
    add("config", git_dir / "config")
    return out


@dataclass
class Mutation:
    kind: str  # the target's kind
    path: str  # relative to the repository
    how: str  # flip / truncate / insert / delete
    offset: int
    value: bytes = b""  # inserted bytes, or the flip mask
    length: int = 0  # bytes deleted

    def describe(self) -> str:
        what = {
            "flip": f"byte {self.offset} ^= {self.value.hex()}",
            "truncate": f"cut at {self.offset}",
            "insert": f"{self.value.hex()} inserted at {self.offset}",
            "delete": f"{self.length} bytes deleted at {self.offset}",
        }[self.how]
        return f"{self.path}: {what}"

    def apply(self, data: bytes) -> bytes:
        o = self.offset
        if self.how == "flip":
            return data[:o] + bytes([data[o] ^ self.value[0]]) + data[o + 1 :]
        if self.how == "truncate":
            return data[:o]
        if self.how == "insert":
            return data[:o] + self.value + data[o:]
        return data[:o] + data[o + self.length :]


def mutations(base: Path, count: int, seed: int) -> list[Mutation]:
    """``count`` mutations, the same for the same seed and repository."""
    rng = random.Random(seed)
    files = targets(base)
    out = []
    for _ in range(count):
        kind, path = files[rng.randrange(len(files))]
        size = (base / path).stat().st_size
        how = rng.choice(("flip", "flip", "flip", "truncate", "insert", "delete"))
        if size == 0:
            how = "insert"
        # damage lands in headers and tables more often than uniform offsets would put it
        offset = rng.randrange(min(size, 64)) if size and rng.random() < 0.4 else rng.randrange(max(size, 1))
        if how == "flip":
            out.append(
                Mutation(
                    kind,
                    path,
                    how,
                    offset,
                    bytes([1 << rng.randrange(8) if rng.random() < 0.5 else rng.randrange(1, 256)]),
                )
            )
        elif how == "truncate":
            out.append(Mutation(kind, path, how, offset))
        elif how == "insert":
            extra = rng.choice(
                (b"\0", b"\n", b"\xff", b"/", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9))))
            )
            out.append(Mutation(kind, path, how, min(offset, size), extra))
        else:
            out.append(Mutation(kind, path, how, offset, length=rng.randrange(1, 9)))
    return out


def make_case(base: Path, dst: Path, m: Mutation) -> Path:
    """A copy of the base repository with ``m`` applied (the alternate it
    names is shared, never written)."""
    shutil.copytree(base, dst, symlinks=True)
    path = dst / m.path
    os.chmod(path, 0o644)
    path.write_bytes(m.apply(path.read_bytes()))
    return dst


# --- running packscope: one worker process per path ------------------------------------------

_WORKER = r"""
import io, json, os, sys, traceback
proto_in = os.fdopen(os.dup(0), "rb")
proto_out = os.fdopen(os.dup(1), "wb")
null = os.open(os.devnull, os.O_RDONLY)
os.dup2(null, 0)
from packscope.inspector.cli import main
home = os.getcwd()
for line in proto_in:
    req = json.loads(line)
    out = open(req["out"], "w+b"); err = open(req["err"], "w+b")
    saved = os.dup(1), os.dup(2)
    sys.stdout.flush(); sys.stderr.flush()
    os.dup2(out.fileno(), 1); os.dup2(err.fileno(), 2)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
    crashed = None
    try:
        status = main(req["argv"])
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        crashed = traceback.format_exc()
        status = -1
    try:
        sys.stdout.flush(); sys.stderr.flush()
    except Exception:
        pass
    os.dup2(saved[0], 1); os.dup2(saved[1], 2); os.close(saved[0]); os.close(saved[1])
    sys.stdout = sys.__stdout__; sys.stderr = sys.__stderr__
    os.chdir(home)
    out.close(); err.close()
    proto_out.write((json.dumps({"status": status, "traceback": crashed}) + "\n").encode()); proto_out.flush()
"""


class Worker:
    """packscope's CLI in a process of its own, on one path (compiled or pure)."""

    def __init__(self, pure: bool, scratch: Path) -> None:
        self.pure = pure
        self.scratch = scratch
        self.proc: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        env = git_env()
        env.pop("PACKSCOPE_PURE", None)
        if self.pure:
            env["PACKSCOPE_PURE"] = "1"
        return subprocess.Popen(
            [sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=self.scratch
        )

    def run(self, argv: list[str]) -> tuple[int | str, bytes, bytes, str | None]:
        """(exit status or "hung", stdout, stderr, traceback text)."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        tag = "pure" if self.pure else "compiled"
        out, err = self.scratch / f"{tag}.out", self.scratch / f"{tag}.err"
        req = {"argv": argv, "out": str(out), "err": str(err)}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], CASE_TIMEOUT)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            self.close()
            return "hung" if not ready else "died", _read(out), _read(err), None
        answer = json.loads(line)
        return answer["status"], _read(out), _read(err), answer["traceback"]

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


# --- one case, and the verdicts ----------------------------------------------------------------


@dataclass
class CaseResult:
    mutation: Mutation
    ours: dict[str, tuple[int | str, bytes, bytes, str | None]] = field(default_factory=dict)  # "cmd/path"
    git: dict[str, int] = field(default_factory=dict)


def run_case(repo: Path, m: Mutation, workers: dict[str, Worker]) -> CaseResult:
    result = CaseResult(m)
    for name, args in COMMANDS.items():
        for path, worker in workers.items():
            result.ours[f"{name}/{path}"] = worker.run(["-C", str(repo), *args])
    for name, args in GIT_COMMANDS.items():
        try:
            p = subprocess.run(
                ["git", *args],
                cwd=repo,
                capture_output=True,
                env=git_env(),
                timeout=CASE_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
            result.git[name] = p.returncode
        except subprocess.TimeoutExpired:
            result.git[name] = -1
    return result


@dataclass
class Problem:
    what: str  # traceback / paths-differ / exit-differs / hung
    command: str
    mutation: Mutation
    detail: str
    allowed: str | None = None  # why, when it is a known difference

    def line(self) -> str:
        why = f"  [allowed: {self.allowed}]" if self.allowed else ""
        return f"{self.what:13} {self.command:6} {self.mutation.describe()}: {self.detail}{why}"


def _without_path(report: bytes) -> bytes:
    """info --json without the one field that names the path that ran."""
    try:
        doc = json.loads(report)
    except ValueError:
        return report
    if isinstance(doc, dict):
        doc.pop("implementation", None)
    return json.dumps(doc, sort_keys=True).encode()


def verdicts(r: CaseResult) -> list[Problem]:
    out: list[Problem] = []
    m = r.mutation
    for name in COMMANDS:
        runs = {path: r.ours[f"{name}/{path}"] for path in ("compiled", "pure") if f"{name}/{path}" in r.ours}
        for path, (status, _, err, tb) in runs.items():
            if tb is not None or b"Traceback (most recent call last)" in err:
                last = (tb or err.decode(errors="replace")).strip().splitlines()[-1]
                out.append(Problem("traceback", name, m, f"{path}: {last}"))
            if isinstance(status, str):
                out.append(Problem(status, name, m, path))
        if len(runs) == 2:
            (cs, cout, _, _), (ps, pout, _, _) = runs["compiled"], runs["pure"]
            if name == "info":
                cout, pout = _without_path(cout), _without_path(pout)
            if (cs, cout) != (ps, pout):
                out.append(
                    Problem("paths-differ", name, m, f"compiled {cs} ({len(cout)} B), pure {ps} ({len(pout)} B)")
                )
        ours = next(iter(runs.values()))[0] if runs else None
        if name not in r.git or not isinstance(ours, int):
            continue
        theirs = r.git[name]
        differs = ours != theirs  # fsck's exact bits; log's and cat-file's exact status (0, 128)
        if differs:
            allowed = known_difference(name, m.kind, theirs, ours)
            out.append(Problem("exit-differs", name, m, f"git {theirs}, packscope {ours}", allowed))
    return out


def fuzz(
    count: int,
    seed: int,
    *,
    work_dir: Path | None = None,
    paths: tuple[str, ...] = ("compiled", "pure"),
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[tuple[CaseResult, list[Problem]]]:
    """Build the repository, then run ``count`` seeded cases; each case's
    result and its problems, as they come."""
    own = work_dir is None
    root = Path(tempfile.mkdtemp(prefix="packscope-fuzz-")) if own else work_dir
    assert root is not None
    try:
        base = build_base(root)
        scratch = root / "scratch"
        scratch.mkdir(exist_ok=True)
        workers = {p: Worker(p == "pure", scratch) for p in paths}
        try:
            for i, m in enumerate(mutations(base, count, seed)):
                case = make_case(base, root / f"case-{i}", m)
                try:
                    result = run_case(case, m, workers)
                finally:
                    shutil.rmtree(case, ignore_errors=True)
                if progress is not None:
                    progress(i + 1, count)
                yield result, verdicts(result)
        finally:
            for w in workers.values():
                w.close()
    finally:
        if own:
            shutil.rmtree(root, ignore_errors=True)


def main(count: int, seed: int, out=sys.stdout, quiet: bool = False) -> int:
    """``packscope bench fuzz``: run the cases, print every problem and a
    summary; exit 1 when any problem is not an allowed difference."""
    t0 = time.perf_counter()
    problems: list[Problem] = []

    def progress(done: int, total: int) -> None:
        if not quiet:
            sys.stderr.write(f"\r{done}/{total} cases, {len(problems)} problems")
            sys.stderr.flush()

    for _, found in fuzz(count, seed, progress=progress):
        for p in found:
            problems.append(p)
            out.write(p.line() + "\n")
            out.flush()
    if not quiet:
        sys.stderr.write("\n")
    by_what: dict[str, int] = {}
    for p in problems:
        key = p.what + (" (allowed)" if p.allowed else "")
        by_what[key] = by_what.get(key, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(by_what.items())) or "no problems"
    out.write(f"{count} cases (seed {seed}) in {time.perf_counter() - t0:.0f} s: {summary}\n")
    return 1 if any(not p.allowed for p in problems) else 0
