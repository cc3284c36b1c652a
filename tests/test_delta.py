"""Delta parsing and application, against a byte-at-a-time reference; every
test of application runs both paths (pure Python and compiled)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packscope.core.errors import DeltaError, LimitExceededError
from packscope.core.store.delta import COPY_ZERO_SIZE, delta_ops, delta_sizes
from tests.delta_paths import PATHS

both_paths = pytest.mark.parametrize("apply_delta", PATHS)

# --- an encoder and a reference decoder, written as plainly as possible ------


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append(0x80 | (n & 0x7F))
        n >>= 7


def copy_op(offset: int, size: int, spare_zero_bytes: int = 0) -> bytes:
    """A copy instruction.  Zero bytes may be left out or spelled out (both
    are valid); ``spare_zero_bytes`` chooses, bit by bit, to spell them."""
    field = 0 if size == COPY_ZERO_SIZE else size
    op, args = 0x80, bytearray()
    for i in range(4):
        b = (offset >> (8 * i)) & 0xFF
        if b or spare_zero_bytes & (1 << i):
            op |= 1 << i
            args.append(b)
    for i in range(3):
        b = (field >> (8 * i)) & 0xFF
        if b or spare_zero_bytes & (1 << (4 + i)):
            op |= 0x10 << i
            args.append(b)
    return bytes([op]) + bytes(args)


def insert_op(data: bytes) -> bytes:
    assert 1 <= len(data) <= 127
    return bytes([len(data)]) + data


def reference_apply(base: bytes, delta: bytes) -> bytes:
    """Decode one byte at a time; ValueError for anything invalid."""

    def read_varint(pos):
        value = shift = 0
        while True:
            if pos >= len(delta):
                raise ValueError("truncated")
            c = delta[pos]
            pos += 1
            value |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                return value, pos

    src_size, pos = read_varint(0)
    dst_size, pos = read_varint(pos)
    if src_size != len(base):
        raise ValueError("base size")
    out = bytearray()
    while pos < len(delta):
        op = delta[pos]
        pos += 1
        if op & 0x80:
            fields = []
            for bit in range(7):
                if op & (1 << bit):
                    if pos >= len(delta):
                        raise ValueError("truncated")
                    fields.append((bit, delta[pos]))
                    pos += 1
                else:
                    fields.append((bit, 0))
            offset = sum(v << (8 * bit) for bit, v in fields[:4])
            size = sum(v << (8 * (bit - 4)) for bit, v in fields[4:]) or 0x10000
            if offset + size > len(base):
                raise ValueError("copy out of range")
            for i in range(size):
                out.append(base[offset + i])
        elif op:
            if pos + op > len(delta):
                raise ValueError("truncated")
            for i in range(op):
                out.append(delta[pos + i])
            pos += op
        else:
            raise ValueError("opcode 0")
        if len(out) > dst_size:
            raise ValueError("result too long")
    if len(out) != dst_size:
        raise ValueError("result size")
    return bytes(out)


# --- properties -------------------------------------------------------------------

BIG_BASE = bytes((i * 7 + (i >> 9)) & 0xFF for i in range(70_000))  # > 64 KiB: room for 0x10000 copies


@st.composite
def base_and_delta(draw):
    base = draw(st.one_of(st.binary(min_size=0, max_size=300), st.just(BIG_BASE)))
    ops, result = [], bytearray()
    for _ in range(draw(st.integers(0, 12))):
        if base and draw(st.booleans()):
            if len(base) >= COPY_ZERO_SIZE and draw(st.integers(0, 3)) == 0:
                size = COPY_ZERO_SIZE
            else:
                size = draw(st.integers(1, min(len(base), 5000)))
            offset = draw(st.integers(0, len(base) - size))
            ops.append(copy_op(offset, size, draw(st.integers(0, 127))))
            result += base[offset : offset + size]
        else:
            data = draw(st.binary(min_size=1, max_size=127))
            ops.append(insert_op(data))
            result += data
    delta = varint(len(base)) + varint(len(result)) + b"".join(ops)
    return base, delta, bytes(result)


@both_paths
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base_and_delta())
def test_valid_random_deltas_give_the_reference_result(apply_delta, case):
    base, delta, expected = case
    assert apply_delta(base, delta) == expected
    assert reference_apply(base, delta) == expected
    assert delta_sizes(delta)[:2] == (len(base), len(expected))


@both_paths
@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=40), st.binary(max_size=60))
def test_arbitrary_bytes_succeed_or_fail_exactly_as_the_reference(apply_delta, base, tail):
    # Give most cases a correct base size so the instruction stream matters.
    delta = varint(len(base)) + tail
    try:
        expected = reference_apply(base, delta)
    except ValueError:
        # A huge declared size is refused by the cap before anything else.
        with pytest.raises((DeltaError, LimitExceededError)):
            apply_delta(base, delta)
    else:
        assert apply_delta(base, delta) == expected


@both_paths
@settings(max_examples=200, deadline=None)
@given(base_and_delta(), st.data())
def test_every_truncation_of_a_valid_delta_is_an_error(apply_delta, case, data):
    base, delta, expected = case
    cut = data.draw(st.integers(0, len(delta) - 1))
    short = delta[:cut]
    try:
        reference_apply(base, short)
    except ValueError:
        with pytest.raises(DeltaError):
            apply_delta(base, short)
    else:  # cutting right after the header of an empty result is still valid
        assert apply_delta(base, short) == expected


# --- each error, by kind ---------------------------------------------------------------


def kind_of(apply_delta, base: bytes, delta: bytes, **kw) -> str:
    with pytest.raises(DeltaError) as info:
        apply_delta(base, delta, **kw)
    return info.value.kind


def test_sizes_are_little_endian_base128_varints():
    delta = varint(300) + varint(70_000) + b"rest"
    assert delta_sizes(delta) == (300, 70_000, 5)


@both_paths
def test_copy_with_no_size_bytes_copies_64_kib(apply_delta):
    delta = varint(len(BIG_BASE)) + varint(COPY_ZERO_SIZE) + bytes([0x80])
    assert apply_delta(BIG_BASE, delta) == BIG_BASE[:COPY_ZERO_SIZE]


@both_paths
def test_copy_offset_uses_all_four_bytes(apply_delta):
    base = bytes(range(256)) * 300
    # 0x9F: four offset bytes (0x00010101 needs three; the fourth is spelled as zero), one size byte
    delta = varint(len(base)) + varint(3) + bytes([0x9F, 0x01, 0x01, 0x01, 0x00, 0x03])
    assert apply_delta(base, delta) == base[0x10101:0x10104]


@both_paths
def test_base_of_the_wrong_size_is_rejected(apply_delta):
    assert kind_of(apply_delta, b"abc", varint(4) + varint(1) + insert_op(b"x")) == "delta-base-size"


@both_paths
def test_copy_past_the_end_of_the_base_is_rejected(apply_delta):
    assert kind_of(apply_delta, b"abcdef", varint(6) + varint(4) + copy_op(3, 4)) == "delta-copy-out-of-range"


@both_paths
def test_opcode_zero_is_rejected(apply_delta):
    assert kind_of(apply_delta, b"ab", varint(2) + varint(1) + b"\x00") == "delta-opcode-zero"


@both_paths
def test_result_shorter_than_declared_is_rejected(apply_delta):
    assert kind_of(apply_delta, b"ab", varint(2) + varint(5) + copy_op(0, 2)) == "delta-result-size"


@both_paths
def test_instruction_writing_past_the_declared_size_is_rejected(apply_delta):
    assert kind_of(apply_delta, b"ab", varint(2) + varint(1) + copy_op(0, 2)) == "delta-result-size"
    assert kind_of(apply_delta, b"ab", varint(2) + varint(1) + insert_op(b"xy")) == "delta-result-size"


@both_paths
def test_truncated_instructions_are_rejected(apply_delta):
    assert kind_of(apply_delta, b"ab", varint(2) + varint(2) + bytes([0x91, 0x00])) == "delta-truncated"
    assert kind_of(apply_delta, b"ab", varint(2) + varint(3) + bytes([3]) + b"xy") == "delta-truncated"
    assert kind_of(apply_delta, b"ab", bytes([0x82])) == "delta-truncated"


@both_paths
def test_oversized_varint_is_rejected_without_building_a_huge_int(apply_delta):
    assert kind_of(apply_delta, b"", b"\xff" * 100_000) == "delta-truncated"


@both_paths
def test_declared_result_above_the_cap_fails_before_building_anything(apply_delta):
    delta = varint(2) + varint(10**12) + copy_op(0, 2)
    with pytest.raises(LimitExceededError):
        apply_delta(b"ab", delta, max_size=1 << 20)


def test_delta_ops_lists_the_instructions():
    delta = varint(10) + varint(7) + copy_op(2, 4) + insert_op(b"xyz")
    ops = delta_ops(delta)
    assert [(o.kind, o.offset, o.size) for o in ops] == [("copy", 2, 4), ("insert", 6, 3)]
    assert delta[ops[1].offset : ops[1].offset + 3] == b"xyz"
