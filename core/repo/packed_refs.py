"""The ``packed-refs`` file: ``<hex> SP <name> LF`` lines in name order, each
optionally followed by ``^<hex> LF`` (the object an annotated tag finally
points at), headed by ``# pack-refs with: TRAITS``.

:func:`parse_packed_refs` reads the whole file, recording each bad line as
a problem; :func:`find_packed_ref` answers for one name by searching for its
line, and says UNSURE when only the full parse can judge.
"""

from __future__ import annotations

import os
import re
from enum import Enum
from typing import Final, Literal

from packscope.core.errors import BadRefError
from packscope.core.oid import is_hex
from packscope.core.repo.ref_syntax import Ref, check_refname, ref_problem

PACKED_HEADER = b"# pack-refs with:"


class _Unsure(Enum):
    UNSURE = "unsure"


# find_packed_ref's answer when only the full parse can tell.
UNSURE: Final = _Unsure.UNSURE


def find_packed_ref(data: bytes, name: str, hexsz: int) -> Ref | Literal[_Unsure.UNSURE] | None:
    """``name``'s entry in packed-refs ``data`` as :func:`parse_packed_refs`
    would give it, found by searching for its line: None when no line names
    it, UNSURE when the line is not plainly good (a duplicate, bad hex, a bad
    peeled line, …), which the full parse then judges."""
    needle = b" " + os.fsencode(name) + b"\n"
    at = data.find(needle)
    if at < 0:
        # every entry line is "<hex> <name>\n"; an unterminated last line is not
        # an entry (a NUL ends a name where it is: the full parse judges)
        return UNSURE if b"\0" in data else None
    start = at - hexsz
    if data.find(needle, at + 1) >= 0 or start < 0 or (start and data[start - 1] != 0x0A):
        return UNSURE
    hexpart = data[start:at].decode("ascii", "replace")
    if not is_hex(hexpart) or not name.startswith("refs/") or not check_refname(name):
        return UNSURE
    peeled = None
    nxt = at + len(needle)
    if data.startswith(b"^", nxt):
        end = data.find(b"\n", nxt)
        value = data[nxt + 1 : end].decode("ascii", "replace")
        if end < 0 or len(value) != hexsz or not is_hex(value):
            return UNSURE
        peeled = bytes.fromhex(value)
    return Ref(name, bytes.fromhex(hexpart), None, peeled, "packed")


# The lines of a plainly good file after its header: "<hex> <name>\n", each
# optionally followed by "^<hex>\n", the name in the shape ref_syntax's quick
# match accepts (components of [A-Za-z0-9_.-], none empty or starting with
# "."); "..", a final "." and ".lock" are looked for in the whole file.
_NAME = rb"refs(?:/[A-Za-z0-9_-][A-Za-z0-9_.-]*)+"
_GOOD_LINES = {
    hexsz: re.compile(rb"([0-9a-fA-F]{%d}) (%s)\n(?:\^([0-9a-fA-F]{%d})\n)?" % (hexsz, _NAME, hexsz))
    for hexsz in (40, 64)
}
_tuple_new = tuple.__new__  # a Ref without the Python-level __new__ of named tuples


def parse_packed_refs(
    data: bytes, hexsz: int, path: str | os.PathLike[str]
) -> tuple[dict[str, Ref], frozenset[str], list[BadRefError]]:
    """(refs by name, header traits, problems).  A bad line is a problem,
    never fatal; a ``^`` line after a bad line is dropped with it."""
    quick = _parse_good_file(data, hexsz)
    if quick is not None:
        return quick
    return _parse_lines(data, hexsz, path)


