"""Renames and copies as ``git diff -M[n]`` and ``-C`` find them, on top of
a tree diff's additions, deletions and modifications.

The similarity of two blobs (gitdiffcore(7), "diffcore-rename") is measured
in *copied material*: each blob is cut into chunks — a line, or 64 bytes
of a longer line; in text, a CR before LF is not counted — and each chunk
is reduced to a number below :data:`HASH_BASE`.  Per number, the bytes of
its chunks are summed on each side; the bytes the destination could take
from the source are, per number, the smaller of the two sums.  The score is
that total over the larger blob's size, on git's scale of
:data:`MAX_SCORE` (60000 = 100%); ``R087`` is ``score * 100 // MAX_SCORE``.

Pairing happens in git's passes, each destination (added path) paired at
most once:

1. **exact**: a destination whose blob equals a source's (a symlink or a
   gitlink only with the same mode) takes, among those sources, one not used
   yet, preferring the same file name;
2. **by file name** (``-M`` without ``-C``): a source and a destination
   whose file names are each unique among those left pair when their score
   reaches half way from the minimum to 100% (75% for the default 50%);
3. **the matrix**: every regular-file source against every destination
   left, the 4 best per destination kept, all of them sorted by score (then
   same file name first, then destination order), taken in that order —
   renames first (a source at most once), then, with ``-C``, copies from
   any source.  Sizes too far apart score 0 without reading the blobs.  The
   matrix is skipped when destinations × sources exceed the rename limit
   squared (``diff.renameLimit``, 1000): only exact renames are then found,
   and :attr:`Renames.limit_needed` says how high the limit would have had
   to be.

Sources are the deleted paths; with ``-C`` also the modified ones (which
stay, so every pairing of theirs is a copy).  A deleted source paired more
than once is copied to all but its last destination (in path order) and
renamed to that one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from stat import S_ISREG

from packscope.core.history.tree_diff import TreeChange

MAX_SCORE = 60000
DEFAULT_SCORE = 30000  # -M alone: 50%
DEFAULT_RENAME_LIMIT = 1000  # diff.renameLimit unset
HASH_BASE = 107927  # chunk numbers are taken modulo this prime
CHUNK_MAX = 64  # a line longer than this is cut into pieces of this size
CANDIDATES = 4  # the best sources kept per destination
BINARY_PROBE = 8000
_MASK = 0xFFFFFFFF


def parse_score(text: str) -> int:
    """A ``-M``/``-C`` argument as git reads it, on the 0..60000 scale:
    digits are a fraction ("5" and "50" are 50%, "05" is 5%) unless a
    ``%`` ends them ("90%"); a dot may mark where the fraction starts
    ("0.9")."""
    num = 0
    scale = 1
    dot = False
    for i, ch in enumerate(text):
        if ch == "." and not dot:
            dot = True
            scale = 1
        elif ch == "%":
            if i != len(text) - 1:
                raise ValueError(f"bad similarity {text!r}")
            scale = scale * 100 if dot else 100
            break
        elif ch.isdigit():
            if scale < 100000:
                scale *= 10
                num = num * 10 + int(ch)
        else:
            raise ValueError(f"bad similarity {text!r}")
    return MAX_SCORE if num >= scale else MAX_SCORE * num // scale


def percent(score: int) -> int:
    """The similarity shown in ``R087`` and ``similarity index 87%``."""
    return score * 100 // MAX_SCORE


# --- chunk counts -------------------------------------------------------------------


_chunk_numbers: dict[bytes, int] = {}


def _chunk_number(chunk: bytes) -> int:
    n = _chunk_numbers.get(chunk)
    if n is not None:
        return n
    # Two 32-bit accumulators, each shifted 7 bits a byte with the other's
    # top bits mixed in, the byte added to the first.
    a1 = a2 = 0
    for c in chunk:
        old = a1
        a1 = (((a1 << 7) & _MASK) ^ (a2 >> 25)) + c & _MASK
        a2 = ((a2 << 7) & _MASK) ^ (old >> 25)
    n = (a1 + a2 * 0x61 & _MASK) % HASH_BASE
    if len(_chunk_numbers) > 200_000:
        _chunk_numbers.clear()
    _chunk_numbers[chunk] = n
    return n


def chunk_counts(data: bytes) -> dict[int, int]:
    """Bytes per chunk number (see the module's docstring).  What follows
    the last LF in pieces shorter than 64 bytes is not counted, as in git."""
    text = b"\0" not in data[:BINARY_PROBE]
    per_chunk: dict[bytes, int] = {}
    get = per_chunk.get
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last LF: b"" or an unterminated line
    for line in lines:
        if text and line.endswith(b"\r"):
            line = line[:-1]  # a CR before LF is not counted
        line += b"\n"
        if len(line) <= CHUNK_MAX:
            per_chunk[line] = get(line, 0) + 1
        else:
            for k in range(0, len(line), CHUNK_MAX):
                piece = line[k : k + CHUNK_MAX]
                per_chunk[piece] = get(piece, 0) + 1
    for k in range(0, len(tail) - CHUNK_MAX + 1, CHUNK_MAX):
        piece = tail[k : k + CHUNK_MAX]
        per_chunk[piece] = get(piece, 0) + 1
    counts: dict[int, int] = {}
    for chunk, times in per_chunk.items():
        n = _chunk_number(chunk)
        counts[n] = counts.get(n, 0) + len(chunk) * times
    return counts


def copied_bytes(src: dict[int, int], dst: dict[int, int]) -> int:
    """The destination's bytes the source holds (per chunk number, the
    smaller of the two counts)."""
    if len(src) > len(dst):
        src, dst = dst, src
    total = 0
    for n, c in src.items():
        d = dst.get(n)
        if d is not None:
            total += c if c < d else d
    return total


def similarity(
    src_size: int,
    dst_size: int,
    src_counts: Callable[[], dict[int, int]],
    dst_counts: Callable[[], dict[int, int]],
    minimum: int,
) -> int:
    """Two regular files' score; sizes too far apart for ``minimum`` score
    0 without their counts being asked for."""
    big, small = max(src_size, dst_size), min(src_size, dst_size)
    if big * (MAX_SCORE - minimum) < (big - small) * MAX_SCORE:
        return 0
    if not dst_size:
        return 0
    return copied_bytes(src_counts(), dst_counts()) * MAX_SCORE // big


# --- pairing ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Paired:
    """One line of the result: ``status`` is git's letter ("A", "D", "M",
    "T", "R" or "C"); for R and C, ``source`` is the change the content came
    from (a deletion, or with -C a modification) and ``score`` the
    similarity on the 0..60000 scale."""

    status: str
    change: TreeChange  # the destination for R and C
    source: TreeChange | None = None
    score: int = 0


@dataclass
class Renames:
    pairs: list[Paired] = field(default_factory=list)
    limit_needed: int = 0  # > 0: the matrix was skipped; the limit that would have run it


class BlobSizes:
    """What pairing reads: a blob's size and content (kept as chunk counts)."""

    def __init__(self, size: Callable[[bytes], int], content: Callable[[bytes], bytes]) -> None:
        self._size, self._content = size, content
        self._sizes: dict[bytes, int] = {}
        self._counts: dict[bytes, dict[int, int]] = {}

    def size(self, oid: bytes) -> int:
        n = self._sizes.get(oid)
        if n is None:
            n = self._sizes[oid] = self._size(oid)
        return n

    def counts(self, oid: bytes) -> dict[int, int]:
        c = self._counts.get(oid)
        if c is None:
            c = self._counts[oid] = chunk_counts(self._content(oid))
        return c


