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

Speed: applying deltas is the hottest thing a read does (reading random
objects of git.git spends about half its time here), and in pure Python
the cost is bytecodes per instruction, not bytes, so ``apply_delta`` is
built to do as little per instruction as possible:

* the instruction stream is read through ``io.BytesIO.read`` over the delta
  plus 128 zero bytes, so no position is kept in Python (each ``pos + k``
  made a new int object) and an insert is a single read;
* a copy opcode is decoded through two 256-entry tables made at import.
  When the present offset bytes (bits 0-3) and size bytes (bits 4-6) each
  start at the lowest byte with no gap (``0001``, ``0011``, ``0111``,
  ``1111``; ``001``, ``011``, ``111``) the fields are adjacent little-endian
  integers: ``struct`` unpacks the 1-, 2- and 4-byte shapes (``0x93`` and
  ``0xB3``: over 70% of git's copies) and ``int.from_bytes`` with a mask and
  a shift the others (``0x97``: 20%); shapes with a gap (about 1%) are read
  a byte at a time;
* copies are gathered as memoryview slices of the base (no copy), inserts
  as bytes, and everything is joined once at the end, so each byte of the
  result is copied exactly once;
* nothing is checked per instruction except that a copy lies inside the
  base.  The zero padding turns both a truncated last instruction and the
  end of the stream into a zero opcode, told apart by where it was read.
  With every copy inside the base and no instruction cut short, each part
  has exactly its declared length, so the result having the declared size
  proves what git checks step by step (no instruction wrote past it: sizes
  are positive).  Before the join, the parts' total is summed when they
  could exceed 16 MiB, so a corrupt delta cannot make us build a huge result.

Anything unexpected (a bad header, a copy outside the base, a zero opcode,
truncation, the wrong total) sends the delta to ``_apply_delta_checked``,
the plain instruction-by-instruction version with git's checks in git's
order, which raises the error with its kind and offset.  A valid delta
never takes that path; an invalid one pays for both.

Compiled path: when the optional C module is built (core/native.py says
whether it runs), ``apply_delta`` is its version of the loop above.  It
validates the whole instruction stream first, then allocates the result
once and copies into it; on anything unexpected it calls
``_apply_delta_checked`` with the same arguments, so errors always come
from the pure-Python reference.  ``apply_delta_py`` stays the pure path,
used when the module is absent or ``PACKSCOPE_PURE=1``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from io import BytesIO
from typing import NamedTuple

from packscope.core import native
from packscope.core.errors import DeltaError, LimitExceededError

# A result larger than this is refused unless the caller raises the cap.
Bytes = bytes | bytearray | memoryview  # a delta or base as a pack reader holds it

DEFAULT_MAX_RESULT = 4 << 30

# git never emits a copy of more than 0x10000 bytes (the format allows up to
# 0xFFFFFF); a zero size field stands for 0x10000.
COPY_ZERO_SIZE = 0x10000


class DeltaOp(NamedTuple):
    """One instruction, for display: ``copy`` (base ``offset``, ``size``) or
    ``insert`` (``size`` literal bytes at ``offset`` inside the delta)."""

    kind: str  # "copy" or "insert"
    offset: int  # copy: offset in the base; insert: offset of the literal bytes in the delta
    size: int
    at: int  # offset of the opcode in the delta


def _error(message: str, kind: str, at: int | None = None) -> DeltaError:
    return DeltaError(message, offset=at, kind=kind)


def _varint(delta: Bytes, pos: int) -> tuple[int, int]:
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


def delta_sizes(delta: Bytes) -> tuple[int, int, int]:
    """(base size, result size, header length) from a delta's start.

    Works on a prefix of the delta too, as long as it holds both varints.
    """
    base_size, pos = _varint(delta, 0)
    result_size, pos = _varint(delta, pos)
    return base_size, result_size, pos


# Zero bytes after the delta: an instruction is at most 128 bytes, so one
# cut short at the end reads into them and the next opcode read is a zero.
_PAD = bytes(128)

# The parts are joined without summing them first only while they cannot
# add up to more than this (each copy lies inside the base, an insert is at
# most 127 bytes).
_JOIN_UNCHECKED = 16 << 20

# A copy opcode's argument decoding: (argument bytes, unpack -> (offset, size))
# or (argument bytes, offset bits, offset mask) for one little-endian int.
_StructForm = tuple[int, Callable[[bytes], tuple[int, ...]]]
_IntForm = tuple[int, int, int]


def _copy_tables() -> tuple[tuple[_StructForm | None, ...], tuple[_IntForm | None, ...]]:
    """Per copy opcode (indexed by the whole opcode byte, 0x80-0xFF):

    * struct form: (argument bytes, unpack) giving (offset, size) when the
      offset is 1, 2 or 4 bytes and the size 1 or 2, each without gaps;
    * int form: (argument bytes, offset bits, offset mask) for the other
      gapless shapes (a field absent, or 3 bytes): the arguments read as one
      little-endian int are offset | size << offset bits;
    * None in both for shapes with a gap (``0101``, ``0010``, ...).
    """
    gapless = {0: 0, 0b1: 1, 0b11: 2, 0b111: 3, 0b1111: 4}  # bits -> bytes
    codes = {1: "B", 2: "H", 4: "I"}
    by_struct: list[_StructForm | None] = [None] * 256
    by_int: list[_IntForm | None] = [None] * 256
    for op in range(0x80, 0x100):
        offset_bytes = gapless.get(op & 0x0F)
        size_bytes = gapless.get((op >> 4) & 0x07)
        if offset_bytes is None or size_bytes is None:
            continue
        if offset_bytes in codes and size_bytes in codes:
            form = struct.Struct("<" + codes[offset_bytes] + codes[size_bytes])
            by_struct[op] = (form.size, form.unpack)
        else:
            by_int[op] = (offset_bytes + size_bytes, 8 * offset_bytes, (1 << (8 * offset_bytes)) - 1)
    return tuple(by_struct), tuple(by_int)


_COPY_BY_STRUCT, _COPY_BY_INT = _copy_tables()
# Bound once: ``int.from_bytes`` is an attribute lookup (and a new bound
# method) every time it is written.
_from_bytes = int.from_bytes


def apply_delta_py(base: bytes, delta: bytes, max_size: int = DEFAULT_MAX_RESULT) -> bytes:
    """The object that ``delta`` makes from ``base`` (the pure-Python path;
    ``apply_delta`` is this or the compiled version, see the end of the module).

    Raises DeltaError (kinds ``delta-base-size``, ``delta-copy-out-of-range``,
    ``delta-opcode-zero``, ``delta-result-size``, ``delta-truncated``) and
    LimitExceededError when the declared result size exceeds ``max_size``.
    The fast path below only ever returns a result that
    ``_apply_delta_checked`` would return; on any doubt it hands over to it.
    """
    # The two size varints, inlined (a call costs as much as a short delta).
    base_size = -1  # the first varint's value once read; the second is result_size
    pos = 0
    try:
        while True:
            c = delta[pos]
            pos += 1
            result_size = c & 0x7F
            shift = 7
            while c > 127:
                c = delta[pos]
                pos += 1
                result_size |= (c & 0x7F) << shift
                shift += 7
                if shift > 63:
                    return _apply_delta_checked(base, delta, max_size)
            if base_size >= 0:
                break
            base_size = result_size
    except IndexError:
        return _apply_delta_checked(base, delta, max_size)
    if base_size != len(base) or result_size > max_size:
        return _apply_delta_checked(base, delta, max_size)
    try:
        padded = delta + _PAD
    except TypeError:  # a memoryview
        padded = bytes(delta) + _PAD
    stream = BytesIO(padded)
    stream.seek(pos)
    read = stream.read
    by_struct = _COPY_BY_STRUCT
    by_int = _COPY_BY_INT
    bv = memoryview(base)
    parts: list[bytes | memoryview] = []
    append = parts.append
    # Inserts are tested first so that each comparison's jump stays short:
    # CPython 3.11 only specializes an int comparison directly followed by
    # its jump (not by an EXTENDED_ARG).
    while True:
        op = read(1)[0]
        if op < 128:
            if op:
                append(read(op))
                continue
            break  # the padding, or a zero opcode / truncation inside the delta
        form = by_struct[op]
        if form is not None:
            k, unpack = form
            off, size = unpack(read(k))
        else:
            int_form = by_int[op]
            if int_form is not None:
                k, offset_bits, offset_mask = int_form
                v = _from_bytes(read(k), "little")
                off = v & offset_mask
                size = v >> offset_bits
            else:  # a gap inside a field: rare
                off, size, at = _copy_args(op, padded, stream.tell())
                stream.seek(at)
        end = off + (size or COPY_ZERO_SIZE)
        if end > base_size:
            return _apply_delta_checked(base, delta, max_size)
        append(bv[off:end])  # a view: the join below is the only copy
    # The first padding byte and nothing more: no zero opcode, nothing cut
    # short, so every part has its declared size.
    if stream.tell() != len(delta) + 1:
        return _apply_delta_checked(base, delta, max_size)
    if len(parts) * (base_size + 127) > _JOIN_UNCHECKED and sum(map(len, parts)) != result_size:
        return _apply_delta_checked(base, delta, max_size)
    out = b"".join(parts)
    if len(out) != result_size:
        return _apply_delta_checked(base, delta, max_size)
    return out


def _copy_args(op: int, delta: Bytes, pos: int) -> tuple[int, int, int]:
    """A copy instruction's (offset, size field, position after it) from
    its argument bytes at ``pos``: one byte for each of ``op``'s bits 0-3
    (offset) and 4-6 (size) that is set, least significant first.  Raises
    IndexError when the delta ends first.  The paths off the fast loop use
    it: the checked reference, delta_ops and copies with a gap in a field."""
    fields = 0
    for bit in range(7):
        if op >> bit & 1:
            fields |= delta[pos] << (8 * bit)
            pos += 1
    return fields & 0xFFFFFFFF, fields >> 32, pos


def _apply_delta_checked(base: Bytes, delta: Bytes, max_size: int) -> bytes:
    """``apply_delta`` one instruction at a time, checking each as git does
    and in git's order: the reference for every error's kind and offset."""
    base_size, result_size, pos = delta_sizes(delta)
    op_at = 0
    try:
        if base_size != len(base):
            raise _error(f"delta expects a base of {base_size} bytes, the base has {len(base)}", "delta-base-size", 0)
        if result_size > max_size:
            raise LimitExceededError(
                f"delta declares a result of {result_size} bytes, above the cap of {max_size}",
                kind="delta-too-large",
            )
        bv = memoryview(base)
        parts: list[Bytes] = []
        append = parts.append
        n = len(delta)
        remaining = result_size
        while pos < n:
            op_at = pos
            op = delta[pos]
            pos += 1
            if op & 0x80:
                off, size, pos = _copy_args(op, delta, pos)
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


# The compiled version calls back into the checked reference for every
# error, so it is given that function once, here (and by the tests' switch
# when it forces the compiled path in a PACKSCOPE_PURE process).
if native.backend is not None:
    native.backend.set_delta_fallback(_apply_delta_checked)


def apply_delta(base: bytes, delta: bytes, max_size: int = DEFAULT_MAX_RESULT) -> bytes:
    """``delta`` applied to ``base`` on the path that runs (core/native.py):
    the compiled loop, or ``apply_delta_py``."""
    compiled = native.backend
    if compiled is not None:
        return compiled.apply_delta(base, delta, max_size)
    return apply_delta_py(base, delta, max_size)


def delta_ops(delta: Bytes) -> list[DeltaOp]:
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
            try:
                off, size, pos = _copy_args(op, delta, pos)
            except IndexError:
                raise _error("delta copy instruction is truncated", "delta-truncated", at) from None
            ops.append(DeltaOp("copy", off, size or COPY_ZERO_SIZE, at))
        elif op:
            if pos + op > n:
                raise _error("delta insert runs past the end of the delta", "delta-truncated", at)
            ops.append(DeltaOp("insert", pos, op, at))
            pos += op
        else:
            raise _error("delta opcode 0 is reserved", "delta-opcode-zero", at)
    return ops
