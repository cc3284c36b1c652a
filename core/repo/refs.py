"""Refs in the files backend: loose files, ``packed-refs``, symbolic refs.

Layout (``git help gitrepository-layout``, ``git help git-worktree``):

* A loose ref NAME is the file ``DIR/NAME`` holding a hex id, or ``ref: TARGET``
  for a symbolic ref (an old-style symlink into ``refs/`` counts too).  Text
  after the id and a whitespace byte is allowed (FETCH_HEAD's form).
* ``packed-refs`` (in the common dir) holds ``<hex> SP <name> LF`` lines in
  name order, each optionally followed by ``^<hex> LF``, the fully peeled
  object of an annotated tag, and is headed by ``# pack-refs with: TRAITS``.
  A loose ref hides a packed ref of the same name.
* Per-worktree refs — HEAD and other all-caps root refs (``ORIG_HEAD``, …),
  ``refs/bisect/``, ``refs/worktree/``, ``refs/rewritten/`` — live in the
  worktree's own git dir; every other ref lives in the common dir.  From any
  worktree, ``main-worktree/NAME`` reaches the main worktree's per-worktree ref
  and ``worktrees/W/NAME`` that of linked worktree W.
* Symbolic refs are followed at most :data:`MAX_SYMREF_READS` reads deep (git
  gives up on a fifth symref in a row); a cycle is reported as such.

Root refs other than HEAD may be any valid one-level name, as git 2.39 allows;
names with a slash outside ``refs/`` (other than the worktree forms) are never
refs here, so ``logs/HEAD`` or ``objects/…`` cannot be read as refs.

With ``extensions.refStorage = reftable`` the same questions are answered
from the reftable stacks (packscope.core.repo.reftable): ``reftable/`` in
the common dir for shared refs, in a linked worktree's git dir for its
per-worktree refs; FETCH_HEAD and MERGE_HEAD stay files, as git keeps them.

Damage is local: an unparseable ``packed-refs`` line or loose file, or a file
whose name is not a valid ref name, is recorded in :attr:`RefStore.problems`
(``BadRefError``, kind ``ref-unparseable`` or ``ref-bad-name``, with path,
byte offset and line) and the other refs read on.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from packscope.core.errors import BadRefError
from packscope.core.oid import is_hex
from packscope.core.repo.packed_refs import UNSURE, find_packed_ref, parse_packed_refs
from packscope.core.repo.ref_syntax import (
    DWIM_RULES,
    Ref,
    check_refname,
    is_per_worktree,
    is_skipped_ref_file,
    ref_oid,
    ref_problem,
    refname_is_safe,
)

if TYPE_CHECKING:
    from packscope.core.repo.reftable import ReftableStack
    from packscope.core.repo.repository import Repository

MAX_SYMREF_READS = 5  # git's SYMREF_MAXDEPTH: reads per resolution
MAX_LOOSE_SIZE = 1 << 16  # a loose ref is a line; anything bigger is not one
FILE_REFS = ("FETCH_HEAD", "MERGE_HEAD")  # files even in a reftable repository (git 2.45+)


class RefStore:
    """Read-only view of one worktree's refs."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self.fmt = repo.object_format
        self.git_dir = Path(repo.git_dir)
        self.common_dir = Path(repo.common_dir)
        self.linked = self.git_dir != self.common_dir
        self.packed_path = self.common_dir / "packed-refs"
        self._traits: frozenset[str] = frozenset()
        self._data: bytes | None = None  # packed-refs' bytes, read once per change of the file
        self._data_key: tuple[int, int, int] | None = None
        self._packed: dict[str, Ref] = {}
        self._packed_key: tuple[int, int, int] | None = None
        self._packed_problems: list[BadRefError] = []
        self._loose_problems: dict[str, BadRefError] = {}
        self.storage = getattr(repo, "ref_storage", "files")
        self._stacks: dict[Path, tuple[object, ReftableStack]] = {}

    # --- problems -----------------------------------------------------------------

    @property
    def problems(self) -> list[BadRefError]:
        """Damage found by reading packed-refs and by :meth:`iter_refs` scans:
        lines and loose files that do not parse, files whose names are not
        ref names.  (:meth:`read` raises instead of recording.)"""
        self._load_packed()
        tables = [e for _, stack in self._stacks.values() for e in stack.problems]
        return list(self._packed_problems) + list(self._loose_problems.values()) + tables

    def fatal_packed_problem(self) -> BadRefError | None:
        """The first ``packed-refs`` problem git dies of ("unexpected line
        in packed-refs": any command that reads the file), or None."""
        self._load_packed()
        for e in self._packed_problems:
            if self.packed_problem_class(e) == "fatal":
                return e
        return None

    def packed_problem_class(self, e: BadRefError) -> str:
        """What git makes of a ``packed-refs`` line packscope could not take:
        "duplicate" (git keeps one, silently), "outside" (a good name outside
        refs/: no listing of refs/ sees it), "bad-name" (an id and a name no
        ref can have: listed, and broken), else "fatal" (git dies)."""
        data = self._data or b""
        line = b""
        if e.offset is not None and e.offset < len(data):
            end = data.find(b"\n", e.offset)
            line = data[e.offset : len(data) if end < 0 else end]
        head, sp, rawname = line.partition(b" ")
        if not (sp and len(head) == self.fmt.hexsz and is_hex(head.decode("latin-1")) and rawname):
            return "fatal"
        if "duplicate entry" in e.message:
            return "duplicate"
        rawname = rawname.split(b"\0", 1)[0]  # git's C string ends at a NUL
        name = os.fsdecode(rawname)
        if not check_refname(name, allow_onelevel=True) and not refname_is_safe(name):
            return "fatal"  # "packed refname is dangerous"
        if not rawname.startswith(b"refs/"):
            return "outside"
        return "fatal" if check_refname(name) else "bad-name"

    def packed_bad_names(self) -> list[str]:
        """Names of the packed lines git lists but cannot read (class "bad-name")."""
        self._load_packed()
        out = []
        data = self._data or b""
        for e in self._packed_problems:
            if e.path == str(self.packed_path) and self.packed_problem_class(e) == "bad-name" and e.offset is not None:
                end = data.find(b"\n", e.offset)
                out.append(os.fsdecode(data[e.offset : len(data) if end < 0 else end].partition(b" ")[2]))
        return out

    # --- reftable ---------------------------------------------------------------------

    def _stack(self, directory: Path) -> ReftableStack:
        """The reftable stack in ``directory``, read again when tables.list changed."""
        try:
            st = os.stat(directory / "tables.list")
            key: object = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            key = None
        cached = self._stacks.get(directory)
        if cached is None or cached[0] != key or key is None:
            from packscope.core.repo.reftable import ReftableStack  # (files-backend repositories never load it)

            cached = (key, ReftableStack(directory, self.fmt.name, self.fmt.rawsz))
            self._stacks[directory] = cached
        return cached[1]

    def reftable_tables(self) -> int:
        """How many tables the (shared) reftable stack holds."""
        return len(self._stack(self.common_dir / "reftable").tables)

    def _reftable_place(self, name: str) -> tuple[Path, str]:
        """(stack directory, name inside it) for a reftable repository."""
        if name.startswith("main-worktree/"):
            return self.common_dir / "reftable", name[len("main-worktree/") :]
        if name.startswith("worktrees/"):
            wt, _, rest = name[len("worktrees/") :].partition("/")
            return self.common_dir / "worktrees" / wt / "reftable", rest
        if self.linked and is_per_worktree(name):
            return self.git_dir / "reftable", name
        return self.common_dir / "reftable", name

    def _read_reftable(self, name: str) -> Ref | None:
        directory, key = self._reftable_place(name)
        record = self._stack(directory).refs.get(key)
        if record is None:
            return None
        return Ref(name, record.oid, record.target, record.peeled, "reftable")

    def _iter_reftable(self, prefix: str) -> Iterator[Ref]:
        found: dict[str, Ref] = {}
        own = self._stack(self.git_dir / "reftable") if self.linked else None
        for stack, keep in ((self._stack(self.common_dir / "reftable"), False), (own, True)):
            if stack is None:
                continue
            for name, r in stack.refs.items():
                if (
                    name.startswith(prefix)
                    and name.startswith("refs/")
                    and (not self.linked or is_per_worktree(name) == keep)
                ):
                    found[name] = Ref(name, r.oid, r.target, r.peeled, "reftable")
        for name in sorted(found, key=lambda n: n.encode("utf-8", "surrogateescape")):
            yield found[name]

    # --- where a name lives -------------------------------------------------------

    def _locate(self, name: str) -> tuple[Path, str | None] | None:
        """(loose file path, the name to look up in packed-refs or None), or
        None when ``name`` cannot be a ref."""
        base, rest = None, name
        if name.startswith("main-worktree/"):
            base, rest = self.common_dir, name[len("main-worktree/") :]
        elif name.startswith("worktrees/"):
            wt, _, rest = name[len("worktrees/") :].partition("/")
            if not wt or not check_refname(wt, allow_onelevel=True):
                return None
            base = self.common_dir / "worktrees" / wt
        if base is not None:
            # Only per-worktree refs are reached this way.
            if not is_per_worktree(rest) or not check_refname(rest, allow_onelevel=True):
                return None
            packed = rest if base == self.common_dir and rest.startswith("refs/") else None
            return base.joinpath(*rest.split("/")), packed
        if not check_refname(name, allow_onelevel=True):
            return None
        if "/" in name and not name.startswith("refs/"):
            return None
        packed = name if name.startswith("refs/") else None
        if is_per_worktree(name):
            # packed-refs is shared: its per-worktree entries are the main worktree's.
            return self.git_dir.joinpath(*name.split("/")), None if self.linked else packed
        return self.common_dir.joinpath(*name.split("/")), packed

    def ref_path(self, name: str) -> Path | None:
        """The loose file that would hold ``name`` (in a reftable
        repository: the stack's tables.list)."""
        loc = self._locate(name)
        if loc is not None and self.storage == "reftable" and name not in FILE_REFS:
            return self._reftable_place(name)[0] / "tables.list"
        return None if loc is None else loc[0]

    # --- reading one ref ------------------------------------------------------------

    def read(self, name: str) -> Ref | None:
        """The ref as stored (loose first, then packed), or None if absent.
        BadRefError (ref-bad-name) for a name that cannot be a ref,
        (ref-unparseable) for a loose file that is not a ref."""
        loc = self._locate(name)
        if loc is None:
            raise BadRefError(
                f"not a valid ref name: {name!r}", kind="ref-bad-name", remedy="See git check-ref-format for the rules."
            )
        if self.storage == "reftable" and name not in FILE_REFS:
            return self._read_reftable(name)
        path, packed_name = loc
        ref = self._read_loose(name, path)
        if ref is not None:
            return ref
        if packed_name is not None:
            hit = self._packed_get(packed_name)
            if hit is not None and packed_name != name:
                hit = Ref(name, hit.oid, hit.symref, hit.peeled, hit.source)
            return hit
        return None

    def _read_loose(self, name: str, path: Path) -> Ref | None:
        try:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(path)
                if target.startswith("refs/"):
                    return Ref(name, None, target, None, "loose")  # an old-style symlink symref
                st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                return None  # a directory (refs/heads/x/…) is not the ref x
            with open(path, "rb") as f:
                data = f.read(MAX_LOOSE_SIZE + 1)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            raise ref_problem(
                f"cannot read ref {name}: {e.strerror}", path=path, offset=None, line=None, kind="ref-unreadable"
            ) from None
        return self._parse_loose(name, path, data)

    def _parse_loose(self, name: str, path: Path, data: bytes) -> Ref:
        text = data.rstrip(b" \t\n\r")  # git's isspace: space, tab, LF, CR (no VT, no FF)
        if len(data) > MAX_LOOSE_SIZE:
            why = "file too large to be a ref"
        elif text.startswith(b"ref:"):
            target = os.fsdecode(text[4:].lstrip(b" \t\n\r"))
            if check_refname(target, allow_onelevel=True):
                return Ref(name, None, target, None, "loose")
            why = f"symbolic ref to an invalid name {target!r}"
        else:
            hexsz = self.fmt.hexsz
            head = text[:hexsz].decode("ascii", "replace")
            if (
                len(head) == hexsz
                and is_hex(head)
                and (len(text) == hexsz or text[hexsz : hexsz + 1] in (b" ", b"\t", b"\n", b"\r"))
            ):
                return Ref(name, bytes.fromhex(head), None, None, "loose")
            why = f"expected a {self.fmt.name} id ({hexsz} hex digits) or 'ref: TARGET'"
        raise ref_problem(
            f"loose ref {name} is unparseable: {why}", path=path, offset=0, line=1, kind="ref-unparseable"
        )

    # --- packed-refs -------------------------------------------------------------------

    @property
    def packed_traits(self) -> frozenset[str]:
        """The traits packed-refs' header line declares (``peeled``, ``sorted``, …)."""
        self._load_packed()
        return self._traits

    def _read_packed(self) -> tuple[tuple[int, int, int] | None, bytes | None, OSError | None]:
        """(stat key, bytes, read error) of packed-refs; key None when it is
        absent.  The bytes are kept until the file changes."""
        try:
            st = os.stat(self.packed_path)
        except OSError:
            return None, None, None
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        if key != self._data_key:
            try:
                data = self.packed_path.read_bytes()
            except OSError as e:
                return key, None, e
            self._data, self._data_key = data, key
        return key, self._data, None

    def _load_packed(self) -> None:
        key, data, error = self._read_packed()
        if key is None:
            self._packed, self._packed_key, self._packed_problems = {}, None, []
            self._traits = frozenset()
            return
        if key == self._packed_key:
            return
        if data is None:
            e = error or OSError("unreadable")
            self._packed, self._packed_key = {}, None
            self._packed_problems = [
                ref_problem(
                    f"cannot read packed-refs: {e.strerror}",
                    path=self.packed_path,
                    offset=None,
                    line=None,
                    kind="ref-unreadable",
                )
            ]
            return
        self._packed, self._traits, self._packed_problems = parse_packed_refs(data, self.fmt.hexsz, self.packed_path)
        self._packed_key = key

    def _packed_get(self, name: str) -> Ref | None:
        """packed-refs' entry for ``name``.  Until something needs every
        entry, one name is found by a byte search instead of parsing every
        line (git.git's packed-refs has 4,000 refs: resolving HEAD should
        not cost 20 ms); anything unusual falls back to the full parse."""
        key, data, _ = self._read_packed()
        if data is not None and key != self._packed_key:
            hit = find_packed_ref(data, name, self.fmt.hexsz)
            if hit is not UNSURE:
                return hit
        self._load_packed()
        return self._packed.get(name)

    def _packed_may_hold(self, prefix: str) -> bool:
        """False when no line of packed-refs can name a ref under ``prefix``
        (known without parsing it)."""
        key, data, _ = self._read_packed()
        if key is None or key == self._packed_key or data is None or prefix in ("", "refs/"):
            return True
        return b" " + os.fsencode(prefix) in data

    def packed_refs(self) -> dict[str, Ref]:
        """Every good packed-refs entry, by name (none with reftable)."""
        if self.storage == "reftable":
            return {}
        self._load_packed()
        return dict(self._packed)

    # --- following symbolic refs ---------------------------------------------------------

    def follow(self, name: str) -> tuple[Ref, ...]:
        """The chain of refs from ``name`` to the first non-symbolic one."""
        chain: list[Ref] = []
        seen: set[str] = set()
        current = name
        for _ in range(MAX_SYMREF_READS):
            try:
                ref = self.read(current)
            except BadRefError as e:
                if not chain or e.path is not None:
                    raise
                # a symref whose target escapes refs/ (ref: logs/HEAD): the file to fix is the symref's
                raise BadRefError(
                    f"symbolic ref {chain[-1].name} points to {current!r}, which is not a ref name",
                    path=str(self.ref_path(chain[-1].name)),
                    kind=e.kind,
                    remedy=f"Point {chain[-1].name} at a ref under refs/ (git symbolic-ref), or delete it.",
                ) from e
            if ref is None:
                if not chain:
                    raise BadRefError(
                        f"no such ref: {name}",
                        kind="ref-not-found",
                        remedy="List refs with git for-each-ref (or packscope refs).",
                    )
                hops = " -> ".join(r.name for r in chain) + f" -> {current}"
                raise BadRefError(
                    f"dangling symbolic ref: {hops}, and {current} does not exist"
                    + (" (an unborn branch)" if name == "HEAD" and len(chain) == 1 else ""),
                    path=str(self.ref_path(chain[-1].name)),
                    kind="ref-dangling",
                    remedy=f"Point {chain[-1].name} elsewhere (git symbolic-ref), or create {current}.",
                )
            chain.append(ref)
            if ref.symref is None:
                return tuple(chain)
            seen.add(current)
            current = ref.symref
            if current in seen:
                hops = " -> ".join(r.name for r in chain) + f" -> {current}"
                raise BadRefError(
                    f"symbolic ref loop: {hops}",
                    path=str(self.ref_path(ref.name)),
                    kind="ref-loop",
                    remedy=f"Break the loop: git symbolic-ref {ref.name} refs/heads/BRANCH.",
                )
        hops = " -> ".join(r.name for r in chain)
        raise BadRefError(
            f"symbolic refs nested too deep (more than {MAX_SYMREF_READS - 1}): {hops} -> …",
            path=str(self.ref_path(chain[0].name)),
            kind="ref-too-deep",
            remedy="Point the symbolic ref at a branch directly.",
        )

    def resolve(self, name: str) -> bytes:
        """The object id ``name`` finally names, following symbolic refs."""
        return ref_oid(self.follow(name)[-1])

    def head(self) -> Ref | None:
        return self.read("HEAD")

    # --- all refs -----------------------------------------------------------------------------

    def iter_refs(self, prefix: str = "refs/") -> Iterator[Ref]:
        """Refs under ``refs/`` whose names start with ``prefix``, sorted by
        name as ``git for-each-ref`` sorts (bytewise).  Symbolic refs come as
        stored (``symref`` set).  A loose file that does not parse, or whose
        name is not a ref name, is skipped and recorded in :attr:`problems`
        (and hides the packed ref of the same name, as in git)."""
        if self.storage == "reftable":
            yield from self._iter_reftable(prefix)
            return
        found: dict[str, Ref] = {}
        if self._packed_may_hold(prefix):
            self._load_packed()
            for name, ref in self._packed.items():
                if name.startswith(prefix) and not (self.linked and is_per_worktree(name)):
                    found[name] = ref
        if prefix.startswith("refs/") or "refs/".startswith(prefix):
            if self.linked:
                # A linked worktree sees its own per-worktree refs, not the main one's.
                self._walk(self.common_dir, prefix, found, lambda n: not is_per_worktree(n))
                self._walk(self.git_dir, prefix, found, is_per_worktree)
            else:
                self._walk(self.common_dir, prefix, found, lambda n: True)
        for name in sorted(found, key=lambda n: n.encode("utf-8", "surrogateescape")):
            yield found[name]

    def broken_refs(self, prefix: str = "refs/", relist: bool = True) -> list[str]:
        """Names of loose refs under ``prefix`` that hold no id and no valid
        ``ref:`` line (empty files included), sorted, as :meth:`iter_refs`
        finds them now (``relist=False``: as the last listing of ``prefix``
        or of a prefix of it found them)."""
        if relist:
            list(self.iter_refs(prefix))
        return sorted(
            name for name, e in self._loose_problems.items() if name.startswith(prefix) and e.kind == "ref-unparseable"
        )

    def _walk(self, base: Path, prefix: str, out: dict[str, Ref], accept: Callable[[str], bool]) -> None:
        stack = ["refs/"]
        while stack:
            rel = stack.pop()
            try:
                entries = list(os.scandir(base.joinpath(*rel.split("/"))))
            except OSError:
                continue
            for entry in entries:
                if is_skipped_ref_file(entry.name):
                    continue
                name = rel + entry.name
                if entry.is_dir(follow_symlinks=False):
                    sub = name + "/"
                    if (sub.startswith(prefix) or prefix.startswith(sub)) and accept(sub):
                        stack.append(sub)
                    continue
                if not name.startswith(prefix) or not accept(name):
                    continue
                if not check_refname(name):
                    self._loose_problems[name] = ref_problem(
                        f"ignoring ref with broken name {name!r}",
                        path=entry.path,
                        offset=None,
                        line=None,
                        kind="ref-bad-name",
                    )
                    continue
                try:
                    ref = self._read_loose(name, Path(entry.path))
                except BadRefError as e:
                    self._loose_problems[name] = e
                    out.pop(name, None)  # git shows neither the broken loose ref nor the packed one it hides
                    continue
                self._loose_problems.pop(name, None)
                if ref is not None:
                    out[name] = ref

    # --- short names -------------------------------------------------------------------------

    def _dwim_iter(self, name: str) -> Iterator[str]:
        if not name:
            return
        for rule in DWIM_RULES:
            full = rule.format(name)
            try:
                if self._locate(full) is None:
                    continue
                self.follow(full)
            except BadRefError:
                continue  # git skips dangling and broken candidates
            yield full

    def dwim_all(self, name: str) -> list[str]:
        """Every full name ``name`` may abbreviate, in git's rule order,
        keeping only refs that resolve."""
        return list(self._dwim_iter(name))

    def dwim(self, name: str) -> str | None:
        """The full ref name git picks for ``name`` (first rule that resolves)."""
        return next(self._dwim_iter(name), None)
