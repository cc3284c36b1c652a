"""Refs listed as ``git for-each-ref`` lists them, and the facts each row shows.

* Which refs: every ref under ``refs/`` (symbolic refs followed to the id
  they finally name; one that names nothing is left out, as git leaves it
  out), matched against patterns as git 2.39 matches them — a pattern
  matches a ref it is a prefix of up to a ``/`` (``refs/heads`` and
  ``refs/heads/`` both match ``refs/heads/main``), or as a glob where ``*``
  and ``?`` stay inside one path component and ``**`` crosses them.
* Sorted by refname (bytewise) unless sort keys say otherwise: each key
  (``refname``, ``committerdate``, ``objectname``, ``objecttype``,
  ``subject``), reversed with a leading ``-``; ties fall back to the refname,
  ascending, as git's comparison does.  The last key given is the first
  compared (git's ``--sort`` order).
* ``--format`` atoms: ``refname``, ``refname:short`` (git's
  shortest unambiguous name), ``objectname``, ``objectname:short``,
  ``objecttype``, ``committerdate`` (git's default date format; empty
  unless the object is a commit), ``subject``, ``HEAD`` (``*`` for the
  checked-out branch), ``upstream`` and ``upstream:short`` (a branch's
  remote-tracking ref, from ``branch.<name>.remote``/``merge`` and the
  remote's fetch refspecs), ``%%`` and ``%xx`` hex escapes; any other atom is
  refused with git's message.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from packscope.core.errors import PackscopeError
from packscope.core.history.log_format import format_date
from packscope.core.objects import parse_commit, parse_tag
from packscope.core.repo.ref_syntax import DWIM_RULES

if TYPE_CHECKING:
    from packscope.core.repo.config import Config
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.revision import ObjectSource

DEFAULT_FORMAT = "%(objectname) %(objecttype)\t%(refname)"
SORT_KEYS = ("refname", "committerdate", "objectname", "objecttype", "subject")
ATOMS = (
    "refname",
    "refname:short",
    "objectname",
    "objectname:short",
    "objecttype",
    "committerdate",
    "subject",
    "HEAD",
    "upstream",
    "upstream:short",
)


class RefRow(NamedTuple):
    """One listed ref: its name, the id it names and that object's facts."""

    name: str
    oid: bytes
    type: str
    committer_time: int | None  # the commit's committer date (None: not a commit)
    committer_tz: str
    subject: bytes  # a commit's or tag's subject


# --- patterns ------------------------------------------------------------------------------


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A wildmatch pattern with WM_PATHNAME as a regular expression."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":  # "**/": zero or more whole components
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern.startswith(("[!", "[^"), i) else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("(?!/)[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z", re.S)


def ref_matcher(patterns: Sequence[str]) -> Callable[[str], bool]:
    """git for-each-ref's pattern test: prefix by whole components, or glob."""
    if not patterns:
        return lambda name: True
    globs = [_glob_regex(p) for p in patterns]

    def matches(name: str) -> bool:
        for p, g in zip(patterns, globs, strict=True):
            if name.startswith(p) and (len(name) == len(p) or name[len(p)] == "/" or p.endswith("/")):
                return True
            if g.match(name):
                return True
        return False

    return matches


# --- the rows ---------------------------------------------------------------------------------


_SIGNATURE = re.compile(rb"^-----BEGIN (?:PGP SIGNATURE|PGP MESSAGE|SIGNED MESSAGE|SSH SIGNATURE)-----", re.M)


def tag_message(message: bytes) -> bytes:
    """A tag's message without the signature git appends to it."""
    m = _SIGNATURE.search(message)
    return message if m is None else message[: m.start()]


def ref_subject(message: bytes) -> bytes:
    """ref-filter's ``%(subject)``: from the first non-empty line to the
    first blank line, trailing line ends dropped, each newline a space (CR
    of a CRLF dropped).  Unlike log's ``%s``, spaces at line ends stay."""
    msg = message.lstrip(b"\n")
    ends = [e for e in (msg.find(b"\n\n"), msg.find(b"\r\n\r\n")) if e >= 0]
    sub = msg[: ends[0]] if ends else msg
    sub = sub.rstrip(b"\r\n")
    return sub.replace(b"\r\n", b"\n").replace(b"\n", b" ")


