"""Shallow clones: the commits listed in ``$GIT_DIR/shallow``.

A ``git clone --depth N`` (and ``fetch --deepen``/``--shallow-since``)
records the commits at the cut in the ``shallow`` file of the common
directory, one hex id per line.  git reads those commits as if they had no
parents: walks end there and fsck does not look past them.  The file's mere
existence makes the repository shallow (git then ignores the commit-graph),
even when it lists nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from packscope.core.errors import RepositoryError
from packscope.core.oid import ObjectFormat, is_hex

if TYPE_CHECKING:
    from packscope.core.repo.repository import Repository


def shallow_path(repo: Repository) -> Path:
    return Path(repo.common_dir) / "shallow"


def is_shallow(repo: Repository | None) -> bool:
    return repo is not None and shallow_path(repo).is_file()


def read_shallow(repo: Repository | None, fmt: ObjectFormat | None = None) -> frozenset[bytes]:
    """The shallow commits (empty when the repository is not shallow).
    A line that is not an id stops git ("bad shallow line"): the same here,
    as a RepositoryError naming the file and the line's offset."""
    if repo is None:
        return frozenset()
    path = shallow_path(repo)
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return frozenset()
    except OSError as e:
        raise RepositoryError(f"cannot read the shallow file: {e.strerror}", path=str(path)) from None
    hexsz = (fmt or repo.object_format).hexsz
    found = set()
    offset = 0
    for line in data.split(b"\n"):
        at = offset
        offset += len(line) + 1
        if not line and offset > len(data):
            break  # the text after the last newline
        text = line[:hexsz].decode("ascii", "replace")
        if len(text) != hexsz or not is_hex(text):
            raise RepositoryError(
                f"bad shallow line: {line[:80].decode('utf-8', 'replace')!r}",
                path=str(path),
                offset=at,
                remedy="Each line of the shallow file must be a commit id; restore it with git fetch --deepen.",
            )
        found.add(bytes.fromhex(text))
    return frozenset(found)
