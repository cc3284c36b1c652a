"""Both fast paths of apply_delta (pure Python and compiled) against
_apply_delta_checked, the plain instruction-by-instruction version: same
result, or the same error (class, kind, offset, message), for every copy
opcode shape, every truncation and random corruption; a valid delta never
needs the checked version, and the compiled path calls it exactly when the
delta is invalid."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import packscope.core.store.delta
from packscope.core.errors import DeltaError, LimitExceededError
from packscope.core.store.delta import COPY_ZERO_SIZE, DEFAULT_MAX_RESULT, _apply_delta_checked
from tests.delta_paths import NOT_BUILT, PATHS, _native, compiled_fallback
from tests.test_delta import BIG_BASE, base_and_delta, copy_op, insert_op, varint

both_paths = pytest.mark.parametrize("apply_delta", PATHS)

# Random bytes, so that an offset off by any amount shows; long enough for
# offsets with a fourth byte of 1 plus a 0x1FFFF copy.
HUGE_BASE = random.Random(1).randbytes(0x1040000)


def outcome(fn, base, delta, max_size=DEFAULT_MAX_RESULT):
    try:
        return ("ok", fn(base, delta, max_size))
    except (DeltaError, LimitExceededError) as e:
        return (type(e), e.kind, e.offset, e.message)


def same_as_checked(apply_delta, base, delta, max_size=DEFAULT_MAX_RESULT):
    fast = outcome(apply_delta, base, delta, max_size)
    assert fast == outcome(_apply_delta_checked, base, delta, max_size)
    return fast


def copy_with_op(op: int, offset: int, size_field: int) -> bytes:
    """A copy spelled with exactly the bytes ``op`` announces (present bytes
    may be zero, absent ones must be)."""
    args = bytearray()
    for value, first_flag, width in ((offset, 0x01, 4), (size_field, 0x10, 3)):
        for i in range(width):
            b = (value >> (8 * i)) & 0xFF
            if op & (first_flag << i):
                args.append(b)
            else:
                assert b == 0
    return bytes([op]) + bytes(args)


def fields_for(op: int, values) -> tuple[int, int]:
    """(offset, size field) from seven byte values (offset bytes 0-3, size
    bytes 0-2), keeping those ``op`` says are present."""
    offset = sum(values[i] << (8 * i) for i in range(4) if op & (1 << i))
    size_field = sum(values[4 + i] << (8 * i) for i in range(3) if op & (0x10 << i))
    return offset, size_field


ALL_COPY_OPS = range(0x80, 0x100)
# One of each decoding path: struct (1/2/4-byte fields), int.from_bytes (a
# field absent or 3 bytes), and gapped (a hole in the offset or size bytes).
SHAPES = [0x91, 0x93, 0xB3, 0x9F, 0xBF, 0x80, 0x90, 0x97, 0xF7, 0xF0, 0x92, 0x95, 0xD1, 0xA3]


def wrapped(copy: bytes, result_size: int, base_size: int) -> bytes:
    """Header + an insert before and after the copy, so a wrong count of
    argument bytes shows in what follows."""
    return varint(base_size) + varint(result_size + 2) + insert_op(b"<") + copy + insert_op(b">")


@both_paths
@pytest.mark.parametrize("op", ALL_COPY_OPS, ids=lambda op: f"{op:#04x}")
def test_every_copy_opcode_decodes_like_the_checked_version(apply_delta, op):
    rng = random.Random(op)
    cases = [[0] * 7]  # every present byte spelled as zero: offset 0, size 0x10000
    for _ in range(6):
        # bytes in order offset 0-3 then size 0-2; offset byte 3 is 0 or 1, size byte 2 is 0 or 1
        cases.append(
            [
                rng.randrange(256),
                rng.randrange(256),
                rng.randrange(256),
                rng.randrange(2),
                rng.randrange(256),
                rng.randrange(256),
                rng.randrange(2),
            ]
        )
    for values in cases:
        offset, size_field = fields_for(op, values)
        if offset >> 24:  # keep offset + size inside HUGE_BASE
            offset &= 0x0100FFFF
        copy = copy_with_op(op, offset, size_field)
        size = size_field or COPY_ZERO_SIZE
        delta = wrapped(copy, size, len(HUGE_BASE))
        assert same_as_checked(apply_delta, HUGE_BASE, delta) == ("ok", b"<" + HUGE_BASE[offset : offset + size] + b">")


@both_paths
@pytest.mark.parametrize("op", ALL_COPY_OPS, ids=lambda op: f"{op:#04x}")
def test_copy_ending_at_the_base_end_works_and_one_past_is_out_of_range(apply_delta, op):
    # every present byte 1 (offset byte 3 spelled as 0 to keep the base small)
    offset, size_field = fields_for(op, [1, 1, 1, 0, 1, 1, 1])
    size = size_field or COPY_ZERO_SIZE
    end = offset + size
    copy = copy_with_op(op, offset, size_field)
    at_end = HUGE_BASE[:end]
    assert same_as_checked(apply_delta, at_end, wrapped(copy, size, end)) == ("ok", b"<" + at_end[offset:] + b">")
    short = HUGE_BASE[: end - 1]
    # declaring the size the copy says, or the size a silently cut copy would give
    for declared in (size, size - 1):
        result = same_as_checked(apply_delta, short, wrapped(copy, declared, end - 1))
        at = len(varint(end - 1)) + len(varint(declared + 2)) + 2
        assert result[:3] == (DeltaError, "delta-copy-out-of-range", at)


@both_paths
@pytest.mark.parametrize("op", [0x90, 0x91, 0xB3, 0xF0, 0xF7, 0xD0, 0xD1], ids=lambda op: f"{op:#04x}")
def test_a_size_field_of_zero_spelled_out_copies_64_kib(apply_delta, op):
    copy = copy_with_op(op, 0, 0)
    assert len(copy) == 1 + (op & 0x7F).bit_count()
    delta = varint(len(BIG_BASE)) + varint(COPY_ZERO_SIZE) + copy
    assert same_as_checked(apply_delta, BIG_BASE, delta) == ("ok", BIG_BASE[:COPY_ZERO_SIZE])


@both_paths
def test_a_copy_larger_than_64_kib_through_three_size_bytes(apply_delta):
    for op, size in ((0xF3, 0x010203), (0xD3, 0x010003)):  # all three size bytes; bytes 0 and 2
        copy = copy_with_op(op, 0x0102, size)
        delta = varint(len(HUGE_BASE)) + varint(size) + copy
        assert same_as_checked(apply_delta, HUGE_BASE, delta) == ("ok", HUGE_BASE[0x0102 : 0x0102 + size])


def instruction_stream():
    """(delta, base, [(start, end) of each instruction])"""
    base = HUGE_BASE[:0x20000]
    ins = [
        insert_op(b"hello"),
        copy_with_op(0x93, 0x1234, 0x56),  # struct
        copy_with_op(0x97, 0x012345, 0x10),  # int.from_bytes, 3-byte offset
        copy_with_op(0x80, 0, 0),  # int.from_bytes, no argument bytes
        copy_with_op(0x95, 0x010007, 0x20),  # gapped
        copy_with_op(0xB1, 0x40, 0x0102),  # struct, 2-byte size
        insert_op(bytes(range(1, 128))),  # the longest insert
        copy_with_op(0xF7, 0x10, 0x000100),  # int.from_bytes, 3-byte size
    ]
    result = len(b"hello") + 0x56 + 0x10 + 0x10000 + 0x20 + 0x0102 + 127 + 0x100
    head = varint(len(base)) + varint(result)
    spans, at = [], len(head)
    for i in ins:
        spans.append((at, at + len(i)))
        at += len(i)
    return head + b"".join(ins), base, spans


@both_paths
def test_the_instruction_stream_applies(apply_delta):
    delta, base, _ = instruction_stream()
    assert same_as_checked(apply_delta, base, delta)[0] == "ok"


@both_paths
def test_every_truncation_fails_exactly_as_the_checked_version(apply_delta):
    delta, base, spans = instruction_stream()
    for cut in range(len(delta)):
        result = same_as_checked(apply_delta, base, delta[:cut])
        assert result[0] is DeltaError
        inside = [start for start, end in spans if start < cut < end]
        if inside:  # cut inside an instruction: truncated, reported at its opcode
            assert result[1:3] == ("delta-truncated", inside[0])
        elif cut >= spans[0][0]:  # cut between instructions: the result is short
            assert result[1] == "delta-result-size"


@both_paths
def test_opcode_zero_anywhere_fails_exactly_as_the_checked_version(apply_delta):
    delta, base, spans = instruction_stream()
    for start, _ in [*spans, (len(delta), None)]:
        corrupt = delta[:start] + b"\x00" + delta[start:]
        assert same_as_checked(apply_delta, base, corrupt)[:3] == (DeltaError, "delta-opcode-zero", start)


@both_paths
def test_result_size_errors_match_the_checked_version(apply_delta):
    delta, base, _ = instruction_stream()
    _, result_size, header = packscope.core.store.delta.delta_sizes(delta)
    body = delta[header:]
    for declared in (0, 1, result_size - 1, result_size + 1, 10 * result_size):
        d = varint(len(base)) + varint(declared) + body
        assert same_as_checked(apply_delta, base, d)[:2] == (DeltaError, "delta-result-size")


@both_paths
def test_parts_that_could_pass_16_mib_are_summed_before_the_join(apply_delta):
    # 300 copies of 64 KiB from a 70,000-byte base: the parts may add up to
    # more than 16 MiB, so the fast path sums them before joining.
    body = copy_op(0, COPY_ZERO_SIZE) * 300
    total = 300 * COPY_ZERO_SIZE
    for declared in (total - 1, total + 1, COPY_ZERO_SIZE):
        d = varint(len(BIG_BASE)) + varint(declared) + body
        assert same_as_checked(apply_delta, BIG_BASE, d)[:2] == (DeltaError, "delta-result-size")
    d = varint(len(BIG_BASE)) + varint(total) + body
    assert apply_delta(BIG_BASE, d) == BIG_BASE[:COPY_ZERO_SIZE] * 300


@both_paths
def test_a_corrupt_delta_cannot_make_a_huge_join(apply_delta):
    # 2,000 copies of 64 KiB (131 MB) declaring a 1-byte result: refused
    # without the parts ever being joined.
    import tracemalloc

    d = varint(len(BIG_BASE)) + varint(1) + copy_op(0, COPY_ZERO_SIZE) * 2000
    tracemalloc.start()
    try:
        with pytest.raises(DeltaError) as info:
            apply_delta(BIG_BASE, d)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.kind == "delta-result-size"
    assert peak < 8 << 20


@both_paths
def test_header_errors_and_the_cap_match_the_checked_version(apply_delta):
    for base, delta, cap in [
        (b"", b"", DEFAULT_MAX_RESULT),
        (b"ab", b"\x82", DEFAULT_MAX_RESULT),
        (b"ab", varint(2), DEFAULT_MAX_RESULT),
        (b"ab", varint(3) + varint(1) + insert_op(b"x"), DEFAULT_MAX_RESULT),
        (b"ab", varint(2) + varint(3) + copy_op(0, 2), 2),
        (b"ab", b"\xff" * 20, DEFAULT_MAX_RESULT),
        (b"ab", varint(2) + b"\xff" * 20, DEFAULT_MAX_RESULT),
    ]:
        assert same_as_checked(apply_delta, base, delta, cap)[0] != "ok"


@both_paths
def test_delta_given_as_bytearray_or_memoryview(apply_delta):
    delta, base, _ = instruction_stream()
    expected = apply_delta(base, delta)
    assert apply_delta(base, bytearray(delta)) == expected
    assert apply_delta(base, memoryview(delta)) == expected
    assert outcome(apply_delta, base, memoryview(delta)[:-1]) == outcome(_apply_delta_checked, base, delta[:-1])


@both_paths
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base_and_delta())
def test_valid_deltas_never_take_the_checked_path(apply_delta, case):
    base, delta, expected = case

    def refuse(*args):
        raise AssertionError("a valid delta took the checked path")

    with pytest.MonkeyPatch.context() as mp, compiled_fallback(refuse) if _native else contextlib.nullcontext():
        mp.setattr(packscope.core.store.delta, "_apply_delta_checked", refuse)
        assert apply_delta(base, delta) == expected


@st.composite
def corrupted(draw):
    base, delta, _ = draw(base_and_delta())
    data = bytearray(delta)
    for _ in range(draw(st.integers(1, 3))):
        what = draw(st.sampled_from(["flip", "cut", "zero", "grow", "drop"]))
        if what == "cut" and data:
            del data[draw(st.integers(0, len(data) - 1)) :]
        elif what == "flip" and data:
            data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
        elif what == "zero":
            data.insert(draw(st.integers(0, len(data))), 0)
        elif what == "grow":
            data.insert(draw(st.integers(0, len(data))), draw(st.integers(0, 255)))
        elif what == "drop" and data:
            del data[draw(st.integers(0, len(data) - 1))]
    cap = draw(st.sampled_from([DEFAULT_MAX_RESULT, 1 << 20, 100]))
    return base, bytes(data), cap


@both_paths
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corrupted())
def test_corrupted_deltas_behave_exactly_as_the_checked_version(apply_delta, case):
    base, delta, cap = case
    same_as_checked(apply_delta, base, delta, cap)


# --- the compiled module's own answer: bytes exactly when the reference succeeds ---


def compiled_agrees(base, delta, cap):
    assert _native is not None
    answer = _native.try_apply_delta(base, delta, cap)
    reference = outcome(_apply_delta_checked, base, delta, cap)
    if reference[0] == "ok":
        assert answer == reference[1]
    else:
        assert answer is None, reference


@NOT_BUILT
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(corrupted(), base_and_delta().map(lambda c: (c[0], c[1], DEFAULT_MAX_RESULT))))
def test_compiled_module_answers_only_when_the_reference_succeeds(case):
    compiled_agrees(*case)


@NOT_BUILT
def test_compiled_module_refuses_hostile_sizes_without_allocating_them():
    import tracemalloc

    base = BIG_BASE
    hostile = [
        # 63-bit declared result under an unbounded cap: refused by the stream, never allocated
        (varint(len(base)) + varint((1 << 63) - 1) + copy_op(0, 16), 1 << 80),
        (varint(len(base)) + varint(1 << 40) + copy_op(0, COPY_ZERO_SIZE) * 4, 1 << 64),
        # base size that needs a byte at bit 63 (10-byte varint), and one that wraps 64 bits
        (b"\xff" * 9 + b"\x01" + varint(1) + insert_op(b"x"), DEFAULT_MAX_RESULT),
        (varint(len(base)) + b"\xff" * 9 + b"\x7f" + insert_op(b"x"), 1 << 80),
        # the largest offset and size a copy can spell
        (varint(len(base)) + varint(0xFFFFFF) + bytes([0xFF]) + b"\xff" * 7, DEFAULT_MAX_RESULT),
        # a copy of 64 KiB whose offset makes it end one past the base
        (
            varint(len(base)) + varint(COPY_ZERO_SIZE) + copy_op(len(base) - COPY_ZERO_SIZE + 1, COPY_ZERO_SIZE),
            DEFAULT_MAX_RESULT,
        ),
        # negative or non-integer caps are the reference's to judge
        (varint(len(base)) + varint(1) + insert_op(b"x"), -1),
        (varint(len(base)) + varint(1) + insert_op(b"x"), 1.5),
    ]
    tracemalloc.start()
    try:
        for delta, cap in hostile:
            assert _native.try_apply_delta(base, delta, cap) is None
            assert outcome(_native.apply_delta, base, delta, cap) == outcome(_apply_delta_checked, base, delta, cap)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


@NOT_BUILT
def test_compiled_module_takes_the_reference_signature():
    delta, base, _ = instruction_stream()
    expected = _apply_delta_checked(base, delta, DEFAULT_MAX_RESULT)
    assert _native.apply_delta(base, delta) == expected
    assert _native.apply_delta(base, delta, max_size=len(expected)) == expected
    assert _native.apply_delta(delta=delta, base=base) == expected
    assert outcome(_native.apply_delta, base, delta, len(expected) - 1)[:2] == (LimitExceededError, "delta-too-large")
    with pytest.raises(TypeError):
        _native.apply_delta(base)
    with pytest.raises(TypeError):
        _native.apply_delta(base, delta, size=1)
    with pytest.raises(TypeError):
        _native.apply_delta(base, delta, 1, max_size=1)
