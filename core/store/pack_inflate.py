"""Bounded inflation of a pack entry's zlib stream, over a buffer.

Nothing trusts a declared size: it is checked against a cap and against
what the bytes left before the pack's trailer could possibly inflate to
before anything is allocated, and inflation stops at the declared size.
Errors carry the pack's path and the entry's offset.
"""

from __future__ import annotations

import mmap

from zlib_ng import zlib_ng

from packscope.core.errors import CorruptObjectError, LimitExceededError
from packscope.core.store.zlib_errors import ZlibError

# Deflate cannot compress better than about 1032:1; a declared size beyond
# that many times the bytes left in the file cannot be genuine.
MAX_DEFLATE_RATIO = 1032
INFLATE_CHUNK = 1 << 20  # input fed to zlib per call for big entries

Buffer = bytes | mmap.mmap


def _corrupt(message: str, path: str, offset: int, kind: str) -> CorruptObjectError:
    return CorruptObjectError(message, path=path, offset=offset, kind=kind, oid=None)


def inflate_entry(buf: Buffer, offset: int, start: int, size: int, end: int, max_size: int, path: str) -> bytes:
    """The data of the entry at ``offset`` whose zlib stream starts at
    ``start`` (``end``: where the pack's trailer starts): exactly ``size``
    bytes, or a typed error."""
    if size > max_size or size > (end - start) * MAX_DEFLATE_RATIO + 64:
        _refuse_size(offset, size, end - start, max_size, path)
    # Deflate expands incompressible data by a few bytes per 64 KiB block,
    # so one window of size + 1/8 nearly always holds a small entry's whole
    # stream; big entries are fed a chunk at a time so that neither the
    # input copy nor zlib's copy of unused input grows with the object.
    # Asking for size+1 bytes lets zlib reach the end of the stream in the
    # same call (and shows excess); it also keeps max_length from being 0,
    # which would mean "no limit".
    stop = min(end, start + min(size + (size >> 3) + 64, INFLATE_CHUNK))
    d = zlib_ng.decompressobj()
    want = size + 1
    try:
        out = d.decompress(buf[start:stop], want)
        if not d.eof and len(out) < want and stop < end:
            parts, got = [out], len(out)
            while not d.eof and got < want and stop < end:  # got < want: all input was consumed
                nstart, stop = stop, min(end, stop + INFLATE_CHUNK)
                more = d.decompress(buf[nstart:stop], want - got)
                parts.append(more)
                got += len(more)
            out = b"".join(parts)
    except ZlibError as e:
        raise _corrupt(f"zlib stream is corrupt: {e}", path, offset, "pack-zlib") from None
    if d.eof and len(out) == size:
        return out
    if len(out) > size:
        raise _corrupt(f"entry inflates to more than its declared {size} bytes", path, offset, "pack-size")
    if not d.eof:
        # All input up to the trailer was fed: the entry straddles the
        # end of the data (a truncated pack), it does not just end early.
        raise _corrupt(
            f"entry runs past the end of the pack's data (@{end}): its zlib stream is cut"
            f" after {len(out)} of {size} bytes",
            path,
            offset,
            "pack-truncated",
        )
    raise _corrupt(f"entry inflates to {len(out)} bytes, it declares {size}", path, offset, "pack-size")


def inflate_prefix(buf: Buffer, offset: int, start: int, n: int, end: int, path: str) -> bytes:
    """The first ``n`` bytes of the entry's data (fewer if it is shorter)."""
    d = zlib_ng.decompressobj()
    # One call nearly always does: n bytes rarely need more than 64 + 4n
    # bytes of stream.  The loop below handles the rest.
    stop = min(end, start + 64 + 4 * n)
    try:
        out = d.decompress(buf[start:stop], n)
    except ZlibError as e:
        raise _corrupt(f"zlib stream is corrupt: {e}", path, offset, "pack-zlib") from None
    if len(out) >= n or d.eof:
        return out
    try:
        while len(out) < n and not d.eof and stop < end:
            nstart, stop = stop, min(end, stop + 256 + 4 * n)
            out += d.decompress(d.unconsumed_tail + buf[nstart:stop], n - len(out))
    except ZlibError as e:
        raise _corrupt(f"zlib stream is corrupt: {e}", path, offset, "pack-zlib") from None
    return out


def _refuse_size(offset: int, size: int, available: int, max_size: int, path: str) -> None:
    if size > max_size:
        raise LimitExceededError(
            f"entry declares {size} bytes, above the cap of {max_size}",
            path=path,
            offset=offset,
            kind="object-too-large",
        )
    raise LimitExceededError(
        f"entry declares {size} bytes, more than the {available} bytes left in the pack can inflate to",
        path=path,
        offset=offset,
        kind="implausible-size",
    )
