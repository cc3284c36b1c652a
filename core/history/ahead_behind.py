"""How many commits one tip has that another lacks, both ways — what
``git rev-list --count --left-right A...B`` prints — bounded.

Both tips paint the history below them (LEFT from A, RIGHT from B) in
committer-date order, newest first; a commit painted by both is common and
so is everything below it.  The walk ends as git's limited walk does: once
every queued commit is common and a few more (git's SLOP, 5) confirm it, so
with clock skew it counts what git counts.  A commit that gains a colour
after it was walked passes it on to its walked ancestors at once (git
marks parsed ancestors uninteresting the same way).

Bounded: once ``limit`` commits are counted on a side and the walk has
gone ``2 × limit`` steps with one tip reached from the other (that tip's
side is then exactly 0: a tag behind HEAD), or ``4 × limit`` steps, it
stops and says so per side (``left_exact``, ``right_exact``): a side past
the limit is then only known to be past it.  ``cancelled()`` is asked
every 256 steps.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from typing import NamedTuple

from packscope.core.errors import CancelledError
from packscope.core.history.walked import CommitFacts, CommitInfo
from packscope.core.objects import ObjectReader

LEFT, RIGHT = 1, 2
BOTH = LEFT | RIGHT
SLOP = 5
LIMIT = 10_000


class AheadBehind(NamedTuple):
    left: int  # commits reachable from the left tip only (HEAD: "ahead" of the ref)
    right: int  # from the right tip only
    left_exact: bool = True  # False: the walk stopped at its bound; `left` past the limit means "more than"
    right_exact: bool = True

    @property
    def exact(self) -> bool:
        return self.left_exact and self.right_exact


def with_store_fallback(info: CommitInfo, store: ObjectReader) -> CommitInfo:
    """``info``, and for a commit it does not know (a loose one: the
    commit-graph and the pack reader know packed commits only) the store's
    object, read and its header parsed, as the walk does."""
    from packscope.core.objects import commit_header_fast

    def answer(oid: bytes) -> CommitFacts | None:
        facts = info(oid)
        if facts is not None:
            return facts
        kind, data = store.read(oid)
        if kind != "commit":
            return None
        return commit_header_fast(data, store.fmt, oid)

    return answer


def ahead_behind(
    info: CommitInfo,
    left: bytes,
    right: bytes,
    *,
    limit: int = LIMIT,
    cancelled: Callable[[], bool] | None = None,
) -> AheadBehind:
    """Counts of ``left...right`` (LookupFailedError when a commit is not found)."""
    if left == right:
        return AheadBehind(0, 0, True)
    from packscope.core.errors import MissingObjectError

    colour: dict[bytes, int] = {}
    facts: dict[bytes, tuple[tuple[bytes, ...], int]] = {}
    queue: list[tuple[int, int, bytes]] = []
    seq = 0
    counts = [0, 0, 0, 0]  # commits walked by colour

    def read(oid: bytes) -> tuple[tuple[bytes, ...], int]:
        hit = facts.get(oid)
        if hit is None:
            f = info(oid)
            if f is None:
                raise MissingObjectError(f"commit {oid.hex()} not found", oid=oid.hex())
            hit = facts[oid] = (f[1], f[2])
        return hit

    walked: set[bytes] = set()  # commits whose parents were painted

    def paint(oid: bytes, c: int) -> None:
        # A commit walked already passes a new colour straight on to its
        # parents (git marks parsed ancestors at once, too); others queue.
        nonlocal seq
        todo = [oid]
        while todo:
            o = todo.pop()
            old = colour.get(o, 0)
            new = old | c
            if new == old:
                continue
            colour[o] = new
            if old:
                counts[old] -= 1
            counts[new] += 1
            if o in walked:
                todo.extend(read(o)[0])
            else:
                seq += 1
                heappush(queue, (-read(o)[1], seq, o))

    paint(left, LEFT)
    paint(right, RIGHT)
    slop = SLOP
    steps = 0
    while queue:
        if all(colour[o] == BOTH for _, _, o in queue):
            slop -= 1
            if slop <= 0:
                break
        else:
            slop = SLOP
        _, _, oid = heappop(queue)
        if oid in walked:
            continue
        walked.add(oid)
        c = colour[oid]
        for parent in read(oid)[0]:
            paint(parent, c)
        steps += 1
        if steps > 2 * limit and (counts[LEFT] >= limit or counts[RIGHT] >= limit):
            # A tip the other side reached is an ancestor of it: its own side is 0.
            right_in_left, left_in_right = colour[right] == BOTH, colour[left] == BOTH
            if right_in_left or left_in_right or steps > 4 * limit:
                return AheadBehind(
                    0 if left_in_right else counts[LEFT],
                    0 if right_in_left else counts[RIGHT],
                    left_in_right,
                    right_in_left,
                )
        if steps & 255 == 0 and cancelled is not None and cancelled():
            raise CancelledError("ahead/behind count cancelled")
    return AheadBehind(counts[LEFT], counts[RIGHT], True)
