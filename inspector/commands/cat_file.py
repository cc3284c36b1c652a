"""`packscope cat-file`: git cat-file's modes, answered by core's store.

`-t` type, `-s` size, `-e` exists (exit status only), `-p` pretty (trees as
git prints them), `--batch-check[=FORMAT]`, `--batch[=FORMAT]`,
`--batch-all-objects`.  OBJECT (and each line of a batch) is any revision:
an id, an abbreviation, a ref name, `REV^{tree}`, `REV~2`, `REV:path`, ….
An object a partial clone's promisor remote promises but that is absent is
`missing`, as with git and GIT_NO_LAZY_FETCH=1: nothing is fetched.  Format atoms: %(objectname) %(objecttype)
%(objectsize) %(objectsize:disk) %(deltabase) %(rest).
"""

from __future__ import annotations

import binascii
import gc
import os
import re
import sys
from collections.abc import Iterable, Iterator

from packscope.core.errors import (
    AmbiguousObjectError,
    BadObjectIdError,
    BadPackError,
    BadRevisionError,
    CorruptObjectError,
    LookupFailedError,
    PackscopeError,
    PromisedObjectError,
)
from packscope.core.oid import is_hex
from packscope.core.repo.session import open_session
from packscope.inspector.commands import command_parser
from packscope.inspector.commands.store_options import add_store_options

DEFAULT_FORMAT = "%(objectname) %(objecttype) %(objectsize)"
ATOMS = ("objectname", "objecttype", "objectsize", "objectsize:disk", "deltabase", "rest")
_ATOM_RE = re.compile(r"%\(([^)]*)\)")
_NAME_END = re.compile(r"[ \t]+")


def register(sub) -> None:
    p = command_parser(sub, "cat-file", __doc__, "object contents, types and sizes, like git cat-file")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("-t", dest="mode", action="store_const", const="type", help="print the object's type")
    mode.add_argument("-s", dest="mode", action="store_const", const="size", help="print the object's size")
    mode.add_argument("-e", dest="mode", action="store_const", const="exists", help="exit 0 if the object exists")
    mode.add_argument("-p", dest="mode", action="store_const", const="pretty", help="pretty-print the object")
    for flag, what in (
        ("--batch-check", "for each id on stdin, print a line in FORMAT"),
        ("--batch", "like --batch-check, followed by the contents"),
    ):
        dest = flag[2:].replace("-", "_")
        mode.add_argument(flag, dest=dest, nargs="?", const=DEFAULT_FORMAT, default=None, metavar="FORMAT", help=what)
    p.add_argument("--batch-all-objects", action="store_true", help="every object in the store, sorted by id")
    p.add_argument("object", nargs="?", help="object for -t/-s/-e/-p")
    add_store_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    batch_format = args.batch if args.batch is not None else args.batch_check
    if batch_format is None and args.batch_all_objects:
        print("packscope cat-file: --batch-all-objects needs --batch or --batch-check", file=sys.stderr)
        return 129
    if batch_format is None and (args.mode is None or args.object is None):
        print(
            "packscope cat-file: give one of -t, -s, -e, -p with an OBJECT, or --batch/--batch-check", file=sys.stderr
        )
        return 129
    session = open_session(policy=args.policy, quick=args.quick, loose_strategy=args.loose_strategy)
    try:
        if session.store.git_fatal is not None:
            raise session.store.git_fatal  # git dies opening the object store (exit 128)
        if batch_format is not None:
            return run_batch(session, batch_format, contents=args.batch is not None, all_objects=args.batch_all_objects)
        return run_single(session, args.mode, args.object)
    finally:
        session.close()


def resolve(session, text: str, verify: bool = True) -> bytes:
    """Full id, or any revision (abbreviations included) in git's order: a
    ref of that name wins over an abbreviation.  BadRevision, Missing,
    Promised or Ambiguous errors are raised (with ``verify=False``, not for
    the final object being absent)."""
    fmt = session.fmt
    if len(text) == fmt.hexsz and is_hex(text):
        return bytes.fromhex(text)  # existence is checked by the caller's read
    return session.resolve(text, verify=verify)