def _basename(path: bytes) -> bytes:
    return path.rsplit(b"/", 1)[-1]


def find_renames(
    changes: list[TreeChange],
    blobs: BlobSizes,
    *,
    minimum: int = DEFAULT_SCORE,
    copies: bool = False,
    limit: int = DEFAULT_RENAME_LIMIT,
    check: Callable[[], None] | None = None,
) -> Renames:
    """Pair ``changes`` (a tree diff, in its order) into renames and copies;
    the result lists every change that stays, paired destinations in place
    of their additions, renamed deletions dropped, in the tree diff's order."""
    srcs = [c for c in changes if c.status == "D" or (copies and c.status in ("M", "T"))]
    dsts = [c for c in changes if c.status == "A"]
    used = [1 if s.status != "D" else 0 for s in srcs]  # a modified source stays: every pairing is a copy
    paired: dict[int, tuple[int, int]] = {}  # destination index -> (source index, score)
    result = Renames()

    def record(d: int, s: int, score: int) -> None:
        paired[d] = (s, score)
        used[s] += 1

    if srcs and dsts:
        _exact(srcs, dsts, used, copies, record)
        live = [s for s in range(len(srcs)) if copies or not used[s]]
        if not copies:
            _by_name(srcs, dsts, live, paired, blobs, minimum, record)
            live = [s for s in live if not used[s]]
        left = [d for d in range(len(dsts)) if d not in paired]
        if left and live:
            if limit > 0 and len(left) * len(live) > limit * limit:
                result.limit_needed = max(len(left), len(live))
            else:
                _matrix(srcs, dsts, live, left, paired, used, blobs, minimum, copies, record, check)
    result.pairs = _assemble(changes, srcs, dsts, paired, used)
    return result


Record = Callable[[int, int, int], None]  # (destination, source, score)


def _exact(srcs: list[TreeChange], dsts: list[TreeChange], used: list[int], copies: bool, record: Record) -> None:
    by_blob: dict[bytes, list[int]] = {}
    for s, src in enumerate(srcs):
        if src.old_oid is not None:
            by_blob.setdefault(src.old_oid, []).append(s)
    for d, dst in enumerate(dsts):
        best, best_score = -1, -1
        for tries, s in enumerate(by_blob.get(dst.new_oid or b"", ())):
            src = srcs[s]
            if not (S_ISREG(src.old_mode) and S_ISREG(dst.new_mode)) and src.old_mode != dst.new_mode:
                continue
            if used[s] and not copies:
                continue
            score = (0 if used[s] else 1) + (_basename(src.path) == _basename(dst.path))
            if score > best_score:
                best, best_score = s, score
                if score == 2:
                    break
            if tries >= 99:
                break
        if best >= 0:
            record(d, best, MAX_SCORE)


