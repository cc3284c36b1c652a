"""git's line diff and blame's cut of lines along it answer the same on the
compiled path (native_c/line_diff.c, native_c/blame.c) as in the pure
reference (line_diff.git_diff_flags, blame.moves): texts made of a few
lines repeated (blank, braces, indented, CRLF, a last line without a
newline), so xdiff's pre-pass drops lines, groups slide and the indent
heuristic has choices to make."""

from __future__ import annotations

import random
from array import array

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from packscope.core.errors import CancelledError
from packscope.core.history.blame import common_tail_lines, moves, same_lines, split_ids
from packscope.core.history.line_diff import git_diff_flags

LINES = [b"", b"{", b"}", b"\treturn 0;", b"\tif (x)", b"\t\ty++;", b"  a;", b"int f(void)", b"x\r", b" ", b"\t"]

# lines in runs of equal lines (where a group slides and the heuristic has ties to break)
line_lists = st.lists(st.tuples(st.sampled_from(LINES), st.integers(1, 4)), max_size=50).map(
    lambda pairs: [line for line, times in pairs for _ in range(times)]
)
side = st.tuples(line_lists, st.booleans())  # the lines, and whether the last one ends with a newline


def _text(lines: list[bytes], newline_at_end: bool) -> bytes:
    text = b"\n".join(lines)
    return text + b"\n" if lines and newline_at_end else text


def _numbered(old: tuple[list[bytes], bool], new: tuple[list[bytes], bool]):
    """Both texts as blame numbers them (one table), and each number's indent."""
    table: dict[bytes, int] = {}
    indents: dict[int, int] = {}
    a = split_ids(_text(*old), table, indents, 0)
    b = split_ids(_text(*new), table, indents, len(a))
    return a, b, indents


def _edited(base: list[bytes], edits: list[tuple[int, int, list[bytes]]], grown: list[tuple[int, int]]) -> list[bytes]:
    out = list(base)
    for at, drop, block in edits:
        at = min(at, len(out))
        out[at : at + drop] = block
    for at, more in grown:  # a run of equal lines made longer: the group could sit anywhere in it
        if out:
            at = min(at, len(out) - 1)
            out[at:at] = [out[at]] * more
    return out


blocks = st.lists(st.tuples(st.sampled_from(LINES), st.integers(1, 4)), max_size=4).map(
    lambda pairs: [line for line, times in pairs for _ in range(times)]
)
edits = st.tuples(
    st.lists(st.tuples(st.integers(0, 120), st.integers(0, 4), blocks), max_size=6),
    st.lists(st.tuples(st.integers(0, 120), st.integers(1, 3)), max_size=3),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(old=side, new=side, edit=edits, related=st.integers(0, 3).map(bool), heuristic=st.integers(0, 3).map(bool))
def test_the_compiled_line_diff_marks_what_the_pure_one_does(door, old, new, edit, related, heuristic):
    if related:  # the new text is the old one edited: long common runs, groups to slide
        new = (_edited(old[0], *edit), new[1])
    a, b, indents = _numbered(old, new)
    with door.path("pure"):
        want = git_diff_flags(a, b, indents=indents if heuristic else None)
    with door.path("compiled"):
        got = git_diff_flags(a, b, indents=indents if heuristic else None)
    assert got == want
    # the compiled function answered, rather than handing the sides back to the pure code
    assert door.compiled.git_diff_flags(a, b, indents if heuristic else None, None) == want


@st.composite
def runs_around_repeats(draw):
    """Two versions of a text of three much-repeated lines (each with more
    copies than xdiff's limit, about sqrt(n)), each replacing the same few
    places with a block of its own: lines the other lacks around copies of
    one repeated line.  Whether the pre-pass leaves those copies out of the
    search (how many lacking lines surround them) decides the script."""
    base = draw(st.lists(st.sampled_from(LINES[:3]), min_size=100, max_size=250))
    places = draw(st.lists(st.tuples(st.integers(0, len(base)), st.sampled_from(LINES[:3])), min_size=1, max_size=6))

    def with_blocks(tag: bytes) -> list[bytes]:
        out = list(base)
        for k, (at, repeated) in enumerate(sorted(places, reverse=True)):
            before, copies, after = draw(st.integers(2, 5)), draw(st.integers(1, 2)), draw(st.integers(2, 5))
            block = [b"%s%d-%d" % (tag, k, i) for i in range(before)]
            block += [repeated] * copies
            block += [b"%s%d+%d" % (tag, k, i) for i in range(after)]
            out[at:at] = block
        return out

    return with_blocks(b"old"), with_blocks(b"new")


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pair=runs_around_repeats())
def test_the_compiled_pre_pass_drops_the_much_repeated_lines_the_pure_one_drops(door, pair):
    a, b, indents = _numbered((pair[0], True), (pair[1], True))
    with door.path("pure"):
        want = git_diff_flags(a, b, indents=indents)
    assert door.compiled.git_diff_flags(a, b, indents, None) == want