def run_single(session, mode: str, text: str) -> int:
    store = session.store
    out = sys.stdout.buffer
    try:
        # -e: a name that resolves (a ref to a missing commit) answers 1, as git's does
        oid = resolve(session, text, verify=mode != "exists")
    except (BadRevisionError, LookupFailedError) as e:
        # git's -e answers 1 only for a full id that is absent; a name that
        # does not resolve is fatal (128) in every mode, in git's words.
        if e.message.startswith("path "):
            raise
        raise BadRevisionError(
            f"Not a valid object name {text} ({e.message})", path=e.path, oid=e.oid, remedy=e.remedy
        ) from e
    if mode == "exists":
        return 0 if store.contains(oid) else 1
    oid = session.objects.target(oid)  # as git: type, size and contents of a replace ref's object
    if mode in ("type", "size"):
        type_name, size = store.read_header(oid)
        out.write(f"{type_name if mode == 'type' else size}\n".encode())
        return 0
    type_name, data = store.read(oid)
    if type_name == "tree":
        quote = session.repo.config.get_bool("core", "quotepath")
        for piece in tree_lines(data, session.fmt, quote_path=quote is not False):
            out.write(piece)
    else:
        out.write(data)
    return 0


def format_tree(data: bytes, fmt, quote_path: bool = True) -> bytes:
    """Tree entries as `git cat-file -p` prints them (see ``tree_lines``)."""
    return b"".join(tree_lines(data, fmt, quote_path))


def tree_lines(data: bytes, fmt, quote_path: bool = True) -> Iterator[bytes]:
    """Tree entries as `git cat-file -p` prints them: mode, type, id, TAB,
    name (C-quoted when it holds control characters, quotes or backslashes,
    and bytes above 0x7f unless core.quotePath is false) — the lines of a
    piece of the tree at a time (core's tree_item_pieces), so that a tree of
    a million entries is never a million tuples and lines at once.  A
    damaged tree raises before the first piece."""
    from binascii import hexlify

    from packscope.core.objects import mode_display, mode_type, tree_item_pieces  # (-t, -s, -e never parse)

    special = (_QUOTE_HIGH if quote_path else _QUOTE_LOW).search
    prefixes: dict[int, bytes] = {}
    for items in tree_item_pieces(data, fmt):
        lines: list[bytes] = []
        append = lines.append
        for mode, name, oid in items:
            prefix = prefixes.get(mode)
            if prefix is None:
                prefix = prefixes[mode] = f"{mode_display(mode)} {mode_type(mode)} ".encode()
            if special(name) is not None:
                name = quote_name(name, quote_path)
            append(b"%s%s\t%s\n" % (prefix, hexlify(oid), name))
        yield b"".join(lines)


# The bytes quote_name escapes: control characters, DEL, '"' and '\\', and
# (core.quotePath, the default) every byte above 0x7f.
_QUOTE_LOW = re.compile(rb'[\x00-\x1f"\\\x7f]')
_QUOTE_HIGH = re.compile(rb'[\x00-\x1f"\\\x7f-\xff]')


_C_ESCAPES = {
    7: b"\\a",
    8: b"\\b",
    9: b"\\t",
    10: b"\\n",
    11: b"\\v",
    12: b"\\f",
    13: b"\\r",
    0x22: b'\\"',
    0x5C: b"\\\\",
}


def quote_name(name: bytes, quote_high: bool = True) -> bytes:
    """A path as git shows it: unchanged when nothing needs quoting, else
    in double quotes with C escapes (``\\t``, ``\\"``, octal ``\\303``)."""

    def special(b: int) -> bool:
        return b < 0x20 or b in (0x22, 0x5C, 0x7F) or (quote_high and b >= 0x80)

    if not any(special(b) for b in name):
        return name
    out = bytearray(b'"')
    for b in name:
        if not special(b):
            out.append(b)
        else:
            out += _C_ESCAPES.get(b) or b"\\%03o" % b
    out += b'"'
    return bytes(out)


def parse_format(fmt_text: str):
    """Literal pieces and atom names, alternating; unknown atoms are an error."""
    pieces = []
    pos = 0
    for m in _ATOM_RE.finditer(fmt_text):
        atom = m.group(1)
        if atom not in ATOMS:
            raise BadObjectIdError(
                f"unknown format element: %({atom})", remedy="Use one of: " + ", ".join(f"%({a})" for a in ATOMS)
            )
        pieces.append(fmt_text[pos : m.start()])
        pieces.append(atom)
        pos = m.end()
    pieces.append(fmt_text[pos:])
    return pieces


