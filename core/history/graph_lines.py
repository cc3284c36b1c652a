"""``git log --graph``'s drawing, line by line, as git 2.39 prints it.

The lane rule (packscope.core.history.graph_lanes) says where each commit
sits; git spends more than one line per commit to draw how the lanes move,
and this module draws those lines exactly as git does, so that
``packscope log --graph`` is git's output byte for byte.  The layout was
learnt from git's documentation and from its output on small histories
(merges skewed left and right, octopus merges with lanes beside them,
criss-cross merges, lanes that end, lanes that cross); this is our own
model of it, in our own terms:

* **Lanes.**  ``before`` are the lanes as the commit's turn comes (each
  waits for one commit), ``after`` the lanes once the commit's *shown*
  parents took its place: the lanes are rebuilt left to right, each lane
  keeps its commit unless an earlier one already holds it (the lines join),
  and the commit's own lane becomes its parents.
* **Routes.**  ``route[x]`` says, for text column ``x`` of the line being
  drawn, which lane of ``after`` the edge drawn there is heading to (-1:
  nothing there).  Right after the commit line the routes say where every
  edge leaves from; each *collapsing* line moves every edge that is not yet
  above its lane one column left (two, to cross a line in its way), the
  first edge that has far to go drawn as a run of ``_``, until every edge
  sits above its lane.
* **Line kinds.**  A merge of three or more parents with lanes to its right
  first widens the graph (*pre-commit* lines, ``\\`` shifting those lanes
  right); then the *commit* line (``*``, an octopus's extra parents as
  ``-.``); then after a merge the *post-merge* line, where the parents'
  edges leave (``/``, ``|``, ``\\``); then *collapsing* lines until the
  routes are settled; then the graph *pads* (``|`` per lane) for as many
  lines as the commit's text needs.  A merge's first parent already in a
  lane to its left makes the merge *skewed left*: its edges start one
  column further left, so it needs one lane less.
* **Width.**  Every line is padded with spaces to the width the commit's
  edges need, so the text beside the graph starts in one column for the
  whole commit.

The drawing knows only ids and shown parents: what is shown, and which
parents are shown (an excluded side, a path limit's rewritten parents), is
the walk's business.  :func:`graph_log` interleaves the drawing with the
text of each commit the way ``git log`` does for the default format
(entries *separated* by a blank line) and for ``--oneline`` / ``--format``
(entries each *terminated* by a newline).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

# Kinds of line: what the drawing prints next for the current commit.
PADDING = "padding"  # the commit is done: lanes going straight down
SKIP = "skip"  # the last commit's drawing was cut short: "..."
PRE_COMMIT = "pre-commit"  # an octopus widens the lanes to its right
COMMIT = "commit"  # the commit's own line
POST_MERGE = "post-merge"  # a merge's edges leave
COLLAPSING = "collapsing"  # edges move left towards their lanes

_EDGE_CHARS = "/|\\"  # a merge's parent edges, by skew: left, straight, right


class GraphDrawing:
    """The drawing of one log: call :meth:`update` with each shown commit
    and its shown parents (in order), then :meth:`next_line` until
    :attr:`finished`, and :meth:`padding` for lines that must not move the
    drawing on (git's separator between default-format entries)."""

    def __init__(self) -> None:
        self.commit: bytes = b""
        self.parents: tuple[bytes, ...] = ()
        self.before: list[bytes] = []  # lanes as the commit's turn comes
        self.after: list[bytes] = []  # lanes once its parents took its place
        # Routes are kept in arrays that only grow, like git's: a check
        # of the last collapsing line's routes may read past its length.
        self.route: list[int] = []
        self.last_route: list[int] = []
        self.route_len = 0
        self.width = 0  # text columns the commit's drawing takes
        self.index = 0  # the commit's lane in ``before``
        self.prev_index = 0
        self.skew = 0  # 0: a merge skewed left, 1: not; -1: no merge
        self.added = 0  # lanes a merge adds to the right (-1: its edges join at once)
        self.prev_added = 0
        self.widening = 0  # pre-commit lines drawn so far
        self.state = PADDING
        self.prev_state = PADDING
        self._where: dict[bytes, int] = {}

    # --- the commit's turn ---------------------------------------------------

    def update(self, commit: bytes, parents: Sequence[bytes]) -> None:
        """The next commit, with those of its parents that the log shows."""
        self.commit = commit
        self.parents = tuple(parents)
        self.prev_index = self.index
        self._place()
        self.widening = 0
        if self.state != PADDING:
            self.state = SKIP
        elif self._needs_widening():
            self.state = PRE_COMMIT
        else:
            self.state = COMMIT

    def _grow(self, size: int) -> None:
        for arr in (self.route, self.last_route):
            if len(arr) < size:
                arr.extend([-1] * (size - len(arr)))

    def _place(self) -> None:
        """Rebuild the lanes and the routes the commit line starts from."""
        self.before, self.after = self.after, []
        self._where = {}  # each lane of ``after`` by the commit it waits for
        lanes = self.before
        size = 2 * (len(lanes) + len(self.parents))
        self._grow(size)
        route = self.route
        for x in range(size):
            route[x] = -1
        self.route_len = size
        self.width = 0
        self.prev_added = self.added
        self.added = 0
        here = False
        for k in range(len(lanes) + 1):
            if k == len(lanes):
                if here:
                    break
                waited = self.commit
            else:
                waited = lanes[k]
            if waited == self.commit:
                here = True
                self.index = k
                self.skew = -1
                for p in self.parents:
                    self._route_to(p, k)
                if not self.parents:
                    self.width += 2  # the commit takes its column even when its line ends
            else:
                self._route_to(waited, -1)
        while self.route_len > 1 and route[self.route_len - 1] < 0:
            self.route_len -= 1

    def _route_to(self, oid: bytes, from_lane: int) -> None:
        """An edge heading for ``oid``'s lane in ``after`` (made at the right
        if no lane holds it yet); ``from_lane`` is the commit's lane for the
        edges of its parents, -1 for the lanes passing by."""
        after = self.after
        target = self._where.get(oid, -1)
        if target < 0:
            target = self._where[oid] = len(after)
            after.append(oid)
        route = self.route
        if len(self.parents) > 1 and from_lane >= 0 and self.skew == -1:
            # a merge's first parent: skewed left when its lane is further left
            distance = from_lane - target
            shift = 2 * distance - 3 if distance > 1 else 1
            self.skew = 0 if distance > 0 else 1
            self.added = len(self.parents) + self.skew - 2
            at = self.width + (self.skew - 1) * shift
            self.width += 2 * self.skew
        elif self.added > 0 and self.width >= 2 and target == route[self.width - 2]:
            # the edge just added heads where this one does: they join at once
            at = self.width - 2
            self.added = -1
        else:
            at = self.width
            self.width += 2
        route[at] = target

    def _dashes(self) -> int:
        """An octopus's parents drawn as dashes on its commit line."""
        return len(self.parents) + self.skew - 3

    def _needs_widening(self) -> bool:
        return len(self.parents) >= 3 and self.index < len(self.before) - 1 and self.widening < 2 * self._dashes()

    def _settled(self) -> bool:
        return all(t < 0 or t == x >> 1 for x, t in enumerate(self.route[: self.route_len]))

    def _set_state(self, state: str) -> None:
        self.prev_state = self.state
        self.state = state

    @property
    def finished(self) -> bool:
        """The commit's drawing is done: only padding lines follow."""
        return self.state == PADDING

    # --- lines ------------------------------------------------------------------

    def next_line(self) -> tuple[str, bool]:
        """The next line of the drawing, padded to the commit's width, and
        whether it is the commit's own line."""
        state = self.state
        if state == PADDING:
            text = "".join("| " for _ in self.after)
        elif state == SKIP:
            text = "..."
            self._set_state(PRE_COMMIT if self._needs_widening() else COMMIT)
        elif state == PRE_COMMIT:
            text = self._pre_commit_line()
        elif state == COMMIT:
            text = self._commit_line()
        elif state == POST_MERGE:
            text = self._post_merge_line()
        else:
            text = self._collapsing_line()
        return text.ljust(self.width), state == COMMIT

    def padding(self) -> str:
        """A line that leaves the drawing where it is: on the commit's turn,
        its lanes as they come in (an octopus's lane wide enough for its
        dashes); otherwise the next line."""
        if self.state != COMMIT:
            return self.next_line()[0]
        cells = []
        wide = len(self.parents) > 2
        for lane in self.before:
            cells.append("|")
            cells.append(" " * (2 * (len(self.parents) - 2)) if wide and lane == self.commit else " ")
        self.prev_state = PADDING
        return "".join(cells).ljust(self.width)

    def _lanes_with_commit(self) -> Iterator[tuple[int, bytes]]:
        """Each lane of ``before`` and, if no lane waited for the commit, the
        commit's new lane at the right."""
        lanes = self.before
        yield from enumerate(lanes)
        if self.commit not in lanes:
            yield len(lanes), self.commit

    def _pre_commit_line(self) -> str:
        out = []
        seen = False
        for k, waited in enumerate(self.before):
            if waited == self.commit:
                seen = True
                out.append("|" + " " * self.widening)
            elif seen and self.widening == 0:
                # lanes that left a merge's line as "\" keep leaning
                lean = self.prev_state == POST_MERGE and self.prev_index < k
                out.append("\\" if lean else "|")
            elif seen:
                out.append("\\")
            else:
                out.append("|")
            out.append(" ")
        self.widening += 1
        if not self._needs_widening():
            self._set_state(COMMIT)
        return "".join(out)

    def _commit_line(self) -> str:
        out = []
        seen = False
        last = self.last_route
        for k, waited in self._lanes_with_commit():
            if waited == self.commit:
                seen = True
                out.append("*")
                if len(self.parents) > 2:
                    n = self._dashes()
                    if n > 0:
                        out.append("-" * (2 * n - 1) + ".")
            elif seen and self.added > 1:
                out.append("\\")
            elif seen and self.added == 1:
                lean = self.prev_state == POST_MERGE and self.prev_added > 0 and self.prev_index < k
                out.append("\\" if lean else "|")
            elif self.prev_state == COLLAPSING and last[2 * k + 1] == k and self.route[2 * k] < k:
                out.append("/")
            else:
                out.append("|")
            out.append(" ")
        if len(self.parents) > 1:
            self._set_state(POST_MERGE)
        elif self._settled():
            self._set_state(PADDING)
        else:
            self._set_state(COLLAPSING)
        return "".join(out)

    def _post_merge_line(self) -> str:
        out = []
        seen = False
        first = self.parents[0]
        first_seen_left = False  # a lane left of here holds the first parent
        for k, waited in self._lanes_with_commit():
            if waited == self.commit:
                seen = True
                edge = self.skew
                for j in range(len(self.parents)):
                    out.append(_EDGE_CHARS[edge])
                    if edge == 2:
                        if self.added > 0 or j < len(self.parents) - 1:
                            out.append(" ")
                    else:
                        edge += 1
                if self.added == 0:
                    out.append(" ")
            elif seen:
                out.append("\\ " if self.added > 0 else "| ")
            else:
                out.append("|")
                if self.skew != 0 or k != self.index - 1:
                    out.append("_" if first_seen_left else " ")
            if waited == first:
                first_seen_left = True
        self._set_state(PADDING if self._settled() else COLLAPSING)
        return "".join(out)

    def _collapsing_line(self) -> str:
        self.route, self.last_route = self.last_route, self.route
        route, old = self.route, self.last_route
        size = self.route_len
        for x in range(size):
            route[x] = -1
        run_from = -1  # the one edge allowed to travel far this line (drawn as "_")
        run_target = -1
        for x in range(size):
            target = old[x]
            if target < 0:
                continue
            if 2 * target == x:
                route[x] = target  # above its lane already
            elif route[x - 1] < 0:
                route[x - 1] = target  # one step left
                if run_from == -1:
                    run_from, run_target = x, target
                    for y in range(2 * target + 3, x - 2, 2):
                        route[y] = target
            elif route[x - 1] == target:
                pass  # joins the edge to its left, which heads to the same lane
            else:
                route[x - 2] = target  # crosses the edge to its left
                if run_from == -1:
                    run_from, run_target = x - 1, target
                    for y in range(2 * target + 3, x - 2, 2):
                        route[y] = target
        old[:size] = route[:size]
        if route[size - 1] < 0:
            self.route_len = size = size - 1
        out = []
        ran = False
        for x in range(size):
            target = route[x]
            if target < 0:
                out.append(" ")
            elif 2 * target == x:
                out.append("|")
            elif target == run_target and x != run_from - 1:
                if x != 2 * target + 3:
                    route[x] = -1  # only the run's first step carries on below
                ran = True
                out.append("_")
            else:
                if ran and x < run_from:
                    route[x] = -1
                out.append("/")
        if self._settled():
            self._set_state(PADDING)
        return "".join(out)


def graph_log(
    entries: Iterable[tuple[bytes, Sequence[bytes], bytes]], *, terminated: bool, empty_format: bool = False
) -> Iterator[bytes]:
    """``git log --graph``'s output for ``entries``: (commit, the parents
    the graph draws, the entry's text), one chunk per commit.

    ``terminated``: each entry ends with a newline of its own (``--oneline``,
    ``--format``/``tformat:``); else entries are separated by one (the
    default format, ``format:``).  An entry's text that ends with a newline
    is followed by a padding line, as in git (in the default format: the
    blank line between entries).  ``empty_format``: an empty ``--format``,
    whose entries git does not terminate (only the graph's lines show)."""
    graph = GraphDrawing()
    first = True
    newline_ended = False
    for oid, parents, text in entries:
        graph.update(oid, parents)
        out: list[str | bytes] = []
        if not terminated and not first:
            if newline_ended:
                out.append(graph.padding())
            out.append("\n")
        while not graph.finished:  # up to and including the commit's line
            line, is_commit = graph.next_line()
            out.append(line)
            if is_commit:
                break
            out.append("\n")
        lines = text.split(b"\n")
        out.append(lines[0])
        for rest_line in lines[1:-1] if text.endswith(b"\n") else lines[1:]:
            out.append(b"\n")
            out.append(graph.next_line()[0])
            out.append(rest_line)
        newline_ended = text.endswith(b"\n")
        if newline_ended:
            out.append(b"\n")
        if not graph.finished:
            if not newline_ended:
                out.append("\n")
            rest = []
            while not graph.finished:
                rest.append(graph.next_line()[0])
            out.append("\n".join(rest))
            if newline_ended:
                out.append("\n")
        if terminated and not empty_format:
            if newline_ended:
                out.append(graph.padding())
            out.append("\n")
        first = False
        yield b"".join(x if isinstance(x, bytes) else x.encode() for x in out)
