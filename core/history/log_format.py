"""Formatting commits as ``git log`` prints them.

* :func:`format_medium` — git's default ``medium`` format, byte for byte
  (without decorations, which git omits when not writing to a terminal).
* :class:`UserFormat` — ``--format=`` strings.  The placeholders supported
  are listed in ``_ATOMS``/``_PERSON``; a placeholder git knows but this
  module does not (``%ar``, ``%d``, ``%C(...)``, ...) raises ValueError at
  parse time instead of printing something different from git, and one git
  does not know stays literal, as in git.
* :func:`render_log` — a whole log: separators between medium entries, a
  terminator after each ``tformat`` entry.

Abbreviated ids come from an ``abbrev(oid) -> str`` callable, so the object
store can make them unique (packscope.core.history.abbrev has git's rules: by the store's
prefix search, or over a sorted list of ids).

Messages in another ``encoding`` are converted to UTF-8 as git's default
``i18n.logOutputEncoding`` does.  A mailmap (packscope.core.repo.mailmap) maps the
medium format's Author lines when the log asks for it (``log.mailmap``,
``--use-mailmap``), and ``%aN %aE %aL %cN %cE %cL`` always, as in git; the
mapping applies to names and emails after that conversion.
"""

from __future__ import annotations

import codecs
import unicodedata
from binascii import hexlify
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from packscope.core.errors import LookupFailedError
from packscope.core.history.abbrev import FALLBACK_ABBREV, SortedAbbreviator, StoreAbbreviator, default_abbrev_len
from packscope.core.objects import Commit, Ident, parse_commit, parse_ident
from packscope.core.repo.object_view import GitView

if TYPE_CHECKING:
    from packscope.core.repo.mailmap import Mailmap
    from packscope.core.store.odb import ObjectStore

Abbrev = Callable[[bytes], str]

# A compiled --format: literal bytes, or a placeholder (its letters) with
# its magic prefix ("", "+", "-" or " ").
FormatOp = tuple[Literal["lit"], bytes, str] | tuple[Literal["atom"], str, str]


class Walked(Protocol):
    """A commit as a walk gives it (history.WalkedCommit)."""

    @property
    def oid(self) -> bytes: ...

    @property
    def tree(self) -> bytes: ...

    @property
    def parents(self) -> tuple[bytes, ...]: ...


W = TypeVar("W", bound=Walked)

# Abbreviations live in packscope.core.history.abbrev; these names stay importable from here.
__all__ = [
    "FALLBACK_ABBREV",
    "SortedAbbreviator",
    "StoreAbbreviator",
    "UserFormat",
    "default_abbrev_len",
    "format_date",
    "format_medium",
    "render_log",
    "subject_and_body",
]


# --- dates -----------------------------------------------------------------------

_DAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_TIME_T_MAX = (1 << 63) - 1