class _Fatal(Exception):
    """Damage git's cat-file dies of (128) in the middle of a batch; not a
    PackscopeError, so the per-object handlers let it through."""

    def __init__(self, error: PackscopeError) -> None:
        super().__init__(error.message)
        self.error = error


def _salvage(store, oid: bytes, loc, error: PackscopeError, header_only: bool):
    """git's answer for a damaged object: for a loose one, what git prints
    (see core's loose_salvage), or _Fatal where git dies at once; for a
    packed one whose header reads but whose content does not (and no other
    copy stands in), the header line, then git's death.  Damage that keeps
    even the header from reading re-raises: the object is "missing", as git
    says."""
    from packscope.core.store.loose_salvage import SalvagedLoose, salvage_loose

    loc = loc or store.locate(oid)
    if loc is None:
        raise error
    if loc.pack is not None or not error.kind.startswith("loose-"):
        if header_only:
            raise error
        type_name, size, _, _ = store.object_info(oid, False, loc)  # raises (missing) when the header is damaged too
        return SalvagedLoose(type_name, size, b"", error)
    if error.kind == "loose-directory":
        raise _Fatal(error)  # git dies mapping it, whatever is asked
    try:
        return salvage_loose(loc.path, oid, header_only=header_only)
    except CorruptObjectError as e:
        if e.kind == "loose-type":
            raise _Fatal(e) from None
        raise


