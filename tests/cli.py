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
