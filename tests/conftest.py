"""Session-wide repositories, built once with git in a temp dir; and the
one switch between the compiled and the pure path (``door``, ``backend_path``)."""

from __future__ import annotations

import contextlib
import inspect
import types

import pytest

from packscope.core import native
from packscope.core.store import delta as delta_module
from tests import repos
from tests.object_source import core_store

# --- the path: compiled or pure ---------------------------------------------------------


class Door:
    """The tests' one switch of core/native.py's ``backend`` (what every call
    site of core reads when it runs): ``use("compiled")`` or ``use("pure")``
    for the rest of the test, ``path(...)`` for a ``with`` block, ``stub``
    to replace one compiled function (counted, or None: "ask the reference").

    The compiled path is a fresh copy of the module's functions per test, so
    a stub never reaches the module itself nor another test, and a wrapper
    that calls ``door.compiled.x`` calls the real ``x``.  Asking for the
    compiled path fails when the module is not built: a test that compares
    the two paths never silently compares one with itself."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._mp = monkeypatch
        monkeypatch.setattr(native, "backend", native.backend)  # restored after the test, whatever it switched
        monkeypatch.setattr(native, "PATH", native.PATH)

    @property
    def compiled(self):
        """The compiled module itself (its functions, unstubbed)."""
        module = native.compiled_module()
        if module is None:
            pytest.fail("the compiled path was asked for, but packscope.core._native is not built")
        return module

    def use(self, path: str):
        """Switch every call site to ``path`` ("compiled" or "pure"); the
        backend now in place (None on the pure path)."""
        if path == "pure":
            backend = None
        elif path == "compiled":
            module = self.compiled
            # A PACKSCOPE_PURE process never registered the reference errors come from.
            module.set_delta_fallback(delta_module._apply_delta_checked)
            backend = types.SimpleNamespace(**{k: v for k, v in vars(module).items() if not k.startswith("_")})
        else:
            raise ValueError(path)
        # Through monkeypatch each time: restored after the test even if it undid its monkeypatch.
        self._mp.setattr(native, "backend", backend)
        self._mp.setattr(native, "PATH", path)
        return backend

    @contextlib.contextmanager
    def path(self, path: str):
        """``use(path)`` for a ``with`` block; the path before it after."""
        saved = native.backend, native.PATH
        try:
            yield self.use(path)
        finally:
            native.backend, native.PATH = saved

    def stub(self, name: str, func=None) -> None:
        """On the compiled path in place: ``name`` answers through ``func``,
        or declines everything (None: each call site's pure code answers)."""
        backend = native.backend
        assert isinstance(backend, types.SimpleNamespace), "stub() needs door.use('compiled') first"
        setattr(backend, name, func if func is not None else (lambda *args: None))


@pytest.fixture
def door(monkeypatch):
    """The one switch between the compiled and the pure path (see Door)."""
    return Door(monkeypatch)


@pytest.fixture(params=["compiled", "pure"])
def backend_path(request, door):
    """The test runs once on each path: "compiled" or "pure" (its value)."""
    door.use(request.param)
    return request.param


# Modules whose outcome is the project's, not the object store's: the import
# layers, the benchmark runner, the C headers, the browser session.
ONE_PASS_MODULES = frozenset(
    {"test_layering", "test_bench", "test_bench_synth", "test_native_headers", "test_serve_browser"}
)


def pytest_collection_modifyitems(config, items):
    """Marks that decide what CI's second pass (the pure path) leaves out.

    ``both_paths``: a test that takes the door picks its paths itself, so the
    first pass already ran it on both.  ``one_pass``: a screen test (a
    coroutine driven by Pilot, or any test of a ``test_ui_*`` module) or a
    project check (ONE_PASS_MODULES).  Screens show what core answers, and
    core's answers are compared path against path by the core and CLI tests
    that the pure pass runs; the screens run once, on the compiled path."""
    for item in items:
        if {"door", "backend_path"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.both_paths)
        module = item.module.__name__.rsplit(".", 1)[-1] if getattr(item, "module", None) else ""
        if runs_in_one_pass(module, getattr(item, "obj", None)):
            item.add_marker(pytest.mark.one_pass)


def runs_in_one_pass(module: str, test: object) -> bool:
    """A screen test or a project check (see pytest_collection_modifyitems)."""
    return module.startswith("test_ui_") or module in ONE_PASS_MODULES or inspect.iscoroutinefunction(test)


# --- repositories -----------------------------------------------------------------------


@pytest.fixture(scope="session")
def repo_root(tmp_path_factory):
    return tmp_path_factory.mktemp("repos")


@pytest.fixture(scope="session")
def packed_repo(repo_root):
    return repos.build_packed(repo_root)


@pytest.fixture(scope="session")
def sha256_repo(repo_root):
    return repos.build_packed(repo_root, commits=30, object_format="sha256")


@pytest.fixture(scope="session")
def idxv1_repo(repo_root):
    return repos.build_idx_v1(repo_root)


@pytest.fixture(scope="session")
def idx64_repo(repo_root):
    return repos.build_idx_64(repo_root)


@pytest.fixture(scope="session")
def many_packs_repo(repo_root):
    return repos.build_many_packs(repo_root)


# --- commit-graph, Bloom and multi-pack-index repositories ------------------------


@pytest.fixture(scope="session")
def graph_repo(repo_root):
    return repos.build_graph_repo(repo_root)


@pytest.fixture(scope="session")
def graph_sha256_repo(repo_root):
    return repos.build_graph_repo(repo_root, object_format="sha256", commits=20)


@pytest.fixture(scope="session")
def split_graph_repo(repo_root):
    return repos.build_split_graph_repo(repo_root)


@pytest.fixture(scope="session")
def mixed_generation_repo(repo_root):
    return repos.build_mixed_generation_chain(repo_root)


@pytest.fixture(scope="session")
def midx_repo(repo_root):
    return repos.build_midx_repo(repo_root)


@pytest.fixture(scope="session")
def repack_midx_repo(repo_root):
    return repos.build_repack_midx_repo(repo_root)


@pytest.fixture(scope="session")
def midx_chain_repo(repo_root):
    return repos.build_midx_chain_repo(repo_root)


@pytest.fixture(scope="session")
def ref_delta_repo(repo_root):
    return repos.build_ref_delta(repo_root)


@pytest.fixture(scope="session")
def thin_completed_repo(repo_root):
    return repos.build_thin_completed(repo_root)


@pytest.fixture(scope="session")
def deep_chain_repo(repo_root):
    return repos.build_deep_chain(repo_root)


@pytest.fixture(scope="session")
def big_copies_repo(repo_root):
    return repos.build_big_copies(repo_root)


@pytest.fixture(scope="session")
def rev_repo(repo_root):
    return repos.build_with_rev(repo_root)


@pytest.fixture(scope="session")
def three_hundred_packs_repo(repo_root):
    root = repo_root / "three-hundred-packs"
    root.mkdir(exist_ok=True)
    return repos.build_many_packs(root, packs=300)


@pytest.fixture(scope="session")
def loose_repo(repo_root):
    return repos.build_loose(repo_root)


@pytest.fixture(scope="session")
def loose_sha256_repo(repo_root):
    return repos.build_loose(repo_root, "sha256", blobs=200)


@pytest.fixture(scope="session", params=["sha1", "sha256"])
def refs_repo(request, repo_root):
    """build_refs_repo in both object formats (a work tree; its linked
    worktree is repos.refs_worktree(path))."""
    return repos.build_refs_repo(repo_root, request.param)


# --- histories for walks, tree diffs and log formats ------------------------------------


@pytest.fixture(scope="session")
def scenario_repo(repo_root):
    return repos.build_scenario_repo(repo_root)


@pytest.fixture(scope="session")
def random_history_repo(repo_root):
    return repos.build_random_history_repo(repo_root)


@pytest.fixture(scope="module")
def scenario(scenario_repo):
    """(scenario_repo, an ObjectStore open on it)."""
    src = core_store(scenario_repo)
    yield scenario_repo, src
    src.close()


@pytest.fixture(scope="session")
def odd_commits_repo(repo_root):
    return repos.build_odd_commits_repo(repo_root)


# --- the UI's repositories ------------------------------------------------------------


@pytest.fixture(scope="session")
def ui_repo(repo_root):
    return repos.build_ui_repo(repo_root)


@pytest.fixture
def ui_repo_copy(ui_repo, tmp_path):
    """A private copy, for tests that change the repository under the UI."""
    import shutil

    dest = tmp_path / "ui-copy.git"
    shutil.copytree(ui_repo, dest)
    return dest


# --- fsck -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def fsck_base(repo_root):
    return repos.build_fsck_base(repo_root)


@pytest.fixture(scope="session")
def fsck_base_sha256(repo_root):
    return repos.build_fsck_base(repo_root, "sha256")


@pytest.fixture(scope="session")
def fsck_worktree(repo_root):
    return repos.build_fsck_worktree(repo_root)


@pytest.fixture(scope="session")
def run_fsck():
    """run_fsck(repo, **options) -> (exit status, [Finding]) through core's API."""
    from packscope.core.fsck.verify import Fsck
    from packscope.core.repo.session import open_session

    def run(repo, **options):
        with open_session(str(repo)) as session:
            checker = Fsck(session.repo, session.store, session.refs, **options)
            findings = list(checker.run())
        return checker.exit_status, findings

    return run