def _rewrite(
    seed: int, chunks: int, keep: int, change: int, vocab: int, mirrored: bool
) -> tuple[array[int], array[int]]:
    """Two sides as line numbers: ``chunks`` runs of ``keep`` shared lines,
    each after up to ``change`` lines of each side's own, all drawn from the
    same ``vocab`` lines (so the pre-pass keeps them, and the search has
    many ways to line them up).  ``mirrored``: each side followed by itself
    backwards, so the search from the end sees what the one from the start
    sees and the two reach equally far."""
    r = random.Random(seed)
    a: list[int] = []
    b: list[int] = []
    for _ in range(chunks):
        common = [r.randrange(vocab) for _ in range(keep)]
        a += [r.randrange(vocab) for _ in range(r.randrange(change + 1))] + common
        b += [r.randrange(vocab) for _ in range(r.randrange(change + 1))] + common
    if mirrored:
        a += a[::-1]
        b += b[::-1]
    return array("i", a), array("i", b)


def _swapped(seed: int, dense: int) -> tuple[array[int], array[int]]:
    """Twelve places where two blocks of 25 lines trade places, 3,000-odd
    shared lines apart (over 32,768 kept lines a side: the cost limit is
    512 rounds).  Keeping either block costs the same, so past 256 rounds
    the points after the two blocks' snakes are equally far along and the
    tie-break decides the split.  ``dense``: that many lines of a side's
    own first (from 40 lines, so the pre-pass keeps them), where the search
    from the start finds no long snake and the one from the end splits."""
    r = random.Random(seed)
    a = [r.randrange(40) for _ in range(dense)]
    b = [r.randrange(40) for _ in range(dense)]
    line = 40  # the next line number not used yet
    for _ in range(12):
        end = line + 3000 + r.randrange(100)
        common, x, y = range(line, end), range(end, end + 25), range(end + 25, end + 50)
        line = end + 50
        a += [*common, *x, *y]
        b += [*common, *y, *x]
    return array("i", a), array("i", b)


def _same_on_both_paths(door, a: array[int], b: array[int]) -> None:
    indents = {line: line % 5 * 4 - 4 for line in {*a, *b}}  # blank (-1) and indented lines for the heuristic
    with door.path("pure"):
        want = git_diff_flags(a, b, indents=indents)
    with door.path("compiled"):
        assert git_diff_flags(a, b, indents=indents) == want
    assert door.compiled.git_diff_flags(a, b, indents, None) == want


# Rewrites of about 1,100 lines a side: some 600 lines changed, so the
# search runs to its cost limit (256 rounds for boxes this small) and
# splits at the furthest point one of its two searches reached.
@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), change=st.integers(12, 16), mirrored=st.booleans())
@example(seed=0, change=14, mirrored=True)
@example(seed=1, change=16, mirrored=True)  # two diagonals reach equally far: the first wins
def test_the_compiled_line_diff_stops_at_the_cost_limit_where_the_pure_one_does(door, seed, change, mirrored):
    _same_on_both_paths(door, *_rewrite(seed, 30 if mirrored else 60, 25 - change, change, 40, mirrored))


