"""fsck's checks of loose objects: each one inflated, its id recomputed
and its syntax checked; its verdict noted in the object table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from packscope.core.errors import MissingObjectError, PackscopeError
from packscope.core.fsck.findings import (
    ERROR_FATAL,
    ERROR_OBJECT,
    Finding,
    Limiter,
    Ticker,
    from_error,
    remedy_for_copies,
)
from packscope.core.fsck.objects import CORRUPT, TYPE_CODES, ObjectTable
from packscope.core.fsck.syntax_findings import syntax_findings

if TYPE_CHECKING:
    from packscope.core.fsck.reach import Promised


def check_loose(
    table: ObjectTable,
    ticker: Ticker,
    *,
    limiter: Limiter,
    promised: Promised | None = None,
    severities: dict[str, str] | None = None,
) -> Iterator[Finding]:
    from packscope.core.store.loose import loose_path, read_loose

    for d in table.loose:
        for sub in range(256):
            for oid in d.cache.entries(sub):
                ticker.tick()
                path = loose_path(d.path, oid.hex())
                try:
                    type_name, data = read_loose(path, table.fmt, oid, verify=True)
                except MissingObjectError:
                    continue  # removed while we looked (a concurrent gc)
                except PackscopeError as e:
                    table.loose_types[oid] = CORRUPT
                    if limiter.allow(d.path, e.kind):
                        elsewhere = table.elsewhere(oid, (d, None), promised)
                        remedy = remedy_for_copies(elsewhere) if elsewhere else e.remedy
                        # git dies mapping a directory named like an object
                        bit = ERROR_FATAL if e.kind == "loose-directory" else ERROR_OBJECT
                        yield from_error(
                            e, "objects", bit, elsewhere=elsewhere, path=path, oid=oid.hex(), remedy=remedy
                        )
                    continue
                table.loose_types[oid] = TYPE_CODES[type_name]
                if type_name != "blob":
                    for f in syntax_findings(type_name, data, oid, table, path=path, severities=severities):
                        if limiter.allow(d.path, f.kind):
                            yield f
