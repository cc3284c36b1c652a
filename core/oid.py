"""Object formats (SHA-1, SHA-256), object ids, the null id and abbreviations.

Inside core an object id is plain ``bytes`` of the format's raw size: cheap to
compare, slice and hash.  Hex is for people and for the CLI.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from packscope.core.errors import BadObjectIdError

if TYPE_CHECKING:
    import hashlib

MIN_ABBREV = 4


class ObjectFormat(NamedTuple):
    name: str  # "sha1" or "sha256", as in extensions.objectformat
    rawsz: int
    hexsz: int
    hashname: str

    @property
    def null(self) -> bytes:
        return bytes(self.rawsz)

    @property
    def null_hex(self) -> str:
        return "0" * self.hexsz

    @property
    def empty_tree(self) -> bytes:
        """The empty tree's id, which every store has (a constant, so opening
        a store needs no hashing; tests check it against hash_object)."""
        return _EMPTY_TREES[self.name]

    # hashlib is imported on first use: loading OpenSSL costs ~4 ms, and a
    # one-shot read never hashes.
    def new_hash(self) -> hashlib._Hash:
        import hashlib

        return hashlib.new(self.hashname)

    def hash_object(self, type_name: str, data: bytes) -> bytes:
        """The id git gives an object of this type and content."""
        import hashlib

        h = hashlib.new(self.hashname)
        h.update(b"%s %d\0" % (type_name.encode(), len(data)))
        h.update(data)
        return h.digest()


_EMPTY_TREES = {
    "sha1": bytes.fromhex("4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
    "sha256": bytes.fromhex("6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"),
}
SHA1 = ObjectFormat("sha1", 20, 40, "sha1")
SHA256 = ObjectFormat("sha256", 32, 64, "sha256")
FORMATS = {"sha1": SHA1, "sha256": SHA256}


_HEX_RE = re.compile(r"[0-9a-fA-F]*\Z")


def _is_hex(text: str) -> bool:
    return _HEX_RE.match(text) is not None


def is_hex(text: str) -> bool:
    return bool(text) and _is_hex(text)


class Prefix(NamedTuple):
    """An abbreviated id: ``hex`` digits (lower case), at least MIN_ABBREV.

    ``low`` is the smallest raw id with this prefix, ``high`` the largest, so a
    sorted table's matches are exactly the names in [low, high].
    """

    hex: str
    low: bytes
    high: bytes

    @property
    def first_byte(self) -> int:
        return self.low[0]

    def matches(self, name: bytes) -> bool:
        return self.low <= name[: len(self.low)] <= self.high


def parse_prefix(text: str, fmt: ObjectFormat) -> Prefix:
    """Parse an abbreviation (or a full id) into a Prefix."""
    t = text.lower()
    if not _is_hex(t) or not t:
        raise BadObjectIdError(f"not a hex object id: {text!r}")
    if len(t) < MIN_ABBREV:
        raise BadObjectIdError(f"abbreviation {text!r} is shorter than {MIN_ABBREV} hex digits")
    if len(t) > fmt.hexsz:
        raise BadObjectIdError(f"{text!r} is longer than a {fmt.name} id ({fmt.hexsz} hex digits)")
    low = bytes.fromhex((t + "0" * fmt.hexsz)[: fmt.hexsz])
    high = bytes.fromhex((t + "f" * fmt.hexsz)[: fmt.hexsz])
    return Prefix(t, low, high)
