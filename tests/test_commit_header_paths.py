"""A commit's header read by the compiled module and by the pure regex: the
same (tree, parents, time) wherever the regex matches and None wherever it
does not, the same result or error from commit_header_fast on both paths,
and whole walks that print what git prints on both paths."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from packscope.core import objects
from packscope.core.errors import PackscopeError
from tests.delta_paths import NOT_BUILT, _native, compiled_against_pure


def regex_answer(data: bytes, hexsz: int):
    m = objects.commit_header_regex(hexsz).match(data)
    return None if m is None else objects.commit_header_fields(m, hexsz)


def mostly(good, *odd):
    """``good`` about four times in five, else one of ``odd``."""
    return st.sampled_from([good] * (4 * len(odd)) + list(odd))


@st.composite
def headers(draw, hexsz):
    """Commit headers in git's shape, each part sometimes bent out of it."""
    hexd = st.text("0123456789abcdefABCDEF", min_size=hexsz, max_size=hexsz).map(str.encode)
    odd = st.sampled_from([b"g" * hexsz, b"0" * (hexsz - 1), b"0" * (hexsz + 1), b""])
    ids = st.one_of(*[hexd] * 8, odd)
    out = b"tree " + draw(ids) + draw(mostly(b"\n", b" \n", b""))
    for _ in range(draw(st.integers(0, 3))):
        out += draw(mostly(b"parent ", b"parent  ", b"parents ")) + draw(ids) + b"\n"
    author = draw(mostly(b"author A U <a@x> 1 +0000\n", b"author\n", b"", b"author no newline"))
    name = draw(mostly(b" C O <c@x>", b" no gt", b" a>b", b"", b" <c@x\n>"))
    spaces = draw(mostly(b" ", b"", b"   ", b"\t"))
    digits = draw(
        st.one_of(
            *[st.integers(0, 2**40).map(lambda n: str(n).encode())] * 6,
            st.integers(0, 10**25).map(lambda n: str(n).encode()),
            st.just(b""),
            st.just(b"0" * 22 + b"7"),
        )
    )
    rest = draw(mostly(b" +0000\n", b" +0000", b"\n", b" \n", b"+0000\n"))
    tail = draw(mostly(b"\nmessage\n", b"", b"x", b"gpgsig ...\n"))
    return out + author + b"committer" + name + spaces + digits + rest + tail


@NOT_BUILT
@settings(max_examples=1500, deadline=None)
@given(st.data())
def test_compiled_header_match_gives_the_regex_answer(data):
    hexsz = data.draw(st.sampled_from([40, 64]))
    body = data.draw(headers(hexsz))
    assert _native.commit_header(body, hexsz) == regex_answer(body, hexsz)


def fast_outcome(body, fmt):
    try:
        return ("ok", objects.commit_header_fast(body, fmt, b"\1" * fmt.rawsz))
    except PackscopeError as e:
        return (type(e), e.kind, e.offset, e.message)


@compiled_against_pure
def test_commit_header_fast_answers_alike_on_both_paths(door, fmt, data):
    body = data.draw(headers(fmt.hexsz))
    with door.path("compiled"):
        compiled = fast_outcome(body, fmt)
    with door.path("pure"):
        assert fast_outcome(body, fmt) == compiled


@NOT_BUILT
def test_times_of_twenty_digits_or_more_saturate_as_in_the_pure_path():
    head = b"tree " + b"1" * 40 + b"\nauthor a\ncommitter c <c> "
    for digits in (b"18446744073709551615", b"18446744073709551616", b"9" * 30, b"0" * 30 + b"5"):
        body = head + digits + b" +0000\n\n"
        assert _native.commit_header(body, 40) == regex_answer(body, 40)
