"""git-config files, read-only.

The syntax, as git reads it (``git help config``, "CONFIGURATION FILE"):

* ``[section]`` — section names are letters, digits, ``-`` and ``.``; they are
  case-insensitive (kept lower-cased here).
* ``[section "subsection"]`` — the subsection is case-sensitive and may hold
  anything but a newline; inside it ``\\"`` and ``\\\\`` escape, and any other
  backslash is dropped (``\\t`` reads as ``t``).
* ``[section.subsection]`` — the deprecated form; the subsection is lower-cased.
* ``name = value`` — names start with a letter, then letters, digits and ``-``;
  case-insensitive.  A name with no ``=`` is a boolean *true* with no value.
  A value is trimmed at both ends; runs of whitespace inside it are kept (each
  whitespace character becomes one space); ``"…"`` quotes keep whitespace and
  ``#``/``;``; escapes are ``\\n \\t \\b \\" \\\\``; a backslash at the end of a
  line continues the value on the next line.  Any other escape is an error.
* ``#`` and ``;`` start comments; a leading UTF-8 byte-order mark is skipped;
  CRLF line ends read as LF.
* A key may follow a section header on the same line (``[core] bare = true``).
* Keys may repeat: :meth:`Config.get` gives the last value (git's rule),
  :meth:`Config.get_all` every value in file order.

``include.path`` is followed like git does: the included file's entries appear
exactly where the directive is; a relative path is relative to the including
file's directory, ``~/`` and ``~user/`` expand, a missing file is skipped
silently (a directory, which an empty path names, is an error); nesting deeper than :data:`MAX_INCLUDE_DEPTH`, and any
include loop, raise :class:`~packscope.core.errors.ConfigError`.

Not supported, deliberately: ``[includeIf "…"]`` sections are *ignored* (their
conditions — gitdir, onbranch, hasconfig — depend on state this reader does not
model); each one skipped is listed in :attr:`Config.ignored_includes`.  The
``%(prefix)/`` path form is not expanded.  Only the files asked for are read:
no system or global config, no ``GIT_CONFIG_PARAMETERS``.

Values are bytes on disk; they are decoded as UTF-8 with ``surrogateescape``
so that nothing is lost.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple, overload

from packscope.core.errors import ConfigError

# git stops at 10 nested includes ("exceeded maximum include depth").
MAX_INCLUDE_DEPTH = 10

_TRUE = frozenset(("true", "yes", "on"))
_FALSE = frozenset(("false", "no", "off"))
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_SPACE = frozenset(b" \t\n\v\f\r")
_ESCAPES = {ord("n"): ord("\n"), ord("t"): ord("\t"), ord("b"): ord("\b"), ord('"'): ord('"'), ord("\\"): ord("\\")}
_NL = ord("\n")
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


class ConfigEntry(NamedTuple):
    """One ``name = value`` line.  ``value`` is None for a bare ``name``
    (boolean true).  ``section`` and ``key`` are lower-cased; ``subsection``
    is as written (None when absent)."""

    section: str
    subsection: str | None
    key: str
    value: str | None
    path: str | None
    line: int

    @property
    def name(self) -> str:
        """The dotted name ``git config --list`` prints."""
        if self.subsection is not None:
            return f"{self.section}.{self.subsection}.{self.key}"
        return f"{self.section}.{self.key}" if self.section else self.key


class IgnoredInclude(NamedTuple):
    """An ``[includeIf "CONDITION"] path = …`` this reader did not follow."""

    condition: str
    target: str | None
    path: str | None
    line: int


def _line_offset(data: bytes, line: int) -> int:
    """Byte offset where 1-based ``line`` starts (the end, past the last)."""
    pos = 0
    for _ in range(line - 1):
        nl = data.find(b"\n", pos)
        if nl < 0:
            return len(data)
        pos = nl + 1
    return pos


def _decode(b: bytes | bytearray) -> str:
    return bytes(b).decode("utf-8", "surrogateescape")


class _Parser:
    """One pass over one file's bytes.  Positions are byte offsets; line
    numbers count from 1 and name the line holding the offending byte (a
    newline belongs to the line it ends)."""

    def __init__(self, data: bytes, path: str | None) -> None:
        self.data = data
        self.path = path
        self.pos = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        self.line = 1
        self.eof = False

    # Line numbers follow git's reports: the count moves as soon as a newline
    # (or the end of the file) is read, so an error found *at* a newline names
    # the next line, except where git steps back (an unterminated quote).
    def getc(self) -> int:
        data, pos = self.data, self.pos
        if pos >= len(data):
            self.eof = True
            self.line += 1
            return _NL  # git reads the end of the file as a final newline
        c = data[pos]
        if c == 13 and pos + 1 < len(data) and data[pos + 1] == _NL:
            pos += 1
            c = _NL
        self.pos = pos + 1
        if c == _NL:
            self.line += 1
        return c

    def error(self, what: str, *, back: bool = False) -> ConfigError:
        line = self.line - 1 if back else self.line
        where = self.path or "<config>"
        return ConfigError(
            f"bad config line {line} in {where}: {what}",
            path=self.path,
            offset=_line_offset(self.data, line),
            remedy=f"Fix line {line} of {where} (git config --edit, or a text editor).",
            line=line,
        )

    def parse(self) -> Iterator[tuple[str, str | None, str, str | None, int]]:
        """(section, subsection, key, value, line) for each entry."""
        section, subsection = "", None
        while True:
            c = self.getc()
            if self.eof:
                return
            if c in _SPACE:
                continue
            if c in b"#;":
                self._skip_line()
                continue
            if c == ord("["):
                section, subsection = self._header()
                continue
            if not (65 <= c <= 90 or 97 <= c <= 122):
                raise self.error(f"unexpected character {chr(c)!r}" if 32 < c < 127 else "unexpected byte")
            line = self.line
            key, value = self._entry(c)
            yield section, subsection, key, value, line

    def _skip_line(self) -> None:
        while True:
            c = self.getc()
            if c == _NL:
                return

    def _header(self) -> tuple[str, str | None]:
        name = bytearray()
        while True:
            c = self.getc()
            if self.eof:
                raise self.error("unterminated section header")
            if c == ord("]"):
                break
            if c == _NL:
                raise self.error("newline inside a section header", back=True)
            if c in _SPACE:
                return self._extended_header(name)
            if not (chr(c).isascii() and (chr(c).isalnum() or c in b".-")):
                raise self.error("bad character in section name")
            name.append(c)
        if not name:
            raise self.error("empty section name")
        section, dot, legacy = _decode(name).lower().partition(".")
        return section, (legacy if dot else None)

    def _extended_header(self, name: bytearray) -> tuple[str, str | None]:
        c = self.getc()
        while c in _SPACE:
            if c == _NL:
                raise self.error("newline inside a section header", back=True)
            c = self.getc()
        if c != ord('"'):
            raise self.error('expected a quoted subsection: [section "subsection"]')
        sub = bytearray()
        while True:
            c = self.getc()
            if c == _NL:
                raise self.error("newline in subsection name", back=True)
            if c == ord('"'):
                break
            if c == ord("\\"):
                c = self.getc()
                if c == _NL:
                    raise self.error("newline in subsection name", back=True)
            sub.append(c)
        if self.getc() != ord("]"):
            raise self.error('expected "]" right after the subsection\'s closing quote')
        if not name:
            raise self.error("empty section name")
        section, dot, legacy = _decode(name).lower().partition(".")
        subsection = _decode(sub)
        return section, (f"{legacy}.{subsection}" if dot else subsection)

    def _entry(self, first: int) -> tuple[str, str | None]:
        name = bytearray((first,))
        while True:
            c = self.getc()
            if c < 128 and (chr(c).isalnum() or c == ord("-")):
                name.append(c)
            else:
                break
        while c in (32, 9):
            c = self.getc()
        key = _decode(name).lower()
        if c == _NL:
            return key, None
        if c != ord("="):
            raise self.error(f"expected '=' after {key!r}")
        return key, self._value()

    def _value(self) -> str:
        out = bytearray()
        quoted = in_comment = False
        spaces = 0
        while True:
            c = self.getc()
            if c == _NL:
                if quoted:
                    raise self.error("unterminated quoted value", back=True)
                return _decode(out)
            if in_comment:
                continue
            if not quoted and c in _SPACE:
                # Leading space is dropped; inner runs are replayed only if
                # something follows, so trailing space disappears.
                if out:
                    spaces += 1
                continue
            if not quoted and c in b"#;":
                in_comment = True
                continue
            if spaces:
                out += b" " * spaces
                spaces = 0
            if c == ord("\\"):
                c = self.getc()
                if c == _NL:
                    continue  # line continuation
                mapped = _ESCAPES.get(c)
                if mapped is None:
                    raise self.error("unknown escape sequence in value (use \\\\ for a backslash)")
                out.append(mapped)
            elif c == ord('"'):
                quoted = not quoted
            else:
                out.append(c)


class Config:
    """Parsed entries of one or more config files, in reading order."""

    __slots__ = ("_index", "entries", "files", "ignored_includes")

    def __init__(
        self,
        entries: Iterable[ConfigEntry] = (),
        files: Iterable[str] = (),
        ignored_includes: Iterable[IgnoredInclude] = (),
    ) -> None:
        self.entries: tuple[ConfigEntry, ...] = tuple(entries)
        self.files: tuple[str, ...] = tuple(files)  # every file actually read, includes too
        self.ignored_includes: tuple[IgnoredInclude, ...] = tuple(ignored_includes)
        index: dict[tuple[str, str | None, str], list[ConfigEntry]] = {}
        for e in self.entries:
            index.setdefault((e.section, e.subsection, e.key), []).append(e)
        self._index = index

    # --- construction -------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, includes: bool = True, missing_ok: bool = False) -> Config:
        """Read one file (and, by default, what it includes)."""
        return cls.from_files([path], includes=includes, missing_ok=missing_ok)

    @classmethod
    def from_files(
        cls, paths: Iterable[str | os.PathLike[str]], *, includes: bool = True, missing_ok: bool = False
    ) -> Config:
        """Read several files in order; later files win for :meth:`get`."""
        reader = _Reader(includes)
        for p in paths:
            reader.read_file(os.path.abspath(os.fspath(p)), depth=0, missing_ok=missing_ok, chain=())
        return cls(reader.entries, reader.files, reader.ignored)

    @classmethod
    def from_bytes(cls, data: bytes, *, path: str | None = None, includes: bool = False) -> Config:
        """Parse text held in memory.  Relative includes need ``path``."""
        reader = _Reader(includes and path is not None)
        reader.read_data(data, path, depth=0, chain=(path,) if path else ())
        return cls(reader.entries, reader.files, reader.ignored)

    def merged(self, other: Config) -> Config:
        """Self's entries followed by other's (other wins for get)."""
        return Config(
            self.entries + other.entries, self.files + other.files, self.ignored_includes + other.ignored_includes
        )

    # --- queries ------------------------------------------------------------

    def _found(self, section: str, key: str, subsection: str | None) -> list[ConfigEntry]:
        return self._index.get((section.lower(), subsection, key.lower()), [])

    def entry(self, section: str, key: str, subsection: str | None = None) -> ConfigEntry | None:
        """The entry that decides the value (the last), or None."""
        found = self._found(section, key, subsection)
        return found[-1] if found else None

    def get(self, section: str, key: str, subsection: str | None = None) -> str | None:
        """The last value, or None when the key is absent.  A bare ``key``
        (no ``=``) reads as ``""`` here, as ``git config --get`` prints it; use
        :meth:`get_bool` for its boolean meaning (true)."""
        e = self.entry(section, key, subsection)
        if e is None:
            return None
        return "" if e.value is None else e.value

    def get_all(self, section: str, key: str, subsection: str | None = None) -> list[str]:
        return ["" if e.value is None else e.value for e in self._found(section, key, subsection)]

    def get_bool(
        self, section: str, key: str, subsection: str | None = None, default: bool | None = None
    ) -> bool | None:
        """git's booleans: true/yes/on/1 (and a bare key), false/no/off/0 and
        the empty string; any other integer is true if non-zero."""
        e = self.entry(section, key, subsection)
        if e is None:
            return default
        return parse_bool(e.value, where=e)

    @overload
    def get_int(self, section: str, key: str, subsection: str | None = None, *, default: int) -> int: ...
    @overload
    def get_int(
        self, section: str, key: str, subsection: str | None = None, default: int | None = None
    ) -> int | None: ...
    def get_int(self, section: str, key: str, subsection: str | None = None, default: int | None = None) -> int | None:
        """An integer with an optional k/m/g suffix (powers of 1024);
        ``0x`` hex and leading-zero octal are read as C's strtol does."""
        e = self.entry(section, key, subsection)
        if e is None:
            return default
        return parse_int(e.value, where=e)

    def has(self, section: str, key: str, subsection: str | None = None) -> bool:
        return bool(self._found(section, key, subsection))

    def subsections(self, section: str) -> list[str]:
        """Subsection names of ``section``, in first-seen order."""
        s = section.lower()
        seen: dict[str, None] = {}
        for e in self.entries:
            if e.section == s and e.subsection is not None:
                seen.setdefault(e.subsection, None)
        return list(seen)

    def items(self, section: str, subsection: str | None = None) -> list[ConfigEntry]:
        s = section.lower()
        return [e for e in self.entries if e.section == s and e.subsection == subsection]

    def __iter__(self) -> Iterator[ConfigEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"Config({len(self.entries)} entries from {list(self.files)})"


# --- typed values --------------------------------------------------------------


def _value_error(kind: str, value: str | None, where: ConfigEntry | None, why: str = "") -> ConfigError:
    name = where.name if where else "value"
    loc = f" (line {where.line} of {where.path})" if where and where.path else ""
    extra = f": {why}" if why else ""
    return ConfigError(
        f"bad {kind} config value {value!r} for {name!r}{loc}{extra}",
        path=where.path if where else None,
        remedy=f"Set {name} to a valid {kind} (git config {name} VALUE).",
        line=where.line if where else None,
    )


def parse_bool(value: str | None, *, where: ConfigEntry | None = None) -> bool:
    if value is None:
        return True
    v = value.lower()
    if v in _TRUE:
        return True
    if v in _FALSE or v == "":
        return False
    try:
        return parse_int(value, where=where) != 0
    except ConfigError:
        raise _value_error("boolean", value, where) from None


def parse_int(value: str | None, *, where: ConfigEntry | None = None) -> int:
    if value is None:
        raise _value_error("numeric", value, where, "missing value")
    text = value.lstrip(" \t\n\v\f\r")
    sign = 1
    if text[:1] in ("+", "-"):
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    # C's strtol with base 0: 0x… is hex, a leading 0 is octal.
    if text[:2].lower() == "0x":
        digits_ok, base, body = "0123456789abcdefABCDEF", 16, text[2:]
    elif text[:1] == "0":
        digits_ok, base, body = "01234567", 8, text
    else:
        digits_ok, base, body = "0123456789", 10, text
    n = 0
    while n < len(body) and body[n] in digits_ok:
        n += 1
    if n == 0:
        raise _value_error("numeric", value, where, "not a number")
    unit = body[n:].lower()
    if unit not in _UNITS:
        raise _value_error("numeric", value, where, "invalid unit")
    result = sign * int(body[:n], base) * _UNITS[unit]
    if not INT64_MIN <= result <= INT64_MAX:
        raise _value_error("numeric", value, where, "out of range")
    return result


# --- reading files, following includes --------------------------------------------


class _Reader:
    def __init__(self, includes: bool) -> None:
        self.includes = includes
        self.entries: list[ConfigEntry] = []
        self.files: list[str] = []
        self.ignored: list[IgnoredInclude] = []

    def read_file(self, path: str, *, depth: int, missing_ok: bool, chain: tuple[str, ...]) -> None:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            if missing_ok:
                return
            raise ConfigError(
                f"config file not found: {path}",
                path=path,
                remedy="Check the path, or that the repository is complete.",
            ) from None
        except OSError as e:
            raise ConfigError(
                f"cannot read config file {path}: {e.strerror}",
                path=path,
                remedy="Check the file's permissions (or that it is not a directory).",
            ) from None
        self.read_data(data, path, depth=depth, chain=(*chain, path))

    def read_data(self, data: bytes, path: str | None, *, depth: int, chain: tuple[str, ...]) -> None:
        if path is not None:
            self.files.append(path)
        parser = _Parser(data, path)
        for section, subsection, key, value, line in parser.parse():
            entry = ConfigEntry(section, subsection, key, value, path, line)
            self.entries.append(entry)
            if not self.includes:
                continue
            if section == "include" and subsection is None and key == "path":
                self._include(entry, depth, chain)
            elif section == "includeif" and subsection is not None and key == "path":
                self.ignored.append(IgnoredInclude(subsection, value, path, line))

    def _include(self, entry: ConfigEntry, depth: int, chain: tuple[str, ...]) -> None:
        def refuse(what: str, remedy: str) -> ConfigError:
            return ConfigError(
                f"{what} (line {entry.line} of {entry.path})", path=entry.path, remedy=remedy, line=entry.line
            )

        if entry.value is None:
            raise refuse("missing value for 'include.path'", "Give include.path a file name, or remove the line.")
        target = os.path.expanduser(entry.value)
        if not os.path.isabs(target):
            if entry.path is None:
                raise ConfigError(
                    "relative include.path in config that has no file of its own",
                    remedy="Use an absolute include.path.",
                )
            target = os.path.join(os.path.dirname(entry.path), target)
        target = os.path.abspath(target)
        if target in chain:
            cycle = " -> ".join((*chain, target))
            raise refuse(
                f"include loop: {cycle}", "Remove the include.path that points back at a file already being read."
            )
        if depth + 1 > MAX_INCLUDE_DEPTH:
            raise refuse(
                f"exceeded maximum include depth ({MAX_INCLUDE_DEPTH}) while including {target}",
                "Flatten the chain of include.path files.",
            )
        if os.path.isdir(target):
            # An empty path lands here too (it names the including file's directory); git refuses it.
            raise refuse(f"include.path names a directory: {target}", "Point include.path at a file.")
        if not os.path.exists(target):
            return  # git ignores includes of files that do not exist
        self.read_file(target, depth=depth + 1, missing_ok=True, chain=chain)


def expand_path(value: str, relative_to: str | os.PathLike[str] | None = None) -> Path:
    """A path-valued setting: ``~`` expanded, relative to ``relative_to``."""
    p = os.path.expanduser(value)
    if relative_to is not None and not os.path.isabs(p):
        p = os.path.join(os.fspath(relative_to), p)
    return Path(os.path.abspath(p))
