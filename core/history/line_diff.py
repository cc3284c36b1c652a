"""Line diffs: Myers' shortest edit script, and unified hunks as git prints them.

:func:`edit_script` finds a *minimal* edit script between two sequences of
lines (Myers' O(ND) greedy algorithm, forward, keeping each round's
furthest-reaching paths to trace back).  Minimal matters for the counts:
every minimal script has the same number of insertions and of deletions,
so ``git diff --numstat``'s numbers come out equal whatever alignment of
repeated lines either side picks.

:func:`unified_hunks` groups the edits into hunks with ``context`` lines
around them (git's default 3), headed ``@@ -a,b +c,d @@`` plus git's
default function-name line (the nearest line above the hunk that starts
with a letter, ``_`` or ``$``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# An edit script as runs: ("=", i, j, n) n equal lines at a[i:], b[j:];
# ("-", i, j, n) n lines of a deleted at a[i:]; ("+", i, j, n) n lines of b
# inserted before a[i] (at b[j:]).
Run = tuple[str, int, int, int]


def edit_script(a: Sequence[bytes], b: Sequence[bytes]) -> list[Run]:
    """A minimal edit script from ``a`` to ``b``, as runs in order."""
    # Strip the common head and tail first: most diffs are small edits in
    # long files, and Myers' cost grows with what lies between.
    head = 0
    n, m = len(a), len(b)
    while head < n and head < m and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and a[n - 1 - tail] == b[m - 1 - tail]:
        tail += 1
    middle = _myers(a[head : n - tail], b[head : m - tail])
    deleted = [False] * (n + 1)  # one spare slot: group scans stop on it
    inserted = [False] * (m + 1)
    for op, i, j, k in middle:
        if op == "-":
            deleted[head + i : head + i + k] = [True] * k
        elif op == "+":
            inserted[head + j : head + j + k] = [True] * k
    _compact(a, deleted, inserted)
    _compact(b, inserted, deleted)
    return _runs_from_flags(n, m, deleted, inserted)


def _runs_from_flags(n: int, m: int, deleted: list[bool], inserted: list[bool]) -> list[Run]:
    runs: list[Run] = []
    i = j = 0
    while i < n or j < m:
        if i < n and deleted[i]:
            runs.append(("-", i, j, 1))
            i += 1
        elif j < m and inserted[j]:
            runs.append(("+", i, j, 1))
            j += 1
        else:
            runs.append(("=", i, j, 1))
            i += 1
            j += 1
    return _merge_runs(runs)


class _Group:
    """A run of changed lines [start, end) of one side, possibly empty,
    between two unchanged lines; the k-th group of one side faces the k-th
    of the other (the unchanged lines pair up in order)."""

    __slots__ = ("changed", "end", "lines", "start")

    def __init__(self, lines: Sequence[bytes], changed: list[bool]) -> None:
        self.lines, self.changed = lines, changed
        self.start = 0
        self.end = 0
        while changed[self.end]:
            self.end += 1

    def next(self) -> bool:
        if self.end == len(self.lines):
            return False
        self.start = self.end = self.end + 1
        while self.changed[self.end]:
            self.end += 1
        return True

    def previous(self) -> bool:
        if self.start == 0:
            return False
        self.end = self.start = self.start - 1
        while self.start > 0 and self.changed[self.start - 1]:
            self.start -= 1
        return True

    def slide_down(self) -> bool:
        lines, changed = self.lines, self.changed
        if self.end < len(lines) and lines[self.start] == lines[self.end]:
            changed[self.start], changed[self.end] = False, True
            self.start += 1
            self.end += 1
            while changed[self.end]:  # joined the next group
                self.end += 1
            return True
        return False

    def slide_up(self) -> bool:
        lines, changed = self.lines, self.changed
        if self.start > 0 and lines[self.start - 1] == lines[self.end - 1]:
            self.start -= 1
            self.end -= 1
            changed[self.start], changed[self.end] = True, False
            while self.start > 0 and changed[self.start - 1]:  # joined the previous group
                self.start -= 1
            return True
        return False


def _compact(lines: Sequence[bytes], changed: list[bool], other_changed: list[bool]) -> None:
    """Slide each group of changed lines along runs of equal lines to where
    git puts it: facing a change on the other side when it can (a
    replacement reads as one), else as far down as it goes.  (git then may
    pick another place by its indent heuristic; this does not.)"""
    g = _Group(lines, changed)
    go = _Group([b""] * (len(other_changed) - 1), other_changed)
    while True:
        if g.end != g.start:
            while True:
                size = g.end - g.start
                end_facing_change = -1
                while g.slide_up():
                    go.previous()
                earliest_end = g.end
                if go.end > go.start:
                    end_facing_change = g.end
                while g.slide_down():
                    go.next()
                    if go.end > go.start:
                        end_facing_change = g.end
                if size == g.end - g.start:
                    break
            if g.end != earliest_end and end_facing_change != -1:
                while go.end == go.start:
                    g.slide_up()
                    go.previous()
        if not g.next():
            break
        go.next()


def _myers(a: Sequence[bytes], b: Sequence[bytes]) -> list[Run]:
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return ([("-", 0, 0, n)] if n else []) + ([("+", n, 0, m)] if m else [])
    offset = n + m
    v = [0] * (2 * offset + 2)
    trace: list[list[int]] = []
    for d in range(n + m + 1):
        trace.append(v[:])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]  # down: an insertion
            else:
                x = v[offset + k - 1] + 1  # right: a deletion
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[offset + k] = x
            if x >= n and y >= m:
                return _backtrack(trace, offset, n, m, d)
    raise AssertionError("unreachable: d = n + m always reaches the end")


def _backtrack(trace: list[list[int]], offset: int, n: int, m: int, d_end: int) -> list[Run]:
    steps: list[Run] = []
    x, y = n, m
    for d in range(d_end, 0, -1):
        v = trace[d]
        k = x - y
        if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
            prev_k = k + 1
        else:
            prev_k = k - 1
        prev_x = v[offset + prev_k]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:  # the diagonal run after the edit
            x -= 1
            y -= 1
            steps.append(("=", x, y, 1))
        if x == prev_x:
            steps.append(("+", x, prev_y, 1))
        else:
            steps.append(("-", prev_x, y, 1))
        x, y = prev_x, prev_y
    while x > 0 and y > 0:
        x -= 1
        y -= 1
        steps.append(("=", x, y, 1))
    steps.reverse()
    return steps


def _merge_runs(runs: list[Run]) -> list[Run]:
    out: list[Run] = []
    for op, i, j, k in runs:
        if k == 0:
            continue
        if out and out[-1][0] == op:
            pop, pi, pj, pk = out[-1]
            out[-1] = (pop, pi, pj, pk + k)
        else:
            out.append((op, i, j, k))
    return out


def count_changes(runs: list[Run]) -> tuple[int, int]:
    """(lines added, lines deleted), as ``--numstat`` counts them."""
    added = sum(k for op, _, _, k in runs if op == "+")
    deleted = sum(k for op, _, _, k in runs if op == "-")
    return added, deleted


@dataclass(frozen=True, slots=True)
class Hunk:
    header: bytes  # "@@ -a,b +c,d @@ funcname"
    lines: tuple[bytes, ...]  # each with its " ", "-" or "+" and no newline


def unified_hunks(a: Sequence[bytes], b: Sequence[bytes], context: int = 3) -> list[Hunk]:
    """The hunks ``git diff`` prints for ``a`` → ``b`` (lines without their
    newlines; a missing final newline is the caller's to say)."""
    runs = edit_script(a, b)
    changes = [r for r in runs if r[0] != "="]
    if not changes:
        return []
    # Group changes whose gap of equal lines is at most 2 * context.
    groups: list[list[Run]] = [[changes[0]]]
    for r in changes[1:]:
        last = groups[-1][-1]
        gap = r[1] - (last[1] + (last[3] if last[0] == "-" else 0))
        if gap <= 2 * context:
            groups[-1].append(r)
        else:
            groups.append([r])
    hunks = []
    for g in groups:
        first, last = g[0], g[-1]
        a_start = max(0, first[1] - context)
        a_end = min(len(a), last[1] + (last[3] if last[0] == "-" else 0) + context)
        b_start = a_start + _shift(runs, a_start)
        b_end = a_end + _shift(runs, a_end, at_end=True)
        lines: list[bytes] = []
        added: list[bytes] = []  # a block's insertions follow its deletions, as in git
        for op, ri, rj, k in runs:
            if op == "=":
                lines += added
                added = []
                lo, hi = max(ri, a_start), min(ri + k, a_end)
                lines += [b" " + a[x] for x in range(lo, hi)]
            elif op == "-" and a_start <= ri < a_end:
                lines += [b"-" + a[x] for x in range(ri, ri + k)]
            elif op == "+" and a_start <= ri <= a_end and b_start <= rj < b_end:
                added += [b"+" + b[y] for y in range(rj, rj + k)]
        lines += added
        header = b"@@ -%s +%s @@" % (_range(a_start, a_end - a_start), _range(b_start, b_end - b_start))
        name = _function_name(a, a_start)
        if name:
            header += b" " + name
        hunks.append(Hunk(header, tuple(lines)))
    return hunks


def _shift(runs: list[Run], a_pos: int, at_end: bool = False) -> int:
    """b's position minus a's at ``a_pos`` (insertions before it count;
    at a hunk's end, insertions right at ``a_pos`` count too)."""
    shift = 0
    for op, i, _, k in runs:
        if op == "+" and (i < a_pos or (at_end and i == a_pos)):
            shift += k
        elif op == "-" and i < a_pos:
            shift -= min(k, a_pos - i)
    return shift


def _range(start: int, length: int) -> bytes:
    # git's form: "start,len", "start" alone when len is 1, and the line
    # before an empty range ("0,0" at the very top).
    if length == 0:
        return b"%d,0" % start
    if length == 1:
        return b"%d" % (start + 1)
    return b"%d,%d" % (start + 1, length)


def _function_name(a: Sequence[bytes], before: int) -> bytes:
    """git's default funcname: the nearest line above ``before`` starting
    with a letter, '_' or '$', cut at 80 bytes without trailing blanks."""
    for x in range(before - 1, -1, -1):
        line = a[x]
        if line[:1].isalpha() or line[:1] in (b"_", b"$"):
            return line[:80].rstrip()
    return b""
