"""fsck: healthy bases and byte surgery (flipped bytes, swapped index
entries, rehashed packs, raw packs written by hand), and git fsck as the oracle."""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
from pathlib import Path

from tests.repos.common import git, git_env, git_text, import_history, init_bare, pack_files

# --- fsck: healthy bases and byte surgery --------------------------------------------------
#
# Corrupt repositories are built per *class* of defect from a healthy base:
# copy it, then damage one thing with plain file operations.  Pack surgery
# recomputes whatever checksums the defect class says must stay valid, so
# that each repository holds exactly one defect.


def build_fsck_base(root: Path, object_format: str = "sha1") -> Path:
    """A bare repository with merges, annotated tags, one pack (with deltas)
    and a few loose objects (a blob, a tree and a commit on a side branch)."""
    repo = init_bare(root / f"fsck-base-{object_format}.git", object_format)
    import_history(repo, 24, seed=21)
    git("repack", "-a", "-d", "-q", "--depth=20", cwd=repo)
    git(
        "fast-import",
        "--quiet",
        cwd=repo,
        input=(
            "commit refs/heads/loose\ncommitter C O Mitter <committer@example.com> 1700000000 +0000\n"
            "data 6\nloose\nfrom refs/heads/main^0\nM 100644 inline loose/file.txt\ndata 17\nloose file body.\n\n"
        ),
    )
    return repo


def build_fsck_worktree(root: Path) -> Path:
    """A non-bare repository (index, reflogs) with a linked worktree whose
    index stages a file of its own."""
    work = root / "fsck-work"
    if work.exists():
        shutil.rmtree(work)
    git("init", "-q", "-b", "main", work)
    for i in range(3):
        (work / f"f{i}.txt").write_text(f"file {i}\n" * (i + 1))
        git("add", ".", cwd=work)
        git("commit", "-q", "-m", f"commit {i}", cwd=work)
    git("worktree", "add", "-q", "-b", "side", root / "fsck-linked", cwd=work)
    (root / "fsck-linked" / "staged.txt").write_text("only in the linked worktree's index\n")
    git("add", "staged.txt", cwd=root / "fsck-linked")
    return work


def copy_repo(src: Path, dst: Path) -> Path:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True)
    return dst


def the_pack(repo: Path) -> tuple[Path, Path]:
    (pack,) = pack_files(repo)
    return pack, pack.with_suffix(".idx")


def verify_pack_rows(pack: Path) -> list[dict]:
    """Per object of ``pack``, from git verify-pack -v: id, type, size,
    size in pack, offset, and delta depth/base (0/None when whole)."""
    out = git_text("verify-pack", "-v", pack.with_suffix(".idx"), cwd=pack.parent.parent.parent)
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 5 or len(parts[0]) not in (40, 64) or parts[1] not in ("commit", "tree", "blob", "tag"):
            continue
        rows.append(
            {
                "oid": parts[0],
                "type": parts[1],
                "size": int(parts[2]),
                "packed": int(parts[3]),
                "offset": int(parts[4]),
                "depth": int(parts[5]) if len(parts) > 5 else 0,
                "base": parts[6] if len(parts) > 6 else None,
            }
        )
    return rows


def swap_idx_neighbours(repo: Path) -> bytes:
    """Swap two neighbouring entries (id, CRC and offset) of the one pack's
    v2 .idx whose ids share a first byte, and rewrite its checksum: the ids
    are out of order and the fanout still holds.  Returns the id that was
    first of the two."""
    _, idx = the_pack(repo)
    data = bytearray(idx.read_bytes())
    n = struct.unpack(">I", data[8 + 1020 : 8 + 1024])[0]
    names_at, crcs_at = 8 + 1024, 8 + 1024 + 20 * n
    offs_at = crcs_at + 4 * n
    names = [bytes(data[names_at + 20 * i : names_at + 20 * i + 20]) for i in range(n)]
    i = next(i for i in range(n - 1) if names[i][0] == names[i + 1][0])
    for at, width in ((names_at, 20), (crcs_at, 4), (offs_at, 4)):
        a, b = at + width * i, at + width * (i + 1)
        data[a : a + width], data[b : b + width] = data[b : b + width], data[a : a + width]
    data[-20:] = hashlib.sha1(bytes(data[:-20])).digest()
    os.chmod(idx, 0o644)
    idx.write_bytes(bytes(data))
    return names[i]


