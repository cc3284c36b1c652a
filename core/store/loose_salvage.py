"""What git's ``cat-file --batch`` makes of a damaged loose object.

``read_loose`` refuses any loose file whose content disagrees with its header.
git (2.39) is less uniform, and a batch must follow it object by object:

* a header naming an unknown type (``blurb 3``) is fatal before anything is
  printed, in ``--batch`` and ``--batch-check`` alike;
* any other unreadable header (bad size, no NUL, not zlib, an empty file)
  makes the object ``missing`` and the batch goes on;
* blobs are streamed: everything the zlib stream yields is printed, even past
  the declared size, and trailing bytes after the stream are ignored; a stream
  that breaks off loses the 16 KiB read it broke in (git writes whole reads
  only) and the batch dies after the bytes already written;
* other types are read whole into a buffer of the declared size: more bytes
  than declared, a broken stream or bytes after it are fatal after the header
  line; fewer bytes (a stream that ends early but cleanly) print the buffer
  anyway, the missing tail as NULs (git leaves it uninitialised).
"""

from __future__ import annotations

from dataclasses import dataclass

from zlib_ng import zlib_ng

from packscope.core.errors import CorruptObjectError, PackscopeError
from packscope.core.store.loose import HEADER_MAX, OBJECT_TYPES, _corrupt, _read_file, parse_loose_header
from packscope.core.store.zlib_errors import ZlibError

STREAM_READ = 16384  # git's stream_blob_to_fd buffer: it writes whole reads only
FEED = 512  # input fed per inflate call, so output before a zlib error is kept
MAX_EXCESS = 64 << 20  # a blob streamed past its declared size stops here (git has no bound)


@dataclass(frozen=True, slots=True)
class SalvagedLoose:
    type_name: str
    size: int  # as the header declares it
    shown: bytes  # the content git prints after the header line
    fatal: PackscopeError | None  # git dies (128) after printing ``shown``, with no newline


@dataclass(slots=True)
class _Inflated:
    out: bytes
    eof: bool
    trailing: bool
    error: str | None


def _inflate(data: bytes, limit: int) -> _Inflated:
    """As much of ``data``'s zlib stream as inflates, up to ``limit`` bytes
    (one more, to notice excess); a zlib error keeps what came before it."""
    d = zlib_ng.decompressobj()
    parts: list[bytes] = []
    got = 0
    error = None
    pos = 0
    try:
        while pos < len(data) and not d.eof and got <= limit:
            buf = data[pos : pos + FEED]
            pos += len(buf)
            while buf and not d.eof and got <= limit:
                chunk = d.decompress(buf, limit + 1 - got)
                parts.append(chunk)
                got += len(chunk)
                buf = d.unconsumed_tail
    except ZlibError as e:
        error = str(e)
    return _Inflated(b"".join(parts), d.eof, d.eof and (bool(d.unused_data) or pos < len(data)), error)


def _header_type_error(head: bytes, path: str, oid: bytes | None) -> CorruptObjectError | None:
    """git's "invalid object type": a well-formed header naming no known type."""
    nul = head.find(b"\0", 0, HEADER_MAX)
    if nul < 0:
        return None
    type_bytes, sp, digits = head[:nul].partition(b" ")
    if sp and type_bytes not in OBJECT_TYPES and digits.isdigit() and (len(digits) == 1 or digits[0] != 0x30):
        err = _corrupt(f"invalid object type {type_bytes[:16]!r}", "loose-type", path, oid)
        return err
    return None


def salvage_loose(path: str, oid: bytes | None = None, header_only: bool = False) -> SalvagedLoose:
    """git's view of the loose file at ``path``.  Raises CorruptObjectError:
    kind ``loose-type`` where git dies at once, any other kind where git
    reports the object missing.  ``header_only``: type and size are enough
    (``--batch-check``); ``shown`` is then empty."""
    path = str(path)
    data = _read_file(path, oid)
    if not data:
        raise _corrupt("loose object file is empty", "loose-zlib", path, oid)
    # git inflates the header into exactly HEADER_MAX bytes: a zlib error
    # past them is met only when the body is read (header line, then death)
    head = _inflate(data, HEADER_MAX - 1)
    if head.error and len(head.out) == 0:
        raise _corrupt(f"loose object is not a valid zlib stream: {head.error}", "loose-zlib", path, oid)
    fatal = _header_type_error(head.out, path, oid)
    if fatal is not None:
        raise fatal
    type_name, size, header_len = parse_loose_header(head.out, path, oid)
    if header_only:
        return SalvagedLoose(type_name, size, b"", None)
    blob = type_name == "blob"
    whole = _inflate(data, header_len + size + (MAX_EXCESS if blob else 0))
    body = whole.out[header_len:]
    broken = whole.error is not None or not whole.eof
    if blob:
        if broken:
            return SalvagedLoose(
                type_name,
                size,
                body[: len(body) - len(body) % STREAM_READ],
                _corrupt("unable to stream the loose object: its zlib stream breaks off", "loose-zlib", path, oid),
            )
        return SalvagedLoose(type_name, size, body, None)
    if broken or len(body) > size:
        what = "its zlib stream breaks off" if broken else f"it holds more than its declared {size} bytes"
        return SalvagedLoose(type_name, size, b"", _corrupt(f"corrupt loose object: {what}", "loose-size", path, oid))
    if whole.trailing:
        return SalvagedLoose(type_name, size, b"", _corrupt("garbage at end of loose object", "loose-zlib", path, oid))
    return SalvagedLoose(type_name, size, body + bytes(size - len(body)), None)
