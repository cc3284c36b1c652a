"""What the numbers were measured on.

A timing is meaningless without the machine, the interpreter and the exact
versions of every system compared, so each run records them next to the
results (and RESULTS.md quotes them).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys

from packscope.bench.worker import proc_kib_field


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_bytes() -> int | None:
    return proc_kib_field("/proc/meminfo", "MemTotal")


def git_version() -> str | None:
    try:
        out = subprocess.run(["git", "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.strip().removeprefix("git version ").strip()


def _version(module: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:  # not installed: recorded as None, the peer is skipped
        return None


def source_revision() -> str | None:
    """The packscope commit measured, with "+dirty" when the work tree has
    uncommitted changes (core is a moving target while people optimise it)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(
            ["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", "core"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty(core)" if dirty else "")


def machine_details() -> dict:
    from packscope.bench.peers import PYTHON_SETTINGS_DROPPED, library_versions

    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "os": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "git": git_version(),
        "libraries": library_versions(),
        "packscope_revision": source_revision(),
        "python_settings_dropped": [k for k in PYTHON_SETTINGS_DROPPED if k in os.environ],
    }
