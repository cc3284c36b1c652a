"""git's automatic maintenance, decided as git 2.39 decides it now.

One row (:class:`Task`) per thing git may do on its own, each with the
triggers that decide it (:class:`Trigger`: the setting, its value here, the
threshold, where the threshold came from, whether it fires) and the command
git would run.  Nothing is run or changed: the facts are read from the
repository's files, the rules are git's (read from ``builtin/gc.c`` and
``builtin/repack.c`` of git 2.39; the tests hold each one against what git
really does on copies just under and just over its threshold):

* **gc --auto** (``need_to_gc``): off when ``gc.auto`` <= 0.  Too many packs:
  local packs without a ``.keep`` (those a multi-pack-index covers count
  too) number *more than* ``gc.autoPackLimit`` (default 50; <= 0 turns the
  test off); then ``git repack -d -l -A``.  Else too many loose objects:
  git looks only in ``objects/17`` and fires when it holds *more than*
  ceil(``gc.auto`` / 256) entries named by exactly hexsz-2 lower-case hex
  digits (default ``gc.auto`` 6700: more than 27); then ``git repack -d -l``.
  A non-empty ``gc.log`` younger than ``gc.logExpiry`` (1 day) stops a
  detached auto gc (``gc.autoDetach``, default on) after it has decided.
* **pack-refs**: no condition of its own in git 2.39 (``maintenance run
  --auto`` never runs it); ``gc`` runs ``git pack-refs --all --prune`` when
  it runs, if ``gc.packRefs`` allows (default true; ``notbare``: only with a
  work tree).
* **loose-objects** (``maintenance.loose-objects.auto``, default 100): fires
  when the local object directory holds *at least* that many loose objects
  (0 turns it off, < 0 always fires).
* **incremental-repack** (``maintenance.incremental-repack.auto``, default
  10): packs *not* covered by a multi-pack-index number at least that many;
  never when ``core.multiPackIndex`` is false.
* **commit-graph** (``maintenance.commit-graph.auto``, default 100): from
  each ref in name order, peeled, a commit not in the commit-graph counts,
  and so does every ancestor reached through commits not in the graph (each
  once; a tip is counted again if another ref reaches it); fires at the
  threshold.
* **geometric-repack**: the packs ``git repack --geometric=2 -d`` would roll
  up: local packs without ``.keep`` or ``.mtimes`` (cruft), sorted by object
  count; the longest run at the top that already grows by factor 2 stays,
  the rest (and whatever of the top the merged pack would then reach) is
  rolled up with the loose objects.

``maintenance.auto`` (default true) says whether commands such as commit and
fetch start ``git maintenance run --auto`` afterwards; that runs the tasks
enabled (``maintenance.<task>.enabled``; only gc by default) whose condition
holds.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from packscope.core.advise.wording import count
from packscope.core.errors import PackscopeError

if TYPE_CHECKING:
    from packscope.core.repo.config import Config
    from packscope.core.repo.session import Session
    from packscope.core.store.location import PackHandle

GC_AUTO = 6700
GC_AUTO_PACK_LIMIT = 50
LOOSE_OBJECTS_AUTO = 100
INCREMENTAL_REPACK_AUTO = 10
COMMIT_GRAPH_AUTO = 100
GEOMETRIC_FACTOR = 2
GC_LOG_EXPIRY = 86400  # "1.day.ago"

TASKS = ("gc-auto", "loose-objects", "incremental-repack", "commit-graph", "pack-refs", "geometric-repack")


class Trigger(NamedTuple):
    setting: str  # the config name, as git documents it
    value: int | bool | None  # what the repository has now
    threshold: int | bool | None
    source: str  # "default", or the config file that set the threshold (path:line)
    fires: bool
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "setting": self.setting,
            "value": self.value,
            "threshold": self.threshold,
            "source": self.source,
            "fires": self.fires,
        }
        if self.note:
            out["note"] = self.note
        out["sentence"] = self.sentence
        return out

    @property
    def sentence(self) -> str:
        """The trigger as a sentence (the same words in the table, the JSON
        and the Advice screen)."""
        from packscope.core.advise.wording import trigger_sentence

        return trigger_sentence(self.setting, self.value, self.threshold, self.source, self.fires)


class Task(NamedTuple):
    task: str  # one of TASKS
    would_run: bool  # git would run it now (see each task's rule)
    triggers: tuple[Trigger, ...]
    why: str
    command: str  # what git would run
    enabled: bool  # part of a plain `git maintenance run --auto`
    packs: tuple[str, ...] = ()  # geometric-repack: the packs rolled up

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "task": self.task,
            "would_run": self.would_run,
            "triggers": [t.to_dict() for t in self.triggers],
            "why": self.why,
            "command": self.command,
            "enabled": self.enabled,
        }
        if self.task == "geometric-repack":
            out["packs"] = list(self.packs)
        return out


class _Setting(NamedTuple):
    name: str
    value: int | bool
    source: str


def _source(config: Config, section: str, key: str, sub: str | None) -> str:
    e = config.entry(section, key, sub)
    if e is None:
        return "default"
    return f"{e.path}:{e.line}" if e.path else "config"


def _int(config: Config, name: str, default: int) -> _Setting:
    section, sub, key = _split(name)
    return _Setting(name, config.get_int(section, key, sub, default=default), _source(config, section, key, sub))


def _bool(config: Config, name: str, default: bool) -> _Setting:
    section, sub, key = _split(name)
    value = config.get_bool(section, key, sub, default=default)
    return _Setting(name, bool(value), _source(config, section, key, sub))


def _split(name: str) -> tuple[str, str | None, str]:
    first, _, rest = name.partition(".")
    sub, _, key = rest.rpartition(".")
    return first, (sub or None), key


# --- facts read from disk ---------------------------------------------------------


def _hex_names(path: str, length: int, *, lower_only: bool) -> int:
    """Entries of ``path`` named by exactly ``length`` hex digits."""
    pattern = re.compile(rb"[0-9a-f]{%d}" % length if lower_only else rb"[0-9a-fA-F]{%d}" % length)
    try:
        with os.scandir(path) as it:
            return sum(1 for e in it if pattern.fullmatch(os.fsencode(e.name)))
    except OSError:
        return 0


def loose_in_17(objects_dir: str, hexsz: int) -> int:
    """What git's gc estimate counts: ``objects/17`` entries named by
    hexsz-2 lower-case hex digits."""
    return _hex_names(os.path.join(objects_dir, "17"), hexsz - 2, lower_only=True)


def loose_count(objects_dir: str, hexsz: int) -> int:
    """Loose objects of one object directory as ``for_each_loose_file_in_objdir``
    finds them (256 subdirectories, names of hexsz-2 hex digits)."""
    return sum(_hex_names(os.path.join(objects_dir, f"{i:02x}"), hexsz - 2, lower_only=False) for i in range(256))


def _num_objects(h: PackHandle) -> int:
    try:
        h.index.map  # noqa: B018 - maps and parses the index
    except PackscopeError:
        return 0
    return h.index.num_objects


def geometric_split(weights: list[int], factor: int = GEOMETRIC_FACTOR) -> int:
    """How many of ``weights`` (sorted ascending) ``repack --geometric`` rolls
    up: the top run that already grows by ``factor`` stays, and so does
    what the merged pack stays below ``factor`` times of."""
    n = len(weights)
    if not n:
        return 0
    i = n - 1
    while i > 0:
        if weights[i] < factor * weights[i - 1]:
            break
        i -= 1
    split = i + 1 if i else 0
    total = sum(weights[:split])
    for w in weights[split:]:
        if w < factor * total:
            split += 1
            total += w
        else:
            break
    return split


def _gc_log_blocks(git_dir: str, config: Config, now: float) -> tuple[bool, float | None]:
    """(a recent non-empty gc.log stops a detached auto gc, its age in seconds)."""
    path = os.path.join(git_dir, "gc.log")
    try:
        st = os.stat(path)
    except OSError:
        return False, None
    expiry = _expiry_seconds(config.get("gc", "logexpiry"))
    age = now - st.st_mtime
    if expiry is not None and st.st_mtime < now - expiry:
        return False, age
    return st.st_size > 0, age


_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}


def _expiry_seconds(text: str | None) -> float | None:
    """``N.unit.ago`` (git's usual form) in seconds; ``never`` as None (no
    expiry); anything else as the default, one day."""
    if text is None:
        return GC_LOG_EXPIRY
    t = text.strip().lower()
    if t in ("never", "false"):
        return None
    if t in ("now", "all"):
        return 0
    m = re.fullmatch(r"(\d+)[. ]+(second|minute|hour|day|week)s?[. ]+ago", t)
    return int(m.group(1)) * _UNITS[m.group(2)] if m else GC_LOG_EXPIRY


# --- the commit-graph estimate ----------------------------------------------------


def commits_not_in_graph(session: Session, limit: int, *, in_graph: Callable[[bytes], bool]) -> int:
    """git's ``should_write_commit_graph`` count, stopping at ``limit``."""
    from packscope.core.objects import commit_header_fast, parse_tag

    store = session.store
    fmt = session.fmt
    seen: set[bytes] = set()
    count = 0

    def parents_of(oid: bytes) -> tuple[bytes, ...] | None:
        try:
            kind, data = store.read(oid)
        except PackscopeError:
            return None
        if kind != "commit":
            return None
        try:
            return commit_header_fast(data, fmt, oid)[1]
        except PackscopeError:
            return None

    for ref in session.refs.iter_refs("refs/"):
        try:
            oid = ref.oid if ref.symref is None else session.refs.resolve(ref.name)
        except PackscopeError:
            continue
        if oid is None:
            continue
        # peel tags
        kind = None
        for _ in range(64):
            try:
                kind, data = store.read(oid)
            except PackscopeError:
                kind = None
                break
            if kind != "tag":
                break
            try:
                oid = parse_tag(data, fmt, oid).object
            except PackscopeError:
                kind = None
                break
        if kind != "commit" or in_graph(oid):
            continue
        tip_parents = parents_of(oid)
        if tip_parents is None:
            continue
        count += 1
        if count >= limit:
            return count
        stack = [tip_parents]
        while stack:
            for p in stack.pop():
                if p in seen or in_graph(p):
                    continue
                ps = parents_of(p)
                if ps is None:
                    continue
                seen.add(p)
                count += 1
                if count >= limit:
                    return count
                stack.append(ps)
    return count