def _score(src: TreeChange, dst: TreeChange, blobs: BlobSizes, minimum: int) -> int:
    if not (S_ISREG(src.old_mode) and S_ISREG(dst.new_mode)):
        return 0
    assert src.old_oid is not None and dst.new_oid is not None
    a, b = src.old_oid, dst.new_oid
    return similarity(blobs.size(a), blobs.size(b), lambda: blobs.counts(a), lambda: blobs.counts(b), minimum)


def _by_name(
    srcs: list[TreeChange],
    dsts: list[TreeChange],
    live: list[int],
    paired: dict[int, tuple[int, int]],
    blobs: BlobSizes,
    minimum: int,
    record: Record,
) -> None:
    threshold = minimum + (MAX_SCORE - minimum) // 2
    src_at: dict[bytes, int] = {}
    for s in live:
        name = _basename(srcs[s].path)
        src_at[name] = -1 if name in src_at else s
    dst_at: dict[bytes, int] = {}
    for d in range(len(dsts)):
        if d in paired:
            continue
        name = _basename(dsts[d].path)
        dst_at[name] = -1 if name in dst_at else d
    for s in live:
        name = _basename(srcs[s].path)
        found = dst_at.get(name)
        if found is None or found < 0 or src_at[name] < 0 or found in paired:
            continue
        d = found
        score = _score(srcs[s], dsts[d], blobs, minimum)
        if score >= threshold:
            record(d, s, score)


def _matrix(
    srcs: list[TreeChange],
    dsts: list[TreeChange],
    live: list[int],
    left: list[int],
    paired: dict[int, tuple[int, int]],
    used: list[int],
    blobs: BlobSizes,
    minimum: int,
    copies: bool,
    record: Record,
    check: Callable[[], None] | None,
) -> None:
    # Per destination, up to CANDIDATES (score, same-name, source) kept as
    # git keeps them: a newcomer replaces the first of the worst only when
    # strictly better, so among equals the earlier source stays.
    table: list[tuple[int, int, int, int, int]] = []  # (-score, -same_name, order, d, s)
    order = 0
    for d in left:
        if check is not None:
            check()
        dst = dsts[d]
        slots: list[tuple[int, int, int] | None] = [None] * CANDIDATES
        for s in live:
            src = srcs[s]
            cand = (_score(src, dst, blobs, minimum), int(_basename(src.path) == _basename(dst.path)), s)
            worst = 0
            for k in range(1, CANDIDATES):
                if _worse(slots[k], slots[worst]):
                    worst = k
            if _worse(slots[worst], cand):
                slots[worst] = cand
        for slot in slots:
            if slot is not None:
                table.append((-slot[0], -slot[1], order, d, slot[2]))
            order += 1
    table.sort()
    for take_copies in (False, True) if copies else (False,):
        for neg_score, _n, _o, d, s in table:
            if -neg_score < minimum:
                break
            if d in paired or (not take_copies and used[s]):
                continue
            record(d, s, -neg_score)


def _worse(a: tuple[int, int, int] | None, b: tuple[int, int, int] | None) -> bool:
    """Whether candidate ``a`` sorts after ``b`` (an empty slot after all)."""
    if a is None:
        return b is not None
    if b is None:
        return False
    return (a[0], a[1]) < (b[0], b[1])


def _assemble(
    changes: list[TreeChange],
    srcs: list[TreeChange],
    dsts: list[TreeChange],
    paired: dict[int, tuple[int, int]],
    used: list[int],
) -> list[Paired]:
    dst_index = {id(c): d for d, c in enumerate(dsts)}
    renamed_away = {id(srcs[s]) for s, _score in paired.values() if srcs[s].status == "D"}
    out: list[Paired] = []
    for c in changes:
        d = dst_index.get(id(c))
        if d is not None and d in paired:
            s, score = paired[d]
            out.append(Paired("R", c, srcs[s], score))
        elif id(c) in renamed_away:
            continue
        else:
            out.append(Paired(c.status, c))
    # A source used k times: in path order, its first k - 1 pairings are
    # copies and the last a rename (a source that stays: all copies).
    left = {id(s): n for s, n in zip(srcs, used, strict=True)}
    final = []
    out.sort(key=lambda p: p.change.path)
    for p in out:
        if p.source is not None:
            key = id(p.source)
            left[key] -= 1
            if left[key] > 0 or p.source.status != "D":
                p = Paired("C", p.change, p.source, p.score)
        final.append(p)
    return final


__all__ = [
    "DEFAULT_RENAME_LIMIT",
    "DEFAULT_SCORE",
    "MAX_SCORE",
    "BlobSizes",
    "Paired",
    "Renames",
    "chunk_counts",
    "copied_bytes",
    "find_renames",
    "parse_score",
    "percent",
    "similarity",
]
