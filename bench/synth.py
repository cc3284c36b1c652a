"""Synthetic histories at a scale of git.git: a seeded fast-import stream.

``scale=1`` is git.git's size (about 75,000 commits and 849,000 objects);
``--scale 0.1``, ``3`` or ``10`` a tenth, three or ten times that.  What the
stream holds, all decided by a seeded ``random.Random`` (same shape and
seed, same bytes, same commit ids):

* a main line of commits, each changing a few files (1–5, the often-edited
  ones more often) in a tree of a few thousand files two directories deep,
  one line of a file at a time, so the next version deltas against the last;
* topic branches forked a few commits back from the main line, one to three
  commits long, merged back (2% of the commits are merges: 1,500 at 1×,
  5,000 in a 250,000-commit history); every topic branch keeps its ref;
* an annotated tag every ``tag_every`` main-line commits;
* about 10–11 objects per commit, as git.git has.

The stream is written as it is made (``write_stream(shape, out)``): nothing
but the current file contents (a few MB) is held, whatever the scale.  The
pack layout is fast-import's: one pack, ``N`` packs (checkpoints), or every
object loose.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import BinaryIO

GIT_GIT_COMMITS = 75_000
GIT_GIT_OBJECTS = 849_000
MERGE_FRACTION = 0.02  # 5,000 merges in 250,000 commits
START_TIME = 1_300_000_000


@dataclass(frozen=True)
class Shape:
    """What to generate: counts are exact (commits include the merges)."""

    commits: int
    merges: int
    files: int
    tag_every: int = 100
    changes: tuple[int, int] = (1, 5)  # files changed per commit, inclusive
    packs: int = 1  # 0: every object loose
    seed: int = 28

    def __post_init__(self) -> None:
        if self.commits < 2:
            raise ValueError("a synthetic history needs at least 2 commits")
        if self.merges * 6 > self.commits:
            raise ValueError(f"{self.merges} merges need at least {self.merges * 6} commits")
        if self.files < 1 or self.packs < 0:
            raise ValueError("files must be at least 1 and packs not negative")

    @property
    def key(self) -> str:
        """A name for the cached repository of this shape."""
        layout = "loose" if self.packs == 0 else f"{self.packs}p"
        lo, hi = self.changes
        return f"synth-{self.commits}c-{self.merges}m-{self.files}f-{lo}to{hi}-t{self.tag_every}-{layout}-s{self.seed}"


def shape_for_scale(scale: float, *, packs: int = 1, seed: int = 28) -> Shape:
    """git.git's commit count times ``scale``, 2% merges, its few thousand files."""
    if scale <= 0:
        raise ValueError("--scale must be positive")
    commits = max(12, round(GIT_GIT_COMMITS * scale))
    files = min(3_000, max(8, commits // 4))
    return Shape(commits, round(commits * MERGE_FRACTION), files, packs=packs, seed=seed)


def file_path(i: int) -> str:
    """A path two directories deep: 16 top directories of 8 subdirectories,
    with a few files at the top and in each top directory."""
    if i % 50 == 0:
        return f"top{i}.txt"
    a, b = i % 16, (i // 16) % 8
    if i % 7 == 0:
        return f"d{a:02d}/f{i}.c"
    return f"d{a:02d}/s{b}/f{i}.c"


class _Writer:
    """Buffers the stream and hands it to ``out`` a megabyte at a time."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.parts: list[bytes] = []
        self.size = 0

    def put(self, b: bytes) -> None:
        self.parts.append(b)
        self.size += len(b)
        if self.size >= 1 << 20:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            self.out.write(b"".join(self.parts))
            self.parts.clear()
            self.size = 0


def write_stream(shape: Shape, out: BinaryIO) -> dict:
    """Write the fast-import stream of ``shape`` to ``out``; returns what was
    written (commits, merges, tags, branches)."""
    rnd = random.Random(shape.seed)
    words = [b"w%03d" % i for i in range(400)]

    def line() -> bytes:
        return b" ".join(rnd.choice(words) for _ in range(7))

    paths = [file_path(i).encode() for i in range(shape.files)]
    contents: list[list[bytes] | None] = [None] * shape.files  # made on first write
    w = _Writer(out)
    mark = 0
    now = START_TIME
    made = merges = tags = 0
    main_commits = 0
    recent: deque[int] = deque(maxlen=8)  # recent main-line marks, fork points
    lo, hi = shape.changes
    checkpoints = [round(k * shape.commits / shape.packs) for k in range(1, shape.packs)] if shape.packs > 1 else []

    def content(i: int) -> bytes:
        lines = contents[i]
        if lines is None:
            lines = contents[i] = [b"// %s" % paths[i]] + [line() for _ in range(8 + rnd.randrange(40))]
        else:
            k = 1 + rnd.randrange(len(lines) - 1) if len(lines) > 1 else 0
            lines[k : k + 1] = [line() for _ in range(1 + rnd.randrange(2))]
        return b"\n".join(lines) + b"\n"

    def pick() -> int:
        # often-edited files: a skewed choice, as real histories have
        return min(shape.files - 1, int(shape.files * rnd.random() ** 2))

    def commit(ref: bytes, msg: bytes, changes: list[tuple[bytes, bytes]], frm: int | None, merge: int | None) -> int:
        nonlocal mark, now, made
        mark += 1
        made += 1
        now += 60 + rnd.randrange(3600)
        tz = (b"+0000", b"-0700", b"+0200", b"-0400", b"+0530")[mark % 5]
        who = b"Dev %d <dev%d@example.com>" % (mark % 97, mark % 97)
        head = [b"commit %s\nmark :%d\nauthor %s %d %s\ncommitter %s %d %s\n" % (ref, mark, who, now, tz, who, now, tz)]
        head.append(b"data %d\n%s\n" % (len(msg), msg))
        if frm is not None:
            head.append(b"from :%d\n" % frm)
        if merge is not None:
            head.append(b"merge :%d\n" % merge)
        for path, data in changes:
            head.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path, len(data), data))
        head.append(b"\n")
        w.put(b"".join(head))
        if checkpoints and made == checkpoints[0]:
            checkpoints.pop(0)
            w.put(b"checkpoint\n\n")
        return mark

    def edits() -> list[tuple[bytes, bytes]]:
        chosen = sorted({pick() for _ in range(lo + rnd.randrange(hi - lo + 1))})
        return [(paths[i], content(i)) for i in chosen]

    # the first commit holds every file
    tip = commit(
        b"refs/heads/main", b"initial import\n", [(paths[i], content(i)) for i in range(shape.files)], None, None
    )
    recent.append(tip)
    main_commits = 1
    spacing = shape.commits / (shape.merges + 1)
    while made < shape.commits:
        left = shape.commits - made
        due = merges < shape.merges and made >= (merges + 1) * spacing - 1
        topic_len = 1 + rnd.randrange(3)
        if due and left >= topic_len + 1 and left - topic_len - 1 >= 5 * (shape.merges - merges - 1):
            ref = b"refs/heads/topic/%d" % (merges + 1)
            at = recent[-1 - rnd.randrange(len(recent))]
            touched: dict[bytes, bytes] = {}
            for t in range(topic_len):
                ch = edits()
                touched.update(ch)
                at = commit(
                    ref, b"topic %d: step %d\n\nwork on topic %d\n" % (merges + 1, t + 1, merges + 1), ch, at, None
                )
            merges += 1
            tip = commit(
                b"refs/heads/main",
                b"Merge branch 'topic/%d'\n" % merges,
                sorted(touched.items()),
                tip,
                at,
            )
        else:
            tip = commit(b"refs/heads/main", b"change %d\n\nedit a few files (%d)\n" % (made, made), edits(), tip, None)
        recent.append(tip)
        main_commits += 1
        if main_commits % shape.tag_every == 0:
            tags += 1
            msg = b"release v%d\n" % tags
            w.put(
                b"tag v%d\nfrom :%d\ntagger Releaser <rel@example.com> %d +0000\ndata %d\n%s\n"
                % (tags, tip, now, len(msg), msg)
            )
    w.flush()
    return {"commits": made, "merges": merges, "tags": tags, "branches": 1 + merges}
