"""The one door to the compiled path (core/native.py ``backend``): no module
holds a handle of its own to the compiled module (so one switch reaches
every call site), and switching the door really moves a whole read, walk,
tree diff and fsck onto the path asked for."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import packscope.core
from packscope.core.fsck.verify import Fsck
from packscope.core.history.graph_walk import WalkSource
from packscope.core.history.rev_args import ALL, walk_starts
from packscope.core.history.tree_entries import TreeEntries
from packscope.core.history.walk import walk
from packscope.core.objects import tree_items
from packscope.core.repo.session import open_session
from tests.repos import git_text

CORE = Path(packscope.core.__file__).parent


def _in_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _handles(path: Path) -> list[str]:
    """What in one module reaches the compiled module other than through
    ``native.backend`` read when the code runs."""
    tree = ast.parse(path.read_text(), str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(CORE)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "getattr":
            if node.args and ast.unparse(node.args[0]) in ("native", "_native", "native.backend"):
                found.append(f"{where}: getattr on the compiled module")
        elif isinstance(node, ast.ImportFrom) and not _in_type_checking(node, parents):
            names = {a.name for a in node.names}
            itself = node.module == "packscope.core._native" or (node.module == "packscope.core" and "_native" in names)
            if itself and path.name != "native.py":
                found.append(f"{where}: imports the compiled module itself")
            if node.module == "packscope.core.native" and "backend" in names:
                found.append(f"{where}: binds the backend at import")
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            # A module-level (or class-level) name bound to the backend or one of its functions.
            scope = parents.get(node)
            if isinstance(scope, ast.Module | ast.ClassDef) and "native.backend" in ast.unparse(node.value):
                found.append(f"{where}: keeps {ast.unparse(node.value)!r} from import time")
    return found


def test_core_reaches_the_compiled_module_only_through_the_door():
    modules = sorted(CORE.rglob("*.py"))
    assert len(modules) > 50
    assert [h for m in modules for h in _handles(m)] == []


class Recorder:
    """The compiled functions in place, each noting its name when called."""

    def __init__(self, backend) -> None:
        self.called: set[str] = set()
        for name, func in list(vars(backend).items()):
            if callable(func) and not isinstance(func, type):
                setattr(backend, name, self._wrap(name, func))

    def _wrap(self, name, func):
        def call(*args, **kwargs):
            self.called.add(name)
            return func(*args, **kwargs)

        return call


def _workload(repo) -> None:
    """Reads, batches, a walk, tree diffs and fsck, through core's API."""
    with open_session(str(repo)) as session:
        store = session.store
        ids = [
            bytes.fromhex(line.split()[0])
            for line in git_text(
                "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)", cwd=repo
            ).splitlines()
        ]
        for oid in ids:
            store.read(oid)
            store.read_header(oid)
        list(store.packed_reads(store.locate_many(ids)))
        starts = walk_starts([ALL], repo=session.repo, refs=session.refs, store=session.objects, cwd_prefix="")
        source = WalkSource.open(session.repo, session.store, refs=session.refs)
        try:
            commits = list(walk(source.objects, starts, **source.walk_options(None)))
        finally:
            source.close()
        entries = TreeEntries(store.read, session.fmt)
        trees = [c.tree for c in commits[:20]]
        for a, b in itertools.pairwise(trees):
            entries.diff_names(a, b)
            entries.entry(b, b"README")
            tree_items(store.read(b)[1], session.fmt)
        checker = Fsck(session.repo, session.store, session.refs)
        list(checker.run())


EXPECTED = {
    "read_object",
    "read_objects",
    "entry_header",
    "idx_find",
    "idx_find_many",
    "pack_info",
    "commit_header",
    "tree_items",
    "tree_diff_names",
    "tree_entry",
    "fsck_tree",
    "id_set",
    "tree_unseen",
}


def test_the_door_moves_every_call_site_onto_the_compiled_path(packed_repo, door):
    recorder = Recorder(door.use("compiled"))
    _workload(packed_repo)
    assert recorder.called >= EXPECTED, EXPECTED - recorder.called


def test_without_the_whole_read_the_chain_walk_and_application_run_compiled(packed_repo, door):
    recorder = Recorder(door.use("compiled"))
    door.stub("read_object")  # declines: read_at goes on to the walk and the chain
    door.stub("read_objects")
    with open_session(str(packed_repo)) as session:
        for line in git_text("cat-file", "--batch-all-objects", "--batch-check", cwd=packed_repo).splitlines():
            session.store.read(bytes.fromhex(line.split()[0]))
    assert {"walk_chain", "apply_chain"} <= recorder.called


def test_a_test_that_takes_the_door_is_left_to_the_first_ci_pass(request, door):
    """CI's pure pass runs ``-m "not both_paths"``: a test choosing its paths
    through the door must carry the mark, or the pass would run it twice."""
    assert request.node.get_closest_marker("both_paths") is not None


def test_a_test_without_the_door_runs_in_both_ci_passes(request):
    assert request.node.get_closest_marker("both_paths") is None


def test_screen_tests_and_project_checks_are_left_to_the_first_ci_pass(request):
    """CI's pure pass also runs ``-m "not one_pass"``: every Pilot test (a
    coroutine), every test of a ``test_ui_*`` module and the project checks
    carry the mark; a core test such as this one does not."""
    from tests.conftest import runs_in_one_pass

    async def pilot_test():
        pass

    def plain_test():
        pass

    assert runs_in_one_pass("test_ui_split_diff", plain_test)
    assert runs_in_one_pass("test_stash", pilot_test)
    assert runs_in_one_pass("test_layering", plain_test)
    assert not runs_in_one_pass("test_stash", plain_test)
    assert request.node.get_closest_marker("one_pass") is None
    marked = [i for i in request.session.items if i.get_closest_marker("one_pass")]
    assert all(runs_in_one_pass(i.module.__name__.rsplit(".", 1)[-1], i.obj) for i in marked)