def run_batch(session, fmt_text: str, *, contents: bool, all_objects: bool) -> int:
    # A batch allocates many short-lived objects (ids, locations, cache
    # keys) and makes few reference cycles: collections walk what start-up
    # left alive only once (freeze), and come a hundred times less often.
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(100 * threshold[0], *threshold[1:])
    try:
        return _run_batch(session, fmt_text, contents=contents, all_objects=all_objects)
    except _Fatal as f:
        sys.stdout.flush()
        raise f.error from None
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _run_batch(session, fmt_text: str, *, contents: bool, all_objects: bool) -> int:
    store = session.store
    pieces = parse_format(fmt_text)
    atoms = set(pieces[1::2])
    storage = bool(atoms & {"objectsize:disk", "deltabase"})
    out = _BatchOutput(sys.stdout.buffer)
    write = out.write
    null_hex = session.fmt.null_hex

    # Named objects are read through replace refs, as git does; git turns
    # them off for --batch-all-objects.
    replaced = None if all_objects or not session.replace_refs else session.objects.target

    def emit(oid: bytes, rest: str, loc=None) -> None:
        values = {"objectname": oid.hex(), "rest": rest}
        if replaced is not None and replaced(oid) != oid:
            oid, loc = replaced(oid), None
        data = None
        fatal = None
        # One lookup answers type, size and storage; existence is checked even
        # when the format asks for the name only (as git does).
        try:
            if contents and not storage:
                type_name, data = store.read(oid, loc)  # one lookup gives type, size and content
                values["objecttype"], values["objectsize"] = type_name, str(len(data))
            else:
                type_name, size, disk, base = store.object_info(oid, storage, loc)
                values["objecttype"], values["objectsize"] = type_name, str(size)
                if storage:
                    values["objectsize:disk"] = str(disk)
                    values["deltabase"] = base.hex() if base else null_hex
                if contents:
                    type_name, data = store.read(oid, loc)
        except (CorruptObjectError, BadPackError) as e:
            try:
                salvaged = _salvage(store, oid, loc, e, header_only=not contents)
            except _Fatal:
                out.flush()  # the answers before this one are printed, as git's
                raise
            values["objecttype"], values["objectsize"] = salvaged.type_name, str(salvaged.size)
            data, fatal = (salvaged.shown if contents else None), salvaged.fatal
        line = "".join(p if i % 2 == 0 else values[p] for i, p in enumerate(pieces))
        write(line.encode("utf-8", "surrogateescape") + b"\n")
        if data is not None:
            write(data)
            if fatal is not None:
                out.flush()
                raise _Fatal(fatal)
            write(b"\n")

    if all_objects:
        for oid in store.all_object_ids():
            try:
                emit(oid, "")
            except PackscopeError as e:
                # Damage stays local here too: report it as git does, go on.
                out.flush()
                from packscope.inspector.cli import report_error

                report_error(e)
                write(f"{oid.hex()} missing\n".encode())
        out.flush()
        return 0
    promised_noted = False
    hexsz, rawsz = session.fmt.hexsz, session.fmt.rawsz
    split_rest = "rest" in atoms
    empty_tree = store.empty_tree
    # In the default format, an object found in a pack is answered here
    # from the store's packed_headers (--batch-check) or packed_read
    # (--batch), with no lookup per object; anything else (loose, damaged,
    # replaced, other formats) goes through emit.
    plain_lines = replaced is None and pieces == parse_format(DEFAULT_FORMAT)

    def answer(name: str, rest: str, oid: bytes | None, loc) -> None:
        nonlocal promised_noted
        try:
            if oid is None:
                oid = resolve(session, name)
            elif loc is None:
                raise store.missing_error(oid)
            emit(oid, rest, loc)
        except AmbiguousObjectError:
            write(f"{name} ambiguous\n".encode("utf-8", "surrogateescape"))
        except PromisedObjectError:
            write(f"{name} missing\n".encode("utf-8", "surrogateescape"))
            if not promised_noted:
                promised_noted = True
                out.flush()
                print(
                    "packscope: note: objects this partial clone's promisor remote promises are reported "
                    "missing; packscope never fetches",
                    file=sys.stderr,
                )
        except (LookupFailedError, BadObjectIdError):
            write(f"{name} missing\n".encode("utf-8", "surrogateescape"))
        except PackscopeError as e:
            # Damage stays local: report this object, go on with the next.
            if e.kind in ("bad-revision",):
                write(f"{name} missing\n".encode("utf-8", "surrogateescape"))
            else:
                out.flush()
                from packscope.inspector.cli import report_error

                report_error(e)
                write(f"{name} missing\n".encode("utf-8", "surrogateescape"))

    # Lines are answered a chunk at a time: whatever stdin has ready is
    # looked up as one batch (core's locate_many), and the answers are
    # flushed before waiting for more — so a script that writes one id and
    # waits for its answer is served at once, and a pipe of 40k ids costs
    # one freshness check per chunk rather than one per miss.
    plain_misses = not store.partial_clone  # else a miss may be promised: answer() notes it

    def one(name: str, rest: str, oid: bytes | None, loc) -> None:
        if not name:
            write(b" missing\n")
            return
        if oid == empty_tree:
            oid = loc = None  # git's cached object: answered by the store, stored or not
        if loc is None and oid is not None and plain_misses:
            write(f"{name} missing\n".encode())
            return
        answer(name, rest, oid, loc)

    for lines in _stdin_chunks(sys.stdin.buffer):
        oids = None if split_rest else _hex_ids(lines, hexsz, rawsz)
        if oids is not None:
            # Every line is a full id (the common input): one pass, lines
            # made here for objects found in packs, the rest through one().
            locs = store.locate_many(oids)
            # What the store answers at once for an object found in a pack:
            # (type, size) for --batch-check, (type, content) for --batch.
            if not plain_lines:
                found: Iterable = [None] * len(oids)
            elif contents:
                found = store.packed_reads(locs)  # lazily, a run of objects at a time
            else:
                found = store.packed_headers(locs)
            short: list[bytes] = []  # answer lines, written as one
            add = short.append
            for raw, oid, loc, got in zip(lines, oids, locs, found, strict=True):
                if oid == empty_tree:
                    pass
                elif got is not None and not contents:
                    add(b"%s %s %d\n" % (raw.lower(), _TYPE_BYTES[got[0]], got[1]))
                    continue
                elif loc is None and plain_misses:
                    add(raw + b" missing\n")
                    continue
                if short:
                    write(b"".join(short))
                    short.clear()
                if got is not None and oid != empty_tree:  # (--batch: contents)
                    out.write_object(b"%s %s %d\n" % (raw.lower(), _TYPE_BYTES[got[0]], len(got[1])), got[1])
                else:
                    one(raw.decode("ascii"), "", oid, loc)
            if short:
                write(b"".join(short))
            out.flush()
            continue
        parsed = []
        wanted: list[bytes] = []
        for raw in lines:
            text = raw.decode("utf-8", "surrogateescape")
            # git's rule: the whole line is the name, unless the format has
            # %(rest): then the name ends at the first space or tab and the
            # rest starts after the whitespace run.
            name, rest = text, ""
            if split_rest:
                m = _NAME_END.search(text)
                if m:
                    name, rest = text[: m.start()], text[m.end() :]
            oid = None
            k = -1
            if len(name) == hexsz:
                try:
                    oid = bytes.fromhex(name)
                except ValueError:
                    oid = None
                if oid is not None and len(oid) != rawsz:
                    oid = None  # fromhex skips whitespace: not a plain id
                if oid is not None:
                    k = len(wanted)
                    wanted.append(oid)
            parsed.append((name, rest, oid, k))
        locs = store.locate_many(wanted) if wanted else []
        for name, rest, oid, k in parsed:
            one(name, rest, oid, locs[k] if k >= 0 else None)
        out.flush()
    out.flush()
    return 0


