"""Commit, tag and tree parsing.

Two speeds, because the callers have two needs:

* :func:`commit_header_fast` reads only what a history walk needs (tree,
  parents, committer time) with a handful of ``find``/``startswith`` calls;
  walks call it hundreds of thousands of times.
* :func:`parse_commit` / :func:`parse_tag` read everything, keep the headers
  git does not interpret, and *report* malformed fields in ``problems``
  instead of refusing the object: an inspector must be able to show a broken
  commit.  Only an object with nothing usable (a commit without a tree line,
  a tag without an object line) raises :class:`CorruptObjectError`.

The rules for what counts as the commit date and as an ident's parts follow
git's own readers (``parse_commit_date`` and ``split_ident_line``), so that
walks order commits exactly as git does even when the bytes are odd.
"""

from __future__ import annotations

import re
import stat
from binascii import Error as _HexError
from binascii import unhexlify
from collections.abc import Iterator
from itertools import pairwise
from stat import S_IFDIR, S_IFLNK, S_IFREG, S_ISDIR
from typing import NamedTuple, Protocol

from packscope.core import native
from packscope.core.errors import CorruptObjectError
from packscope.core.oid import ObjectFormat


class ObjectReader(Protocol):
    """Anything objects can be read from by id: the object store, or a view
    of it (replace refs, grafts).  What the history and fsck layers ask of it."""

    @property
    def fmt(self) -> ObjectFormat: ...

    def read(self, oid: bytes) -> tuple[str, bytes]: ...


# --- modes -------------------------------------------------------------------

# A tree entry's mode is a stat(2) mode (file types from the stdlib's
# ``stat``), plus one file type of git's own that ``stat`` lacks:
S_IFGITLINK = 0o160000  # a commit of another repository (a submodule)
# The file-type mask as a number, only for core/repo/revision.py, which still
# masks by hand; everything else asks stat.S_IFMT(mode) or stat.S_ISDIR(mode).
S_IFMT = 0o170000


def mode_is_tree(mode: int) -> bool:
    return S_ISDIR(mode)


def mode_type(mode: int) -> str:
    """The object type an entry of this mode names, decided on the canonical
    mode as git does: "commit" for gitlinks and for unknown file types."""
    kind = stat.S_IFMT(canonical_mode(mode))
    if kind == S_IFDIR:
        return "tree"
    if kind == S_IFGITLINK:
        return "commit"
    return "blob"


def canonical_mode(mode: int) -> int:
    """The mode git works with for a stored mode (git's ``canon_mode``):
    regular files become 100644 or 100755 by their owner-execute bit, and
    anything unrecognised is treated as a gitlink."""
    kind = stat.S_IFMT(mode)
    if kind == S_IFREG:
        return 0o100755 if mode & 0o100 else 0o100644
    if kind in (S_IFLNK, S_IFDIR):
        return kind
    return S_IFGITLINK


def mode_display(mode: int) -> str:
    """A mode as ``git ls-tree`` and ``cat-file -p`` print it: canonical, six
    octal digits, so trees show as ``040000``."""
    return f"{canonical_mode(mode):06o}"


# --- records ------------------------------------------------------------------


class Ident(NamedTuple):
    """``name <email> time tz`` of an author, committer or tagger line."""

    name: bytes
    email: bytes
    time: int
    tz: str  # as written, e.g. "+0530"; "+0000" when absent
    tz_offset_minutes: int  # git's reading of tz: sign * (hh * 60 + mm)
    # False when the line has no usable "time zone" pair: time is then 0 and
    # git prints the epoch in medium format but nothing for %at/%ad.
    has_date: bool = True


class Commit(NamedTuple):
    tree: bytes
    parents: tuple[bytes, ...]
    author: Ident | None
    committer: Ident | None
    encoding: bytes | None
    # Headers git stores but does not interpret (gpgsig, mergetag, ...), in
    # order; a multi-line value is joined with "\n" (continuation spaces dropped).
    extra_headers: tuple[tuple[bytes, bytes], ...]
    message: bytes
    problems: tuple[tuple[str, str], ...] = ()


