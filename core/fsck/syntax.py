"""Object syntax checks, with git's fsck message ids and severities.

git fsck names every syntax defect with a camel-case *message id*
(``badEmail``, ``zeroPaddedFilemode``, …) and gives each a default severity:

* ``fatal`` — the object cannot be read as its type at all (reported as an
  error);
* ``error`` — git fsck fails (exit bit 1) and the remaining checks of that
  object are skipped, as git does;
* ``warning`` — reported, exit status unaffected;
* ``info`` — reported (git prints these as warnings), exit status unaffected;
* ``ignore`` — not reported unless asked for.

:data:`MESSAGES` is packscope's own table of the ids git 2.39 knows (with a
few newer ones), written from git's documentation (``git help fsck``,
"FSCK MESSAGES").  The checks below reproduce *what* git checks and in which
order, so that the same object gets the same first message id; the wording
of messages is ours.

Entry points: :func:`check_object` (any type), :func:`check_commit`,
:func:`check_tag`, :func:`check_tree`.  Each returns a list of
:class:`SyntaxProblem`; an empty list means the object is clean.  Blobs are
not checked here: the ``.gitmodules``/``.gitattributes`` blobs git checks are
known only from the trees that name them (packscope.core.fsck.special_blobs).
How a name folds to ``.git`` or ``.gitmodules`` on case-insensitive, HFS+
and NTFS file systems is a rule about tree entry names, shared with
special_blobs: packscope.core.history.tree_entries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import chain
from stat import S_IFDIR, S_IFLNK, S_IFREG, S_ISDIR, S_ISLNK

from packscope.core import native
from packscope.core.history.tree_entries import is_dotgit, is_special_name
from packscope.core.objects import GIT_MODES, S_IFGITLINK, tree_mode, tree_patterns
from packscope.core.oid import ObjectFormat

SEVERITIES = ("fatal", "error", "warning", "info", "ignore")

# id -> (severity, what it means)
MESSAGES: dict[str, tuple[str, str]] = {
    # the object cannot be parsed at all
    "nulInHeader": ("fatal", "a NUL byte in the header"),
    "unterminatedHeader": ("fatal", "the header does not end with a newline"),
    # errors
    "badDate": ("error", "an author/committer/tagger date is not a number followed by a space"),
    "badDateOverflow": ("error", "an author/committer/tagger date does not fit a signed 64-bit time"),
    "badEmail": ("error", "an ident's email is not closed by '>'"),
    "badName": ("error", "an ident has '>' before any '<'"),
    "badObjectSha1": ("error", "a tag's object line does not hold a valid id"),
    "badParentSha1": ("error", "a commit's parent line does not hold a valid id"),
    "badTimezone": ("error", "an ident's time zone is not +hhmm or -hhmm"),
    "badTree": ("error", "a tree cannot be parsed"),
    "badTreeSha1": ("error", "a commit's tree line does not hold a valid id"),
    "badType": ("error", "a tag's type line names no object type"),
    "duplicateEntries": ("error", "a tree holds two entries of the same name"),
    "gitmodulesSymlink": ("error", ".gitmodules is a symbolic link"),
    "missingAuthor": ("error", "a commit has no author line"),
    "missingCommitter": ("error", "a commit has no committer line"),
    "missingEmail": ("error", "an ident has no <email>"),
    "missingNameBeforeEmail": ("error", "an ident starts with '<' (no name)"),
    "missingObject": ("error", "a tag has no object line"),
    "missingSpaceBeforeDate": ("error", "no space between an ident's email and its date"),
    "missingSpaceBeforeEmail": ("error", "no space between an ident's name and its email"),
    "missingTag": ("error", "a tag ends after its type line"),
    "missingTagEntry": ("error", "a tag has no tag line"),
    "missingTree": ("error", "a commit does not start with a tree line"),
    "missingType": ("error", "a tag ends after its object line"),
    "missingTypeEntry": ("error", "a tag has no type line"),
    "multipleAuthors": ("error", "a commit has more than one author line"),
    "treeNotSorted": ("error", "a tree's entries are not in git's order"),
    "unknownType": ("error", "an object of an unknown type"),
    "zeroPaddedDate": ("error", "an ident's date has a leading zero"),
    # warnings
    "emptyName": ("warning", "a tree entry with an empty name"),
    "fullPathname": ("warning", "a tree entry name holds '/'"),
    "hasDot": ("warning", "a tree entry named '.'"),
    "hasDotdot": ("warning", "a tree entry named '..'"),
    "hasDotgit": ("warning", "a tree entry named '.git' (or a spelling a file system folds to it)"),
    "nullSha1": ("warning", "a tree entry points to the null id"),
    "zeroPaddedFilemode": ("warning", "a tree entry's mode has a leading zero"),
    "nulInCommit": ("warning", "a NUL byte in a commit's message"),
    # infos (git prints them as warnings; they never fail fsck)
    "badFilemode": ("info", "a tree entry has a mode git does not write"),
    "badTagName": ("info", "a tag's name is not a valid ref name"),
    "missingTaggerEntry": ("info", "a tag has no tagger line (old tags lack it)"),
    "gitattributesSymlink": ("info", ".gitattributes is a symbolic link"),
    "gitignoreSymlink": ("info", ".gitignore is a symbolic link"),
    "mailmapSymlink": ("info", ".mailmap is a symbolic link"),
    # ignored unless asked for
    "extraHeaderEntry": ("ignore", "a tag has extra header lines after its tagger"),
}

OBJECT_TYPES = (b"commit", b"tree", b"blob", b"tag")
GOOD_MODES = frozenset((S_IFREG | 0o755, S_IFREG | 0o644, S_IFLNK, S_IFDIR, S_IFGITLINK, S_IFREG | 0o664))
TIME_OVERFLOW = 1 << 63  # git keeps dates in a signed 64-bit time_t


@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    msg_id: str
    severity: str
    message: str
    offset: int | None = None  # byte offset in the object's content, when meaningful

    @property
    def fails(self) -> bool:
        """Does this problem fail fsck (git's errors and fatals)?"""
        return self.severity in ("fatal", "error")


class _Report:
    """Collects problems; tells the checker whether to stop (git stops an
    object's checks at its first error)."""

    def __init__(self, severities: dict[str, str] | None) -> None:
        self.problems: list[SyntaxProblem] = []
        self.overrides = severities or {}

    def __call__(self, msg_id: str, message: str, offset: int | None = None) -> bool:
        severity = self.overrides.get(msg_id) or MESSAGES[msg_id][0]
        if severity == "ignore":
            return False
        p = SyntaxProblem(msg_id, severity, message, offset)
        self.problems.append(p)
        return p.fails


def check_object(
    type_name: str,
    data: bytes,
    fmt: ObjectFormat,
    severities: dict[str, str] | None = None,
    clean_tree_ids: list[tuple[bytes, ...]] | None = None,
) -> list[SyntaxProblem]:
    """Problems of an object of type ``type_name`` (``severities`` may
    override the defaults, as git's ``fsck.<msg-id>`` settings do).
    ``clean_tree_ids`` receives, for a tree with nothing to report, the ids
    its entries name other than gitlinks (the parse is done anyway: fsck
    notes them for its dangling phase instead of parsing the tree again)."""
    if type_name == "commit":
        return check_commit(data, fmt, severities)
    if type_name == "tree":
        return check_tree(data, fmt, severities, clean_tree_ids)
    if type_name == "tag":
        return check_tag(data, fmt, severities)
    if type_name == "blob":
        return []
    report = _Report(severities)
    report("unknownType", f"unknown object type {type_name[:20]!r}")
    return report.problems


# --- headers and idents --------------------------------------------------------------


def _headers_end(data: bytes, report: _Report) -> bool:
    """git's header rules: no NUL before the blank line that ends the
    header, and the last header line ends with a newline.  False to stop."""
    end = data.find(b"\n\n")
    limit = len(data) if end < 0 else end
    nul = data.find(b"\0", 0, limit)
    if nul >= 0:
        return not report("nulInHeader", f"NUL byte in the header at offset {nul}", nul)
    if end < 0 and not data.endswith(b"\n"):
        return not report("unterminatedHeader", "the header's last line has no newline", len(data))
    return True


_HEX_LINE = {n: re.compile(rb"[0-9a-fA-F]{%d}\n" % n) for n in (40, 64)}


def _hex_line(data: bytes, pos: int, hexsz: int) -> int | None:
    """Position after ``<hex id>\\n`` at ``pos``, or None if that is not there."""
    m = _HEX_LINE[hexsz].match(data, pos)
    return None if m is None else m.end()


def _strtoumax(data: bytes, pos: int) -> tuple[int, int]:
    """C's strtoumax at ``pos``: (value, end position); end == pos when no
    digits.  Leading blanks and a sign are accepted, as C does."""
    i = pos
    n = len(data)
    while i < n and data[i] in b" \t\n\v\f\r":
        i += 1
    neg = False
    if i < n and data[i] in b"+-":
        neg = data[i] == 0x2D
        i += 1
    start = i
    while i < n and 48 <= data[i] <= 57:
        i += 1
    if i == start:
        return 0, pos
    value = int(data[start:i])
    if value >= 1 << 64:
        value = (1 << 64) - 1  # ERANGE saturates
    elif neg:
        value = -value % (1 << 64)
    return value, i


# A well-formed ident line, as git writes them: name (may be empty) and a
# space, <email>, a space, a date without leading zeros, a space, +hhmm.
# Lines that match need no further look; the rest go through the slow path
# below, which finds git's message id for the first defect.
_GOOD_IDENT = re.compile(rb"[^<>\n]* <[^<>\n]*> (?:0|[1-9][0-9]{0,17}) [+-][0-9]{4}\n")


def _check_ident(data: bytes, pos: int, report: _Report) -> tuple[int, bool]:
    """Check the ident starting at ``pos`` (after ``author ``, …).  Returns
    (position of the next line, keep going)."""
    m = _GOOD_IDENT.match(data, pos)
    if m is not None and data[pos] != 0x3C:
        return m.end(), True
    nl = data.find(b"\n", pos)
    next_line = len(data) if nl < 0 else nl + 1
    eol = len(data) if nl < 0 else nl

    def at(i: int) -> int:
        return data[i] if i < len(data) else 0

    def stop(msg_id: str, message: str, offset: int) -> tuple[int, bool]:
        return next_line, not report(msg_id, message, offset)

    if at(pos) == 0x3C:  # '<'
        return stop("missingNameBeforeEmail", "ident has no name before its <email>", pos)
    p = pos
    while p < eol and data[p] not in b"<>":
        p += 1
    if at(p) == 0x3E:  # '>'
        return stop("badName", "ident has '>' in its name", p)
    if at(p) != 0x3C:
        return stop("missingEmail", "ident has no <email>", p)
    if data[p - 1] != 0x20:
        return stop("missingSpaceBeforeEmail", "ident has no space before its <email>", p)
    p += 1
    while p < eol and data[p] not in b"<>":
        p += 1
    if at(p) != 0x3E:
        return stop("badEmail", "ident's email is not closed by '>'", p)
    p += 1
    if at(p) != 0x20:
        return stop("missingSpaceBeforeDate", "ident has no space between its email and date", p)
    p += 1
    if at(p) == 0x30 and at(p + 1) != 0x20:
        return stop("zeroPaddedDate", "ident's date has a leading zero", p)
    value, end = _strtoumax(data, p)
    if value >= TIME_OVERFLOW:
        return stop("badDateOverflow", "ident's date does not fit a 64-bit time", p)
    if end == p or at(end) != 0x20:
        return stop("badDate", "ident's date is not a number followed by a space", p)
    p = end + 1
    if not (at(p) in (0x2B, 0x2D) and all(48 <= at(p + k) <= 57 for k in range(1, 5)) and at(p + 5) == 0x0A):
        return stop("badTimezone", "ident's time zone is not +hhmm or -hhmm at the end of the line", p)
    return next_line, True


# --- commits -----------------------------------------------------------------------------


def check_commit(data: bytes, fmt: ObjectFormat, severities: dict[str, str] | None = None) -> list[SyntaxProblem]:
    report = _Report(severities)
    if not _headers_end(data, report):
        return report.problems
    hexsz = fmt.hexsz
    if not data.startswith(b"tree "):
        report("missingTree", "commit does not start with a 'tree' line", 0)
        return report.problems
    pos = _hex_line(data, 5, hexsz)
    if pos is None:
        if report("badTreeSha1", "commit's tree line does not hold a valid id", 5):
            return report.problems
        pos = _skip_line(data, 5)
    while data.startswith(b"parent ", pos):
        nxt = _hex_line(data, pos + 7, hexsz)
        if nxt is None:
            if report("badParentSha1", "commit's parent line does not hold a valid id", pos + 7):
                return report.problems
            nxt = _skip_line(data, pos + 7)
        pos = nxt
    authors = 0
    while data.startswith(b"author ", pos):
        authors += 1
        pos, go = _check_ident(data, pos + 7, report)
        if not go:
            return report.problems
    if authors == 0:
        if report("missingAuthor", "commit has no 'author' line after its parents", pos):
            return report.problems
    elif authors > 1 and report("multipleAuthors", f"commit has {authors} 'author' lines", pos):
        return report.problems
    if not data.startswith(b"committer ", pos):
        report("missingCommitter", "commit has no 'committer' line after its author", pos)
        return report.problems
    pos, go = _check_ident(data, pos + 10, report)
    if not go:
        return report.problems
    nul = data.find(b"\0")
    if nul >= 0:
        report("nulInCommit", f"NUL byte in the commit at offset {nul}", nul)
    return report.problems


def _skip_line(data: bytes, pos: int) -> int:
    nl = data.find(b"\n", pos)
    return len(data) if nl < 0 else nl + 1


# --- tags -------------------------------------------------------------------------------------


def _tag_line(data: bytes, pos: int, name: str, after: str, report: _Report) -> int | None:
    """Where the tag's ``name`` line that must start at ``pos`` ends, or None
    once git's missing<Name>Entry (no such line) or missing<Name> (the tag
    ends inside it) is reported."""
    if not data.startswith(name.encode() + b" ", pos):
        report(f"missing{name.title()}Entry", f"tag has no '{name}' line after its {after}", pos)
        return None
    eol = data.find(b"\n", pos)
    if eol < 0:
        report(f"missing{name.title()}", f"tag ends inside its '{name}' line", pos)
        return None
    return eol


def check_tag(data: bytes, fmt: ObjectFormat, severities: dict[str, str] | None = None) -> list[SyntaxProblem]:
    from packscope.core.repo.ref_syntax import check_refname

    report = _Report(severities)
    if not _headers_end(data, report):
        return report.problems
    if not data.startswith(b"object "):
        report("missingObject", "tag does not start with an 'object' line", 0)
        return report.problems
    pos = _hex_line(data, 7, fmt.hexsz)
    if pos is None:
        if report("badObjectSha1", "tag's object line does not hold a valid id", 7):
            return report.problems
        pos = _skip_line(data, 7)
    eol = _tag_line(data, pos, "type", "object", report)
    if eol is None:
        return report.problems
    if data[pos + 5 : eol] not in OBJECT_TYPES and report(
        "badType", f"tag's type {data[pos + 5 : eol][:20]!r} is not an object type", pos + 5
    ):
        return report.problems
    pos = eol + 1
    eol = _tag_line(data, pos, "tag", "type", report)
    if eol is None:
        return report.problems
    name = data[pos + 4 : eol].decode("utf-8", "surrogateescape")
    if not check_refname("refs/tags/" + name) and report(
        "badTagName", f"tag name {name[:60]!r} is not a valid ref name", pos + 4
    ):
        return report.problems
    pos = eol + 1
    if not data.startswith(b"tagger ", pos):
        if report("missingTaggerEntry", "tag has no 'tagger' line", pos):
            return report.problems
    else:
        pos, go = _check_ident(data, pos + 7, report)
        if not go:
            return report.problems
    if pos < len(data) and data[pos] != 0x0A:
        report("extraHeaderEntry", "tag has header lines after its tagger", pos)
    return report.problems


# --- trees ----------------------------------------------------------------------------------------

_MODE_TEXTS = GIT_MODES


_DOTGIT_CANDIDATE = re.compile(rb"(?:^|\0)(?:\.|\xe2|\xef|[gG][iI][tT]~)")
_CLEAN_MODES = frozenset(GIT_MODES)
_SPECIALS = (
    (".gitmodules", "gitmodulesSymlink"),
    (".gitattributes", "gitattributesSymlink"),
    (".gitignore", "gitignoreSymlink"),
    (".mailmap", "mailmapSymlink"),
)


def _tree_is_clean(data: bytes, rawsz: int, ids: list[tuple[bytes, ...]] | None = None) -> bool:
    """True when the tree has nothing to report, decided with a handful of
    whole-tree operations in C (a history's trees hold tens of millions of
    entries; a Python loop per entry is what made fsck slow).  False means
    "look closely", not necessarily a problem."""
    entries = tree_patterns(rawsz).entries.findall(data)
    if not entries:
        return not data
    modes, names, oids = zip(*entries, strict=True)
    # findall skips what it cannot match: the matches cover the whole tree
    # only if every entry parsed, back to back.
    if sum(map(len, modes)) + sum(map(len, names)) + (2 + rawsz) * len(entries) != len(data):
        return False
    if not _CLEAN_MODES.issuperset(modes) or bytes(rawsz) in oids or b"." in names or b".." in names:
        return False
    joined = b"\0".join(names)
    if b"/" in joined:
        return False
    # Only a name starting with '.', an HFS+-ignorable code point (lead
    # bytes E2/EF) or "git~" can fold to ".git": look closer at those alone.
    if _DOTGIT_CANDIDATE.search(joined) and any(
        is_dotgit(n) for n in names if n[:1] in (b".", b"\xe2", b"\xef") or n[:4].lower() == b"git~"
    ):
        return False
    if b"120000" in modes:
        for mode, name in zip(modes, names, strict=True):
            if mode == b"120000" and any(is_special_name(name, base) for base, _ in _SPECIALS):
                return False
    if len(set(names)) != len(names):
        return False
    keys = (
        [n + b"/" if m == b"40000" else n for m, n in zip(modes, names, strict=True)]
        if b"40000" in modes
        else list(names)
    )
    if keys != sorted(keys):
        return False
    if ids is not None:  # every mode is one of git's: only a gitlink (160000) names no object here
        ids.append(oids if b"160000" not in modes else _without_gitlinks(modes, oids))
    return True


def _without_gitlinks(modes: tuple[bytes, ...], oids: tuple[bytes, ...]) -> tuple[bytes, ...]:
    # slices around the (few) gitlinks: a root tree holds hundreds of entries and one submodule
    parts, start, at = [], 0, -1
    for _ in range(modes.count(b"160000")):
        at = modes.index(b"160000", at + 1)
        parts.append(oids[start:at])
        start = at + 1
    parts.append(oids[start:])
    return tuple(chain.from_iterable(parts))


# The compiled tree check (core/_native.c fsck_tree) answers a bit set: 0
# for a clean tree (as _tree_is_clean decides), else the message ids
# check_tree_closely reports, plus "look" bits for what only the pure path
# decides (non-ASCII names that may fold to .git or a special name, a mode
# git does not spell so, a duplicate search given up).  A non-zero answer
# always goes through check_tree_closely: the bits only say "not clean".
TREE_FLAGS = {
    "badTree": 0x1,
    "nullSha1": 0x2,
    "fullPathname": 0x4,
    "hasDot": 0x8,
    "hasDotdot": 0x10,
    "hasDotgit": 0x20,
    "zeroPaddedFilemode": 0x40,
    "badFilemode": 0x80,
    "gitmodulesSymlink": 0x100,
    "gitattributesSymlink": 0x100,
    "gitignoreSymlink": 0x100,
    "mailmapSymlink": 0x100,
    "duplicateEntries": 0x200,
    "treeNotSorted": 0x400,
}
TREE_LOOK_NAME, TREE_LOOK_MODE, TREE_LOOK_BUDGET = 0x800, 0x1000, 0x2000


def check_tree(
    data: bytes,
    fmt: ObjectFormat,
    severities: dict[str, str] | None = None,
    clean_ids: list[tuple[bytes, ...]] | None = None,
) -> list[SyntaxProblem]:
    compiled = native.backend
    if compiled is not None:
        flags, ids, _ = compiled.fsck_tree(data, fmt.rawsz)
        if flags:
            return check_tree_closely(data, fmt, severities)
        if clean_ids is not None and ids is not None:
            clean_ids.append(ids)
        return []
    if _tree_is_clean(data, fmt.rawsz, clean_ids):
        return []
    return check_tree_closely(data, fmt, severities)


def check_tree_closely(data: bytes, fmt: ObjectFormat, severities: dict[str, str] | None = None) -> list[SyntaxProblem]:
    """check_tree entry by entry: the offsets of first cases, git's order."""
    report = _Report(severities)
    rawsz = fmt.rawsz
    null = bytes(rawsz)
    n = len(data)
    find = data.find
    known_modes = _MODE_TEXTS
    flags: dict[str, int] = {}  # msg id -> offset of its first case
    names: set[bytes] = set()
    prev_key: bytes | None = None
    pos = 0
    while pos < n:
        sp = find(b" ", pos)
        nul = find(b"\0", sp + 1) if sp > pos else -1
        if nul < 0 or nul == sp + 1 or nul + 1 + rawsz > n:
            report("badTree", f"tree cannot be parsed: malformed entry at byte {pos}", pos)
            return report.problems
        mode_text = data[pos:sp]
        mode = known_modes.get(mode_text)
        if mode is None:  # the rare path: anything git did not write itself
            mode = tree_mode(mode_text)
            if mode is None:
                report("badTree", f"tree cannot be parsed: malformed mode at byte {pos}", pos)
                return report.problems
            mode &= 0xFFFF  # git keeps the mode in 16 bits here
            if mode_text[0] == 0x30:
                flags.setdefault("zeroPaddedFilemode", pos)
            if mode not in GOOD_MODES:
                flags.setdefault("badFilemode", pos)
        name = data[sp + 1 : nul]
        if data[nul + 1 : nul + 1 + rawsz] == null:
            flags.setdefault("nullSha1", pos)
        if b"/" in name:
            flags.setdefault("fullPathname", pos)
        if name[0] == 0x2E and (name == b"." or name == b".."):
            flags.setdefault("hasDot" if name == b"." else "hasDotdot", pos)
        elif is_dotgit(name):
            flags.setdefault("hasDotgit", pos)
        if S_ISLNK(mode):
            for base, msg_id in _SPECIALS:
                if is_special_name(name, base):
                    flags.setdefault(msg_id, pos)
        # git's order compares a directory as if its name ended in '/'; two
        # entries of one name (whatever their modes) are duplicates.
        if name in names:
            flags.setdefault("duplicateEntries", pos)
        else:
            names.add(name)
            key = name + b"/" if S_ISDIR(mode) else name
            if prev_key is not None and key <= prev_key:
                flags.setdefault("treeNotSorted", pos)
            prev_key = key
        pos = nul + 1 + rawsz
    for msg_id in (
        "nullSha1",
        "fullPathname",
        "emptyName",
        "hasDot",
        "hasDotdot",
        "hasDotgit",
        "zeroPaddedFilemode",
        "badFilemode",
        "gitmodulesSymlink",
        "gitattributesSymlink",
        "gitignoreSymlink",
        "mailmapSymlink",
        "duplicateEntries",
        "treeNotSorted",
    ):
        if msg_id in flags:
            report(msg_id, _TREE_TEXT[msg_id], flags[msg_id])
    return report.problems


_TREE_TEXT = {
    "nullSha1": "tree has entries pointing to the null id",
    "fullPathname": "tree has entry names containing '/'",
    "emptyName": "tree has an entry with an empty name",
    "hasDot": "tree has an entry named '.'",
    "hasDotdot": "tree has an entry named '..'",
    "hasDotgit": "tree has an entry named '.git'",
    "zeroPaddedFilemode": "tree has zero-padded file modes",
    "badFilemode": "tree has file modes git does not write",
    "gitmodulesSymlink": ".gitmodules is a symbolic link",
    "gitattributesSymlink": ".gitattributes is a symbolic link",
    "gitignoreSymlink": ".gitignore is a symbolic link",
    "mailmapSymlink": ".mailmap is a symbolic link",
    "duplicateEntries": "tree has duplicate entries",
    "treeNotSorted": "tree entries are not in git's order",
}
