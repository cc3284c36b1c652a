"""A tree printed a piece at a time (``cat-file -p`` of a tree of a million
entries never holds a million tuples): the same bytes as git, pieces
bounded by size, and damage raised before anything is printed."""

from __future__ import annotations

import pytest

from packscope.core import objects
from packscope.core.errors import CorruptObjectError
from packscope.core.objects import tree_item_pieces, tree_items
from packscope.core.oid import SHA1
from packscope.inspector.commands.cat_file import format_tree
from tests import repos
from tests.cli import packscope
from tests.repos import git, git_text


def _tree(repo, entries) -> str:
    body = b"".join(m + b" " + n + b"\0" + bytes.fromhex(o) for m, n, o in entries)
    return git_text("hash-object", "-t", "tree", "-w", "--literally", "--stdin", cwd=repo, input=body).strip()


@pytest.fixture(scope="module")
def odd_tree(tmp_path_factory):
    """A tree of 400 entries in git's order: files, executables, symlinks,
    trees, gitlinks, a mode spelled 100664, names to quote (a tab, a quote,
    a backslash, UTF-8, DEL), and one name longer than a small piece."""
    repo = repos.init_bare(tmp_path_factory.mktemp("pieces") / "p.git")
    blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input="x\n").strip()
    sub = _tree(repo, [(b"100644", b"inner", blob)])
    kinds = [b"100644", b"100755", b"120000", b"40000", b"160000", b"100664"]
    odd = [b"tab\there", b'quote"d', b"back\\slash", "naïve".encode(), b"del\x7f", b"x" * 300]
    names = [b"e%04d" % i for i in range(394)] + odd
    entries = []
    for k, name in enumerate(names):
        mode = kinds[k % len(kinds)]
        entries.append((mode, name, sub if mode == b"40000" else blob))
    # git's order: names compare as if a tree's had a trailing "/"
    entries.sort(key=lambda e: e[1] + (b"/" if e[0] == b"40000" else b""))
    return repo, _tree(repo, entries)


@pytest.mark.parametrize("piece", [64, 256, 4096, 1 << 20])
def test_a_tree_printed_in_pieces_is_gits_cat_file_p(odd_tree, monkeypatch, piece):
    repo, tree = odd_tree
    data = git("cat-file", "tree", tree, cwd=repo)
    monkeypatch.setattr(objects, "TREE_PIECE", piece)
    pieces = list(tree_item_pieces(data, SHA1, piece=piece))
    assert [e for p in pieces for e in p] == tree_items(data, SHA1)
    if piece < len(data):
        assert len(pieces) > 1
        # a piece holds what fits in ``piece`` bytes (at least 24 per entry),
        # or one entry alone
        assert all(len(p) <= max(1, piece // 24) for p in pieces)
    lines = []
    monkeypatch.setattr(objects, "tree_items", lambda d, f, o=None: lines.append(d) or tree_items(d, f, o))
    for quote in (True, False):
        want = git("-c", f"core.quotePath={str(quote).lower()}", "cat-file", "-p", tree, cwd=repo)
        assert format_tree(data, SHA1, quote) == want
    assert len(lines) == 2 * len(pieces)  # the lines were made piece by piece
    assert packscope("-C", repo, "cat-file", "-p", tree).stdout == git("cat-file", "-p", tree, cwd=repo)


def test_damage_anywhere_raises_before_the_first_piece(odd_tree):
    repo, tree = odd_tree
    data = git("cat-file", "tree", tree, cwd=repo)
    cut = len(data) * 3 // 4
    damaged = data[:cut] + b"\0\0garbage " + data[cut:]
    pieces = tree_item_pieces(damaged, SHA1, piece=256)
    with pytest.raises(CorruptObjectError):
        next(pieces)
    with pytest.raises(CorruptObjectError):
        tree_items(damaged, SHA1)
