"""git log's words: options, revisions and paths, in git's reading.

``git log`` interleaves revisions and options in an order that matters
(equal dates come out in argument order) and ``--`` splits off paths;
:func:`parse_words` reads them as git does, for the ``log`` command and for
History's revision prompt alike.  A word it does not take is a
:class:`~packscope.core.errors.UsageError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from packscope.core.errors import UsageError

if TYPE_CHECKING:
    from packscope.core.history.rev_args import RevArg


class LogOptions(TypedDict):
    """What ``parse_words`` reads from git log's words."""

    revs: list[RevArg]
    paths: list[str]
    max_count: int | None
    order: str  # "default", "date" or "topo"
    first_parent: bool
    pretty: str | None
    literal: bool
    help: bool
    dashdash: bool
    mailmap: bool | None
    graph: bool


ONELINE = "tformat:%h %s"  # git's --oneline, without decorations (as on a pipe)


def parse_words(words: list[str]) -> LogOptions:
    """git log's options, revisions (with the ALL marker) and paths."""
    from packscope.core.history.rev_args import ALL

    opts: LogOptions = {
        "revs": [],
        "paths": [],
        "max_count": None,
        "order": "default",
        "first_parent": False,
        "pretty": None,
        "literal": False,
        "help": False,
        "dashdash": False,
        "mailmap": None,  # --use-mailmap / --no-mailmap; None: log.mailmap decides
        "graph": False,
    }
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        if w == "--":
            opts["dashdash"] = True
            opts["paths"] = words[i:]
            break
        if w in ("-h", "--help"):
            opts["help"] = True
        elif w == "--all":
            opts["revs"].append(ALL)
        elif w == "--date-order":
            opts["order"] = "date"
        elif w == "--topo-order":
            opts["order"] = "topo"
        elif w == "--first-parent":
            opts["first_parent"] = True
        elif w == "--graph":
            opts["graph"] = True
        elif w == "--oneline":
            opts["pretty"] = ONELINE
        elif w in ("--use-mailmap", "--mailmap"):
            opts["mailmap"] = True
        elif w in ("--no-use-mailmap", "--no-mailmap"):
            opts["mailmap"] = False
        elif w == "--literal-pathspecs":
            opts["literal"] = True
        elif w == "--pretty":
            opts["pretty"] = "medium"
        elif w.startswith(("--format=", "--pretty=")):
            opts["pretty"] = w.split("=", 1)[1]  # (empty: git prints nothing per commit)
        elif w in ("-n", "--max-count"):
            if i >= len(words):
                raise UsageError(f"{w} needs a number")
            opts["max_count"] = _count(words[i])
            i += 1
        elif w.startswith("--max-count="):
            opts["max_count"] = _count(w.split("=", 1)[1])
        elif w.startswith("-n") and len(w) > 2:
            opts["max_count"] = _count(w[2:])
        elif len(w) > 1 and w[0] == "-" and w[1:].isdigit():
            opts["max_count"] = _count(w[1:])
        elif w.startswith("-") and w != "-":
            raise UsageError(f"unrecognized argument: {w}")
        else:
            opts["revs"].append(w)
    return opts


def _count(text: str) -> int | None:
    try:
        n = int(text)
    except ValueError:
        raise UsageError(f"'{text}': not an integer") from None
    return None if n < 0 else n  # git: a negative count means no limit
