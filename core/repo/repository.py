"""Finding a repository and deciding whether packscope may read it.

Discovery follows git (``git help repository-layout``, ``git help git`` on
``GIT_DIR`` and friends, ``git help config`` on ``core.*``/``extensions.*``):

* ``GIT_DIR`` set: that directory (or the gitfile it names) is the repository;
  ``GIT_WORK_TREE``, else ``core.worktree``, else the starting directory is
  the work tree, unless ``core.bare`` is true.
* Otherwise walk up from the start directory.  In each directory D: a ``.git``
  file (``gitdir: PATH``, PATH relative to the file) or a valid ``.git``
  directory makes D the work tree; failing that, D itself may be a git
  directory (a bare repository, or the inside of a ``.git``).  The walk stops
  at the filesystem root, below ``GIT_CEILING_DIRECTORIES`` and, unless
  ``GIT_DISCOVERY_ACROSS_FILESYSTEM`` is true, at a filesystem boundary.
* A git directory is valid when its ``HEAD`` is a symref into ``refs/`` (or a
  hex id), and ``objects/`` and ``refs/`` exist in the common directory (the
  directory named by a ``commondir`` file, for linked worktrees).

Relative paths in the environment are taken relative to the start directory,
as if git had been run with ``-C START``.  Not modelled: ``safe.directory``
ownership checks, ``safe.bareRepository``, ``GIT_IMPLICIT_WORK_TREE``, the
system and global config files.

The repository format: ``core.repositoryformatversion`` 0 or 1.  Version 0
honours the extensions git treats as always-known (noop, preciousObjects,
partialClone, worktreeConfig) and ignores any other, *except* the v1-only ones
(objectFormat, refStorage, …), which git refuses there and so do we.  Version 1
refuses every extension not listed in :data:`KNOWN_EXTENSIONS`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from packscope.core.errors import ConfigError, NotARepositoryError, UnsupportedRepositoryError
from packscope.core.oid import FORMATS, ObjectFormat, is_hex
from packscope.core.repo.config import Config, expand_path, parse_bool, parse_int

# Extensions git honours even in a version-0 repository.
V0_EXTENSIONS = frozenset(("noop", "preciousobjects", "partialclone", "worktreeconfig"))
# Extensions that require version 1; harmless for a reader, or checked below.
V1_EXTENSIONS = frozenset(("noop-v1", "objectformat", "refstorage", "relativeworktrees"))
KNOWN_EXTENSIONS = V0_EXTENSIONS | V1_EXTENSIONS

MAX_GITFILE_SIZE = 1 << 20  # git refuses larger gitfiles too


class Worktree(NamedTuple):
    """A linked worktree as recorded under ``common_dir/worktrees/NAME``."""

    name: str
    git_dir: Path
    head_path: Path
    work_tree: Path | None  # from the ``gitdir`` file; None when unreadable
    locked: bool
    prunable: bool  # its work tree's .git file is gone


class Repository(NamedTuple):
    """Where a repository's pieces are, and how to read them.

    ``git_dir`` is this worktree's git directory (HEAD, per-worktree refs);
    ``common_dir`` holds what all worktrees share (objects, refs, config).
    ``env_alternates`` are only the directories from
    ``GIT_ALTERNATE_OBJECT_DIRECTORIES``; ``objects/info/alternates`` belongs
    to the object store.
    """

    git_dir: Path
    common_dir: Path
    work_tree: Path | None
    bare: bool
    config: Config  # (left out of repr: see __repr__)
    object_format: ObjectFormat
    objects_dir: Path
    env_alternates: tuple[Path, ...] = ()
    format_version: int = 0
    extensions: tuple[tuple[str, str | None], ...] = ()  # (lower-cased name, raw value)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._fields if k != "config")
        return f"Repository({shown})"

    # --- construction ----------------------------------------------------------

    @classmethod
    def discover(cls, start: str | os.PathLike[str] | None = None, env: Mapping[str, str] = os.environ) -> Repository:
        """Find the repository the way ``git -C START`` would."""
        cwd = Path(os.path.abspath(os.fspath(start) if start is not None else os.getcwd()))
        if env.get("GIT_DIR"):
            return _explicit(cwd, env)
        if not cwd.is_dir():
            raise NotARepositoryError(f"not a directory: {cwd}", path=str(cwd))
        ceiling = _ceiling(cwd, env.get("GIT_CEILING_DIRECTORIES", ""))
        one_fs = not _env_bool(env, "GIT_DISCOVERY_ACROSS_FILESYSTEM")
        device = cwd.stat().st_dev
        d = cwd
        while True:
            found = _probe(d, cwd, env)
            if found is not None:
                return found
            parent = d.parent
            if parent == d:
                stop = "reached the filesystem root"
                break
            if ceiling is not None and len(str(parent)) <= len(str(ceiling)):
                stop = f"stopped at GIT_CEILING_DIRECTORIES entry {ceiling}"
                break
            if one_fs and parent.stat().st_dev != device:
                stop = f"stopped at filesystem boundary {d} (set GIT_DISCOVERY_ACROSS_FILESYSTEM=1 to cross it)"
                break
            d = parent
        raise NotARepositoryError(
            f"not a git repository (nor any parent directory): {cwd}; searched from {cwd} up to {d}, {stop}",
            path=str(cwd),
        )

    @classmethod
    def open(cls, path: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Repository:
        """The repository at exactly ``path``: a work tree (holding ``.git``),
        a ``.git`` directory or gitfile, or a bare repository.  No walking up.
        ``env`` (default: none) may supply GIT_WORK_TREE, GIT_OBJECT_DIRECTORY,
        GIT_COMMON_DIR and GIT_ALTERNATE_OBJECT_DIRECTORIES; GIT_DIR is ignored."""
        env = {k: v for k, v in (env or {}).items() if k != "GIT_DIR"}
        p = Path(os.path.abspath(os.fspath(path)))
        if p.is_file():
            git_dir = _read_gitfile(p)
            _require_git_dir(git_dir, env, f"the gitfile {p} points to")
            return _build(git_dir, "dotgit", p.parent, p.parent, env)
        if not p.is_dir():
            raise NotARepositoryError(f"no such directory: {p}", path=str(p))
        found = _probe(p, p, env)
        if found is None:
            raise NotARepositoryError(
                f"not a git repository: {p} (no valid .git there, and it is not a git directory itself)", path=str(p)
            )
        return found

    # --- views -------------------------------------------------------------------

    @property
    def head_path(self) -> Path:
        return self.git_dir / "HEAD"

    @property
    def is_linked_worktree(self) -> bool:
        return self.git_dir != self.common_dir

    @property
    def worktree_name(self) -> str | None:
        """NAME for a linked worktree (``common_dir/worktrees/NAME``), else None."""
        if self.git_dir.parent == self.common_dir / "worktrees":
            return self.git_dir.name
        return None

    @property
    def ref_storage(self) -> str:
        """``files`` or ``reftable`` (extensions.refStorage)."""
        value = self.extension("refstorage")
        return value.lower() if value else "files"

    def extension(self, name: str) -> str | None:
        """The raw value of ``extensions.NAME`` (None when absent or bare)."""
        n = name.lower()
        for key, value in self.extensions:
            if key == n:
                return value
        return None

    def worktrees(self) -> list[Worktree]:
        """Linked worktrees, by name (the main worktree is not listed)."""
        root = self.common_dir / "worktrees"
        try:
            names = sorted(os.listdir(root))
        except OSError:
            return []
        out = []
        for name in names:
            gd = root / name
            if not gd.is_dir():
                continue
            work_tree, prunable = None, True
            try:
                text = (gd / "gitdir").read_text(errors="surrogateescape").strip()
            except OSError:
                text = ""
            if text:
                dotgit = Path(os.path.abspath(os.path.join(gd, text)))  # absolute, or relative (relativeWorktrees)
                work_tree = dotgit.parent
                prunable = not dotgit.exists()
            out.append(Worktree(name, gd, gd / "HEAD", work_tree, (gd / "locked").exists(), prunable))
        return out

    def promisor_remotes(self) -> list[str]:
        """Remotes that promise missing objects: ``extensions.partialClone``
        first, then every ``remote.NAME.promisor = true``, in config order."""
        names: list[str] = []
        pc = self.extension("partialclone")
        if pc:
            names.append(pc)
        for remote in self.config.subsections("remote"):
            if remote not in names and self.config.get_bool("remote", "promisor", remote):
                names.append(remote)
        return names


# --- discovery steps ---------------------------------------------------------------


def _probe(d: Path, cwd: Path, env: Mapping[str, str]) -> Repository | None:
    """The repository D stands for, or None to keep walking."""
    dotgit = d / ".git"
    if dotgit.is_file():
        # git treats a broken gitfile as fatal rather than walking past it.
        git_dir = _read_gitfile(dotgit)
        _require_git_dir(git_dir, env, f"the gitfile {dotgit} points to")
        return _build(git_dir, "dotgit", d, cwd, env)
    if dotgit.is_dir() and is_git_directory(dotgit, env):
        return _build(dotgit, "dotgit", d, cwd, env)
    if is_git_directory(d, env):
        return _build(d, "gitdir", None, cwd, env)
    return None


def _explicit(cwd: Path, env: Mapping[str, str]) -> Repository:
    given = env["GIT_DIR"]
    git_dir = Path(os.path.abspath(os.path.join(cwd, given)))
    if git_dir.is_file():
        git_dir = _read_gitfile(git_dir)
    _require_git_dir(git_dir, env, f"GIT_DIR={given!r}")
    return _build(git_dir, "explicit", None, cwd, env)


def _require_git_dir(git_dir: Path, env: Mapping[str, str], what: str) -> None:
    if not is_git_directory(git_dir, env):
        raise NotARepositoryError(
            f"not a git repository: {git_dir} ({what}); it needs a valid HEAD, objects/ and refs/", path=str(git_dir)
        )


def _read_gitfile(path: Path) -> Path:
    """The directory a ``.git`` file names (``gitdir: PATH``)."""
    try:
        if path.stat().st_size > MAX_GITFILE_SIZE:
            raise NotARepositoryError(f"gitfile too large: {path}", path=str(path))
        data = path.read_bytes()
    except OSError as e:
        raise NotARepositoryError(f"cannot read gitfile {path}: {e.strerror}", path=str(path)) from None
    if not data.startswith(b"gitdir: "):
        raise NotARepositoryError(
            f"invalid gitfile format: {path} (expected 'gitdir: PATH')",
            path=str(path),
            remedy="Repair the .git file, or remove it if the repository is gone.",
        )
    target = os.fsdecode(data[len(b"gitdir: ") :].rstrip(b"\r\n"))
    if not target:
        raise NotARepositoryError(f"no path in gitfile: {path}", path=str(path))
    return Path(os.path.abspath(os.path.join(path.parent, target)))


def is_git_directory(d: Path, env: Mapping[str, str] | None = None) -> bool:
    """git's test: a valid HEAD here, objects/ and refs/ in the common dir."""
    common = _commondir_file(d) or d
    objects = (env or {}).get("GIT_OBJECT_DIRECTORY")
    objects_dir = Path(objects) if objects else common / "objects"
    return objects_dir.is_dir() and (common / "refs").is_dir() and valid_head(d / "HEAD")