def object_facts(store: ObjectSource, oid: bytes) -> tuple[str, int | None, str, bytes]:
    """(type, committer time or None, its zone, subject) of one object."""
    kind, data = store.read(oid)
    if kind == "commit":
        c = parse_commit(data, store.fmt, oid)
        subject = ref_subject(c.message)
        if c.committer is None:
            return kind, None, "+0000", subject
        return kind, c.committer.time, c.committer.tz, subject
    if kind == "tag":
        return kind, None, "+0000", ref_subject(tag_message(parse_tag(data, store.fmt, oid).message))
    return kind, None, "+0000", b""


def list_refs(
    refs: RefStore, store: ObjectSource, patterns: Sequence[str] = (), *, details: bool = True
) -> list[RefRow]:
    """The refs ``git for-each-ref PATTERN…`` lists, sorted by name, each
    with its object's facts (``details=False``: its type only, from the
    object's header — no date, no subject).  A ref whose object cannot be
    read is left out."""
    matches = ref_matcher(patterns)
    out = []
    for ref in refs.iter_refs("refs/"):
        if not matches(ref.name):
            continue
        try:
            oid = ref.oid if ref.symref is None else refs.resolve(ref.name)
            if oid is None:
                continue
            if details:
                kind, when, tz, subject = object_facts(store, oid)
            else:
                kind, when, tz, subject = store.read_header(oid)[0], None, "+0000", b""
        except PackscopeError:
            continue  # git: "ignoring broken ref" / a missing object
        out.append(RefRow(ref.name, oid, kind, when, tz, subject))
    return out


def _sorter(key: str) -> Callable[[RefRow], Any]:
    return lambda row: _sort_value(row, key)


def _sort_value(row: RefRow, key: str) -> Any:
    if key == "refname":
        return row.name.encode("utf-8", "surrogateescape")
    if key == "committerdate":
        return row.committer_time or 0
    if key == "objectname":
        return row.oid
    if key == "objecttype":
        return row.type
    return row.subject


def needs_details(pieces: Sequence[str | tuple[str]], sort_keys: Sequence[str]) -> bool:
    """Whether a format or the sort keys need more than each object's type."""
    wanted = {p[0] for p in pieces if isinstance(p, tuple)} | {k.lstrip("-") for k in sort_keys}
    return bool(wanted & {"committerdate", "subject"})


def check_sort_key(text: str) -> tuple[str, bool]:
    """(key, reversed) for one ``--sort`` value; ValueError for what is not known."""
    reverse = text.startswith("-")
    key = text[1:] if reverse else text
    if key not in SORT_KEYS:
        raise ValueError(f"unknown field name: {key}")
    return key, reverse


def sort_rows(rows: list[RefRow], keys: Sequence[str]) -> list[RefRow]:
    """``rows`` in ``--sort`` order (the last key given compared first);
    equal rows by refname, ascending."""
    out = sorted(rows, key=lambda r: r.name.encode("utf-8", "surrogateescape"))
    # Python's sort is stable: sorting by the least significant key first and
    # the refname tie-break before everything gives git's comparison.
    for text in keys:
        key, reverse = check_sort_key(text)
        out.sort(key=_sorter(key), reverse=reverse)
    return out


# --- short names ----------------------------------------------------------------------------------


def shorten_refname(refs: RefStore, name: str) -> str:
    """git 2.39's ``%(refname:short)`` (strict: core.warnAmbiguousRefs is on):
    the name without the most specific rule's prefix such that no other rule
    turns it into an existing ref."""
    # The last rule (refs/remotes/%s/HEAD) never wins in git 2.39: its sscanf
    # reads the whole rest, which the refs/remotes/%s rule names again.
    rules = DWIM_RULES[:-1]
    for i in range(len(rules) - 1, 0, -1):
        prefix = rules[i][:-2]
        if not name.startswith(prefix) or len(name) == len(prefix):
            continue
        short = name[len(prefix) :]
        if not any(j != i and _exists(refs, rule.format(short)) for j, rule in enumerate(DWIM_RULES)):
            return short
    return name


