"""What a walk hands out and what it is told: ``WalkedCommit`` (one commit
shown, in order) and ``CommitFacts`` (what a commit-info hook answers:
tree, parents, commit time and, from a commit-graph, a generation).  Apart
from packscope.core.history.walk so that the walk's parts
(packscope.core.history.plain_walk) share them without a cycle."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

# What commit_info answers: (tree, parents, commit time[, generation]).
CommitFacts = tuple[bytes, tuple[bytes, ...], int] | tuple[bytes, tuple[bytes, ...], int, int]
CommitInfo = Callable[[bytes], CommitFacts | None]


class WalkedCommit(NamedTuple):
    # A named tuple, not a dataclass: a walk builds one per commit shown,
    # and a tuple is several times cheaper to make.
    oid: bytes
    tree: bytes
    parents: tuple[bytes, ...]  # as git shows them (a simplified merge keeps one)
    commit_time: int


tuple_new = tuple.__new__  # WalkedCommit without the Python-level __new__ of named tuples
