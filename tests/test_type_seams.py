"""The seams between a class and its mixins are seen by the type checker:
no class of core re-declares, under ``if TYPE_CHECKING:`` in its own body,
members that another class provides (its host then inherits those
declarations, and a rename on the host leaves mypy green).  A mixin types
its methods ``self: SomeHost`` (a Protocol of what it uses) instead, and
its host's module checks the host against that Protocol."""

from __future__ import annotations

import ast
from pathlib import Path

import packscope.core

CORE = Path(packscope.core.__file__).parent


def _declarations_in_class_bodies(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for stmt in cls.body:
            if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test):
                names = [
                    n.name if isinstance(n, ast.FunctionDef) else ast.unparse(n.target)
                    for n in stmt.body
                    if isinstance(n, ast.FunctionDef | ast.AnnAssign)
                ]
                found.append(f"{path.relative_to(CORE)}:{stmt.lineno} class {cls.name}: {', '.join(names)}")
    return found


def _host_checks(path: Path) -> set[str]:
    """The Protocols a module checks a host against: ``name: SomeHost = host``
    inside an ``if TYPE_CHECKING:`` function."""
    tree = ast.parse(path.read_text(), str(path))
    return {
        ast.unparse(n.annotation)
        for n in ast.walk(tree)
        if isinstance(n, ast.AnnAssign) and ast.unparse(n.annotation).endswith("Host")
    }


def test_no_class_redeclares_its_host_under_type_checking():
    modules = sorted(CORE.rglob("*.py"))
    assert [d for m in modules for d in _declarations_in_class_bodies(m)] == []


def test_every_mixin_host_protocol_is_checked_against_its_host():
    hosts = {}
    for path in sorted(CORE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for n in ast.walk(tree):
            if isinstance(n, ast.ClassDef) and n.name.endswith("Host") and "Protocol" in map(ast.unparse, n.bases):
                hosts[n.name] = path
    assert {"PackInfoHost", "PackOrderHost", "ObjectReadsHost", "BatchLookupsHost", "PlainWalkHost"} <= set(hosts)
    checked = set().union(*(_host_checks(p) for p in CORE.rglob("*.py")))
    assert set(hosts) - checked == set()