def _civil(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day count from 1970-01-01, proleptic
    Gregorian, with no datetime range limits."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def _tm(time: int, tz: str) -> tuple[int, int, int, int, int, int, int, int]:
    """Broken-down local time of the ident, and git's integer zone."""
    try:
        tzv = int(tz)
    except ValueError:
        tzv = 0
    if time > _TIME_T_MAX:  # git's date_overflows(): show the epoch in UTC
        time, tzv = 0, 0
    a = abs(tzv)
    minutes = (a // 100) * 60 + a % 100
    t = time + (minutes if tzv >= 0 else -minutes) * 60
    days, secs = divmod(t, 86400)
    y, m, d = _civil(days)
    return y, m, d, secs // 3600, secs // 60 % 60, secs % 60, (days + 4) % 7, tzv


def format_date(time: int, tz: str) -> str:
    """git's default date format in the ident's own zone:
    ``Thu Sep 13 12:26:40 2020 +0200``."""
    y, m, d, hh, mm, ss, wday, tzv = _tm(time, tz)
    return f"{_DAYS[wday]} {_MONTHS[m - 1]} {d} {hh:02d}:{mm:02d}:{ss:02d} {y} {tzv:+05d}"


def format_date_iso(time: int, tz: str) -> str:
    y, m, d, hh, mm, ss, _, tzv = _tm(time, tz)
    return f"{y:04d}-{m:02d}-{d:02d} {hh:02d}:{mm:02d}:{ss:02d} {tzv:+05d}"


def format_date_iso_strict(time: int, tz: str) -> str:
    y, m, d, hh, mm, ss, _, tzv = _tm(time, tz)
    sign = "+" if tzv >= 0 else "-"
    # git 2.39 writes UTC as +00:00 (later versions write Z)
    return f"{y:04d}-{m:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}{sign}{abs(tzv) // 100:02d}:{abs(tzv) % 100:02d}"


def format_date_short(time: int, tz: str) -> str:
    y, m, d, *_ = _tm(time, tz)
    return f"{y:04d}-{m:02d}-{d:02d}"


# --- message helpers (git's pretty.c rules) ---------------------------------------

_WS = b" \t\n\r"  # git's isspace: no \v or \f


def _lines(msg: bytes) -> list[bytes]:
    """Lines with their newline, cut at the first NUL as git's C strings are."""
    nul = msg.find(b"\0")
    if nul >= 0:
        msg = msg[:nul]
    return msg.splitlines(keepends=True) if b"\r" not in msg else _split_lf(msg)


def _split_lf(msg: bytes) -> list[bytes]:
    out = [line + b"\n" for line in msg.split(b"\n")]
    out[-1] = out[-1][:-1]
    return [line for line in out if line]


def _blank(line: bytes) -> bool:
    return not line.strip(_WS)


def subject_and_body(message: bytes) -> tuple[bytes, bytes]:
    """``%s`` and ``%b``: the first paragraph with its lines right-trimmed and
    joined by spaces, and everything after the blank lines that follow it."""
    lines = _lines(message)
    i = 0
    while i < len(lines) and _blank(lines[i]):
        i += 1
    subject = []
    while i < len(lines) and not _blank(lines[i]):
        subject.append(lines[i].rstrip(_WS))
        i += 1
    while i < len(lines) and _blank(lines[i]):
        i += 1
    return b" ".join(subject), b"".join(lines[i:])


def _reencode(text: bytes, encoding: bytes | None) -> bytes:
    """Convert from the commit's ``encoding`` to UTF-8; unknown encodings and
    undecodable bytes leave the text as it is (git's iconv fallback)."""
    if not encoding or not text:
        return text
    name = encoding.decode("ascii", "replace").strip()
    try:
        info = codecs.lookup(name)
        if info.name == "utf-8":
            return text
        return text.decode(info.name).encode("utf-8")
    except (LookupError, UnicodeError, ValueError):
        return text


def _display_width(segment: bytes) -> int:
    """git's utf8_strnwidth: display columns, ANSI colour sequences skipped;
    invalid UTF-8 counts one column per byte."""
    try:
        text = segment.decode("utf-8")
    except UnicodeDecodeError:
        return len(segment)
    width = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\x1b" and text[i + 1 : i + 2] == "[":
            j = i + 2
            while j < len(text) and text[j] in "0123456789;":
                j += 1
            if j < len(text) and text[j] == "m":
                i = j + 1
                continue
        o = ord(ch)
        if o < 32 or 0x7F <= o < 0xA0 or unicodedata.combining(ch) or unicodedata.category(ch) in ("Me", "Mn", "Cf"):
            pass
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            width += 2
        else:
            width += 1
        i += 1
    return width


def _expand_tabs(line: bytes, tabwidth: int = 8) -> bytes:
    if b"\t" not in line:
        return line
    # Every segment but the first starts at a tab stop, so the padding after
    # one depends on its own width only.
    *segs, last = line.split(b"\t")
    out = []
    for seg in segs:
        out.append(seg)
        out.append(b" " * (tabwidth - _display_width(seg) % tabwidth))
    out.append(last)
    return b"".join(out)


# --- medium ---------------------------------------------------------------------------


def format_medium(
    oid: bytes,
    commit: Commit,
    abbrev: Abbrev,
    parents: Iterable[bytes] | None = None,
    mailmap: Mailmap | None = None,
) -> bytes:
    """One commit in git's default format, ending with a single newline.
    ``parents`` are those the walk shows (default: the commit's own);
    ``mailmap`` (a packscope.core.repo.mailmap.Mailmap) maps the Author lines."""
    parents = tuple(commit.parents if parents is None else parents)
    enc = commit.encoding
    out = [b"commit " + oid.hex().encode() + b"\n"]
    if len(parents) > 1:
        out.append(b"Merge: " + " ".join(abbrev(p) for p in parents).encode() + b"\n")
    for ident in _author_lines(commit):
        name, email = _reencode(ident.name, enc), _reencode(ident.email, enc)
        if mailmap:
            name, email = mailmap.map(name, email)
        out.append(b"Author: %s <%s>\n" % (name, email))
        out.append(b"Date:   " + format_date(ident.time, ident.tz).encode() + b"\n")
    out.append(b"\n")
    lines = _lines(_reencode(commit.message, enc))
    i = 0
    while i < len(lines) and _blank(lines[i]):
        i += 1
    for line in lines[i:]:
        out.append(b"    " + _expand_tabs(line.rstrip(_WS)) + b"\n")
    text = b"".join(out).rstrip(_WS)  # git trims the whole entry, then ends it with one newline
    return text + b"\n"


def _author_lines(commit: Commit) -> Iterator[Ident]:
    # git prints an Author block for every author header (normally one).
    if commit.author is not None:
        yield commit.author
    for name, value in commit.extra_headers:
        if name == b"author":
            ident, _ = parse_ident(value.split(b"\n", 1)[0])
            if ident is not None:
                yield ident


# --- user formats --------------------------------------------------------------------

_ATOMS = {"H", "h", "T", "t", "P", "p", "s", "b", "B", "e", "n", "%"}
_PERSON = {"n", "e", "t", "d", "i", "I", "s", "l", "N", "E", "L"}
# Placeholders git knows that are not implemented here: refusing them beats
# printing something git would not.
_GIT_KNOWS = set("CwmdDSgNfG<>(")
_PERSON_GIT_KNOWS = set("Drh")


class UserFormat:
    """A parsed ``--format`` string.  ``terminator`` is True for tformat
    semantics (a newline after every entry), False for ``format:``
    (a newline between entries)."""

    def __init__(self, spec: str | bytes, mailmap: Mailmap | None = None) -> None:
        self.mailmap = mailmap  # for %aN %aE %aL %cN %cE %cL (None: unmapped)
        if isinstance(spec, str):
            spec = spec.encode("utf-8", "surrogateescape")
        if spec.startswith(b"format:"):
            self.terminator = False
            spec = spec[7:]
        elif spec.startswith(b"tformat:"):
            self.terminator = True
            spec = spec[8:]
        elif b"%" in spec or not spec:
            self.terminator = True
        else:
            raise ValueError(f"unsupported --pretty format {spec!r} (only medium and format strings)")
        self.empty = not spec
        self.ops = _compile(spec)
        # Only ids asked for (%H %h %T %t %P %p): the walk knows them all,
        # so a log need not read its commits at all.
        self.needs_commit = any(kind == "atom" and value not in _WALK_ATOMS for kind, value, _ in self.ops)
        self.maps_idents = any(kind == "atom" and value[1:] in ("N", "E", "L") for kind, value, _ in self.ops)
        # %a?/%c? read the commit's idents; without them a commit is read without its idents parsed
        self.needs_idents = any(kind == "atom" and value[:1] in ("a", "c") for kind, value, _ in self.ops)

    def format(
        self,
        oid: bytes,
        commit: Commit | None,
        abbrev: Abbrev,
        parents: Iterable[bytes] | None = None,
        tree: bytes | None = None,
    ) -> bytes:
        """One entry.  ``commit`` may be None when not :attr:`needs_commit`
        (then ``parents`` and ``tree`` must be given)."""
        if parents is None or tree is None:
            if commit is None:
                raise ValueError("a format without the commit needs its parents and tree")
            parents = commit.parents if parents is None else parents
            tree = commit.tree if tree is None else tree
        ctx = _Context(oid, commit, abbrev, tuple(parents), tree, self.mailmap)
        out = bytearray()
        for op in self.ops:
            if op[0] == "lit":
                out += op[1]
                continue
            _, value, magic = op
            start = len(out)
            text = ctx.expand(value)
            if text is None:  # git leaves a placeholder it cannot fill as it was
                out += b"%" + magic.encode() + value.encode()
                continue
            out += text
            if magic == "-" and len(out) == start:
                while out.endswith(b"\n"):
                    del out[-1]
            elif magic == "+" and len(out) != start:
                out[start:start] = b"\n"
            elif magic == " " and len(out) != start:
                out[start:start] = b" "
        return bytes(out)


def _compile(spec: bytes) -> list[FormatOp]:
    ops: list[FormatOp] = []
    lit = bytearray()
    i = 0
    n = len(spec)
    while i < n:
        c = spec[i]
        if c != 0x25:  # '%'
            lit.append(c)
            i += 1
            continue
        j = i + 1
        magic = ""
        if j < n and spec[j : j + 1] in (b"+", b"-", b" "):
            magic = spec[j : j + 1].decode()
            j += 1
        atom = _atom_at(spec, j)
        if atom is None:
            if j < n and (
                chr(spec[j]) in _GIT_KNOWS
                or (chr(spec[j]) in "ac" and j + 1 < n and chr(spec[j + 1]) in _PERSON_GIT_KNOWS)
            ):
                raise ValueError(f"format placeholder {spec[i : j + 3]!r} is not supported by packscope")
            lit.append(0x25)  # unknown to git too: printed as is
            i += 1
            continue
        if atom == "n" and not magic:
            lit += b"\n"
        elif atom == "%" and not magic:
            lit += b"%"
        elif atom.startswith("x"):
            lit += bytes.fromhex(atom[1:])
        else:
            if lit:
                ops.append(("lit", bytes(lit), ""))
                lit = bytearray()
            ops.append(("atom", atom, magic))
        i = j + len(atom)
    if lit:
        ops.append(("lit", bytes(lit), ""))
    return ops


def _atom_at(spec: bytes, j: int) -> str | None:
    if j >= len(spec):
        return None
    c = chr(spec[j])
    if c in ("a", "c") and j + 1 < len(spec) and chr(spec[j + 1]) in _PERSON:
        return c + chr(spec[j + 1])
    if c == "x":
        h = spec[j + 1 : j + 3]
        if len(h) == 2 and all(ch in b"0123456789abcdefABCDEF" for ch in h):
            return "x" + h.decode()
        return None
    if c in _ATOMS:
        return c
    return None


_WALK_ATOMS = frozenset("HhTtPp")


class _Context:
    __slots__ = ("_msg", "abbrev", "commit", "mailmap", "oid", "parents", "tree")

    def __init__(
        self,
        oid: bytes,
        commit: Commit | None,
        abbrev: Abbrev,
        parents: tuple[bytes, ...],
        tree: bytes,
        mailmap: Mailmap | None = None,
    ) -> None:
        self.mailmap = mailmap
        self.oid = oid
        self.commit = commit
        self.abbrev = abbrev
        self.parents = parents
        self.tree = tree
        self._msg: tuple[bytes, bytes] | None = None

    def message_parts(self, c: Commit) -> tuple[bytes, bytes]:
        if self._msg is None:
            self._msg = subject_and_body(_reencode(c.message, c.encoding))
        return self._msg

    def expand(self, atom: str) -> bytes | None:
        if atom == "H":
            return self.oid.hex().encode()
        if atom == "h":
            return self.abbrev(self.oid).encode()
        if atom == "T":
            return self.tree.hex().encode()
        if atom == "t":
            return self.abbrev(self.tree).encode()
        if atom == "P":
            return " ".join(p.hex() for p in self.parents).encode()
        if atom == "p":
            return " ".join(self.abbrev(p) for p in self.parents).encode()
        if atom == "n":
            return b"\n"
        if atom == "%":
            return b"%"
        c = self.commit
        if c is None:  # UserFormat.needs_commit: every other placeholder reads it
            raise ValueError(f"%{atom} needs the commit")
        if atom == "s":
            return self.message_parts(c)[0]
        if atom == "b":
            return self.message_parts(c)[1]
        if atom == "B":
            lines = _lines(_reencode(c.message, c.encoding))
            return b"".join(lines)
        if atom == "e":
            return c.encoding or b""
        # %a? / %c?: the *last* author/committer header, as git's format code reads it
        ident = _last_ident(c, b"author" if atom[0] == "a" else b"committer")
        part = atom[1]
        # Without a parsable ident, or without a date, git prints nothing for
        # the parts its fallback knows and the placeholder itself otherwise.
        if ident is None:
            return b"" if part in "netdDri" else None
        if not ident.has_date and part in "tdiIs":
            return b"" if part in "tdDri" else None
        enc = c.encoding
        name, email = _reencode(ident.name, enc), _reencode(ident.email, enc)
        if part in "NEL" and self.mailmap:
            name, email = self.mailmap.map(name, email)
        if part in "nN":
            return name
        if part in "eE":
            return email
        if part in "lL":
            return email.split(b"@", 1)[0]
        if part == "t":
            return str(ident.time).encode()
        if part == "d":
            return format_date(ident.time, ident.tz).encode()
        if part == "i":
            return format_date_iso(ident.time, ident.tz).encode()
        if part == "I":
            return format_date_iso_strict(ident.time, ident.tz).encode()
        if part == "s":
            return format_date_short(ident.time, ident.tz).encode()
        raise AssertionError(atom)


def _last_ident(commit: Commit, which: bytes) -> Ident | None:
    ident = commit.author if which == b"author" else commit.committer
    for name, value in commit.extra_headers:
        if name == which:  # a later header wins even when it is broken
            ident = parse_ident(value.split(b"\n", 1)[0])[0]
    return ident


# --- whole logs ------------------------------------------------------------------------


def render_log(
    store: ObjectStore | GitView,
    walked: Iterable[Walked],
    *,
    abbrev: Abbrev | None = None,
    pretty: str | bytes | None = None,
    mailmap: Mailmap | None = None,
    map_authors: bool = False,
) -> Iterator[bytes]:
    """The bytes of ``git log`` for walked commits (anything with ``oid``,
    ``tree`` and ``parents``, e.g. history.WalkedCommit), one chunk per
    commit.  Commits are read only when the format shows more than ids.
    ``abbrev`` defaults to the store's own (packscope.core.history.abbrev.StoreAbbreviator),
    made only if an abbreviation is asked for.  ``mailmap`` maps ``%aN``-style
    placeholders, and the medium format's Author lines when ``map_authors``
    (git's ``log.mailmap``/``--use-mailmap``)."""
    user = None if pretty in (None, "medium", b"medium") else UserFormat(pretty, mailmap)
    medium_map = mailmap if map_authors else None
    if abbrev is None:
        abbrev = _LazyAbbrev(store)
    if user is not None and not user.needs_commit:
        yield from _render_ids(walked, user, abbrev)
        return
    first = True
    for entry in walked:
        try:
            _, data = store.read(entry.oid)
        except LookupFailedError:
            if user is None:  # git has printed the commit line when it finds the body missing
                yield (b"" if first else b"\n") + b"commit " + hexlify(entry.oid) + b"\n"
            raise
        commit = parse_commit(data, store.fmt, entry.oid, user is None or user.needs_idents)
        if user is None:
            text = format_medium(entry.oid, commit, abbrev, entry.parents, medium_map)
            yield text if first else b"\n" + text
        elif user.terminator:
            if not user.empty:
                yield user.format(entry.oid, commit, abbrev, entry.parents) + b"\n"
        else:
            text = user.format(entry.oid, commit, abbrev, entry.parents)
            yield text if first else b"\n" + text
        first = False


def log_entries(
    store: ObjectStore | GitView,
    walked: Iterable[W],
    *,
    abbrev: Abbrev | None = None,
    pretty: str | bytes | None = None,
    mailmap: Mailmap | None = None,
    map_authors: bool = False,
) -> Iterator[tuple[W, bytes]]:
    """Each walked commit with its entry's text alone, without what
    separates or ends entries (``git log --graph`` draws beside each line,
    packscope.core.history.graph_lines): the default format's text ends
    with its newline, a ``--format`` entry as the format leaves it.
    Arguments as :func:`render_log`'s."""
    user = None if pretty in (None, "medium", b"medium") else UserFormat(pretty, mailmap)
    medium_map = mailmap if map_authors else None
    if abbrev is None:
        abbrev = _LazyAbbrev(store)
    for entry in walked:
        if user is not None and not user.needs_commit:
            yield entry, user.format(entry.oid, None, abbrev, entry.parents, entry.tree)
            continue
        _, data = store.read(entry.oid)
        commit = parse_commit(data, store.fmt, entry.oid, user is None or user.needs_idents)
        if user is None:
            yield entry, format_medium(entry.oid, commit, abbrev, entry.parents, medium_map)
        else:
            yield entry, user.format(entry.oid, commit, abbrev, entry.parents)


def full_ids_format(pretty: str | bytes | None) -> bool:
    """Whether ``pretty`` prints each commit's full id on a line of its own
    and nothing else (``%H``, ``tformat:%H``): :func:`render_id_runs` prints
    it from the walk's ids alone (packscope.core.history.walk.walk_ids)."""
    if pretty in (None, "medium", b"medium"):
        return False
    try:
        user = UserFormat(pretty)
    except ValueError:
        return False
    return user.terminator and user.ops == [("atom", "H", "")]


def render_id_runs(runs: Iterable[bytes], rawsz: int) -> Iterator[bytes]:
    """``git log --format=%H``'s bytes for runs of raw ids (each run the ids
    of one or more commits concatenated, ``rawsz`` bytes each): one chunk
    per run, the ids in hex, a newline after each."""
    for run in runs:
        if run:
            yield hexlify(run, b"\n", rawsz) + b"\n"


def _render_ids(walked: Iterable[Walked], user: UserFormat, abbrev: Abbrev) -> Iterator[bytes]:
    """A format of ids only, from what the walk knows; ``%H`` alone (the
    commonest scripting format) skips the general formatter."""
    if user.terminator and user.ops == [("atom", "H", "")]:
        for entry in walked:
            yield hexlify(entry.oid) + b"\n"
        return
    first = True
    for entry in walked:
        text = user.format(entry.oid, None, abbrev, entry.parents, entry.tree)
        if user.terminator:
            if not user.empty:
                yield text + b"\n"
        else:
            yield text if first else b"\n" + text
        first = False


class _LazyAbbrev:
    """The store's abbreviator, made on first use (counting the packed
    objects opens every index: not worth it for a log that prints no %h)."""

    def __init__(self, store: ObjectStore | GitView) -> None:
        self.store = store
        self._abbrev: Abbrev | None = None

    def __call__(self, oid: bytes) -> str:
        if self._abbrev is None:
            # ids are the store's, replaced or not: a GitView's are its store's
            store = self.store.store if isinstance(self.store, GitView) else self.store
            self._abbrev = StoreAbbreviator(store)
        return self._abbrev(oid)
