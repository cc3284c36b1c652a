"""The one document ``packscope advise --json`` prints (``schema`` 1; keys
are only ever added), built from the maintenance rows, the size walk and
the what-if models."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from packscope.core.advise.maintenance import Task, maintenance
from packscope.core.advise.sizes import Sizes, SizeWalk

if TYPE_CHECKING:
    from packscope.core.advise.whatif import WhatIf
    from packscope.core.repo.session import Session

SCHEMA = 1


def sizes_part(result: Sizes) -> dict[str, Any]:
    return {name: m.to_dict() for name, m in result.metrics.items()}


def largest_part(result: Sizes) -> dict[str, Any]:
    return {
        "blobs": [b.to_dict() for b in result.largest_blobs],
        "blobs_on_disk": [b.to_dict() for b in result.largest_blobs_on_disk],
        "paths": [p.to_dict() for p in result.largest_paths],
        "paths_on_disk": [p.to_dict() for p in result.largest_paths_on_disk],
    }


def build(tasks: list[Task], result: Sizes | None, whatif: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "maintenance": [t.to_dict() for t in tasks],
        "sizes": sizes_part(result) if result is not None else {},
        "largest": largest_part(result) if result is not None else {"blobs": [], "paths": []},
        "whatif": whatif or [],
    }
    if result is not None:
        doc["object_format"] = result.object_format
        doc["disk"] = result.disk
        doc["stored"] = result.stored.to_dict() if result.stored is not None else None
        doc["shallow"] = result.shallow
        doc["partial"] = result.partial
        doc["promised"] = result.promised
        doc["missing"] = result.missing
    return doc


def advise(
    session: Session,
    *,
    top: int = 20,
    cancel: Callable[[], bool] | None = None,
    progress: Callable[[str, int], None] | None = None,
    whatif: bool = True,
    whatif_ids: Sequence[bytes] | None = None,
    whatif_workload: str | None = None,
    whatif_path: str | None = None,
) -> dict[str, Any]:
    """Everything, as the JSON document.  ``whatif_ids``: a recorded trace's
    lookups for the what-if rows (``whatif_workload`` names them);
    ``whatif_path``: the path of the ``log -- PATH`` row (by default the
    largest path)."""
    tasks = maintenance(session)
    result = SizeWalk(session, top=top, cancel=cancel, progress=progress).run()
    models: list[dict[str, Any]] = []
    if whatif:
        models = [w.to_dict() for w in whatif_rows(session, result, whatif_ids, whatif_workload, whatif_path, cancel)]
    return build(tasks, result, models)


def default_log_path(result: Sizes | None) -> str | None:
    """The ``log -- PATH`` row's path when none is asked for: the largest
    path (by the size of its blobs)."""
    if result is None or not result.largest_paths:
        return None
    return result.largest_paths[0].path


def whatif_rows(
    session: Session,
    result: Sizes | None,
    ids: Sequence[bytes] | None = None,
    workload: str | None = None,
    path: str | None = None,
    cancel: Callable[[], bool] | None = None,
) -> list[WhatIf]:
    from packscope.core.advise.whatif import whatif as model

    return model(
        session,
        ids=ids,
        workload=workload,
        log_path=path or default_log_path(result),
        cancel=cancel,
        unreachable_loose=result.unreachable_loose if result is not None else frozenset(),
    )