def _exists(refs: RefStore, name: str) -> bool:
    try:
        refs.resolve(name)
    except PackscopeError:
        return False
    return True


# --- upstreams ------------------------------------------------------------------------------------


def upstream_of(config: Config, name: str) -> str | None:
    """The remote-tracking ref a branch's ``branch.<name>.remote`` and
    ``branch.<name>.merge`` name (``%(upstream)``): the merge ref through
    the remote's fetch refspecs, or the merge ref itself for remote ``.``;
    None for a ref that is not a branch or has none."""
    if not name.startswith("refs/heads/"):
        return None
    branch = name[len("refs/heads/") :]
    remote = config.get("branch", "remote", branch)
    merge = config.get("branch", "merge", branch)
    if not remote or not merge:
        return None
    if remote == ".":
        return merge
    for spec in config.get_all("remote", "fetch", remote):
        mapped = _map_refspec(spec, merge)
        if mapped is not None:
            return mapped
    return None


def _map_refspec(spec: str, ref: str) -> str | None:
    """``ref`` through one fetch refspec (``[+]src:dst``, ``*`` at most once each), or None."""
    spec = spec.removeprefix("+")
    if spec.startswith("^") or ":" not in spec:
        return None
    src, _, dst = spec.partition(":")
    if "*" not in src:
        return dst if src == ref and dst else None
    head, _, tail = src.partition("*")
    if not (ref.startswith(head) and ref.endswith(tail) and len(ref) >= len(head) + len(tail)):
        return None
    middle = ref[len(head) : len(ref) - len(tail)]
    return dst.replace("*", middle, 1)


# --- formats ----------------------------------------------------------------------------------------

_ATOM = re.compile(r"%\(([^)]*)\)|%%|%([0-9a-fA-F]{2})")


def compile_format(fmt: str) -> list[str | tuple[str]]:
    """The format as literal pieces and (atom,) tuples; ValueError (git's
    "unknown field name") for an atom not supported."""
    out: list[str | tuple[str]] = []
    at = 0
    for m in _ATOM.finditer(fmt):
        out.append(fmt[at : m.start()])
        at = m.end()
        if m.group(0) == "%%":
            out.append("%")
        elif m.group(2) is not None:
            out.append(chr(int(m.group(2), 16)))
        else:
            atom = m.group(1)
            if atom not in ATOMS:
                raise ValueError(f"unknown field name: {atom.partition(':')[0]}")
            out.append((atom,))
    out.append(fmt[at:])
    return [p for p in out if p != ""]


def format_row(
    pieces: list[str | tuple[str]],
    row: RefRow,
    *,
    refs: RefStore,
    abbrev: Callable[[bytes], str],
    head: str | None = None,
    config: Config | None = None,
) -> bytes:
    """One row in a compiled format (bytes: subjects are the repository's)."""
    out = []
    for p in pieces:
        if isinstance(p, str):
            out.append(p.encode("utf-8", "surrogateescape"))
            continue
        atom = p[0]
        if atom == "refname":
            value: str | bytes = row.name
        elif atom == "refname:short":
            value = shorten_refname(refs, row.name)
        elif atom == "objectname":
            value = row.oid.hex()
        elif atom == "objectname:short":
            value = abbrev(row.oid)
        elif atom == "objecttype":
            value = row.type
        elif atom == "committerdate":
            value = "" if row.committer_time is None else format_date(row.committer_time, row.committer_tz)
        elif atom == "subject":
            value = row.subject
        elif atom.startswith("upstream"):
            up = upstream_of(config, row.name) if config is not None else None
            value = "" if up is None else shorten_refname(refs, up) if atom.endswith(":short") else up
        else:  # HEAD
            value = "*" if head == row.name else " "
        out.append(value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape"))
    return b"".join(out)
