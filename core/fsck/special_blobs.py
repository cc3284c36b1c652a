"""fsck's checks of ``.gitmodules`` and ``.gitattributes`` blobs.

A blob is only a blob until a tree names it ``.gitmodules`` or
``.gitattributes`` (or a spelling a file system folds to that name): then
its content matters to every clone that checks the tree out, and git fsck
checks it — the defences against the submodule and attributes exploits of
the last years (options smuggled in as URLs or paths, command updates,
names escaping ``.git/modules``, attribute files that overflow parsers).

Trees feed :class:`SpecialBlobs` while fsck reads them (``add_tree``); once
every object has been read, ``finish`` reads each named blob through the
store and returns the problems, with git's message ids and severities:

======================== ======== ===========================================
id                       severity meaning
======================== ======== ===========================================
gitmodulesMissing        error    the named blob cannot be read (not promised)
gitmodulesBlob           error    the name points at a tree or commit
gitmodulesLarge          error    too large to parse
gitmodulesParse          info     not valid config syntax
gitmodulesName           error    a submodule name with a ``..`` component
gitmodulesUrl            error    an option-like URL, a newline in a relative
                                  or git:// URL, ``../`` escaping to a host,
                                  an http(s)/ftp(s) URL without a host
gitmodulesPath           error    an option-like path (starts with ``-``)
gitmodulesUpdate         error    ``update = !command``
gitattributesMissing     error    the named blob cannot be read (not promised)
gitattributesBlob        error    the name points at a tree or commit
gitattributesLarge       error    larger than 100 MiB
gitattributesLineLength  error    a line of 2048 bytes or more
======================== ======== ===========================================

The rules are written from git's documentation and its CVE write-ups; the
wording is ours.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from stat import S_ISLNK

from packscope.core.errors import ConfigError, LookupFailedError, PackscopeError
from packscope.core.history.tree_entries import HFS_IGNORED, is_special_name, tree_entries_fast
from packscope.core.objects import tree_mode
from packscope.core.repo.config import Config

GITMODULES = ".gitmodules"
GITATTRIBUTES = ".gitattributes"
ATTRIBUTES_MAX_SIZE = 100 << 20
ATTRIBUTES_MAX_LINE = 2048
MODULES_MAX_SIZE = 1 << 30  # git parses a blob it could load; beyond this we do not try

SEVERITIES = {
    "gitmodulesMissing": "error",
    "gitmodulesBlob": "error",
    "gitmodulesLarge": "error",
    "gitmodulesParse": "info",
    "gitmodulesName": "error",
    "gitmodulesUrl": "error",
    "gitmodulesPath": "error",
    "gitmodulesUpdate": "error",
    "gitattributesMissing": "error",
    "gitattributesBlob": "error",
    "gitattributesLarge": "error",
    "gitattributesLineLength": "error",
}

# Only names holding one of these can fold to either file name: the letters
# themselves (lower-cased) or an NTFS short-name stem, or one of HFS+'s
# ignorable code points (tree_entries.HFS_IGNORED, in UTF-8), which may split
# the letters.  Whole sequences, not lead bytes: a
# tree's binary ids hold any given byte often, six given letters almost never.
_ASCII_CANDIDATE = re.compile(rb"gitmod|gitatt|gi7eba|gi7d29")
_HFS_IGNORABLE = re.compile(b"|".join(re.escape(chr(c).encode()) for c in sorted(HFS_IGNORED)))


def _candidate(text: bytes) -> bool:
    return bool(_ASCII_CANDIDATE.search(text.lower()) or _HFS_IGNORABLE.search(text))


@dataclass(frozen=True, slots=True)
class SpecialProblem:
    oid: bytes
    msg_id: str
    message: str
    which: str  # GITMODULES or GITATTRIBUTES
    object_type: str = "blob"  # what the name points at (a tree, for gitmodulesBlob)


class SpecialBlobs:
    """The blobs trees name ``.gitmodules``/``.gitattributes``, collected
    during the object pass, checked at its end."""

    def __init__(self) -> None:
        self.found: dict[bytes, str] = {}  # oid -> which name (the first tree to name it wins)
        # named by a tree of a promisor pack: promised in a partial clone, no need to list the promised set
        self.named_by_promisor: set[bytes] = set()

    def add_tree(self, data: bytes, rawsz: int, promisor: bool = False) -> None:
        if not _candidate(data):
            return  # the common case, decided in C
        entries = tree_entries_fast(data, rawsz)
        # A tree holding Documentation/gitattributes.txt has hundreds of other
        # names: find the candidates among all names joined, in C, and map
        # each match back to its entry by counting separators.
        joined = b"\0".join([e[1] for e in entries])
        hits = {joined.count(b"\0", 0, m.start()) for m in _ASCII_CANDIDATE.finditer(joined.lower())}
        if _HFS_IGNORABLE.search(joined):
            hits.update(i for i, e in enumerate(entries) if _HFS_IGNORABLE.search(e[1]))
        self.add_candidates([(tree_mode(m) or 0, n, o) for m, n, o in (entries[i] for i in sorted(hits))], promisor)

    def add_candidates(self, entries: list[tuple[int, bytes, bytes]], promisor: bool = False) -> None:
        """Note the blobs among ``entries`` — (mode, name, id) of a tree's
        entries whose names may spell a special name, in tree order (found
        here by :meth:`add_tree`, or by the compiled tree check)."""
        for mode, name, oid in entries:
            if S_ISLNK(mode):
                continue  # a symbolic link is the tree's own problem (gitmodulesSymlink)
            for which in (GITMODULES, GITATTRIBUTES):
                if is_special_name(name, which):
                    self.found.setdefault(oid, which)
                    if promisor:
                        self.named_by_promisor.add(oid)

    def finish(
        self,
        read: Callable[[bytes], tuple[str, bytes]],
        is_promised: Callable[[bytes], bool],
        severities: dict[str, str] | None = None,
    ) -> list[SpecialProblem]:
        """Read and check every collected blob; ``read`` is the store's."""
        out: list[SpecialProblem] = []
        for oid, which in sorted(self.found.items()):
            prefix = "gitmodules" if which == GITMODULES else "gitattributes"
            try:
                type_name, data = read(oid)
            except LookupFailedError:
                if not is_promised(oid):
                    out.append(SpecialProblem(oid, f"{prefix}Missing", f"unable to read {which} blob", which))
                continue
            except PackscopeError:
                continue  # damaged: the object pass reports it
            if type_name != "blob":
                out.append(SpecialProblem(oid, f"{prefix}Blob", f"non-blob found at {which}", which, type_name))
                continue
            check = check_gitmodules if which == GITMODULES else check_gitattributes
            out.extend(SpecialProblem(oid, msg_id, message, which) for msg_id, message in check(data))
        overrides = severities or {}
        return [p for p in out if overrides.get(p.msg_id) != "ignore"]


