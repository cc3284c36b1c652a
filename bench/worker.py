"""The fresh process that runs one in-process measurement.

Every repetition of every in-process system runs in its own interpreter:
nothing (page mappings, parsed indexes, delta-base cache, loose name cache,
dulwich's or libgit2's caches) survives from one repetition or one system to
the next.  The runner starts ``python -m packscope.bench.worker`` with a JSON spec on
stdin naming a ``module:function`` and its arguments; the function returns a
dict with at least ``seconds`` (the timed region only); this module adds
the process's own resource usage and prints one JSON line.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback


def proc_kib_field(path: str, field: str) -> int | None:
    """A ``Name:   1234 kB`` line of a /proc file (``/proc/self/status``,
    ``/proc/meminfo``), in bytes; None off Linux or when the field is absent."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_rss_bytes() -> int | None:
    """This process's peak resident set.  Not ``ru_maxrss``: Linux carries
    that across fork and exec, so a worker would report its (large) parent's
    peak; ``VmHWM`` belongs to this process's own address space."""
    return proc_kib_field("/proc/self/status", "VmHWM")


def main() -> int:
    spec = json.loads(sys.stdin.read())
    module, _, name = spec["call"].partition(":")
    func = getattr(importlib.import_module(module), name)
    try:
        result = func(**spec.get("args", {}))
    except Exception as e:  # reported to the runner as this system's failure
        print(json.dumps({"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}))
        return 1
    peak = peak_rss_bytes()
    if peak is not None:
        result.setdefault("max_rss_bytes", peak)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
