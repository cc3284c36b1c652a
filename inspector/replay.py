"""Recorded lookups for the Lookup lab: ``packscope lookup --json`` output
(JSON Lines, one lookup a line), read back into the lab's ``LookupRun``s,
so a lookup recorded on one machine is stepped through on another frame by
frame exactly as a live one.

The events are core's own trace dataclasses, rebuilt from their JSON form
(``trace.event_to_dict``): only the classes ``packscope.core.trace``
defines, with the fields it defines.  The other algorithms' paths come from
the recording's ``compare`` (``--algorithm all``) when it has them, else
from this repository's index of the same name when it has one with the same
bucket, else only the store's own search is drawn.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import TYPE_CHECKING

from packscope.core import trace
from packscope.core.errors import PackscopeError
from packscope.inspector import lab_model as lab

if TYPE_CHECKING:
    from packscope.core.store.location import PackHandle
    from packscope.core.store.midx import MultiPackIndex

EVENT_TYPES = {
    cls.__name__: cls
    for cls in (
        trace.LookupStarted,
        trace.NullOidShortcut,
        trace.PackSearched,
        trace.LooseChecked,
        trace.LooseCacheFilled,
        trace.LooseCacheFlushed,
        trace.PackDirScanned,
        trace.RescanSkipped,
        trace.NegativeCacheHit,
        trace.MruMoved,
        trace.DeltaBaseCacheEvent,
        trace.LookupFinished,
    )
}


class TraceFileError(PackscopeError):
    """A file that is not ``packscope lookup --json`` output."""

    kind = "bad-trace"


def _error(path: str, line: int | None, message: str) -> TraceFileError:
    where = f"{path}:{line}" if line is not None else path
    return TraceFileError(
        f"{where}: {message}",
        path=path,
        remedy="record one with `packscope lookup --json --algorithm all OBJECT… > FILE`",
    )


def path_from_dict(d: dict) -> trace.SearchPath:
    return trace.SearchPath(
        algorithm=d["algorithm"],
        bucket=(int(d["bucket"][0]), int(d["bucket"][1])),
        probes=tuple(trace.Probe(p["lo"], p["mi"], p["hi"], p["cmp"], p["page"]) for p in d["probes"]),
        pages=tuple(d["pages"]),
        found=d["found"],
        insert_at=d["insert_at"],
    )


def event_from_dict(d: dict):
    """The trace event ``trace.event_to_dict`` wrote (None: a kind this
    version does not know, skipped as the live lab skips it)."""
    cls = EVENT_TYPES.get(d.get("event", ""))
    if cls is None:
        return None
    values = {}
    for f in dataclasses.fields(cls):
        v = d[f.name]
        if f.name == "path":
            v = path_from_dict(v)
        elif isinstance(v, list):
            v = tuple(v)
        values[f.name] = v
    return cls(**values)


@dataclasses.dataclass(slots=True)
class Recording:
    path: str
    line: int
    doc: dict


def read_recordings(path: str) -> list[Recording]:
    """Every lookup of a ``packscope lookup --json`` file, in order."""
    path = os.path.expanduser(path)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise TraceFileError(
            f"cannot read {path}: {e.strerror}", path=path, remedy="check the path and its permissions"
        ) from None
    try:  # --summary output is one indented document
        whole = json.loads("\n".join(lines))
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and "input" not in whole:
        raise _error(path, None, "not a lookup (--summary output cannot be replayed)")
    out = []
    for n, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise _error(path, n, f"not JSON ({e.msg})") from None
        if not isinstance(doc, dict) or "input" not in doc or "oid" not in doc:
            raise _error(path, n, "not a lookup (--summary output cannot be replayed)")
        out.append(Recording(path, n, doc))
    if not out:
        raise _error(path, None, "no lookup recorded")
    return out


def _same_bucket(index, oid: bytes, path: trace.SearchPath, lock) -> bool:
    try:
        with lock:
            index.open()
            first = oid[0]
            spans = index.layer_buckets(first) if hasattr(index, "layer_buckets") else [index.bucket(first)]
    except PackscopeError:
        return False
    return tuple(path.bucket) in [tuple(s) for s in spans]


def replayed_run(rec: Recording, store=None, lock=None) -> lab.LookupRun:
    """The lab's run for one recorded lookup; ``store`` (this repository's,
    optional) supplies the other algorithms' paths when the recording has
    none and an index of the same name holds the same bucket."""
    d = rec.doc
    text = d["input"]
    if not d.get("oid"):
        why = d.get("message") or d.get("error") or "not resolved"
        return lab.LookupRun(text, None, f"(recorded) {why}", [], [], False, None, None, 0.0, "")
    oid = bytes.fromhex(d["oid"])
    try:
        events = [e for e in (event_from_dict(x) for x in d.get("events", ())) if e is not None]
    except (KeyError, TypeError, ValueError) as e:
        raise _error(rec.path, rec.line, f"an event that does not parse ({e})") from None
    compare = list(d.get("compare") or ())
    by_name: dict[str, PackHandle | MultiPackIndex] = {}
    if store is not None:
        with lock:
            by_name = lab.index_by_name(store)

    def searched(e: trace.PackSearched):
        # The recording's comparison of this search (same pack, in order).
        for i, c in enumerate(compare):
            if c.get("pack") == e.pack:
                del compare[i]
                paths = {a: path_from_dict(p) for a, p in c["paths"].items()}
                if paths.get(e.path.algorithm) == e.path:
                    return None, paths, None, False
                break
        target = by_name.get(e.pack)
        index = lab.index_of(target)
        if index is not None and _same_bucket(index, oid, e.path, lock):
            with lock:
                paths = lab.compare_paths(index, e.path.bucket, oid)
                nr = lab.search_bounds(index, e.path.bucket)
            if paths[e.path.algorithm] == e.path:  # the very search recorded: this is the same index
                return index, paths, nr, False
        return None, {e.path.algorithm: e.path}, None, False

    objects_dir = next((e.objects_dir for e in events if isinstance(e, trace.LooseChecked)), "")
    stages = lab.stages(events, oid, objects_dir, searched)
    algorithm = next((e.path.algorithm for e in events if isinstance(e, trace.PackSearched)), "binary")
    return lab.LookupRun(
        text,
        oid,
        None,
        events,
        stages,
        bool(d.get("found")),
        d.get("where"),
        d.get("source"),
        float(d.get("seconds") or 0.0),
        algorithm,
    )
