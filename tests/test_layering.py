"""The import order of ARCHITECTURE.md, enforced.

Layers, lowest first; a module may import its own layer and those below it,
never one above, and no set of modules may import each other in a circle —
counting imports inside functions as well (an import moved into a function
still ties the two modules together; only ``if TYPE_CHECKING:`` blocks,
which never run, are left out).

    packscope.core (base) ← .store ← .repo ← .history ← .fsck ← .advise ← inspector ← bench
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# source folder -> the package it installs as (pyproject's package-dir)
FOLDERS = {"core": "packscope.core", "inspector": "packscope.inspector", "bench": "packscope.bench"}
LAYERS = [
    "packscope.core",
    "packscope.core.store",
    "packscope.core.repo",
    "packscope.core.history",
    "packscope.core.fsck",
    "packscope.core.advise",
    "packscope.inspector",
    "packscope.bench",
]
UI_PACKAGES = {"textual", "rich"}


def module_files() -> dict[str, Path]:
    """Every module of ours by its installed name (subpackages included)."""
    out = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


MODULES = module_files()


def layer_of(module: str) -> int:
    """The index in LAYERS of the deepest layer package holding ``module``."""
    best = -1
    for i, layer in enumerate(LAYERS):
        if module == layer or module.startswith(layer + "."):
            best = i
    assert best >= 0, module
    # Modules directly in packscope.core (errors, oid, trace, objects) are the
    # base; a subpackage's name also starts with "packscope.core.", handled above.
    return best


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def imported_names(path: Path, module: str) -> list[tuple[str, int]]:
    """(imported name, line) for every import that runs, anywhere in the file."""
    tree = ast.parse(path.read_text(), str(path))
    skipped = {id(n) for block in ast.walk(tree) if _type_checking_block(block) for n in ast.walk(block)}
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            # `from pkg import mod` imports the module pkg.mod when there is one
            out += [(f"{name}.{a.name}" if f"{name}.{a.name}" in MODULES else name, node.lineno) for a in node.names]
    return out


def internal_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for name, _ in imported_names(path, module):
            target = name
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != module:
                edges[module].add(target)
    return edges


def test_every_module_is_in_a_layer():
    assert len(MODULES) > 60  # core, its four subpackages, inspector and bench were all found
    assert {layer_of(m) for m in MODULES} == set(range(len(LAYERS)))


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for module, targets in internal_edges().items():
        for target in targets:
            # A package's __init__ may be imported by its own layer's modules.
            if layer_of(target) > layer_of(module):
                upward.append(f"{module} ({LAYERS[layer_of(module)]}) imports {target} ({LAYERS[layer_of(target)]})")
    assert upward == []


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges[v]:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in edges:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_even_through_function_level_imports():
    assert strongly_connected(internal_edges()) == []


def test_the_cycle_check_finds_a_cycle_hidden_in_a_function():
    """The check itself can fail: two modules that import each other, one
    of them from inside a function, are one component."""
    edges = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert strongly_connected(edges) == [["a", "b"]]


def test_relative_and_from_imports_resolve_to_modules(tmp_path):
    path = tmp_path / "x.py"
    path.write_text("from packscope.core.store import odb\nfrom .odb import ObjectStore\n")
    names = [n for n, _ in imported_names(path, "packscope.core.store.x")]
    assert names == ["packscope.core.store.odb", "packscope.core.store.odb"]


@pytest.mark.parametrize("folder", ["core"])
def test_core_source_imports_no_ui_package(folder):
    offenders = []
    for module, path in MODULES.items():
        if not module.startswith("packscope.core"):
            continue
        for name, line in imported_names(path, module):
            top = name.split(".")[0]
            if top in UI_PACKAGES or name.startswith(("packscope.inspector", "packscope.bench")):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert offenders == []


def test_importing_all_of_core_loads_no_ui_package():
    mods = sorted(m for m in MODULES if m.startswith("packscope.core"))
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        f"print(sorted(n for n in sys.modules if n.split('.')[0] in {sorted(UI_PACKAGES)!r}"
        " or n.startswith(('packscope.inspector', 'packscope.bench'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_one_shot_command_imports_no_ui_package():
    """`packscope cat-file` draws nothing: Textual and Rich stay unloaded."""
    code = (
        "import sys\n"
        "from packscope.inspector import cli\n"
        "cli.build_parser(['cat-file'])\n"
        f"print(sorted({{n.split('.')[0] for n in sys.modules}} & set({sorted(UI_PACKAGES)!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