def _commondir_file(d: Path) -> Path | None:
    try:
        text = (d / "commondir").read_bytes()
    except OSError:
        return None
    target = os.fsdecode(text.rstrip(b"\r\n \t"))
    return Path(os.path.abspath(os.path.join(d, target))) if target else None


def valid_head(path: Path) -> bool:
    """HEAD as git validates it: ``ref: refs/…``, a symlink into refs/, or
    an object id of either format."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode) and os.readlink(path).startswith("refs/"):
            return True
        with open(path, "rb") as f:
            data = f.read(256)
    except OSError:
        return False
    if data.startswith(b"ref:"):
        return data[4:].lstrip(b" \t\n\r").startswith(b"refs/")  # git's isspace: no VT, no FF
    head = data.decode("ascii", "replace")
    return any(len(head) >= n and is_hex(head[:n]) for n in (40, 64))


def _ceiling(cwd: Path, spec: str) -> Path | None:
    """The deepest GIT_CEILING_DIRECTORIES entry strictly above ``cwd``."""
    best = None
    for entry in spec.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue  # git ignores relative entries
        c = Path(os.path.abspath(entry))
        if c != cwd and c in cwd.parents and (best is None or len(str(c)) > len(str(best))):
            best = c
    return best


def _env_bool(env: Mapping[str, str], name: str) -> bool:
    v = env.get(name)
    if v is None:
        return False
    try:
        return parse_bool(v)
    except ConfigError:
        return False


# --- building the record -----------------------------------------------------------


def _build(git_dir: Path, mode: str, container: Path | None, cwd: Path, env: Mapping[str, str]) -> Repository:
    """mode: "dotgit" (found as D/.git, ``container`` = D), "gitdir" (D is the
    git directory itself) or "explicit" (GIT_DIR)."""
    if env.get("GIT_COMMON_DIR"):
        common = Path(os.path.abspath(os.path.join(cwd, env["GIT_COMMON_DIR"])))
    else:
        common = _commondir_file(git_dir) or git_dir
    config = Config.from_file(common / "config", missing_ok=True)
    version, extensions = check_format(config, common / "config")
    object_format = FORMATS[dict(extensions).get("objectformat") or "sha1"]
    if _truthy_extension(config, "worktreeconfig"):
        config = config.merged(Config.from_file(git_dir / "config.worktree", missing_ok=True))

    check_default_config(config, object_format)
    core_bare = config.get_bool("core", "bare")
    core_worktree = config.get("core", "worktree")
    if env.get("GIT_WORK_TREE"):
        work_tree = Path(os.path.abspath(os.path.join(cwd, env["GIT_WORK_TREE"])))
    elif core_bare:
        work_tree = None
    elif core_worktree:
        work_tree = expand_path(core_worktree, git_dir)  # relative to the git directory
    elif mode == "explicit":
        work_tree = cwd
    elif mode == "dotgit":
        work_tree = container
    else:
        work_tree = None
    # git: bare unless core.bare says false, when there is no work tree.
    bare = work_tree is None and core_bare is not False

    if env.get("GIT_OBJECT_DIRECTORY"):
        objects_dir = Path(os.path.abspath(os.path.join(cwd, env["GIT_OBJECT_DIRECTORY"])))
    else:
        objects_dir = common / "objects"
    alternates = tuple(
        Path(os.path.abspath(os.path.join(cwd, p)))
        for p in split_path_list(env.get("GIT_ALTERNATE_OBJECT_DIRECTORIES", ""))
    )
    return Repository(
        git_dir=git_dir,
        common_dir=common,
        work_tree=work_tree,
        bare=bare,
        config=config,
        object_format=object_format,
        objects_dir=objects_dir,
        env_alternates=alternates,
        format_version=version,
        extensions=extensions,
    )


# What every git command parses on start-up (git_default_config) and dies
# of (128) when a value does not parse: so git opens no repository whose
# config holds "filemode = tzue" and packscope opens none either.
_DEFAULT_BOOLS = (
    "bare",
    "filemode",
    "trustctime",
    "quotepath",
    "ignorecase",
    "symlinks",
    "ignorestat",
    "prefersymlinkrefs",
    "warnambiguousrefs",
    "precomposeunicode",
    "protecthfs",
    "protectntfs",
    "fsyncobjectfiles",
    "sparsecheckout",
    "multipackindex",
    "commitgraph",
    "usereplacerefs",
)
_DEFAULT_BOOLS_OR = {"logallrefupdates": "always", "autocrlf": "input", "safecrlf": "warn"}
_DEFAULT_SIZES = ("packedgitwindowsize", "packedgitlimit", "deltabasecachelimit", "bigfilethreshold")
_NO_ABBREV = ("false", "no", "off")


def check_default_config(config: Config, fmt: ObjectFormat) -> None:
    """ConfigError for a value git's start-up would die of (see above)."""
    for entry in config:
        section, key, value = entry.section, entry.key, entry.value
        if section == "core":
            if key in _DEFAULT_BOOLS:
                parse_bool(value, where=entry)
            elif key in _DEFAULT_BOOLS_OR:
                if (value or "").lower() != _DEFAULT_BOOLS_OR[key]:
                    parse_bool(value, where=entry)
            elif key in _DEFAULT_SIZES:
                if parse_int(value, where=entry) < 0:
                    raise ConfigError(
                        f"bad numeric config value {value!r} for {entry.name!r}: invalid unit",
                        path=entry.path,
                        line=entry.line,
                    )
            elif key in ("compression", "loosecompression"):
                if not -1 <= parse_int(value, where=entry) <= 9:
                    raise ConfigError(
                        f"bad zlib compression level {value} ({entry.name})", path=entry.path, line=entry.line
                    )
            elif key == "abbrev" and value is not None and value.lower() not in (*_NO_ABBREV, "auto"):
                if not 4 <= parse_int(value, where=entry) <= fmt.hexsz:
                    raise ConfigError(
                        f"abbrev length out of range: {value} ({entry.name})", path=entry.path, line=entry.line
                    )
            elif key == "createobject" and (value or "").lower() not in ("rename", "link"):
                raise ConfigError(
                    f"invalid mode for object creation: {value} ({entry.name})", path=entry.path, line=entry.line
                )
        elif section == "pack" and key == "compression" and not -1 <= parse_int(value, where=entry) <= 9:
            raise ConfigError(f"bad pack compression level {value} ({entry.name})", path=entry.path, line=entry.line)