def flip_byte(path: Path, offset: int, mask: int = 0xFF) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    os.chmod(path, 0o644)
    path.write_bytes(bytes(data))


def rehash_pack(pack: Path, object_format: str = "sha1") -> None:
    """After surgery inside a pack's entries: recompute its trailer, the
    copy the .idx keeps and the .idx's own checksum, so only the entry's
    CRC32 and content disagree."""
    import hashlib

    rawsz = 32 if object_format == "sha256" else 20
    name = "sha256" if object_format == "sha256" else "sha1"
    body = pack.read_bytes()[:-rawsz]
    trailer = hashlib.new(name, body).digest()
    os.chmod(pack, 0o644)
    pack.write_bytes(body + trailer)
    idx = pack.with_suffix(".idx")
    data = idx.read_bytes()
    content = data[: -2 * rawsz] + trailer
    os.chmod(idx, 0o644)
    idx.write_bytes(content + hashlib.new(name, content).digest())


def pack_entry_header(type_num: int, size: int) -> bytes:
    out = bytearray()
    c = (type_num << 4) | (size & 15)
    size >>= 4
    while size:
        out.append(c | 0x80)
        c = size & 0x7F
        size >>= 7
    out.append(c)
    return bytes(out)


def insert_delta(base_size: int, result: bytes, declared: int | None = None) -> bytes:
    """A delta that inserts ``result`` (under 128 bytes) whole on a base of
    ``base_size`` bytes; its header may declare another result size."""

    def size(n: int) -> bytes:
        out = bytearray()
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)

    return size(base_size) + size(len(result) if declared is None else declared) + bytes([len(result)]) + result


def write_raw_pack(
    repo: Path,
    entries: list[tuple[bytes, int, bytes, bytes | None]],
    *,
    object_format: str = "sha1",
    declared_sizes: dict | None = None,
) -> tuple[Path, Path]:
    """A pack (and v2 .idx) from raw entries ``(id, type number, payload,
    REF_DELTA base id or None)``; payloads are deflated here.  The ids are
    taken as given: this writes packs git would refuse to (delta loops)."""
    import hashlib
    import struct
    import zlib

    name = "sha256" if object_format == "sha256" else "sha1"
    body = bytearray(b"PACK" + struct.pack(">II", 2, len(entries)))
    rows = []
    for oid, type_num, payload, base in entries:
        at = len(body)
        size = (declared_sizes or {}).get(oid, len(payload))
        chunk = pack_entry_header(type_num, size) + (base or b"") + zlib.compress(payload)
        body += chunk
        rows.append((oid, zlib.crc32(chunk) & 0xFFFFFFFF, at))
    trailer = hashlib.new(name, bytes(body)).digest()
    rows.sort()
    fanout = [0] * 256
    for oid, _, _ in rows:
        fanout[oid[0]] += 1
    for i in range(1, 256):
        fanout[i] += fanout[i - 1]
    idx = bytearray(b"\377tOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout))
    idx += b"".join(oid for oid, _, _ in rows)
    idx += b"".join(struct.pack(">I", crc) for _, crc, _ in rows)
    idx += b"".join(struct.pack(">I", off) for _, _, off in rows)
    idx += trailer
    idx += hashlib.new(name, bytes(idx)).digest()
    base = repo / "objects" / "pack" / f"pack-{trailer.hex()}"
    base.with_suffix(".pack").write_bytes(bytes(body) + trailer)
    base.with_suffix(".idx").write_bytes(bytes(idx))
    return base.with_suffix(".pack"), base.with_suffix(".idx")


def git_fsck(repo: Path, *args) -> tuple[int, str]:
    """git fsck --full's exit status and its output (stdout then stderr)."""
    p = subprocess.run(["git", "fsck", "--full", "--no-progress", *args], cwd=repo, capture_output=True, env=git_env())
    return p.returncode, (p.stdout + p.stderr).decode(errors="replace")
