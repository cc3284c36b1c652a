"""The systems compared: packscope, git, dulwich and pygit2.

Two kinds:

* whole processes (``packscope cat-file`` vs ``git cat-file``, ``git
  rev-list``): command lines built here, timed by the runner from spawn to
  exit, so start-up is included;
* in-process APIs: an adapter per library with the same bulk operations
  (contains, info, read, walk).  Each adapter first converts the ids into the
  library's own form (raw bytes, hex bytes, ``pygit2.Oid``) outside the
  timed region, then runs a tight loop with the method bound to a local, so
  the loop measures the library and not the adapter.

dulwich and pygit2 are optional (the ``bench`` extra): a missing one is
reported as "not installed" with the install command, never an error.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

OPTIONAL = {"dulwich": "dulwich", "pygit2": "pygit2"}
INSTALL_HINT = "pip install 'packscope[bench]' (or: pip install dulwich pygit2)"

# git reads no user or system configuration during a benchmark: the numbers
# must not depend on someone's ~/.gitconfig (core.packedGitLimit, pack.* …).
GIT_BENCH_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_AUTHOR_NAME": "Bench Author",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench Committer",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "LC_ALL": "C",
    "TZ": "UTC",
}


# Python settings a developer's shell may carry that a user's install does
# not: without bytecode caching every run recompiles packscope (~0.1 s of
# start-up); unbuffered stdio turns output lines into system calls.
PYTHON_SETTINGS_DROPPED = ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")


def bench_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in PYTHON_SETTINGS_DROPPED}
    env.update(GIT_BENCH_ENV)
    # Bytecode is cached as an installed package's would be, but outside the
    # source tree (an editable install would otherwise write __pycache__ there).
    env.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "packscope-bench-pycache"))
    return env


def library_versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for dist in ("packscope", "zlib-ng", "sortedcontainers", "textual", "rich", "dulwich", "pygit2"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    try:
        import pygit2

        out["libgit2"] = pygit2.LIBGIT2_VERSION
    except ImportError:
        out["libgit2"] = None
    return out


def unavailable_reason(library: str) -> str | None:
    """None when ``library`` imports, else why it is skipped."""
    try:
        __import__(OPTIONAL[library])
    except ImportError as e:
        return f"{library} is not installed ({e.name or e}); {INSTALL_HINT}"
    return None


# --- whole processes -------------------------------------------------------------


def packscope_command() -> list[str]:
    """The installed ``packscope`` script next to this interpreter (what a user
    runs), else ``python -m packscope.inspector.cli`` (same code, same start-up)."""
    script = Path(sys.executable).with_name("packscope")
    if script.exists():
        return [str(script)]
    found = shutil.which("packscope")
    return [found] if found else [sys.executable, "-m", "packscope.inspector.cli"]


def packscope_cmd(repo: str, *args: str) -> list[str]:
    return [*packscope_command(), "-C", str(repo), *args]


def git_cmd(repo: str, *args: str) -> list[str]:
    return ["git", "-C", str(repo), *args]


# --- in-process adapters -------------------------------------------------------------


# The measured loops: one API call per id, as a caller looking ids up one by one makes them.


def count_true(test: Callable[[Any], object], ids: list) -> int:
    n = 0
    for oid in ids:
        if test(oid):
            n += 1
    return n


def count_answered(call: Callable[[Any], object], ids: list, missing: type[Exception]) -> int:
    """How many ids ``call`` answers without raising ``missing``."""
    n = 0
    for oid in ids:
        try:
            call(oid)
            n += 1
        except missing:
            pass
    return n


def content_bytes(read: Callable[[Any], tuple[Any, bytes]], ids: list) -> int:
    """The contents' total size, through ``read(id) -> (type, data)``."""
    total = 0
    for oid in ids:
        total += len(read(oid)[1])
    return total


class Adapter:
    """One library opened on one repository."""

    name = "?"
    library = "?"

    def open(self, repo: str, **options) -> None:
        raise NotImplementedError

    def prepare(self, ids: list[bytes]) -> list:
        return ids

    def contains(self, ids: list) -> int:
        raise NotImplementedError

    def info(self, ids: list) -> int:
        raise NotImplementedError

    def read(self, ids: list) -> int:
        raise NotImplementedError

    def walk_all(self) -> int:
        raise NotImplementedError

    def close(self) -> None:
        pass