def _truthy_extension(config: Config, name: str) -> bool:
    try:
        return bool(config.get_bool("extensions", name))
    except ConfigError:
        return False


def check_format(config: Config, path: Path | None = None) -> tuple[int, tuple[tuple[str, str | None], ...]]:
    """(format version, extensions) or UnsupportedRepositoryError."""
    where = str(path) if path else None
    version = config.get_int("core", "repositoryformatversion", default=0)
    if version > 1:
        raise UnsupportedRepositoryError(
            f"repository format version {version} is not supported (git understands 0 and 1)", path=where
        )
    version = max(version, 0)  # git reads a negative version like an absent one
    extensions = tuple((e.key, e.value) for e in config.items("extensions"))
    names = list(dict.fromkeys(k for k, _ in extensions))
    if version == 0:
        v1_only = [n for n in names if n in V1_EXTENSIONS]
        if v1_only:
            raise UnsupportedRepositoryError(
                f"repository format version is 0, but v1-only extension found: {', '.join(v1_only)}",
                path=where,
                remedy="Set core.repositoryformatversion = 1 if these extensions are intended.",
            )
        # git ignores unknown extensions in version 0 repositories.
        return 0, tuple((k, v) for k, v in extensions if k in V0_EXTENSIONS)
    unknown = [n for n in names if n not in KNOWN_EXTENSIONS]
    if unknown:
        raise UnsupportedRepositoryError(
            f"unknown repository extension found: {', '.join(unknown)}",
            path=where,
            remedy="Use a git that understands these extensions; packscope cannot read this repository safely.",
        )
    last = dict(extensions)
    fmt = last.get("objectformat")
    if "objectformat" in last and fmt not in FORMATS:
        raise UnsupportedRepositoryError(
            f"invalid value for extensions.objectformat: {fmt!r} (expected sha1 or sha256)", path=where
        )
    refs = last.get("refstorage")
    if "refstorage" in last and refs not in ("files", "reftable"):  # reftable: core.repo.reftable
        raise UnsupportedRepositoryError(f"unknown refStorage format {refs!r}", path=where)
    return 1, extensions


def split_path_list(text: str) -> list[str]:
    """Split a PATH-like list as git does for object directories: entries
    are separated by os.pathsep; one that starts with ``"`` is C-quoted."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text[i] == '"':
            buf, i = [], i + 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                    buf.append({"n": "\n", "t": "\t"}.get(text[i], text[i]))
                else:
                    buf.append(text[i])
                i += 1
            i += 1  # closing quote
            j = text.find(os.pathsep, i)
            i = n if j < 0 else j + 1
            out.append("".join(buf))
        else:
            j = text.find(os.pathsep, i)
            entry = text[i:] if j < 0 else text[i:j]
            i = n if j < 0 else j + 1
            if entry:
                out.append(entry)
    return out


__all__ = [
    "KNOWN_EXTENSIONS",
    "Repository",
    "Worktree",
    "check_format",
    "is_git_directory",
    "split_path_list",
    "valid_head",
]
