"""A small reftable writer for the tests, written from git's format
documentation (Documentation/technical/reftable): git 2.39 cannot write
reftable, so the tests write the stacks themselves.

It writes what a reader must cope with: version 1 (SHA-1) and version 2
(hash id) headers, aligned (NUL-padded) and unaligned blocks, several ref
blocks with restart points every few records and prefix compression between
them, a ref index block, an obj block and a zlib log block after the refs,
and the footer with its CRC-32.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path


def varint(n: int) -> bytes:
    """The pack format's offset encoding (each continuation adds one)."""
    out = [n & 0x7F]
    n >>= 7
    while n:
        n -= 1
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def u24(n: int) -> bytes:
    return n.to_bytes(3, "big")


@dataclass
class Rec:
    name: str
    update_index: int
    oid: bytes | None = None  # value type 1 (or 2 with peeled)
    peeled: bytes | None = None
    target: str | None = None  # value type 3
    # none of the three: a deletion (value type 0)

    def value(self, min_update_index: int) -> tuple[int, bytes]:
        delta = varint(self.update_index - min_update_index)
        if self.target is not None:
            t = self.target.encode()
            return 3, delta + varint(len(t)) + t
        if self.oid is not None and self.peeled is not None:
            return 2, delta + self.oid + self.peeled
        if self.oid is not None:
            return 1, delta + self.oid
        return 0, delta


def _records(keys_values: list[tuple[bytes, int, bytes]], first_offset: int, restart_every: int):
    """Prefix-compressed records and their restart offsets."""
    body = bytearray()
    restarts = []
    prev = b""
    for i, (key, vtype, value) in enumerate(keys_values):
        restart = i % restart_every == 0
        common = 0
        if not restart:
            while common < min(len(prev), len(key)) and prev[common] == key[common]:
                common += 1
        else:
            restarts.append(first_offset + len(body))
        suffix = key[common:]
        body += varint(common) + varint((len(suffix) << 3) | vtype) + suffix + value
        prev = key
    return bytes(body), restarts


def _block(kind: bytes, keys_values, header: bytes, restart_every: int) -> bytes:
    """One block; with ``header`` (the first block) its length and restart
    offsets count the file header."""
    base = len(header)
    body, restarts = _records(keys_values, base + 4, restart_every)
    tail = b"".join(u24(r) for r in restarts) + struct.pack(">H", len(restarts))
    length = base + 4 + len(body) + len(tail)
    return header + kind + u24(length) + body + tail


def write_table(
    path: Path,
    recs: list[Rec],
    *,
    min_update_index: int,
    max_update_index: int,
    version: int = 1,
    block_size: int = 0,
    per_block: int = 1000,
    restart_every: int = 16,
    extras: bool = False,
    logs: list[tuple[str, int, bytes, bytes]] | None = None,
) -> Path:
    """A reftable file of ``recs`` (sorted here).  ``per_block`` records per
    ref block; ``block_size`` > 0 pads blocks to it (aligned); ``extras``
    adds a ref index, an obj block and a log block after the refs; ``logs``
    (name, update index, old id, new id) are written as that log block."""
    recs = sorted(recs, key=lambda r: r.name.encode())
    header = b"REFT" + bytes([version]) + u24(block_size) + struct.pack(">QQ", min_update_index, max_update_index)
    if version == 2:
        rawsz = len(next((r.oid for r in recs if r.oid), b"\0" * 20))
        header += b"sha1" if rawsz == 20 else b"s256"
    out = bytearray()
    last_names = []
    for i in range(0, max(len(recs), 1), per_block):
        chunk = recs[i : i + per_block]
        if not chunk:
            break
        kv = []
        for r in chunk:
            vtype, value = r.value(min_update_index)
            kv.append((r.name.encode(), vtype, value))
        start = len(out)
        block = _block(b"r", kv, header if start == 0 else b"", restart_every)
        if block_size:
            assert len(block) <= block_size, "block too big for the block size"
            block += bytes(block_size - len(block))
        out += block
        last_names.append((chunk[-1].name.encode(), start))
    if not recs:
        out += header
    ref_index = obj_pos = log_pos = 0
    if logs is not None:
        log_pos = len(out)
        out += _log_block(logs)
    elif extras and recs:
        ref_index = len(out)
        out += _block(b"i", [(name, 0, varint(pos)) for name, pos in last_names], b"", 4)
        obj_pos = len(out)
        ids = sorted({r.oid for r in recs if r.oid})
        out += _block(b"o", [(oid[:4], 1, varint(0)) for oid in ids], b"", 16)
        log_pos = len(out)
        logs = []
        for r in recs:
            if r.oid:
                key = r.name.encode() + b"\0" + struct.pack(">Q", 0xFFFFFFFFFFFFFFFF - r.update_index)
                data = bytes(len(r.oid)) + r.oid + varint(1) + b"A" + varint(1) + b"a"
                data += varint(1_700_000_000) + struct.pack(">h", 0) + varint(3) + b"new"
                logs.append((key, 1, data))
        inner = _block(b"g", logs, b"", 16)
        out += inner[:4] + zlib.compress(inner[4:])
    footer = header + struct.pack(">QQQQQ", ref_index, (obj_pos << 5) | 4 if obj_pos else 0, 0, log_pos, 0)
    footer += struct.pack(">I", zlib.crc32(footer))
    path.write_bytes(bytes(out) + footer)
    return path


def _log_block(entries: list[tuple[str, int, bytes, bytes]]) -> bytes:
    records = []
    for name, update_index, old, new in entries:
        key = name.encode() + b"\0" + struct.pack(">Q", 0xFFFFFFFFFFFFFFFF - update_index)
        data = old + new + varint(1) + b"A" + varint(1) + b"a"
        data += varint(1_700_000_000 + update_index) + struct.pack(">h", -480) + varint(3) + b"log"
        records.append((key, 1, data))
    records.sort(key=lambda r: r[0])
    inner = _block(b"g", records, b"", 16)
    return inner[:4] + zlib.compress(inner[4:])


def write_stack(directory: Path, tables: list[tuple[str, bytes]] | list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tables.list").write_text("".join(f"{name}\n" for name in tables))
