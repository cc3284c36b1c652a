"""A blame as ``git blame`` prints it: the default format and ``--porcelain``.

* :func:`commit_facts` — what a blame shows of a commit: author and
  committer (name and ``<email>`` through the mailmap, time, zone as
  written) and the summary (the message's first non-blank line).
* :func:`default_lines` — ``<id> [<path>] (<author> <date> <n>) <line>``:
  the id abbreviated one digit longer than the longest unique abbreviation
  among the blamed commits (a boundary's drops a digit for its ``^``), the
  path column only when some line comes from another path (a rename),
  names padded to the widest in display columns, ISO dates in the author's
  zone, line numbers right-aligned.
* :func:`porcelain_lines` — a header line per group (``<id> <orig> <final>
  <count>``, then ``<id> <orig> <final>`` for its other lines), the commit's
  details the first time it appears (and ``filename`` again for a commit
  that answers for more than one path), each line after a TAB.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from packscope.core.history.blame import BlameResult, line_starts
from packscope.core.history.log_format import _display_width, format_date_iso
from packscope.core.objects import Ident, parse_ident, split_headers

Quote = Callable[[bytes], bytes]


class CommitFacts(NamedTuple):
    author: bytes
    author_mail: bytes  # with its angle brackets
    author_time: int
    author_tz: bytes
    committer: bytes
    committer_mail: bytes
    committer_time: int
    committer_tz: bytes
    summary: bytes


def _who(
    ident: Ident | None, mailmap: Callable[[bytes, bytes], tuple[bytes, bytes]] | None
) -> tuple[bytes, bytes, int, bytes]:
    if ident is None:
        return b"(unknown)", b"(unknown)", 0, b"(unknown)"
    name, mail = ident.name, ident.email
    if mailmap is not None:
        name, mail = mailmap(name, mail)
    return name, b"<" + mail + b">", ident.time, ident.tz.encode()


def commit_facts(
    data: bytes, oid: bytes, mailmap: Callable[[bytes, bytes], tuple[bytes, bytes]] | None = None
) -> CommitFacts:
    """A blame's facts of the commit whose bytes are ``data``."""
    headers, message, _ = split_headers(data)
    author = committer = None
    for key, value in headers:
        if key == b"author" and author is None:
            author = parse_ident(value)[0]
        elif key == b"committer" and committer is None:
            committer = parse_ident(value)[0]
    summary = b""
    for line in message.split(b"\n"):
        if line.strip(b" \t\r\v\f"):
            summary = line
            break
    if not summary:
        summary = b"(" + oid.hex().encode() + b")"
    a_name, a_mail, a_time, a_tz = _who(author, mailmap)
    c_name, c_mail, c_time, c_tz = _who(committer, mailmap)
    return CommitFacts(a_name, a_mail, a_time, a_tz, c_name, c_mail, c_time, c_tz, summary)


def _lines(data: bytes) -> list[bytes]:
    """Each line of the final file with its newline (one added to a last line without)."""
    starts = line_starts(data)
    out = [data[starts[k] : starts[k + 1]] for k in range(len(starts) - 1)]
    if out and not out[-1].endswith(b"\n"):
        out[-1] += b"\n"
    return out


def default_lines(
    result: BlameResult,
    facts: Callable[[bytes], CommitFacts],
    abbrev: Callable[[bytes], str],
    quote: Quote,
) -> Iterator[bytes]:
    """git blame's default output, a line at a time (each with its newline)."""
    groups = result.groups
    if not groups:
        return
    final_path = result.final.path
    width = 1 + max(len(abbrev(g.commit)) for g in groups)
    show_path = any(g.path != final_path for g in groups)
    longest_path = max(len(g.path) for g in groups)
    widths = {c: _display_width(facts(c).author) for c in {g.commit for g in groups}}
    longest_name = max(widths.values())
    lines = _lines(result.data)
    digits = len(str(len(lines)))
    for g in groups:
        f = facts(g.commit)
        hx = g.commit.hex()
        boundary = g.commit in result.boundaries
        shown = ("^" + hx[: width - 1] if boundary else hx[:width]).encode()
        pad = b" " * (longest_name - widths[g.commit])
        date = format_date_iso(f.author_time, f.author_tz.decode("ascii", "replace")).encode()
        head = shown
        if show_path:
            head += b" " + g.path.ljust(longest_path)
        head += b" (" + f.author + pad + b" " + date
        for k in range(g.length):
            n = g.final_start + k
            yield head + b" %*d) " % (digits, n + 1) + lines[n]


def porcelain_lines(result: BlameResult, facts: Callable[[bytes], CommitFacts], quote: Quote) -> Iterator[bytes]:
    """git blame --porcelain, a line at a time (each with its newline)."""
    lines = _lines(result.data)
    shown: set[bytes] = set()
    for g in result.groups:
        hx = g.commit.hex().encode()
        out = [b"%s %d %d %d\n" % (hx, g.orig_start + 1, g.final_start + 1, g.length)]
        first = g.commit not in shown
        if first:
            shown.add(g.commit)
            f = facts(g.commit)
            out += [
                b"author " + f.author + b"\n",
                b"author-mail " + f.author_mail + b"\n",
                b"author-time %d\n" % f.author_time,
                b"author-tz " + f.author_tz + b"\n",
                b"committer " + f.committer + b"\n",
                b"committer-mail " + f.committer_mail + b"\n",
                b"committer-time %d\n" % f.committer_time,
                b"committer-tz " + f.committer_tz + b"\n",
                b"summary " + f.summary + b"\n",
            ]
            if g.commit in result.boundaries:
                out.append(b"boundary\n")
        if first or len(result.paths_of.get(g.commit, ())) > 1:
            prev = result.previous.get((g.commit, g.path))
            if prev is not None:
                out.append(b"previous " + prev[0].hex().encode() + b" " + quote(prev[1]) + b"\n")
            out.append(b"filename " + quote(g.path) + b"\n")
        out.append(b"\t" + lines[g.final_start])
        for k in range(1, g.length):
            out.append(b"%s %d %d\n" % (hx, g.orig_start + k + 1, g.final_start + k + 1))
            out.append(b"\t" + lines[g.final_start + k])
        yield b"".join(out)
