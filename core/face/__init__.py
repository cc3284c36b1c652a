"""The face of core: what the CLI and the UI ask core for, by name.

One import line reaches every entry point — opening a session, looking
objects up in the store, walking history, checking it (fsck), the
repository report, advice — without knowing which layer holds it::

    from packscope.core.face import open_session, repository_report

The screens and widgets import core only from here, and nothing in
inspector names a private core name (``tests/test_layering.py``).  The
face sits above every layer of core (``packscope.core.face`` is the last
layer before inspector), so it may name any of them, and it holds the one
thing built from all of them: the repository report (``face/report.py``).

Names are loaded when first asked for (PEP 562, as ``trace`` loads its
events): ``packscope cat-file`` imports the face and still loads only the
store and the repository, never history, fsck or advise
(``tests/test_startup.py``).  ``_NAMES`` says where each name lives; the
``TYPE_CHECKING`` block below says the same to the type checker (a test
holds the two together), so every call through the face is checked.
Where a module's own name says little out of its module (``build``,
``compare``), the face names it more fully.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # for the type checker; at run time __getattr__ below loads each on first use
    from packscope.core import objects as objects
    from packscope.core import trace as trace
    from packscope.core.advise.document import build as advice_document
    from packscope.core.advise.document import whatif_rows as whatif_rows
    from packscope.core.advise.maintenance import maintenance as maintenance
    from packscope.core.advise.sizes import SizeWalk as SizeWalk
    from packscope.core.advise.whatif import whatif as whatif
    from packscope.core.advise.whatif import workload_sample as workload_sample
    from packscope.core.errors import AmbiguousObjectError as AmbiguousObjectError
    from packscope.core.errors import BadRevisionError as BadRevisionError
    from packscope.core.errors import CancelledError as CancelledError
    from packscope.core.errors import MissingObjectError as MissingObjectError
    from packscope.core.errors import NotARepositoryError as NotARepositoryError
    from packscope.core.errors import PackscopeError as PackscopeError
    from packscope.core.errors import PromisedObjectError as PromisedObjectError
    from packscope.core.errors import UsageError as UsageError
    from packscope.core.face.report import repository_report as repository_report
    from packscope.core.fsck.changed_during import settle as settle_findings
    from packscope.core.fsck.findings import Finding as Finding
    from packscope.core.fsck.parallel import default_jobs as default_jobs
    from packscope.core.fsck.verify import Fsck as Fsck
    from packscope.core.history.abbrev import StoreAbbreviator as StoreAbbreviator
    from packscope.core.history.abbrev import configured_abbrev as configured_abbrev
    from packscope.core.history.blame import Blame as Blame
    from packscope.core.history.blame import BlameGroup as BlameGroup
    from packscope.core.history.blame_format import commit_facts as blame_commit_facts
    from packscope.core.history.graph_walk import WalkSource as WalkSource
    from packscope.core.history.log_format import format_date_iso as format_date_iso
    from packscope.core.history.log_words import LogOptions as LogOptions
    from packscope.core.history.log_words import parse_words as parse_log_words
    from packscope.core.history.ref_list import list_refs as list_refs
    from packscope.core.history.rev_args import ALL as ALL
    from packscope.core.history.rev_args import walk_starts as walk_starts
    from packscope.core.history.walk import walk as walk
    from packscope.core.objects import Commit as Commit
    from packscope.core.objects import mode_is_tree as mode_is_tree
    from packscope.core.objects import mode_type as mode_type
    from packscope.core.objects import parse_commit as parse_commit
    from packscope.core.objects import tree_items as tree_items
    from packscope.core.repo.mailmap import load_mailmap as load_mailmap
    from packscope.core.repo.reflog import ReflogLine as ReflogLine
    from packscope.core.repo.reflog import reflog_rows as reflog_rows
    from packscope.core.repo.repo_state import compare as compare_states
    from packscope.core.repo.repo_state import state_of as state_of
    from packscope.core.repo.repository import Repository as Repository
    from packscope.core.repo.revision import resolve_revision as resolve_revision
    from packscope.core.repo.session import Session as Session
    from packscope.core.repo.session import find_repository as find_repository
    from packscope.core.repo.session import open_session as open_session
    from packscope.core.repo.shallow import read_shallow as read_shallow
    from packscope.core.store.location import Location as Location
    from packscope.core.store.location import explain_vanished as explain_vanished
    from packscope.core.store.loose import loose_path as loose_path
    from packscope.core.store.loose import read_loose_header as read_loose_header
    from packscope.core.store.midx import MultiPackIndex as MultiPackIndex
    from packscope.core.store.search import ALGORITHMS as ALGORITHMS
    from packscope.core.trace import LookupFinished as LookupFinished
    from packscope.core.trace import PackDirScanned as PackDirScanned

# face name -> (module, its name there; None: the module itself)
_NAMES: dict[str, tuple[str, str | None]] = {
    # the exception tree's names the entry points raise
    "PackscopeError": ("packscope.core.errors", "PackscopeError"),
    "AmbiguousObjectError": ("packscope.core.errors", "AmbiguousObjectError"),
    "BadRevisionError": ("packscope.core.errors", "BadRevisionError"),
    "CancelledError": ("packscope.core.errors", "CancelledError"),
    "MissingObjectError": ("packscope.core.errors", "MissingObjectError"),
    "NotARepositoryError": ("packscope.core.errors", "NotARepositoryError"),
    "PromisedObjectError": ("packscope.core.errors", "PromisedObjectError"),
    "UsageError": ("packscope.core.errors", "UsageError"),
    # opening: a repository found once, a session over it
    "find_repository": ("packscope.core.repo.session", "find_repository"),
    "open_session": ("packscope.core.repo.session", "open_session"),
    "Session": ("packscope.core.repo.session", "Session"),
    "Repository": ("packscope.core.repo.repository", "Repository"),
    "resolve_revision": ("packscope.core.repo.revision", "resolve_revision"),
    "state_of": ("packscope.core.repo.repo_state", "state_of"),
    "compare_states": ("packscope.core.repo.repo_state", "compare"),
    "read_shallow": ("packscope.core.repo.shallow", "read_shallow"),
    "ReflogLine": ("packscope.core.repo.reflog", "ReflogLine"),
    "reflog_rows": ("packscope.core.repo.reflog", "reflog_rows"),
    # the store: lookups, where an object was found, the indexes drawn
    "Location": ("packscope.core.store.location", "Location"),
    "explain_vanished": ("packscope.core.store.location", "explain_vanished"),
    "loose_path": ("packscope.core.store.loose", "loose_path"),
    "read_loose_header": ("packscope.core.store.loose", "read_loose_header"),
    "MultiPackIndex": ("packscope.core.store.midx", "MultiPackIndex"),
    "ALGORITHMS": ("packscope.core.store.search", "ALGORITHMS"),
    "trace": ("packscope.core.trace", None),
    "LookupFinished": ("packscope.core.trace", "LookupFinished"),
    "PackDirScanned": ("packscope.core.trace", "PackDirScanned"),
    # objects as parsed
    "objects": ("packscope.core.objects", None),
    "Commit": ("packscope.core.objects", "Commit"),
    "parse_commit": ("packscope.core.objects", "parse_commit"),
    "tree_items": ("packscope.core.objects", "tree_items"),
    "mode_is_tree": ("packscope.core.objects", "mode_is_tree"),
    "mode_type": ("packscope.core.objects", "mode_type"),
    # walks
    "parse_log_words": ("packscope.core.history.log_words", "parse_words"),
    "LogOptions": ("packscope.core.history.log_words", "LogOptions"),
    "ALL": ("packscope.core.history.rev_args", "ALL"),
    "walk_starts": ("packscope.core.history.rev_args", "walk_starts"),
    "walk": ("packscope.core.history.walk", "walk"),
    "WalkSource": ("packscope.core.history.graph_walk", "WalkSource"),
    "StoreAbbreviator": ("packscope.core.history.abbrev", "StoreAbbreviator"),
    "configured_abbrev": ("packscope.core.history.abbrev", "configured_abbrev"),
    "list_refs": ("packscope.core.history.ref_list", "list_refs"),
    # fsck
    "Fsck": ("packscope.core.fsck.verify", "Fsck"),
    "Finding": ("packscope.core.fsck.findings", "Finding"),
    "default_jobs": ("packscope.core.fsck.parallel", "default_jobs"),
    "settle_findings": ("packscope.core.fsck.changed_during", "settle"),
    # advice
    "maintenance": ("packscope.core.advise.maintenance", "maintenance"),
    "SizeWalk": ("packscope.core.advise.sizes", "SizeWalk"),
    "whatif": ("packscope.core.advise.whatif", "whatif"),
    "workload_sample": ("packscope.core.advise.whatif", "workload_sample"),
    "whatif_rows": ("packscope.core.advise.document", "whatif_rows"),
    "advice_document": ("packscope.core.advise.document", "build"),
    # blame (the Blame view)
    "Blame": ("packscope.core.history.blame", "Blame"),
    "BlameGroup": ("packscope.core.history.blame", "BlameGroup"),
    "blame_commit_facts": ("packscope.core.history.blame_format", "commit_facts"),
    "format_date_iso": ("packscope.core.history.log_format", "format_date_iso"),
    "load_mailmap": ("packscope.core.repo.mailmap", "load_mailmap"),
    # the repository report (info, the Overview)
    "repository_report": ("packscope.core.face.report", "repository_report"),
}

# the same names, spelled out for the type checker and the linter (a test compares them)
__all__ = [
    "ALGORITHMS",
    "ALL",
    "AmbiguousObjectError",
    "BadRevisionError",
    "Blame",
    "BlameGroup",
    "CancelledError",
    "Commit",
    "Finding",
    "Fsck",
    "Location",
    "LogOptions",
    "LookupFinished",
    "MissingObjectError",
    "MultiPackIndex",
    "NotARepositoryError",
    "PackDirScanned",
    "PackscopeError",
    "PromisedObjectError",
    "ReflogLine",
    "Repository",
    "Session",
    "SizeWalk",
    "StoreAbbreviator",
    "UsageError",
    "WalkSource",
    "advice_document",
    "blame_commit_facts",
    "compare_states",
    "configured_abbrev",
    "default_jobs",
    "explain_vanished",
    "find_repository",
    "format_date_iso",
    "list_refs",
    "load_mailmap",
    "loose_path",
    "maintenance",
    "mode_is_tree",
    "mode_type",
    "objects",
    "open_session",
    "parse_commit",
    "parse_log_words",
    "read_loose_header",
    "read_shallow",
    "reflog_rows",
    "repository_report",
    "resolve_revision",
    "settle_findings",
    "state_of",
    "trace",
    "tree_items",
    "walk",
    "walk_starts",
    "whatif",
    "whatif_rows",
    "workload_sample",
]


def __getattr__(name: str) -> object:
    # PEP 562: a name's module is imported when the name is first asked
    # for; the value is kept here, so later uses never come back.
    try:
        module, attr = _NAMES[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    loaded = importlib.import_module(module)
    value = globals()[name] = loaded if attr is None else getattr(loaded, attr)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES})
