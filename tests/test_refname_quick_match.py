"""check_refname's quick match (the common names, decided by one regex)
says exactly what the rules one by one say, on names built from the
characters and shapes the rules are about."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from packscope.core.repo.ref_syntax import check_refname, refname_rules

PIECES = [
    "refs",
    "heads",
    "a",
    "B9",
    "_",
    "-",
    ".",
    "..",
    "/",
    "//",
    "lock",
    ".lock",
    "@",
    "@{",
    "x.",
    ".x",
    " ",
    "~",
    "é",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join), st.booleans())
def test_the_quick_match_agrees_with_the_rules(name, onelevel):
    assert check_refname(name, allow_onelevel=onelevel) is refname_rules(name, allow_onelevel=onelevel)


def test_the_quick_match_accepts_the_common_names():
    for name in ("refs/heads/main", "refs/tags/v1.2.3", "refs/remotes/origin/feature-x_2", "refs/pull/123/head"):
        assert check_refname(name)
