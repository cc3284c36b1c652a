"""Checking each system's answer, outside the timed region.

A fast wrong answer is not a result: every whole-process run's output is
parsed after the clock stops, and the counts go into the table next to the
time (``found``/``missing``, objects and bytes read, commits listed).
"""

from __future__ import annotations

from pathlib import Path

from packscope.core.store.mapped_file import map_readonly


def batch_check_counts(path: Path) -> dict:
    """Lines of ``cat-file --batch-check`` output: found vs missing."""
    found = missing = 0
    with open(path, "rb") as f:
        for line in f:
            if line.endswith(b" missing\n"):
                missing += 1
            elif line.strip():
                found += 1
    return {"found": found, "missing": missing}


def batch_counts(path: Path) -> dict:
    """Objects and content bytes in ``cat-file --batch`` output: walk the
    headers, skipping each object's contents by its declared size."""
    found = missing = content = 0
    mapped, size = map_readonly(str(path))
    if mapped is None:
        return {"found": 0, "missing": 0, "content_bytes": 0}
    with mapped as m:
        pos = 0
        while pos < size:
            nl = m.find(b"\n", pos)
            if nl < 0:
                raise ValueError(f"truncated batch output at byte {pos}")
            header = m[pos:nl].split()
            pos = nl + 1
            if len(header) == 2 and header[1] == b"missing":
                missing += 1
                continue
            n = int(header[2])
            if m[pos + n : pos + n + 1] != b"\n":
                raise ValueError(f"object {header[0][:12]!r} is not followed by a newline at byte {pos + n}")
            found += 1
            content += n
            pos += n + 1
    return {"found": found, "missing": missing, "content_bytes": content}


def line_count(path: Path) -> dict:
    with open(path, "rb") as f:
        return {"lines": sum(1 for _ in f)}
