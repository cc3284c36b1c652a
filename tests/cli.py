"""Running the packscope CLI the way a user does: a fresh process."""

from __future__ import annotations

import subprocess
import sys

from tests.repos import git_env


def packscope(*args, cwd=None, input: bytes | str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    if isinstance(input, str):
        input = input.encode()
    p = subprocess.run(
        [sys.executable, "-m", "packscope.inspector.cli", *map(str, args)],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=git_env(),
    )
    if check and p.returncode not in (0, 1):
        raise AssertionError(f"packscope {args} exited {p.returncode}: {p.stderr.decode(errors='replace')}")
    return p
