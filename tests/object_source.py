"""A stand-in object source for tests of code that consumes objects.

It answers the same questions as ``core.odb.ObjectStore`` (``read``,
``read_header``, ``contains``, ``resolve_prefix``, ``fmt``) by asking
git.  It exists only until core's store lands; tests then switch to
``core.odb`` and this file is removed.
"""

from __future__ import annotations

import subprocess

from core.errors import MissingObjectError
from core.oid import FORMATS
from tests.repos import git_env, git_text


class GitObjectSource:
    def __init__(self, repo) -> None:
        self.repo = str(repo)
        fmt = git_text("rev-parse", "--show-object-format", cwd=self.repo).strip()
        self.fmt = FORMATS[fmt]
        self._p = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.repo, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, env=git_env())
        self._cache: dict[bytes, tuple[str, bytes]] = {}

    def read(self, oid: bytes) -> tuple[str, bytes]:
        hit = self._cache.get(oid)
        if hit is not None:
            return hit
        self._p.stdin.write(oid.hex().encode() + b"\n")
        self._p.stdin.flush()
        header = self._p.stdout.readline().split()
        if header[-1] == b"missing":
            raise MissingObjectError("object not found", oid=oid.hex())
        size = int(header[2])
        data = self._p.stdout.read(size)
        self._p.stdout.read(1)
        result = (header[1].decode(), data)
        self._cache[oid] = result
        return result

    def read_header(self, oid: bytes) -> tuple[str, int]:
        t, d = self.read(oid)
        return t, len(d)

    def contains(self, oid: bytes, quick: bool = False) -> bool:
        try:
            self.read(oid)
            return True
        except MissingObjectError:
            return False

    def resolve_prefix(self, prefix) -> list[bytes]:
        out = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=self.repo)
        return [bytes.fromhex(x) for x in out.split() if x.startswith(prefix.hex)]

    def close(self) -> None:
        self._p.stdin.close()
        self._p.wait()
