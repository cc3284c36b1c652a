"""Running the packscope CLI the way a user does: a fresh process.

The process is forked from one that has already imported packscope
(tests/cli_zygote.py) rather than started from nothing: the same run
without Python's start-up and packscope's imports, which were most of a
small command's time in the suite.  ``PACKSCOPE_TESTS_SPAWN=1`` starts
every run from nothing instead, as ``COMMAND``."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from tests.repos import git_env

COMMAND = (sys.executable, "-m", "packscope.inspector.cli")
ZYGOTE = Path(__file__).with_name("cli_zygote.py")


class Forker:
    """One zygote (tests/cli_zygote.py) started with ``env``; ``run`` asks it
    for a forked run of the CLI."""

    def __init__(self, env: dict[str, str]) -> None:
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, str(ZYGOTE), str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        theirs.close()
        self.socket = ours
        self.lock = threading.Lock()

    def run(self, argv: list[str], cwd, input: bytes | None, env: dict[str, str]) -> subprocess.CompletedProcess:
        header = json.dumps({"argv": argv, "cwd": os.fspath(cwd or os.getcwd()), "env": env}).encode()
        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            stdin.write(input or b"")
            stdin.seek(0)
            with self.lock:
                socket.send_fds(
                    self.socket, [struct.pack("!I", len(header)) + header], [stdin.fileno(), out.fileno(), err.fileno()]
                )
                answer = b""
                while len(answer) < 4:
                    more = self.socket.recv(4 - len(answer))
                    if not more:
                        raise RuntimeError(f"the CLI zygote ended (status {self.process.wait()})")
                    answer += more
            (status,) = struct.unpack("!i", answer)
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess([*COMMAND, *argv], status, out.read(), err.read())


_forkers: dict[tuple, Forker] = {}


def _forker_for(env: dict[str, str]) -> Forker:
    """A zygote per interpreter set-up: the path (PACKSCOPE_PURE is read at
    import) and whatever Python reads at its start (PYTHON*, the locale)."""
    key = tuple(
        sorted((k, v) for k, v in env.items() if k == "PACKSCOPE_PURE" or k.startswith(("PYTHON", "LANG", "LC_")))
    )
    forker = _forkers.get(key)
    if forker is None or forker.process.poll() is not None:
        forker = _forkers[key] = Forker(env)
    return forker


def run_cli(argv: list[str], cwd=None, input: bytes | None = None, env: dict[str, str] | None = None):
    """``packscope ARGV`` as a fresh process (see the module's docstring)."""
    env = dict(os.environ if env is None else env)
    if os.environ.get("PACKSCOPE_TESTS_SPAWN", "") not in ("", "0"):
        return subprocess.run([*COMMAND, *argv], cwd=cwd, input=input, capture_output=True, env=env)
    return _forker_for(env).run(argv, cwd, input, env)


def packscope(
    *args, cwd=None, input: bytes | str | None = None, env: dict | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    """``packscope ARGS`` in the tests' git environment (plus ``env``); with
    ``check``, an exit status other than 0 or 1 fails the test."""
    if isinstance(input, str):
        input = input.encode()
    p = run_cli([str(a) for a in args], cwd=cwd, input=input, env=git_env(env))
    if check and p.returncode not in (0, 1):
        raise AssertionError(f"packscope {args} exited {p.returncode}: {p.stderr.decode(errors='replace')}")
    return p


def packscope_in(repo, *args, input: bytes | str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """``packscope -C REPO ARGS``, its exit status left to the test (fsck's is a bit mask)."""
    return packscope("-C", repo, *args, input=input, env=env, check=False)


def packscope_show_here(repo, words: list[str], monkeypatch) -> bytes:
    """``packscope show WORDS`` in this process (faster than a fresh one:
    for tests that compare many outputs), at 80 columns."""
    import io

    from packscope.inspector.cli import Words
    from packscope.inspector.commands import show as show_command

    out = io.BytesIO()

    class Stdout:
        buffer = out

        @staticmethod
        def isatty() -> bool:
            return False

    with monkeypatch.context() as m:
        m.chdir(repo)
        m.setenv("COLUMNS", "80")
        m.setattr(sys, "stdout", Stdout())
        status = show_command.run(Words("show", words))
    assert status == 0
    return out.getvalue()