def _parse_good_file(data: bytes, hexsz: int) -> tuple[dict[str, Ref], frozenset[str], list[BadRefError]] | None:
    """:func:`_parse_lines`' answer for a file in which every line is plainly
    good (the usual case: git wrote it), from one regex pass over the whole
    file; None for anything else, which the line-by-line parse then judges."""
    lines = _GOOD_LINES.get(hexsz)
    if lines is None:
        return None
    traits: frozenset[str] = frozenset()
    body = 0
    if data.startswith(PACKED_HEADER):
        body = data.find(b"\n") + 1
        if body == 0:
            return None  # an unterminated header: a problem to report
        traits = frozenset(data[len(PACKED_HEADER) : body - 1].decode("ascii", "replace").split())
    rest = data[body:]
    if b".." in rest or b".\n" in rest or b".lock\n" in rest or b".lock/" in rest:
        return None  # a name check_refname refuses (or that the lines judge)
    found = lines.findall(rest)
    # The matches are disjoint and in order: they cover the whole file
    # exactly when their lengths add up to it.
    size = sum(len(name) for _, name, _ in found) + len(found) * (hexsz + 2)
    size += sum(hexsz + 2 for _, _, peeled in found if peeled)
    if size != len(rest):
        return None
    fromhex = bytes.fromhex
    new = _tuple_new
    refs = {
        name: new(Ref, (name, fromhex(h.decode()), None, fromhex(p.decode()) if p else None, "packed"))
        for name, h, p in ((n.decode(), h, p) for h, n, p in found)
    }
    if len(refs) != len(found):
        return None  # a duplicate: the lines name it
    return refs, traits, []


def _parse_lines(
    data: bytes, hexsz: int, path: str | os.PathLike[str]
) -> tuple[dict[str, Ref], frozenset[str], list[BadRefError]]:
    """parse_packed_refs line by line, naming every problem (the reference
    of :func:`_parse_good_file`)."""
    refs: dict[str, Ref] = {}
    problems: list[BadRefError] = []
    traits: frozenset[str] = frozenset()
    last: str | None = None
    last_bad = False
    pos, line_no = 0, 0
    while pos < len(data):
        line_no += 1
        nl = data.find(b"\n", pos)
        start = pos
        if nl < 0:
            line, pos = data[start:], len(data)
        else:
            line, pos = data[start:nl], nl + 1

        def bad(why: str, line: bytes = line, start: int = start, line_no: int = line_no) -> None:
            problems.append(
                ref_problem(
                    f"packed-refs line {line_no}: {why}: {line[:120]!r}",
                    path=path,
                    offset=start,
                    line=line_no,
                    kind="ref-unparseable",
                )
            )

        if nl < 0:
            bad("unterminated last line")
            break
        if line_no == 1 and line.startswith(PACKED_HEADER):
            traits = frozenset(line[len(PACKED_HEADER) :].decode("ascii", "replace").split())
            continue
        if line.startswith(b"^"):
            peeled = line[1:].decode("ascii", "replace")
            if last_bad:
                continue
            if last is None:
                bad("peeled line without a ref before it")
            elif refs[last].peeled is not None:
                bad(f"second peeled line for {last}")
            elif len(peeled) != hexsz or not is_hex(peeled):
                bad(f"peeled value is not a {hexsz}-digit hex id")
            else:
                r = refs[last]
                refs[last] = Ref(r.name, r.oid, None, bytes.fromhex(peeled), "packed")
            continue
        hexpart, sp, rawname = line[:hexsz].decode("ascii", "replace"), line[hexsz : hexsz + 1], line[hexsz + 1 :]
        # git keeps the name as a C string: a NUL in it ends the name there
        name = os.fsdecode(rawname.split(b"\0", 1)[0])
        last, last_bad = None, True
        if len(hexpart) != hexsz or not is_hex(hexpart) or sp != b" ":
            bad(f"expected '<{hexsz} hex digits> <refname>'")
        elif not check_refname(name, allow_onelevel=False) or not name.startswith("refs/"):
            bad(f"invalid ref name {name!r}")
        elif name in refs:
            bad(f"duplicate entry for {name}")
        else:
            last_bad = False
            refs[name] = Ref(name, bytes.fromhex(hexpart), None, None, "packed")
            last = name
    return refs, traits, problems
