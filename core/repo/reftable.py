"""reftable: git's binary ref storage (``extensions.refStorage = reftable``), read-only.

Layout (git's Documentation/technical/reftable):

* ``$GIT_DIR/reftable/tables.list`` names the tables of a stack, oldest
  first; a newer table's record for a name overrides every older one, and a
  deletion record (value type 0) hides the name.
* A table: a header (``REFT``, version 1 = 24 bytes, or version 2 = 28 bytes
  ending in a hash id, ``sha1`` or ``s256``), ref blocks (``r``), then
  optional ref index (``i``), obj (``o``), obj index and log (``g``) blocks,
  and a footer repeating the header with the section positions and a CRC-32.
* A block: type byte, uint24 length (the first block's counts the file
  header, and its restart offsets are file positions), records, uint24
  restart offsets, uint16 restart count, NUL padding to ``block_size`` when
  the table is aligned.
* A ref record: varint prefix length (bytes shared with the previous name),
  varint ``suffix_length << 3 | value_type``, the suffix, varint
  update-index delta, then the value: nothing (0, deletion), an id (1), an
  id and its peeled id (2), or varint length + target name (3, symbolic).
  Varints are the pack format's offset encoding.

Ref blocks are read up to the first block of another type (or the first
section position the footer gives); log blocks (``g``: a 4-byte header whose
length is the inflated size, then a zlib stream of log records keyed
``refname NUL reverse_int64(update_index)``) are read from the footer's log
position for the reflog entries git counts as roots; obj and index blocks
are skipped.  Reads are
consistent as git's readers are: a table that vanishes while the stack is
read (a concurrent compaction) means reading ``tables.list`` again.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from packscope.core.errors import BadRefError

MAGIC = b"REFT"
HASH_IDS = {b"sha1": "sha1", b"s256": "sha256"}
DELETION, VALUE, VALUE_PEELED, SYMREF = 0, 1, 2, 3
MAX_STACK_READS = 5  # tables.list re-reads when a table vanishes under us
REMEDY = "Let git rewrite the stack (git pack-refs), or restore the reftable directory from a backup."


@dataclass(frozen=True, slots=True)
class LogRecord:
    name: str
    update_index: int
    log_type: int  # 0: deletion of this entry, 1: an entry
    old: bytes | None = None
    new: bytes | None = None
    ident: bytes = b""  # "name <email> time tz", as a files reflog line writes it
    message: bytes = b""  # without its newline


@dataclass(frozen=True, slots=True)
class RefRecord:
    name: str
    update_index: int
    value_type: int
    oid: bytes | None = None
    peeled: bytes | None = None
    target: str | None = None


def _error(
    message: str, path: str | os.PathLike[str], offset: int | None = None, kind: str = "reftable-corrupt"
) -> BadRefError:
    return BadRefError(message, path=str(path), offset=offset, kind=kind, remedy=REMEDY)


class ReftableFile:
    """One table: header and footer checked on opening, ref records on demand."""

    def __init__(self, path: str | os.PathLike[str], object_format: str, rawsz: int) -> None:
        self.path = Path(path)
        with open(self.path, "rb") as f:  # FileNotFoundError: the stack changed, the caller re-reads it
            self.data = data = f.read()
        self.rawsz = rawsz
        if len(data) < 24 or data[:4] != MAGIC:
            raise _error("not a reftable (no REFT header)", self.path, 0)
        self.version = data[4]
        if self.version not in (1, 2):
            raise _error(f"unsupported reftable version {self.version}", self.path, 4, "reftable-version")
        self.header_len = 24 if self.version == 1 else 28
        footer_len = self.header_len + 44
        if len(data) < self.header_len + footer_len:
            raise _error(f"reftable is truncated ({len(data)} bytes)", self.path, len(data))
        self.block_size = int.from_bytes(data[5:8], "big")
        self.min_update_index, self.max_update_index = struct.unpack_from(">QQ", data, 8)
        hash_name = "sha1"
        if self.version == 2:
            hash_name = HASH_IDS.get(data[24:28], "")
            if not hash_name:
                raise _error(f"unknown hash id {data[24:28]!r}", self.path, 24, "reftable-hash")
        if hash_name != object_format:
            raise _error(
                f"reftable holds {hash_name} ids, the repository uses {object_format}", self.path, 4, "reftable-hash"
            )
        self.end = len(data) - footer_len
        footer = data[self.end :]
        if footer[: self.header_len] != data[: self.header_len]:
            raise _error("reftable footer does not repeat its header", self.path, self.end)
        if zlib.crc32(footer[:-4]) != int.from_bytes(footer[-4:], "big"):
            raise _error("reftable footer checksum does not match", self.path, len(data) - 4, "reftable-checksum")
        ref_index, obj_field, obj_index, log_pos, log_index = struct.unpack_from(">QQQQQ", footer, self.header_len)
        positions = (ref_index, obj_field >> 5, obj_index, log_pos, log_index)
        if any(p > self.end for p in positions):
            raise _error("reftable footer names a position past its end", self.path, self.end + self.header_len)
        self.refs_end = min([p for p in positions if p > 0] + [self.end])
        self.log_position, self.log_index_position = log_pos, log_index

    def _varint(self, pos: int, limit: int, data: bytes | None = None) -> tuple[int, int]:
        data = self.data if data is None else data
        if pos >= limit:
            raise _error("reftable record runs past its block", self.path, pos)
        b = data[pos]
        value = b & 0x7F
        while b & 0x80:
            pos += 1
            if pos >= limit or value > 1 << 56:
                raise _error("reftable varint runs past its block", self.path, pos)
            b = data[pos]
            value = ((value + 1) << 7) | (b & 0x7F)
        return value, pos + 1

    def records(self) -> Iterator[RefRecord]:
        """Every ref record, in file (name) order, deletions included."""
        pos, first = 0, True
        data = self.data
        while pos < self.refs_end:
            start = pos
            at = self.header_len if first else pos  # the first block shares the file header's bytes
            if at + 4 > self.refs_end or data[at] != ord("r"):
                return  # an index, obj or log block (or the footer): the ref section is over
            block_end = start + int.from_bytes(data[at + 1 : at + 4], "big")
            if block_end > self.refs_end or block_end < at + 6:
                raise _error("ref block length runs past the ref section", self.path, at + 1)
            if self.block_size and block_end - start > self.block_size:
                raise _error("ref block is longer than the table's block size", self.path, at + 1)
            yield from self._block(at + 4, block_end, 0 if first else start)
            if self.block_size and block_end < start + self.block_size and data[block_end] == 0:
                pos = start + self.block_size  # NUL padding to the alignment
            else:
                pos = block_end
            first = False

    def _block(self, pos: int, block_end: int, block_base: int) -> Iterator[RefRecord]:
        """The records of the ref block whose records start at ``pos``;
        restart offsets count from ``block_base`` (0 in the first block)."""
        data, rawsz = self.data, self.rawsz
        count = int.from_bytes(data[block_end - 2 : block_end], "big")
        records_end = block_end - 2 - 3 * count
        if count == 0 or records_end < pos:
            raise _error("ref block has no valid restart table", self.path, block_end - 2)
        restarts = {
            block_base + int.from_bytes(data[records_end + 3 * i : records_end + 3 * i + 3], "big")
            for i in range(count)
        }
        prev = b""
        starts = set()
        while pos < records_end:
            record_at = pos
            starts.add(pos)
            prefix_len, pos = self._varint(pos, records_end)
            packed, pos = self._varint(pos, records_end)
            suffix_len, value_type = packed >> 3, packed & 7
            if prefix_len > len(prev) or pos + suffix_len > records_end:
                raise _error("ref record's name runs past its block or its predecessor", self.path, record_at)
            if record_at in restarts and prefix_len:
                raise _error("restart point at a prefix-compressed record", self.path, record_at)
            name = prev[:prefix_len] + data[pos : pos + suffix_len]
            pos += suffix_len
            if name <= prev:
                raise _error(f"ref names out of order at {name!r}", self.path, record_at)
            delta, pos = self._varint(pos, records_end)
            oid = peeled = target = None
            if value_type in (VALUE, VALUE_PEELED):
                n = rawsz * value_type
                if pos + n > records_end:
                    raise _error("ref record's value runs past its block", self.path, pos)
                oid = data[pos : pos + rawsz]
                peeled = data[pos + rawsz : pos + n] if value_type == VALUE_PEELED else None
                pos += n
            elif value_type == SYMREF:
                length, pos = self._varint(pos, records_end)
                if pos + length > records_end:
                    raise _error("symbolic ref target runs past its block", self.path, pos)
                target = os.fsdecode(data[pos : pos + length])
                pos += length
            elif value_type != DELETION:
                raise _error(f"ref record has reserved value type {value_type}", self.path, record_at)
            prev = name
            yield RefRecord(os.fsdecode(name), self.min_update_index + delta, value_type, oid, peeled, target)
        if not restarts <= starts:
            raise _error("restart offset that is not the start of a record", self.path, records_end)

    def log_records(self) -> Iterator[LogRecord]:
        """Every log record of the log blocks, in file order."""
        pos = self.log_position
        end = self.log_index_position or self.end
        data, rawsz = self.data, self.rawsz
        while 0 < pos < end and data[pos] == ord("g"):
            inflated = int.from_bytes(data[pos + 1 : pos + 4], "big")
            d = zlib.decompressobj()
            try:
                body = d.decompress(data[pos + 4 : end], inflated)
            except zlib.error as e:
                raise _error(f"log block does not inflate: {e}", self.path, pos) from None
            if not d.eof or len(body) + 4 != inflated:
                raise _error("log block inflates to other than its declared size", self.path, pos)
            buf = data[pos : pos + 4] + body  # offsets inside count the 4-byte header
            next_pos = end - len(d.unused_data)
            count = int.from_bytes(buf[-2:], "big")
            limit = len(buf) - 2 - 3 * count
            if count == 0 or limit < 4:
                raise _error("log block has no valid restart table", self.path, pos)
            at, prev = 4, b""
            while at < limit:
                prefix_len, at = self._varint(at, limit, buf)
                packed, at = self._varint(at, limit, buf)
                suffix_len, log_type = packed >> 3, packed & 7
                if prefix_len > len(prev) or at + suffix_len > limit:
                    raise _error("log record's key runs past its block", self.path, pos)
                key = prev[:prefix_len] + buf[at : at + suffix_len]
                at += suffix_len
                prev = key
                if len(key) < 10 or key[-9] != 0:
                    raise _error(f"log record key {key[:40]!r} has no update index", self.path, pos)
                update_index = 0xFFFFFFFFFFFFFFFF - int.from_bytes(key[-8:], "big")
                name = os.fsdecode(key[:-9])
                if log_type == 0:
                    yield LogRecord(name, update_index, 0)
                    continue
                if log_type != 1 or at + 2 * rawsz > limit:
                    raise _error(f"log record of {name} is malformed", self.path, pos)
                old, new = buf[at : at + rawsz], buf[at + rawsz : at + 2 * rawsz]
                at += 2 * rawsz
                who = []
                for _ in range(2):  # committer name and email
                    length, at = self._varint(at, limit, buf)
                    who.append(bytes(buf[at : at + length]))
                    at += length
                when, at = self._varint(at, limit, buf)  # time
                tz = int.from_bytes(buf[at : at + 2], "big", signed=True)  # minutes east of UTC
                at += 2
                length, at = self._varint(at, limit, buf)
                message = bytes(buf[at : at + length])
                at += length
                if at > limit:
                    raise _error(f"log record of {name} runs past its block", self.path, pos)
                sign = b"-" if tz < 0 else b"+"
                zone = b"%s%02d%02d" % (sign, abs(tz) // 60, abs(tz) % 60)
                ident = who[0] + b" <" + who[1] + b"> " + str(when).encode() + b" " + zone
                yield LogRecord(name, update_index, 1, old, new, ident, message.rstrip(b"\n"))
            pos = next_pos


class ReftableStack:
    """The refs of one ``reftable/`` directory, merged over its stack."""

    def __init__(self, directory: str | os.PathLike[str], object_format: str, rawsz: int) -> None:
        self.directory = Path(directory)
        self.list_path = self.directory / "tables.list"
        self.object_format, self.rawsz = object_format, rawsz
        self.problems: list[BadRefError] = []
        self.tables: list[str] = []
        self.refs: dict[str, RefRecord] = {}
        self.logs: dict[str, list[LogRecord]] = {}  # per ref, oldest entry first
        self._load()

    def _load(self) -> None:
        previous = None
        for _ in range(MAX_STACK_READS):
            try:
                text = self.list_path.read_bytes()
            except FileNotFoundError:
                self.tables, self.refs = [], {}
                return
            except OSError as e:
                self.problems = [
                    _error(f"cannot read tables.list: {e.strerror}", self.list_path, None, "ref-unreadable")
                ]
                return
            names = [os.fsdecode(n) for n in text.split(b"\n") if n]
            merged: dict[str, RefRecord] = {}
            logs: dict[tuple[str, int], LogRecord] = {}
            problems: list[BadRefError] = []
            try:
                for name in names:
                    if "/" in name or name in (".", ".."):
                        problems.append(_error(f"tables.list names {name!r}, not a table file", self.list_path))
                        continue
                    try:
                        table = ReftableFile(self.directory / name, self.object_format, self.rawsz)
                        records = list(table.records())
                        log_records = list(table.log_records())
                    except FileNotFoundError:
                        if text != previous:
                            raise
                        # tables.list did not change, so the table is not coming back
                        problems.append(
                            _error(
                                f"tables.list names {name}, which is missing", self.list_path, None, "reftable-missing"
                            )
                        )
                        continue
                    except BadRefError as e:
                        problems.append(e)  # damage is local: the other tables still answer
                        continue
                    for record in records:
                        merged[record.name] = record  # newer tables come later and win
                    for log in log_records:
                        if log.log_type == 0:
                            logs.pop((log.name, log.update_index), None)
                        else:
                            logs[(log.name, log.update_index)] = log
            except FileNotFoundError:
                previous = text
                continue  # compacted while we read: read tables.list again
            self.tables = names
            self.refs = {n: r for n, r in merged.items() if r.value_type != DELETION}
            self.logs = {}
            for name, index in sorted(logs):
                self.logs.setdefault(name, []).append(logs[(name, index)])
            self.problems = problems
            return
        self.problems = [_error("the reftable stack kept changing while it was read", self.list_path)]
