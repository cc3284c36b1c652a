"""The one document ``packscope advise --json`` prints (``schema`` 1; keys
are only ever added), built from the maintenance rows, the size walk and
the what-if models."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from packscope.core.advise.maintenance import Task, maintenance
from packscope.core.advise.sizes import Sizes, SizeWalk

if TYPE_CHECKING:
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
) -> dict[str, Any]:
    """Everything, as the JSON document."""
    tasks = maintenance(session)
    result = SizeWalk(session, top=top, cancel=cancel, progress=progress).run()
    models: list[dict[str, Any]] = []
    if whatif:
        from packscope.core.advise.whatif import whatif as model

        models = [w.to_dict() for w in model(session)]
    return build(tasks, result, models)
