"""Commit text for the screen: decoded as the commit says, shown literally.

A commit's message and idents are bytes in the encoding its ``encoding``
header names (UTF-8 when there is none).  They are decoded with that codec;
bytes that do not decode become U+FFFD (the replacement character), never an
error.  What comes out still goes through :mod:`packscope.inspector.safe_text` before
it is drawn: markup is never parsed and control or bidi characters are
spelled out.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from rich.text import Text

from packscope.inspector.safe_text import literal


def codec_for(encoding: bytes | None) -> str:
    """Python's codec for a commit's ``encoding`` header (utf-8 when absent
    or unknown)."""
    if not encoding:
        return "utf-8"
    name = encoding.decode("ascii", "replace").strip()
    try:
        return codecs.lookup(name).name
    except LookupError:
        return "utf-8"


def decode(raw: bytes | None, encoding: bytes | None = None) -> str:
    if not raw:
        return ""
    return bytes(raw).decode(codec_for(encoding), "replace")


def name_text(value: str | bytes) -> str:
    """A ref name or path (str from core may carry surrogate escapes; bytes are
    UTF-8): invalid bytes become U+FFFD."""
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    return bytes(value).decode("utf-8", "replace")


def subject_of(message: bytes, encoding: bytes | None = None) -> str:
    from packscope.core.history.log_format import subject_and_body

    subject, _body = subject_and_body(message)
    return decode(subject, encoding)


def ident_date(ident) -> str:
    """``YYYY-MM-DD HH:MM:SS +ZZZZ`` in the ident's own time zone."""
    from packscope.core.history.log_format import format_date_iso

    if ident is None:
        return "?"
    try:
        return format_date_iso(ident.time, ident.tz)
    except (OverflowError, ValueError):
        return f"{ident.time} {ident.tz}"


def ident_text(ident, encoding: bytes | None = None) -> Text:
    if ident is None:
        return Text("(missing or malformed)", style="red")
    t = literal(decode(ident.name, encoding))
    t.append(" <")
    t.append_text(literal(decode(ident.email, encoding)))
    t.append(">  ")
    t.append(ident_date(ident), style="dim")
    return t


@dataclass(frozen=True, slots=True)
class Summary:
    """What a history row shows about a commit."""

    subject: str
    author: str
    email: str
    date: str  # YYYY-MM-DD, author's time zone
    error: str | None = None


def summarize(data: bytes, fmt, oid: bytes) -> Summary:
    from packscope.core.errors import PackscopeError
    from packscope.core.history.log_format import format_date_short
    from packscope.core.objects import parse_commit

    try:
        c = parse_commit(data, fmt, oid)
    except PackscopeError as e:
        return Summary("", "", "", "", error=e.message)
    a = c.author or c.committer
    date = "?"
    if a is not None:
        try:
            date = format_date_short(a.time, a.tz)
        except (OverflowError, ValueError):
            date = "?"
    return Summary(
        subject_of(c.message, c.encoding),
        decode(a.name, c.encoding) if a else "",
        decode(a.email, c.encoding) if a else "",
        date,
    )


# How a ref decoration is coloured, by kind (History rows and the Commit header).
DECOR_STYLE = {
    "head": "bold cyan",
    "branch": "bold green",
    "remote": "red",
    "tag": "bold yellow",
    "stash": "magenta",
    "ref": "magenta",
    "replaced": "bold red",
    "rewrite": "bold red",  # shallow boundary, grafted, replaced: history is not what is stored
}


def decoration_text(decor: list[tuple[str, str]]) -> Text:
    """``(label, label) `` for a commit's refs, as ``git log``'s ``%d``
    lists them, each literal and coloured by kind."""
    t = Text("(")
    for i, (label, kind) in enumerate(decor):
        if i:
            t.append(", ")
        t.append_text(literal(name_text(label), DECOR_STYLE.get(kind, "")))
    t.append(") ")
    return t
