"""Running the packscope CLI the way a user does: a fresh process."""

from __future__ import annotations

import subprocess
import sys

from tests.repos import git_env

COMMAND = (sys.executable, "-m", "packscope.inspector.cli")


def packscope(
    *args, cwd=None, input: bytes | str | None = None, env: dict | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    """``packscope ARGS`` in the tests' git environment (plus ``env``); with
    ``check``, an exit status other than 0 or 1 fails the test."""
    if isinstance(input, str):
        input = input.encode()
    p = subprocess.run([*COMMAND, *map(str, args)], cwd=cwd, input=input, capture_output=True, env=git_env(env))
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