def _graph_membership(session: Session) -> Callable[[bytes], bool]:
    """Whether git would find a commit in the commit-graph: never when
    core.commitGraph is off or history is rewritten (shallow, grafts,
    replace refs), which turns git's graph off."""
    from packscope.core.history.commit_graph import CommitGraph
    from packscope.core.repo.grafts import read_grafts
    from packscope.core.repo.shallow import is_shallow

    repo = session.repo
    if not repo.config.get_bool("core", "commitgraph", default=True):
        return lambda oid: False
    try:
        rewritten = is_shallow(repo) or bool(read_grafts(repo, session.fmt).parents) or bool(session.replace_refs)
    except PackscopeError:
        rewritten = False
    if rewritten:
        return lambda oid: False
    try:
        graph = CommitGraph.open(str(repo.objects_dir), session.fmt)
    except PackscopeError:
        graph = None
    if graph is None:
        return lambda oid: False
    return graph.__contains__


# --- the rows ---------------------------------------------------------------------------


def _trig(s: _Setting, value: int | bool | None, fires: bool, note: str = "") -> Trigger:
    return Trigger(s.name, value, s.value, s.source, fires, note)


def maintenance(session: Session, *, now: float | None = None) -> list[Task]:
    """Every row, in TASKS order."""
    repo = session.repo
    config = repo.config
    fmt = session.fmt
    objects_dir = str(repo.objects_dir)
    now = time.time() if now is None else now

    # maintenance.<task>.enabled: only gc is on unless configured
    def enabled(task: str, default: bool) -> bool:
        return bool(config.get_bool("maintenance", "enabled", task, default=default))

    packs = list(session.store.all_packs())
    local = [h for h in packs if h.files.local]

    # --- gc --auto
    gc_auto = _int(config, "gc.auto", GC_AUTO)
    pack_limit = _int(config, "gc.autoPackLimit", GC_AUTO_PACK_LIMIT)
    counted = [h for h in local if not h.files.keep]
    too_many_packs = pack_limit.value > 0 and len(counted) > pack_limit.value
    in17 = loose_in_17(objects_dir, fmt.hexsz)
    per_dir = -(-int(gc_auto.value) // 256) if gc_auto.value > 0 else 0
    too_many_loose = gc_auto.value > 0 and in17 > per_dir
    gc_on = gc_auto.value > 0
    auto = _bool(config, "maintenance.auto", True)
    detach = _bool(config, "gc.autoDetach", True)
    log_blocks, log_age = _gc_log_blocks(str(repo.git_dir), config, now)
    log_blocks = log_blocks and bool(detach.value)
    gc_decides = gc_on and (too_many_packs or too_many_loose)
    gc_runs = gc_decides and not log_blocks
    triggers = [
        Trigger(
            "gc.auto",
            in17,
            per_dir,
            gc_auto.source,
            too_many_loose,
            f"objects/17 holds {in17} (about {in17 * 256} loose in all); git's limit is more than "
            f"ceil(gc.auto {gc_auto.value} / 256) = {per_dir}"
            if gc_on
            else f"gc.auto = {gc_auto.value}: automatic gc is off",
        ),
        Trigger(
            "gc.autoPackLimit",
            len(counted),
            int(pack_limit.value),
            pack_limit.source,
            gc_on and too_many_packs,
            f"{len(counted)} local packs without .keep ({len(local) - len(counted)} kept); fires above the limit"
            if pack_limit.value > 0
            else "gc.autoPackLimit <= 0: the pack count is not checked",
        ),
        Trigger(
            "maintenance.auto",
            bool(auto.value),
            True,
            auto.source,
            bool(auto.value),
            "commands run `git maintenance run --auto` after their work"
            if auto.value
            else "commands do not start maintenance on their own",
        ),
    ]
    if log_age is not None:
        triggers.append(
            Trigger(
                "gc.logExpiry",
                int(log_age),
                _expiry_or_none(config),
                _source(config, "gc", "logexpiry", None),
                log_blocks,
                "a recent non-empty gc.log stops automatic gc until it is removed"
                if log_blocks
                else "gc.log is empty or older than gc.logExpiry",
            )
        )
    if not gc_on:
        why = f"gc.auto is {gc_auto.value}: automatic gc is off"
    elif too_many_packs:
        why = (
            f"{count(len(counted), 'local pack')} {'is' if len(counted) == 1 else 'are'} more than"
            f" gc.autoPackLimit {pack_limit.value}: gc repacks everything into one (repack -d -l -A)"
        )
    elif too_many_loose:
        why = (
            f"{count(in17, 'loose object')} in objects/17 {'is' if in17 == 1 else 'are'} more than {per_dir}:"
            " gc packs the loose objects (repack -d -l)"
        )
    else:
        why = (
            f"neither trigger fires: {count(len(counted), 'pack')}, at most {pack_limit.value};"
            f" {count(in17, 'loose object')} in objects/17, at most {per_dir}"
        )
    if gc_decides and log_blocks:
        why += "; but a recent gc.log stops it"
    rows = [Task("gc-auto", gc_runs, tuple(triggers), why, "git gc --auto", enabled("gc", True))]

    # --- loose-objects
    lo = _int(config, "maintenance.loose-objects.auto", LOOSE_OBJECTS_AUTO)
    n_loose = loose_count(objects_dir, fmt.hexsz)
    lo_fires = lo.value < 0 or (lo.value > 0 and n_loose >= lo.value)
    rows.append(
        Task(
            "loose-objects",
            lo_fires,
            (_trig(lo, n_loose, lo_fires, "fires at the threshold; 0 turns it off, < 0 always fires"),),
            (
                f"{count(n_loose, 'loose object')}, the threshold is {lo.value}: the task packs them"
                if lo_fires
                else f"{count(n_loose, 'loose object')}, fewer than {lo.value}: the task waits"
            )
            if lo.value > 0
            else ("the threshold is 0: never" if lo.value == 0 else "the threshold is negative: always"),
            "git maintenance run --auto --task=loose-objects",
            enabled("loose-objects", False),
        )
    )

    # --- incremental-repack
    mpi = _bool(config, "core.multiPackIndex", True)
    ir = _int(config, "maintenance.incremental-repack.auto", INCREMENTAL_REPACK_AUTO)
    outside = sum(1 for h in packs if not h.in_midx)
    ir_fires = bool(mpi.value) and (ir.value < 0 or (ir.value > 0 and outside >= ir.value))
    ir_triggers = (
        _trig(ir, outside, ir_fires, "packs outside the multi-pack-index; fires at the threshold"),
        Trigger("core.multiPackIndex", bool(mpi.value), True, mpi.source, bool(mpi.value)),
    )
    rows.append(
        Task(
            "incremental-repack",
            ir_fires,
            ir_triggers,
            "core.multiPackIndex is false: never"
            if not mpi.value
            else (
                f"{count(outside, 'pack')} outside the multi-pack-index, the threshold is {ir.value}:"
                " the task repacks them"
                if ir_fires
                else f"{count(outside, 'pack')} outside the multi-pack-index, fewer than {ir.value}: the task waits"
            ),
            "git maintenance run --auto --task=incremental-repack",
            enabled("incremental-repack", False),
        )
    )

    # --- commit-graph
    cg = _int(config, "maintenance.commit-graph.auto", COMMIT_GRAPH_AUTO)
    if cg.value > 0:
        missing = commits_not_in_graph(session, int(cg.value), in_graph=_graph_membership(session))
        cg_fires = missing >= cg.value
    else:
        missing, cg_fires = 0, cg.value < 0
    rows.append(
        Task(
            "commit-graph",
            cg_fires,
            (
                _trig(
                    cg,
                    missing,
                    cg_fires,
                    "commits reachable from refs and not in the commit-graph (counted up to the threshold)",
                ),
            ),
            (
                f"at least {count(missing, 'commit')} not in the commit-graph (counted up to the threshold,"
                f" {cg.value}): the task writes the graph"
                if cg_fires
                else f"{count(missing, 'commit')} not in the commit-graph, fewer than {cg.value}: the task waits"
            )
            if cg.value > 0
            else ("the threshold is 0: never" if cg.value == 0 else "the threshold is negative: always"),
            "git maintenance run --auto --task=commit-graph",
            enabled("commit-graph", False),
        )
    )

    # --- pack-refs (with gc)
    pr_entry = config.entry("gc", "packrefs")
    if pr_entry is None:
        pack_refs, pr_source = True, "default"
    elif (pr_entry.value or "").lower() == "notbare":
        pack_refs, pr_source = not repo.bare, f"{pr_entry.path}:{pr_entry.line}"
    else:
        pack_refs = bool(config.get_bool("gc", "packrefs", default=True))
        pr_source = f"{pr_entry.path}:{pr_entry.line}"
    loose_refs = sum(1 for r in session.refs.iter_refs("refs/") if r.source == "loose" and r.symref is None)
    pr_runs = gc_runs and pack_refs
    rows.append(
        Task(
            "pack-refs",
            pr_runs,
            (
                Trigger(
                    "gc.packRefs",
                    loose_refs,
                    pack_refs,
                    pr_source,
                    pr_runs,
                    "loose refs; git 2.39 packs them only when gc runs",
                ),
            ),
            (
                f"gc runs, so it packs {count(loose_refs, 'loose ref')}"
                if pr_runs
                else (
                    "gc.packRefs keeps gc from packing refs"
                    if not pack_refs
                    else f"{count(loose_refs, 'loose ref')} {'waits' if loose_refs == 1 else 'wait'} for the next gc"
                )
            ),
            "git pack-refs --all --prune",
            enabled("pack-refs", False),
        )
    )

    # --- geometric repack
    candidates = [h for h in local if not h.files.keep and not os.path.exists(h.files.base + ".mtimes")]
    weighed = sorted((_num_objects(h), h.files.name) for h in candidates)
    split = geometric_split([w for w, _ in weighed])
    rolled = tuple(name for _, name in weighed[:split])
    geo_runs = split > 1 or (split == 1 and n_loose > 0)
    rows.append(
        Task(
            "geometric-repack",
            geo_runs,
            (
                Trigger(
                    "repack.geometric",
                    split,
                    GEOMETRIC_FACTOR,
                    "default",
                    geo_runs,
                    f"{split} of {count(len(weighed), 'pack')} break the factor-{GEOMETRIC_FACTOR} progression",
                ),
            ),
            (
                f"rolls {count(split, 'pack')} ({count(sum(w for w, _ in weighed[:split]), 'object')})"
                f" and {count(n_loose, 'loose object')} into one"
                if geo_runs
                else f"{count(len(weighed), 'pack')} already {'forms' if len(weighed) == 1 else 'form'}"
                f" a factor-{GEOMETRIC_FACTOR} progression"
            ),
            f"git repack --geometric={GEOMETRIC_FACTOR} -d",
            False,
            rolled,
        )
    )
    return rows


def _expiry_or_none(config: Config) -> int | None:
    s = _expiry_seconds(config.get("gc", "logexpiry"))
    return None if s is None else int(s)