class Tag(NamedTuple):
    object: bytes
    type: str
    tag: bytes
    tagger: Ident | None
    extra_headers: tuple[tuple[bytes, bytes], ...]
    message: bytes
    problems: tuple[tuple[str, str], ...] = ()


class TreeEntry(NamedTuple):
    mode: int  # as stored; see canonical_mode()
    name: bytes
    oid: bytes

    @property
    def type(self) -> str:
        return mode_type(self.mode)


# --- the fast path for walks --------------------------------------------------

# The compiled match of commit_header_regex + commit_header_fields is
# ``commit_header`` of core/native.py's backend; the regex stays the reference.


def commit_header_fast(
    data: bytes, fmt: ObjectFormat, oid: bytes | None = None
) -> tuple[bytes, tuple[bytes, ...], int]:
    """``(tree, parents, commit_time)`` with minimal work.

    The tree and parent lines must be well formed (git refuses to walk such
    a commit too); the committer time follows git's ``parse_commit_date``:
    ``author`` must directly follow the parents and ``committer`` the author,
    the time is read after the first ``>`` of the committer line, and any
    shape it does not expect gives 0.
    """
    hexsz = fmt.hexsz
    compiled = native.backend
    if compiled is not None:
        found = compiled.commit_header(data, hexsz)  # the regex's answer, or None where it fails
        if found is not None:
            return found
    else:
        m = commit_header_regex(hexsz).match(data)
        if m is not None:
            return commit_header_fields(m, hexsz)
    # Anything unusual: the careful reader below, step by step as git reads.
    end = 5 + hexsz
    if not data.startswith(b"tree ") or data[end : end + 1] != b"\n":
        raise _corrupt("commit has no valid tree line", oid)
    try:
        tree = unhexlify(data[5:end])
        parents = []
        pos = end + 1
        step = 8 + hexsz
        while data.startswith(b"parent ", pos):
            if data[pos + step - 1 : pos + step] != b"\n":
                raise _corrupt("commit has a malformed parent line", oid)
            parents.append(unhexlify(data[pos + 7 : pos + step - 1]))
            pos += step
    except _HexError:
        raise _corrupt("commit has a non-hex tree or parent id", oid) from None
    return tree, tuple(parents), _commit_date(data, pos)


def commit_header_fields(m: re.Match[bytes], hexsz: int) -> tuple[bytes, tuple[bytes, ...], int]:
    """(tree, parents, commit_time) from a match of commit_header_regex()."""
    tree, ps, t = m.groups()
    step = 8 + hexsz
    parents: tuple[bytes, ...]
    if len(ps) == step:  # the common case, spelled out: walks call this for every commit
        parents = (unhexlify(ps[7 : step - 1]),)
    elif ps:
        parents = tuple([unhexlify(ps[i + 7 : i + step - 1]) for i in range(0, len(ps), step)])
    else:
        parents = ()
    return unhexlify(tree), parents, int(t) if len(t) < 20 else min(int(t), (1 << 64) - 1)


_HEADER_RES: dict[int, re.Pattern[bytes]] = {}


def commit_header_regex(hexsz: int) -> re.Pattern[bytes]:
    """The common shape in one C-speed match: tree, parents, then an author
    line directly followed by a committer line whose first '>' is followed by
    the time, a space, the rest of the line and at least one more byte."""
    rx = _HEADER_RES.get(hexsz)
    if rx is None:
        rx = _HEADER_RES[hexsz] = re.compile(
            rb"tree ([0-9a-fA-F]{%d})\n((?:parent [0-9a-fA-F]{%d}\n)*)author[^\n]*\ncommitter[^>\n]*> *([0-9]+) [^\n]*\n."
            % (hexsz, hexsz),
            re.DOTALL,
        )
    return rx