class PackscopeAdapter(Adapter):
    name = "packscope"
    library = "packscope"

    def open(
        self,
        repo: str,
        *,
        policy: str = "gated",
        quick: bool = False,
        tracer=None,
        loose_strategy: str = "per-subdir",
        algorithm: str = "binary",
        **_,
    ) -> None:
        from packscope.core.repo.session import open_session

        self.session = open_session(
            repo, tracer=tracer, policy=policy, quick=quick, loose_strategy=loose_strategy, algorithm=algorithm
        )
        self.store = self.session.store

    def contains(self, ids: list) -> int:
        return count_true(self.store.contains, ids)

    def contains_batch(self, ids: list) -> int:
        """The batch API (what `cat-file --batch-check` uses): one call."""
        return sum(loc is not None for loc in self.store.locate_many(ids))

    def info(self, ids: list) -> int:
        from packscope.core.errors import LookupFailedError

        return count_answered(self.store.object_info, ids, LookupFailedError)

    def read(self, ids: list) -> int:
        return content_bytes(self.store.read, ids)

    def walk_all(self) -> int:
        """What ``packscope log --all`` walks, with the same commit source
        (commit-graph when usable, the fast commit reader otherwise)."""
        from packscope.core.history.graph_walk import WalkSource
        from packscope.core.history.rev_args import all_tips
        from packscope.core.history.walk import walk

        source = WalkSource.open(self.session.repo, self.store, refs=self.session.refs)
        try:
            starts = all_tips(self.session.repo, self.session.refs)
            return sum(1 for _ in walk(source.objects, starts, **source.walk_options(None)))
        finally:
            source.close()

    def close(self) -> None:
        self.session.close()


class DulwichAdapter(Adapter):
    name = "dulwich"
    library = "dulwich"

    def open(self, repo: str, **_) -> None:
        from dulwich.repo import Repo

        self.repo = Repo(repo)
        self.store = self.repo.object_store

    def prepare(self, ids: list[bytes]) -> list:
        return [oid.hex().encode() for oid in ids]  # dulwich's ids are hex bytes

    def contains(self, ids: list) -> int:
        return count_true(self.store.__contains__, ids)  # what `id in object_store` calls

    def read(self, ids: list) -> int:
        return content_bytes(self.store.get_raw, ids)

    def walk_all(self) -> int:
        from dulwich.object_store import peel_sha

        tips = []
        for sha in self.repo.refs.as_dict().values():
            try:
                _, peeled = peel_sha(self.store, sha)
            except KeyError:
                continue
            if peeled.type_name == b"commit":
                tips.append(peeled.id)
        return sum(1 for _ in self.repo.get_walker(include=list(dict.fromkeys(tips))))

    def close(self) -> None:
        self.repo.close()


class Pygit2Adapter(Adapter):
    name = "pygit2"
    library = "pygit2"

    def open(self, repo: str, **_) -> None:
        import pygit2

        self.pygit2 = pygit2
        self.repo = pygit2.Repository(repo)
        self.odb = self.repo.odb

    def prepare(self, ids: list[bytes]) -> list:
        Oid = self.pygit2.Oid
        return [Oid(raw=oid) for oid in ids]

    def contains(self, ids: list) -> int:
        return count_true(self.odb.exists, ids)

    def info(self, ids: list) -> int:
        return count_answered(self.odb.read_header, ids, KeyError)

    def read(self, ids: list) -> int:
        return content_bytes(self.odb.read, ids)

    def walk_all(self) -> int:
        pygit2 = self.pygit2
        repo = self.repo
        walker = None
        for name in repo.references:
            try:
                commit = repo.references[name].peel(pygit2.Commit)
            except (pygit2.GitError, ValueError, KeyError, TypeError):
                continue  # a tag of a tree or blob: no history
            if walker is None:
                walker = repo.walk(commit.id, pygit2.enums.SortMode.TIME)
            else:
                walker.push(commit.id)
        return 0 if walker is None else sum(1 for _ in walker)

    def close(self) -> None:
        self.repo.free()


