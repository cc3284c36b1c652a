"""Mailmap: canonical names and emails for authors and committers (gitmailmap(5)).

Lines of a mailmap, after the documented syntax:

* ``Proper Name <commit@email>`` — a name for an email;
* ``<proper@email> <commit@email>`` — an email for an email;
* ``Proper Name <proper@email> <commit@email>`` — both, for an email;
* ``Proper Name <proper@email> Commit Name <commit@email>`` — both, for a
  name and email together.

Emails and names match case-insensitively (ASCII, as git compares them).
A line starting with ``#`` is a comment, and text after the last ``<…>``
pair that holds no other pair (a trailing ``# comment``) is ignored.  A
name-and-email entry wins over the email-only entry of the same email; a
later line adds to (or overrides) what earlier lines said.

Where git reads mailmaps (:func:`load_mailmap`), in this order, later
entries overriding earlier ones: ``.mailmap`` at the top of the work tree
(not followed when it is a symbolic link), the ``mailmap.blob`` revision
(``HEAD:.mailmap`` by default in a bare repository), then the
``mailmap.file`` path.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from packscope.core.errors import PackscopeError
from packscope.core.repo.config import expand_path

if TYPE_CHECKING:
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.repository import Repository
    from packscope.core.repo.revision import ObjectSource

_SPACE = b" \t\n\r\v\f"


class _Entry:
    """What one commit email maps to: the email-only answer (name/email,
    either may be None) and answers for particular names."""

    __slots__ = ("by_name", "email", "name")

    def __init__(self) -> None:
        self.name: bytes | None = None
        self.email: bytes | None = None
        self.by_name: dict[bytes, tuple[bytes | None, bytes | None]] = {}


class Mailmap:
    def __init__(self) -> None:
        self._entries: dict[bytes, _Entry] = {}
        self.sources: list[str] = []  # where entries came from, for display
        self.complaints: list[str] = []

    def __bool__(self) -> bool:
        return bool(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    # --- reading -----------------------------------------------------------------

    def add_text(self, data: bytes) -> None:
        """Read the lines of one mailmap (file or blob)."""
        for line in data.split(b"\n"):
            self._add_line(line)

    def _add_line(self, line: bytes) -> None:
        if line.startswith(b"#"):
            return
        first = _name_and_email(line, allow_empty_email=False)
        if first is None:
            return
        new_name, first_email, rest = first
        new_email: bytes | None = first_email
        second = _name_and_email(rest, allow_empty_email=True) if rest else None
        if second is None:
            old_name, old_email = None, None
        else:
            old_name, old_email, _ = second
        if old_email is None:
            # One pair: its email is the one commits use; only the name is new.
            old_email, new_email = first_email, None
        entry = self._entries.setdefault(old_email.lower(), _Entry())
        if old_name is None:
            if new_name is not None:
                entry.name = new_name
            if new_email is not None:
                entry.email = new_email
        else:
            entry.by_name[old_name.lower()] = (new_name, new_email)

    # --- mapping -----------------------------------------------------------------

    def map(self, name: bytes, email: bytes) -> tuple[bytes, bytes]:
        """(name, email) as the mailmap shows them (unchanged when unknown)."""
        entry = self._entries.get(email.lower())
        if entry is None:
            return name, email
        new_name, new_email = entry.by_name.get(name.lower(), (entry.name, entry.email))
        return (name if new_name is None else new_name), (email if new_email is None else new_email)


def _name_and_email(text: bytes, *, allow_empty_email: bool) -> tuple[bytes | None, bytes, bytes] | None:
    """``(name or None, email, text after '>')`` of the first ``name <email>``
    in ``text``, or None when there is none (or an empty email not allowed)."""
    lt = text.find(b"<")
    if lt < 0:
        return None
    gt = text.find(b">", lt + 1)
    if gt < 0:
        return None
    if gt == lt + 1 and not allow_empty_email:
        return None
    name = text[:lt].strip(_SPACE)
    return (name or None), text[lt + 1 : gt], text[gt + 1 :]


# --- where git finds mailmaps ---------------------------------------------------------


def load_mailmap(repo: Repository | None, store: ObjectSource | None = None, refs: RefStore | None = None) -> Mailmap:
    """The repository's mailmap as git assembles it.  ``store`` and ``refs``
    read ``mailmap.blob`` (without them it is skipped).  Unreadable sources
    are noted in ``complaints`` and skipped, as git warns and goes on."""
    mm = Mailmap()
    if repo is None:
        return mm
    config = repo.config
    blob = config.get("mailmap", "blob")
    if blob is None and repo.bare:
        blob = "HEAD:.mailmap"
    if repo.work_tree is not None and not repo.bare:
        _read_file(mm, Path(repo.work_tree) / ".mailmap", follow=False)
    if blob and store is not None and refs is not None:
        _read_blob(mm, blob, repo, store, refs)
    named = config.get("mailmap", "file")
    if named:
        # relative to where git runs: the top of the work tree (the git directory when bare)
        _read_file(mm, expand_path(named, repo.work_tree or repo.git_dir), follow=True)
    return mm


def _read_file(mm: Mailmap, path: Path, *, follow: bool) -> None:
    try:
        if not follow and path.is_symlink():
            mm.complaints.append(f"unable to open mailmap at {path}: a symbolic link")
            return
        data = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as e:
        mm.complaints.append(f"unable to open mailmap at {path}: {e.strerror}")
        return
    mm.add_text(data)
    mm.sources.append(str(path))


def _read_blob(mm: Mailmap, rev: str, repo: Repository, store: ObjectSource, refs: RefStore) -> None:
    from packscope.core.repo.revision import resolve_revision

    try:
        oid = resolve_revision(rev, repo=repo, refs=refs, store=store)
    except PackscopeError:
        return  # git: a blob name that does not resolve is no mailmap, silently
    try:
        typ, data = store.read(oid)
    except PackscopeError as e:
        mm.complaints.append(f"unable to read mailmap object at {rev}: {e.message}")
        return
    if typ != "blob":
        mm.complaints.append(f"mailmap is not a blob: {rev}")
        return
    mm.add_text(data)
    mm.sources.append(rev)


def mailmap_enabled(repo: Repository | None, choice: bool | None = None) -> bool:
    """Whether ``log`` maps its Author lines: ``--use-mailmap``/``--no-mailmap``
    (``choice``), else ``log.mailmap`` (true by default since git 2.29)."""
    if choice is not None:
        return choice
    if repo is None:
        return True
    return repo.config.get_bool("log", "mailmap", default=True) is not False
