"""git's temporary files: the names git gives a file it is still writing.

Every writer of the object directory first writes to a temporary name and
renames the file into place when it is complete: ``pack-objects`` and
``index-pack`` write ``tmp_pack_XXXXXX``, ``tmp_idx_XXXXXX``, ``tmp_rev_``,
``tmp_bitmap_``, ``tmp_mtimes_``; a loose object is ``tmp_obj_XXXXXX`` in
its ``objects/xx`` directory; the commit-graph and multi-pack-index chains
write ``tmp_graph_``/``tmp_midx_``; ``git repack`` has its new packs named
``.tmp-<pid>-pack-<hash>.pack``/``.idx``/… until it renames them to
``pack-<hash>.*``.  Such a file is half-written, or gone by the time it is
opened: never a pack, never part of the repository's state, never damage.

One rule for every reader: the pack directory's scan
(:mod:`packscope.core.store.pack_directory`), the repository's state stamp
(:mod:`packscope.core.repo.repo_state`) and what fsck sets aside from it,
and ``advise``'s count of files a writer left half-done
(:mod:`packscope.core.advise.stored_files`).
"""

from __future__ import annotations

import os

# ``tmp_<what>_`` is git's own temporary-file template for the object
# directory; ``.tmp-<pid>-`` is repack's name for a pack it has not renamed yet.
GIT_TEMPORARY_PREFIXES = (".tmp-", "tmp_")


def is_git_temporary(name: str) -> bool:
    """Whether ``name`` (a file name or a path: its last part counts) is one
    git is still writing."""
    return os.path.basename(name).startswith(GIT_TEMPORARY_PREFIXES)
