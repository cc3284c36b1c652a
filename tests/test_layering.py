"""The import order of ARCHITECTURE.md, enforced.

Layers, lowest first; a module may import its own layer and those below it,
never one above, and no set of modules may import each other in a circle —
counting imports inside functions as well (an import moved into a function
still ties the two modules together; only ``if TYPE_CHECKING:`` blocks,
which never run, are left out).

    packscope.core (base) ← .store ← .repo ← .history ← .fsck ← .advise ← .face ← inspector ← bench

And the face of core (packscope.core.face), enforced: the screens, widgets
and the app ask core only through it; nothing in inspector but the commands
(and the CLI's table of them) reaches a CLI command module; nothing in
inspector names a private core name.
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
    "packscope.core.face",
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


def imported_names(path: Path, module: str, *, type_only: bool = False) -> list[tuple[str, int]]:
    """(imported name, line) for every import that runs, anywhere in the file
    (with ``type_only``, the ``if TYPE_CHECKING:`` ones as well)."""
    tree = ast.parse(path.read_text(), str(path))
    skipped = (
        set()
        if type_only
        else {id(n) for block in ast.walk(tree) if _type_checking_block(block) for n in ast.walk(block)}
    )
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
    assert len(MODULES) > 60  # core, its subpackages, inspector and bench were all found
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
                offenders.append(f"{_where(path)}:{line}: {name}")
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


# --- the face of core ----------------------------------------------------------------

FACE = "packscope.core.face"
COMMANDS = "packscope.inspector.commands"
# what may reach a command module: the commands themselves and the CLI's table
COMMAND_USERS = (COMMANDS, "packscope.inspector.cli")
# what asks core only through the face: every screen and widget, and the app
UI_MODULES = ("packscope.inspector.screens", "packscope.inspector.widgets", "packscope.inspector.app")


def _where(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _named_modules(path: Path) -> list[tuple[str, int]]:
    """Module names written as strings (``importlib.import_module("…")``)."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        (n.value, n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("packscope.")
    ]


def commands_reached_from_outside(modules: dict[str, Path]) -> list[str]:
    offenders = []
    for module, path in modules.items():
        if not module.startswith("packscope.inspector") or _within(module, COMMAND_USERS):
            continue
        names = imported_names(path, module, type_only=True) + _named_modules(path)
        offenders += [f"{_where(path)}:{line}: {n}" for n, line in names if _within(n, (COMMANDS,))]
    return offenders


def core_reached_around_the_face(modules: dict[str, Path]) -> list[str]:
    offenders = []
    for module, path in modules.items():
        if not _within(module, UI_MODULES):
            continue
        for name, line in imported_names(path, module, type_only=True):
            if name.startswith("packscope.core") and not _within(name, (FACE,)):
                offenders.append(f"{_where(path)}:{line}: {name}")
    return offenders


def _private_names_defined(paths) -> set[str]:
    """Every ``_name`` a module defines: functions, classes, module globals
    and attributes it assigns (``self._x = …``)."""
    out = set()
    for path in paths:
        for n in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(n.name)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                out.add(n.attr)
            elif isinstance(n, ast.arg):
                out.add(n.arg)
    return {x for x in out if x.startswith("_") and not x.startswith("__")}


def private_core_names_used(modules: dict[str, Path]) -> list[str]:
    """An inspector module importing a private name from core, or reading a
    private attribute that core defines and inspector does not
    (``store._missing``); ``self._x`` is the module's own business."""
    core_paths = [p for m, p in modules.items() if m.startswith("packscope.core")]
    inspector = {m: p for m, p in modules.items() if m.startswith("packscope.inspector")}
    core_private = _private_names_defined(core_paths) - _private_names_defined(inspector.values())
    offenders = []
    for path in inspector.values():
        for n in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("packscope.core"):
                offenders += [
                    f"{_where(path)}:{n.lineno}: {n.module}.{a.name}" for a in n.names if a.name.startswith("_")
                ]
            elif (
                isinstance(n, ast.Attribute)
                and n.attr in core_private
                and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"))
            ):
                offenders.append(f"{_where(path)}:{n.lineno}: {ast.unparse(n)}")
    return offenders


def test_no_screen_widget_or_model_reaches_a_cli_command():
    assert commands_reached_from_outside(MODULES) == []


def test_screens_widgets_and_the_app_ask_core_only_through_its_face():
    assert core_reached_around_the_face(MODULES) == []


def test_inspector_names_no_private_core_name():
    assert private_core_names_used(MODULES) == []


@pytest.mark.parametrize(
    ("where", "text", "check"),
    [
        ("screens/x.py", "def f():\n    from packscope.inspector.commands.info import run\n", "commands"),
        ("widgets/x.py", "import importlib\nimportlib.import_module('packscope.inspector.commands.log')\n", "commands"),
        ("screens/x.py", "from packscope.core.store.odb import ObjectStore\n", "face"),
        (
            "app.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from packscope.core.oid import SHA1\n",
            "face",
        ),
        ("commands/x.py", "from packscope.core.trace import _jsonable\n", "private"),
        ("x.py", "def f(store):\n    return store._remember_missing\n", "private"),
    ],
)
def test_each_face_rule_catches_a_break(tmp_path, where, text, check):
    """The three rules can fail: a module written to break one is named."""
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    name = "packscope.inspector." + where.removesuffix(".py").replace("/", ".")
    modules = {**MODULES, name: path}
    found = {
        "commands": commands_reached_from_outside,
        "face": core_reached_around_the_face,
        "private": private_core_names_used,
    }[check]
    offenders = found(modules)
    assert len(offenders) == 1 and str(path) in offenders[0]  # the break, and only it


def test_the_face_names_each_thing_once_for_the_runtime_and_the_type_checker():
    """``_NAMES`` (what __getattr__ loads), ``__all__`` and the type-only
    imports name the same things in the same places, and each one loads."""
    from packscope.core import face

    path = MODULES[FACE]
    tree = ast.parse(path.read_text(), str(path))
    typed = {}
    for block in ast.walk(tree):
        if _type_checking_block(block):
            for n in ast.walk(block):
                if isinstance(n, ast.ImportFrom):
                    for a in n.names:
                        whole = f"{n.module}.{a.name}"  # `from packscope.core import trace`: the module
                        typed[a.asname or a.name] = (whole, None) if whole in MODULES else (n.module, a.name)
    assert sorted(face.__all__) == sorted(face._NAMES) == sorted(typed)
    assert typed == face._NAMES
    for name in face.__all__:
        assert getattr(face, name) is not None


def test_the_face_loads_a_layer_only_when_a_name_from_it_is_asked_for():
    code = (
        "import sys\n"
        "from packscope.core.face import open_session\n"
        "print(sorted(n for n in sys.modules if n.startswith(('packscope.core.history', 'packscope.core.fsck',"
        " 'packscope.core.advise', 'packscope.core.face.report'))))\n"
        "from packscope.core.face import repository_report\n"
        "print('packscope.core.face.report' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "True"]