_TYPE_BYTES = {"commit": b"commit", "tree": b"tree", "blob": b"blob", "tag": b"tag"}


def _hex_ids(lines: list[bytes], hexsz: int, rawsz: int) -> list[bytes] | None:
    """Each line's raw id when every line is a full hex id, else None."""
    if not lines or set(map(len, lines)) != {hexsz}:
        return None
    try:
        raw = binascii.unhexlify(b"".join(lines))  # unlike fromhex, no whitespace skipped
    except binascii.Error:
        return None
    return [raw[i : i + rawsz] for i in range(0, len(raw), rawsz)]


def _stdin_chunks(stream, size: int = 1 << 20):
    """Lists of the complete lines ``stream`` has ready (without their
    newlines), as they arrive; a last line without a newline comes last."""
    pending = b""
    read = getattr(stream, "read1", stream.read)
    while True:
        data = read(size)
        if not data:
            if pending:
                yield [pending]
            return
        lines = (pending + data).split(b"\n")
        pending = lines.pop()
        if lines:
            yield lines


class _BatchOutput:
    """Answers gathered and written with one system call per flush.

    sys.stdout.buffer may be unbuffered (python -u, PYTHONUNBUFFERED): then
    every answer line would be its own write(2).  Large contents go out as
    they come, so memory stays bounded by one object.  When the stream has
    a file descriptor, contents go out with writev(2), not copied into one
    buffer first (they are most of a --batch's bytes); short lines are
    joined.
    """

    LIMIT = 1 << 17
    IOV_MAX = 1024  # POSIX's minimum for writev's vector length

    def __init__(self, raw) -> None:
        self.raw = raw
        self.parts: list[bytes | memoryview] = []
        self.size = 0
        self.fd: int | None = None
        if hasattr(os, "writev"):
            try:
                self.fd = raw.fileno()
            except (AttributeError, OSError, ValueError):  # io.BytesIO, a test's capture
                self.fd = None

    def write_object(self, header: bytes, data: bytes) -> None:
        """A --batch answer: header line, contents, newline."""
        self.parts += (header, data, b"\n")
        self.size += len(data) + len(header) + 1
        if self.size >= self.LIMIT:
            self.flush()

    def write(self, data: bytes) -> None:
        self.parts.append(data)
        self.size += len(data)
        if self.size >= self.LIMIT:
            self.flush()

    def flush(self) -> None:
        parts = self.parts
        if parts:
            if self.fd is None or self.size < 512 * len(parts):  # short lines: one copy costs less
                self.raw.write(b"".join(parts))
            else:
                self.raw.flush()  # anything written to the stream itself goes first
                self._writev(parts)
            parts.clear()
            self.size = 0
        self.raw.flush()

    def _writev(self, parts: list[bytes | memoryview]) -> None:
        assert self.fd is not None
        i, n = 0, len(parts)
        while i < n:
            batch = parts[i : i + self.IOV_MAX]
            written = os.writev(self.fd, batch)
            if written == sum(map(len, batch)):
                i += len(batch)
                continue
            while i < n and written >= len(parts[i]):
                written -= len(parts[i])
                i += 1
            if written:  # a part went out in part (a pipe that was full): the rest of it next
                parts[i] = memoryview(parts[i])[written:]