@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), dense=st.sampled_from((0, 400)))
@example(seed=0, dense=0)
@example(seed=0, dense=400)
def test_the_compiled_line_diff_splits_after_a_long_snake_where_the_pure_one_does(door, seed, dense):
    _same_on_both_paths(door, *_swapped(seed, dense))


def test_the_compiled_line_diff_leaves_sides_that_are_not_int_arrays_to_the_pure_code(door):
    assert door.compiled.git_diff_flags([1, 2], [2, 3], None, None) is None
    assert door.compiled.git_diff_flags(array("q", [1]), array("i", [2]), None, None) is None


def test_a_check_that_raises_stops_the_compiled_line_diff(door):
    def stop() -> None:
        raise CancelledError("stopped")

    a, b = array("i", range(50)), array("i", range(25, 75))
    with pytest.raises(CancelledError):
        door.compiled.git_diff_flags(a, b, None, stop)


flags = st.lists(st.booleans(), max_size=80).map(lambda bits: bytearray(bits) + b"\0")


@st.composite
def cut_case(draw):
    deleted, inserted = draw(flags), draw(flags)
    m = len(inserted) - 1
    # the origin's lines [0, m) in entries of random lengths and final places, shuffled
    entries, at = [], 0
    while at < m:
        count = draw(st.integers(1, m - at))
        entries.append([draw(st.integers(0, 500)), at, count])
        at += count
    return draw(st.permutations(entries)), deleted, inserted


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cut_case())
def test_the_compiled_cut_of_blame_entries_moves_what_the_pure_one_moves(door, case):
    entries, deleted, inserted = case
    with door.path("pure"):
        want = moves([list(e) for e in entries], deleted, inserted)
    got = door.compiled.blame_moves([list(e) for e in entries], deleted, inserted)
    assert got == want


def test_the_compiled_cut_leaves_entries_it_cannot_read_to_the_pure_code(door):
    assert door.compiled.blame_moves([(0, 0, 1)], bytearray(2), bytearray(2)) is None
    assert door.compiled.blame_moves([[0, 0, 1.0]], bytearray(2), bytearray(2)) is None


texts = st.lists(st.sampled_from([*LINES, b"x\0no-eol"]), max_size=40).flatmap(
    lambda lines: st.tuples(st.just(lines), st.booleans()).map(lambda t: _text(*t))
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=texts, second=texts)
def test_the_compiled_line_numbering_fills_the_table_as_the_pure_one_does(door, first, second):
    got_table: dict[bytes, int] = {}
    got_indents: dict[int, int] = {}
    want_table: dict[bytes, int] = {}
    want_indents: dict[int, int] = {}
    base = 0
    for text in (first, second):  # the second blob meets lines the first numbered
        with door.path("pure"):
            want = split_ids(text, want_table, want_indents, base)
        got = door.compiled.split_ids(text, got_table, got_indents, base)
        assert got == want
        base += len(want) + 3
    assert got_table == want_table and list(got_table) == list(want_table)
    assert got_indents == want_indents


def test_the_compiled_line_numbering_leaves_numbers_past_a_c_int_to_the_pure_code(door):
    assert door.compiled.split_ids(b"a\nb\n", {}, {}, 2**31 - 2) is None
    assert door.compiled.split_ids(b"a\n", [], {}, 0) is None


@st.composite
def two_versions(draw):
    # two texts sharing a start and an end (long enough for 1024-byte blocks), cut anywhere
    head, middle_a, middle_b, tail = (draw(texts) for _ in range(4))
    head = head[: draw(st.integers(0, len(head)))]
    tail = tail[draw(st.integers(0, len(tail))) :] * draw(st.integers(1, 120))
    return head + middle_a + tail, head + middle_b + tail


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pair=two_versions())
def test_the_compiled_shared_lines_are_the_pure_ones(door, pair):
    a, b = pair
    with door.path("pure"):
        want = same_lines(a, b), same_lines(b, a), common_tail_lines(a, b)
    got = door.compiled.same_lines(a, b), door.compiled.same_lines(b, a), door.compiled.common_tail_lines(a, b)
    assert got == want