ADAPTERS = {"packscope": PackscopeAdapter, "dulwich": DulwichAdapter, "pygit2": Pygit2Adapter}


def adapter(name: str) -> Adapter:
    return ADAPTERS[name]()


# --- tig, beside History ------------------------------------------------------------

TIG_HINT = "tig is not installed (Debian: apt-get install tig)"
_ESCAPES = None


def tig_unavailable() -> str | None:
    return None if shutil.which("tig") else TIG_HINT


def _screen_text(raw: bytes) -> str:
    """What tig drew, without its escape sequences (cursor moves become
    spaces: a subject is drawn as one run, so it survives)."""
    import re

    global _ESCAPES
    if _ESCAPES is None:
        _ESCAPES = re.compile(rb"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[@-Z\\-_])")
    return _ESCAPES.sub(b" ", raw).decode("utf-8", "replace")


def _cpu_from_spawn(pid: int) -> float | None:
    """A running process's CPU time from its spawn: its own (user + system)
    and that of the children it has waited for (tig's git log, once it
    has read all of it), from /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # after the name: state is field 3; utime, stime, cutime, cstime are fields 14-17
    ticks = sum(int(v) for v in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def tig_history(repo: str, first: str, root: str, size=(120, 36), timeout: float = 900.0) -> dict:
    """tig's main view of HEAD in a pseudo-terminal: seconds from spawn until
    ``first`` (HEAD's subject) is drawn, then from pressing ``G`` (bound to
    ``move-last-line`` for the run; tig's own key is End) until ``root``
    (the root commit's subject) is drawn, pressing it again while tig still
    loads; and tig's own peak resident set (VmHWM; the ``git log`` it reads
    from is a separate process, not counted).  Runs in a bench worker."""
    import fcntl
    import select
    import signal
    import struct
    import subprocess
    import termios
    import time

    rows, cols = size[1], size[0]
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    with tempfile.NamedTemporaryFile("w", prefix="bench-tigrc-", suffix=".tigrc") as rc:
        rc.write("bind main G move-last-line\nbind generic G move-last-line\n")
        rc.flush()
        env = {**bench_env(), "TERM": "xterm-256color", "GIT_DIR": str(repo), "TIGRC_USER": rc.name}
        env["LINES"], env["COLUMNS"] = str(rows), str(cols)
        t0 = time.perf_counter()

        def own_terminal() -> None:  # tig reads keys from /dev/tty: the pty must be its controlling terminal
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        p = subprocess.Popen(
            ["tig", "HEAD"], stdin=slave, stdout=slave, stderr=slave, env=env, preexec_fn=own_terminal, close_fds=True
        )
        os.close(slave)
        out: dict = {}
        tail = b""  # the last bytes read: a subject may be split between two reads

        def pump(wait: float, text: str) -> bool:
            """Read what tig drew meanwhile; whether ``text`` is in it (each
            byte is looked at once or twice: tig's output grows large)."""
            nonlocal tail
            r, _, _ = select.select([master], [], [], wait)
            if not r:
                return False
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                return False
            both = tail + chunk
            tail = both[-512:]
            return text in _screen_text(both)

        hwm = None

        def sample_hwm() -> None:
            nonlocal hwm
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            hwm = int(line.split()[1]) * 1024
            except OSError:
                pass

        try:
            end = time.perf_counter() + timeout
            while not pump(0.01, first):
                if time.perf_counter() > end or p.poll() is not None:
                    raise RuntimeError(f"tig never drew {first!r}")
            out["seconds"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            tail = b""
            next_key = 0.0
            while True:
                now = time.perf_counter()
                if now > end or p.poll() is not None:
                    raise RuntimeError(f"tig never drew the root commit {root!r}")
                if now >= next_key:
                    os.write(master, b"G")
                    next_key = now + 0.1
                if pump(0.01, root):
                    break
            out["history_seconds"] = time.perf_counter() - t1
            sample_hwm()
            out["max_rss_bytes"] = hwm
            cpu = _cpu_from_spawn(p.pid)
            if cpu is not None:
                out["end_cpu_seconds"] = cpu
        finally:
            try:
                os.write(master, b"q")
                p.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            os.close(master)
    return out
