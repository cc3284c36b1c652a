"""git's delta format: parsing and application.

A delta (gitformat-pack, "Deltified representation") is

* the base's size and the result's size, each a little-endian base-128
  varint (7 bits a byte, MSB set on every byte but the last);
* then instructions until the end of the delta:

  - ``1xxxxxxx`` copy from the base.  Bits 0-3 say which of the four
    offset bytes follow, bits 4-6 which of the three size bytes follow
    (little-endian, absent bytes are zero).  A size of 0 means 0x10000.
  - ``0xxxxxxx`` (x != 0) insert the next x literal bytes of the delta.
  - ``00000000`` is reserved: an error.

Application checks what git's ``patch_delta`` checks: the base has the
declared size, each copy lies inside the base, no instruction writes past
the declared result size and the result is exactly that size.  The declared
size is compared with a cap before anything is built, so a corrupt header
cannot make us allocate gigabytes.

Speed: the loop only decodes instructions; copies are gathered as
memoryview slices of the base (no copy) and everything is joined once at
the end, so each byte of the result is copied exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import DeltaError, LimitExceededError

# A result larger than this is refused unless the caller raises the cap.
DEFAULT_MAX_RESULT = 4 << 30

# Copies never exceed 0x10000 bytes; a zero size field stands for that.
COPY_ZERO_SIZE = 0x10000


@dataclass(frozen=True, slots=True)
class DeltaOp:
    """One instruction, for display: ``copy`` (base ``offset``, ``size``) or
    ``insert`` (``size`` literal bytes at ``offset`` inside the delta)."""

    kind: str  # "copy" or "insert"
    offset: int  # copy: offset in the base; insert: offset of the literal bytes in the delta
    size: int
    at: int  # offset of the opcode in the delta


def _error(message: str, kind: str, at: int | None = None) -> DeltaError:
    return DeltaError(message, offset=at, kind=kind)


def _varint(delta, pos: int) -> tuple[int, int]:
    """A size varint at ``pos``: (value, position after it)."""
    value = 0
    shift = 0
    n = len(delta)
    while True:
        if pos >= n:
            raise _error("delta header is truncated", "delta-truncated", pos)
        c = delta[pos]
        pos += 1
        value |= (c & 0x7F) << shift
        if not c & 0x80:
            return value, pos
        shift += 7
        if shift > 70:  # no real size needs more than 10 bytes
            raise _error("delta size varint is too long", "delta-truncated", pos)


def delta_sizes(delta) -> tuple[int, int, int]:
    """(base size, result size, header length) from a delta's start.

    Works on a prefix of the delta too, as long as it holds both varints.
    """
    base_size, pos = _varint(delta, 0)
    result_size, pos = _varint(delta, pos)
    return base_size, result_size, pos


def apply_delta(base: bytes, delta: bytes, max_size: int = DEFAULT_MAX_RESULT) -> bytes:
    """The object that ``delta`` makes from ``base``.

    Raises DeltaError (kinds ``delta-base-size``, ``delta-copy-out-of-range``,
    ``delta-opcode-zero``, ``delta-result-size``, ``delta-truncated``) and
    LimitExceededError when the declared result size exceeds ``max_size``.
    """
    # The two size varints, inlined: a call per varint costs as much as
    # applying a short delta.  Sizes beyond 64 bits are corrupt (and would
    # make the loop build ever larger ints).
    op_at = 0
    try:
        c = delta[0]
        base_size = c & 0x7F
        pos = 1
        shift = 7
        while c & 0x80:
            c = delta[pos]
            pos += 1
            base_size |= (c & 0x7F) << shift
            shift += 7
            if shift > 63:
                raise _error("delta base size varint is too long", "delta-truncated", 0)
        c = delta[pos]
        pos += 1
        result_size = c & 0x7F
        shift = 7
        while c & 0x80:
            c = delta[pos]
            pos += 1
            result_size |= (c & 0x7F) << shift
            shift += 7
            if shift > 63:
                raise _error("delta result size varint is too long", "delta-truncated", 0)
        if base_size != len(base):
            raise _error(
                f"delta expects a base of {base_size} bytes, the base has {len(base)}", "delta-base-size", 0
            )
        if result_size > max_size:
            raise LimitExceededError(
                f"delta declares a result of {result_size} bytes, above the cap of {max_size}",
                kind="delta-too-large",
            )
        bv = memoryview(base)
        parts = []
        append = parts.append
        n = len(delta)
        remaining = result_size
        while pos < n:
            op_at = pos
            op = delta[pos]
            pos += 1
            if op & 0x80:
                off = 0
                if op & 0x0F:
                    if op & 0x01:
                        off = delta[pos]
                        pos += 1
                    if op & 0x02:
                        off |= delta[pos] << 8
                        pos += 1
                    if op & 0x04:
                        off |= delta[pos] << 16
                        pos += 1
                    if op & 0x08:
                        off |= delta[pos] << 24
                        pos += 1
                size = 0
                if op & 0x10:
                    size = delta[pos]
                    pos += 1
                if op & 0x20:
                    size |= delta[pos] << 8
                    pos += 1
                if op & 0x40:
                    size |= delta[pos] << 16
                    pos += 1
                if not size:
                    size = COPY_ZERO_SIZE
                end = off + size
                if end > base_size:
                    raise _error(
                        f"delta copies [{off}, {end}) from a base of {base_size} bytes",
                        "delta-copy-out-of-range",
                        op_at,
                    )
                if size > remaining:
                    raise _error(
                        f"delta writes past its declared result size {result_size}", "delta-result-size", op_at
                    )
                append(bv[off:end])  # a view: the join below is the only copy
                remaining -= size
            elif op:
                end = pos + op
                if end > n:
                    raise _error("delta insert runs past the end of the delta", "delta-truncated", op_at)
                if op > remaining:
                    raise _error(
                        f"delta writes past its declared result size {result_size}", "delta-result-size", op_at
                    )
                append(delta[pos:end])  # at most 127 bytes: a slice is cheaper than a view
                pos = end
                remaining -= op
            else:
                raise _error("delta opcode 0 is reserved", "delta-opcode-zero", op_at)
    except IndexError:
        raise _error("delta is truncated", "delta-truncated", op_at) from None
    if remaining:
        raise _error(
            f"delta produced {result_size - remaining} bytes, it declares {result_size}", "delta-result-size", n
        )
    return b"".join(parts)


def delta_ops(delta) -> list[DeltaOp]:
    """Every instruction of a delta, decoded (for the UI); validates the
    encoding but not the base or result sizes."""
    _, _, pos = delta_sizes(delta)
    ops = []
    n = len(delta)
    while pos < n:
        at = pos
        op = delta[pos]
        pos += 1
        if op & 0x80:
            off = size = 0
            for bit in range(4):
                if op & (1 << bit):
                    if pos >= n:
                        raise _error("delta copy instruction is truncated", "delta-truncated", at)
                    off |= delta[pos] << (8 * bit)
                    pos += 1
            for bit in range(3):
                if op & (0x10 << bit):
                    if pos >= n:
                        raise _error("delta copy instruction is truncated", "delta-truncated", at)
                    size |= delta[pos] << (8 * bit)
                    pos += 1
            ops.append(DeltaOp("copy", off, size or COPY_ZERO_SIZE, at))
        elif op:
            if pos + op > n:
                raise _error("delta insert runs past the end of the delta", "delta-truncated", at)
            ops.append(DeltaOp("insert", pos, op, at))
            pos += op
        else:
            raise _error("delta opcode 0 is reserved", "delta-opcode-zero", at)
    return ops