def _commit_date(data: bytes, pos: int) -> int:
    if not data.startswith(b"author", pos):
        return 0
    nl = data.find(b"\n", pos)
    if nl < 0 or not data.startswith(b"committer", nl + 1):
        return 0
    gt = data.find(b">", nl + 10)
    if gt < 0:
        return 0
    eol = data.find(b"\n", gt)
    # git also wants something after the committer line (its end-of-buffer test).
    if eol < 0 or eol + 1 >= len(data):
        return 0
    return _strtoumax(data[gt + 1 : eol])


_SPACE = b" \t\n\v\f\r"


def _strtoumax(field: bytes) -> int:
    """C's strtoumax on a field: leading blanks, optional sign, digits;
    a negative value wraps as unsigned and overflow saturates, as in git."""
    token = field.split(None, 1)[0] if field.strip(_SPACE) else b""
    if token.isdigit():
        value = int(token)
    else:
        s = field.lstrip(_SPACE)
        neg = s[:1] == b"-"
        if s[:1] in (b"-", b"+"):
            s = s[1:]
        n = 0
        while n < len(s) and 48 <= s[n] <= 57:
            n += 1
        value = int(s[:n]) if n else 0
        if value < (1 << 64) and neg:
            value = -value % (1 << 64)
    return min(value, (1 << 64) - 1)


def _corrupt(message: str, oid: bytes | None) -> CorruptObjectError:
    return CorruptObjectError(message, oid=None if oid is None else oid.hex())


# --- headers and idents -----------------------------------------------------------


def split_headers(data: bytes) -> tuple[list[tuple[bytes, bytes]], bytes, bool]:
    """``(headers, message, terminated)``: header lines as (name, value) with
    continuation lines (leading space) folded into the previous value, the
    bytes after the first empty line, and whether that empty line exists."""
    headers: list[tuple[bytes, bytes]] = []
    pos = 0
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        end = n if nl < 0 else nl
        line = data[pos:end]
        pos = end + 1
        if not line:
            return headers, data[pos:], True
        if line[0] == 0x20 and headers:
            name, value = headers[-1]
            headers[-1] = (name, value + b"\n" + line[1:])
        else:
            name, _, value = line.partition(b" ")
            headers.append((name, value))
    return headers, b"", False


def parse_ident(value: bytes) -> tuple[Ident | None, str | None]:
    """An ident from the text after ``author ``/``committer ``/``tagger ``.

    Splits as git's ``split_ident_line`` does: the name ends before the first
    ``<`` (trailing blanks dropped), the email runs to the next ``>``, and the
    date and zone are read after the *last* ``>``.  Returns ``(ident, problem)``;
    ident is None only when there is no ``<...>`` at all.
    """
    lt = value.find(b"<")
    if lt < 0:
        return None, "no <email> in ident"
    gt = value.find(b">", lt + 1)
    if gt < 0:
        return None, "unterminated <email> in ident"
    name = value[:lt].rstrip(_SPACE)
    email = value[lt + 1 : gt]
    rest = value[value.rfind(b">") + 1 :]
    parts = rest.split()
    if len(parts) >= 1 and parts[0].isdigit():
        time = int(parts[0])
        tzb = parts[1] if len(parts) > 1 else b""
        if len(tzb) >= 2 and tzb[:1] in (b"+", b"-") and tzb[1:2].isdigit():
            digits = tzb[1:]
            k = 0
            while k < len(digits) and 48 <= digits[k] <= 57:
                k += 1
            tz = (tzb[:1] + digits[:k]).decode()
            problem = None if (k == 4 and len(parts) == 2 and k == len(digits)) else f"odd time zone {tzb!r}"
            return Ident(name, email, time, tz, tz_minutes(tz)), problem
        return Ident(name, email, 0, "+0000", 0, False), "ident has no time zone"
    return Ident(name, email, 0, "+0000", 0, False), "ident has no timestamp"