# --- .gitattributes --------------------------------------------------------------------------


def check_gitattributes(data: bytes) -> list[tuple[str, str]]:
    if len(data) > ATTRIBUTES_MAX_SIZE:
        return [("gitattributesLarge", ".gitattributes too large to parse")]
    text = data.split(b"\0", 1)[0]  # a parser reading C strings stops at the first NUL
    if any(len(line) >= ATTRIBUTES_MAX_LINE for line in text.split(b"\n")):
        return [("gitattributesLineLength", ".gitattributes has too long lines to parse")]
    return []


# --- .gitmodules ---------------------------------------------------------------------------


def check_gitmodules(data: bytes) -> list[tuple[str, str]]:
    if len(data) > MODULES_MAX_SIZE:
        return [("gitmodulesLarge", ".gitmodules too large to parse")]
    out: list[tuple[str, str]] = []
    try:
        entries = list(Config.from_bytes(data, path=GITMODULES))
    except ConfigError:
        # git reports the entries it read before the syntax error too; we
        # report the parse failure alone.
        return [("gitmodulesParse", "could not parse gitmodules blob")]
    for e in entries:
        if e.section != "submodule" or e.subsection is None:
            continue
        name, key, value = e.subsection, e.key, e.value
        if not submodule_name_ok(name):
            out.append(("gitmodulesName", f"disallowed submodule name: {name}"))
        if value is None:
            continue
        if key == "url" and not submodule_url_ok(value):
            out.append(("gitmodulesUrl", f"disallowed submodule url: {value}"))
        if key == "path" and value.startswith("-"):
            out.append(("gitmodulesPath", f"disallowed submodule path: {value}"))
        if key == "update" and value.startswith("!"):
            out.append(("gitmodulesUpdate", f"disallowed submodule update setting: {value}"))
    return out


def submodule_name_ok(name: str) -> bool:
    """A name becomes a directory under ``.git/modules``: empty names and
    ``..`` components (with either slash) could escape it."""
    if not name:
        return False
    return ".." not in re.split(r"[/\\]", name)


def submodule_url_ok(url: str) -> bool:
    if url.startswith("-"):
        return False  # would be read as an option by the transport
    if url.startswith(("./", "../", "git://")):
        # Relative URLs are appended to the superproject's URL and decoded:
        # a newline there could inject a credential-protocol line.
        if "\n" in _percent_decode(url):
            return False
        # "../" climbing past the host turns https://host/a into
        # https::host or https:///host (CVE-2020-11008).
        rest, climbs = url, 0
        while True:
            if rest.startswith("../"):
                rest, climbs = rest[3:], climbs + 1
            elif rest.startswith("./"):
                rest = rest[2:]
            else:
                break
        return not (climbs and rest[:1] in (":", "/"))
    curl = _curl_url(url)
    if curl is not None:
        return _has_host(curl)
    return True


def _percent_decode(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        return chr(int(m.group(1), 16))

    return re.sub(r"%([0-9A-Fa-f]{2})", one, text)


def _curl_url(url: str) -> str | None:
    """The URL a curl-based transport would fetch, or None for others."""
    for helper in ("http::", "https::", "ftp::", "ftps::"):
        if url.startswith(helper):
            return url[len(helper) :]
    if url.startswith(("http://", "https://", "ftp://", "ftps://")):
        return url
    return None


def _has_host(url: str) -> bool:
    scheme_end = url.find("://")
    if scheme_end <= 0:
        return False
    rest = url[scheme_end + 3 :]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    host = authority.rsplit("@", 1)[-1]
    return bool(host)