def tz_minutes(tz: str) -> int:
    """Minutes east of UTC as git reads a zone: "+0530" -> 330; digits past
    the last two count as hours, so "+0590" -> 390 (git does the same)."""
    try:
        v = int(tz)
    except ValueError:
        return 0
    a = abs(v)
    minutes = (a // 100) * 60 + a % 100
    return -minutes if v < 0 else minutes


# --- commits --------------------------------------------------------------------


def parse_commit(data: bytes, fmt: ObjectFormat, oid: bytes | None = None, idents: bool = True) -> Commit:
    """Every field of a commit; malformed fields land in ``problems``.
    ``idents=False`` leaves ``author`` and ``committer`` None and their
    problems unchecked, every other field as read: for a log format that
    prints no ident (``--oneline``), which spares two ident parses a commit."""
    headers, message, terminated = split_headers(data)
    problems: list[tuple[str, str]] = []
    if not headers or headers[0][0] != b"tree":
        raise _corrupt("commit does not start with a tree line", oid)
    tree = _hex_id(headers[0][1], fmt)
    if tree is None:
        raise _corrupt("commit has a malformed tree id", oid)
    parents: list[bytes] = []
    i = 1
    # Like git, only the parent lines right after the tree are parents.
    while i < len(headers) and headers[i][0] == b"parent":
        p = _hex_id(headers[i][1], fmt)
        if p is None:
            problems.append(("parent", f"malformed parent id {headers[i][1][:80]!r}"))
        else:
            parents.append(p)
        i += 1
    author = committer = None
    encoding = None
    extra: list[tuple[bytes, bytes]] = []
    seen_author = seen_committer = False
    for name, value in headers[i:]:
        if name == b"author" and not seen_author:
            seen_author = True
            if idents:
                author, problem = parse_ident(value)
                if problem:
                    problems.append(("author", problem))
        elif name == b"committer" and not seen_committer:
            seen_committer = True
            if idents:
                committer, problem = parse_ident(value)
                if problem:
                    problems.append(("committer", problem))
        elif name == b"encoding" and encoding is None:
            encoding = value
        else:
            if name in (b"tree", b"parent", b"author", b"committer"):
                problems.append((name.decode(), f"unexpected {name.decode()} line"))
            extra.append((name, value))
    if not seen_author and idents:
        problems.append(("author", "missing author line"))
    if not seen_committer and idents:
        problems.append(("committer", "missing committer line"))
    if not terminated and data and not data.endswith(b"\n"):
        problems.append(("header", "header not terminated by a newline"))
    return Commit(tree, tuple(parents), author, committer, encoding, tuple(extra), message, tuple(problems))


def _hex_id(value: bytes, fmt: ObjectFormat) -> bytes | None:
    if len(value) != fmt.hexsz:
        return None
    try:
        return unhexlify(value)
    except _HexError:
        return None


# --- tags ------------------------------------------------------------------------

_TYPES = ("commit", "tree", "blob", "tag")


def parse_tag(data: bytes, fmt: ObjectFormat, oid: bytes | None = None) -> Tag:
    """Every field of an annotated tag; malformed fields land in ``problems``."""
    headers, message, _ = split_headers(data)
    problems: list[tuple[str, str]] = []
    if not headers or headers[0][0] != b"object":
        raise _corrupt("tag does not start with an object line", oid)
    target = _hex_id(headers[0][1], fmt)
    if target is None:
        raise _corrupt("tag has a malformed object id", oid)
    typ = ""
    name = b""
    tagger = None
    extra: list[tuple[bytes, bytes]] = []
    seen = set()
    for key, value in headers[1:]:
        if key in seen or key not in (b"type", b"tag", b"tagger"):
            extra.append((key, value))
            continue
        seen.add(key)
        if key == b"type":
            typ = value.decode("ascii", "replace")
            if typ not in _TYPES:
                problems.append(("type", f"unknown object type {typ!r}"))
        elif key == b"tag":
            name = value
        else:
            tagger, problem = parse_ident(value)
            if problem:
                problems.append(("tagger", problem))
    if b"type" not in seen:
        problems.append(("type", "missing type line"))
    if b"tag" not in seen:
        problems.append(("tag", "missing tag line"))
    return Tag(target, typ, name, tagger, tuple(extra), message, tuple(problems))


# --- trees -------------------------------------------------------------------------


def iter_tree(data: bytes, fmt: ObjectFormat, oid: bytes | None = None) -> Iterator[TreeEntry]:
    """The entries of a tree in stored order.

    A malformed entry (non-octal mode, empty name, truncated id) raises
    CorruptObjectError at that point: what follows cannot be located.
    """
    for mode, name, entry_oid in tree_items(data, fmt, oid):
        yield TreeEntry(mode, name, entry_oid)


def tree_items(data: bytes, fmt: ObjectFormat, oid: bytes | None = None) -> list[tuple[int, bytes, bytes]]:
    """``[(mode, name, oid), ...]`` as plain tuples — the cheap form that
    tree diffs use.

    With the compiled module (core/native.py) a well-formed tree is split in
    one C pass (3x faster than the regexes below on git.git's trees); it
    answers None for anything else, which then goes through the careful loop
    as in the pure path.  ``tree_items_py`` is the pure reference."""
    compiled = native.backend
    if compiled is not None:
        items = compiled.tree_items(data, fmt.rawsz)
        return items if items is not None else _tree_items_careful(data, fmt, oid)
    return tree_items_py(data, fmt, oid)


# A tree's bytes handed out per piece by tree_item_pieces: about 25,000
# entries of a typical tree, a few MB as tuples.
TREE_PIECE = 1 << 20


def tree_item_pieces(
    data: bytes, fmt: ObjectFormat, oid: bytes | None = None, piece: int | None = None
) -> Iterator[list[tuple[int, bytes, bytes]]]:
    """``tree_items`` in consecutive pieces of about ``piece`` bytes of the
    tree each: the same entries in the same order, never all of a big tree
    as tuples at once (a tree of a million entries is ~180 MB of them).
    Damage anywhere raises before the first piece, as ``tree_items`` does.
    (``piece``: TREE_PIECE by default.)"""
    if piece is None:
        piece = TREE_PIECE
    n = len(data)
    if n <= piece:
        yield tree_items(data, fmt, oid)
        return
    # First the pieces' bounds: the longest run of whole entries from each
    # bound within ``piece`` bytes (one regex match, no object per entry;
    # matching the whole tree at once would keep the regex engine's state
    # for every entry), an entry longer than a piece alone.
    patterns = tree_patterns(fmt.rawsz)
    run, one = patterns.whole.match, patterns.tokens.match
    bounds = [0]
    pos = 0
    while pos < n:
        m = run(data, pos, min(n, pos + piece))
        end = m.end() if m is not None else pos
        if end == pos:
            m = one(data, pos)
            if m is None:  # not a clean run of entries: the careful loop says where it breaks
                yield tree_items(data, fmt, oid)
                return
            end = m.end()
        bounds.append(end)
        pos = end
    for a, b in pairwise(bounds):
        yield tree_items(data[a:b], fmt, oid)


def tree_items_py(data: bytes, fmt: ObjectFormat, oid: bytes | None = None) -> list[tuple[int, bytes, bytes]]:
    """``tree_items`` in pure Python: a well-formed tree (checked whole by
    one C-speed match) is split by ``findall``; anything else goes through
    the careful loop below, which says where it breaks."""
    patterns = tree_patterns(fmt.rawsz)
    if patterns.whole.fullmatch(data) is not None:
        modes = GIT_MODES
        return [(modes.get(m) or int(m, 8) & _MODE_BITS, name, o) for m, name, o in patterns.entries.findall(data)]
    return _tree_items_careful(data, fmt, oid)


# --- the tree entry pattern ----------------------------------------------------
# ``<mode> <name>\0<id>``: the mode in octal digits (git's decoder refuses
# anything else), a name of at least one byte without NUL, the raw id.
# Every reader that scans trees in C builds its regex here.

_OCTAL = b"01234567"
_MODE = b"[" + _OCTAL + b"]+"
_NAME = rb"[^\0]+"


def _entry_source(rawsz: int, capture: str) -> bytes:
    """One entry's pattern, capturing the parts named in ``capture`` ("mni":
    mode, name, id)."""
    parts = (("m", _MODE), ("n", _NAME), ("i", rb".{%d}" % rawsz))
    mode, name, oid = (b"(" + p + b")" if key in capture else p for key, p in parts)
    return mode + b" " + name + b"\0" + oid


class TreePatterns(NamedTuple):
    """Compiled regexes over a tree's bytes for one id width."""

    whole: re.Pattern[bytes]  # fullmatch: every byte belongs to a well-formed entry
    entries: re.Pattern[bytes]  # findall: [(mode, name, id)]
    tokens: re.Pattern[bytes]  # findall: [each entry's bytes]
    ids: re.Pattern[bytes]  # findall: [id]


_TREE_PATTERNS: dict[int, TreePatterns] = {}


def tree_patterns(rawsz: int) -> TreePatterns:
    hit = _TREE_PATTERNS.get(rawsz)
    if hit is None:
        hit = _TREE_PATTERNS[rawsz] = TreePatterns(
            whole=re.compile(b"(?:" + _entry_source(rawsz, "") + b")*", re.DOTALL),
            entries=re.compile(_entry_source(rawsz, "mni"), re.DOTALL),
            tokens=re.compile(_entry_source(rawsz, ""), re.DOTALL),
            ids=re.compile(_entry_source(rawsz, "i"), re.DOTALL),
        )
    return hit


# git reads a mode into an unsigned int, wrapping (tree-walk.c get_mode); the
# stat functions also refuse anything wider.
_MODE_BITS = 0xFFFFFFFF


def tree_mode(raw: bytes) -> int | None:
    """The mode an entry spells, None unless it is octal digits (``int``
    alone would accept "+7", " 7", "0o7", "1_0"; 8 and 9 are not octal)."""
    if not raw or raw.strip(_OCTAL):
        return None
    return int(raw, 8) & _MODE_BITS


# The mode spellings git writes itself (anything else is odd: fsck looks closer).
GIT_MODES = {b"100644": 0o100644, b"40000": 0o40000, b"100755": 0o100755, b"120000": 0o120000, b"160000": 0o160000}


def _tree_items_careful(data: bytes, fmt: ObjectFormat, oid: bytes | None) -> list[tuple[int, bytes, bytes]]:
    rawsz = fmt.rawsz
    find = data.find
    n = len(data)
    pos = 0
    out: list[tuple[int, bytes, bytes]] = []
    append = out.append
    while pos < n:
        sp = find(b" ", pos)
        nul = find(b"\0", sp + 1) if sp >= 0 else -1
        if sp <= pos or nul < 0 or nul == sp + 1 or nul + 1 + rawsz > n:
            raise _corrupt(f"malformed tree entry at byte {pos}", oid)
        mode = tree_mode(data[pos:sp])
        if mode is None:
            raise _corrupt(f"malformed mode in tree entry at byte {pos}", oid)
        append((mode, data[sp + 1 : nul], data[nul + 1 : nul + 1 + rawsz]))
        pos = nul + 1 + rawsz
    return out


def tree_sort_key(name: bytes, mode: int) -> bytes:
    """Git's tree order compares a directory as if its name ended in '/'."""
    return name + b"/" if S_ISDIR(mode) else name
