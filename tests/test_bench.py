"""The benchmarks keep running: every scenario once, at tiny sizes.

No timing is asserted (CI machines vary); what is checked is the shape of
the JSON document and that every system produced numbers, or says why not
(dulwich and pygit2 are optional: not installed is a clear note, not a
failure).
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

from packscope.bench.scenarios import SCENARIOS
from tests import repos

ROOT = Path(__file__).resolve().parent.parent
OPTIONAL_PEERS = ("dulwich", "pygit2")


def test_tiny_run_of_every_scenario(tmp_path):
    # One run, every check: pytest-xdist may send tests of one module to
    # different workers, and a shared fixture would then run twice.
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "packscope.inspector.cli",
            "bench",
            "--tiny",
            "--json",
            "-q",
            "--work-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env=repos.git_env(),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout)
    check_document_describes_the_run_and_the_machine(doc)
    check_every_scenario_ran(doc)
    check_packscope_and_git_always_produce_numbers(doc)
    check_optional_peers_are_measured_or_named_as_missing(doc)
    check_ratios_and_targets_are_well_formed(doc)
    check_tables_render_for_people_and_for_results_md(doc)


def check_document_describes_the_run_and_the_machine(tiny_doc):
    assert tiny_doc["schema"] == 1
    assert tiny_doc["tiny"] is True and tiny_doc["reps"] == 1
    m = tiny_doc["machine"]
    for key in ("cpu", "cores", "python", "git", "libraries"):
        assert m[key], key
    assert m["libraries"]["packscope"]
    assert [s["scenario"] for s in tiny_doc["scenarios"]] == list(SCENARIOS)


def check_every_scenario_ran(tiny_doc):
    for sc in tiny_doc["scenarios"]:
        assert sc["available"], (sc["scenario"], sc["reason"])
        assert sc["cases"], sc["scenario"]
        for case in sc["cases"]:
            assert case["systems"], (sc["scenario"], case["case"])
            for s in case["systems"]:
                where = (sc["scenario"], case["case"], s["system"])
                if not s["available"] and not s["samples"]:
                    # Skipped: allowed only for an optional peer (or an API it lacks), with a note.
                    assert s["role"] == "peer" and s["note"], where
                    assert not s["note"].startswith("failed"), (where, s["note"])
                    continue
                assert s["samples"], where
                assert all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in s["samples"]), where
                assert s["min"] <= s["median"] <= s["max"], where
                assert s["info"].get("correct") is not False, (where, s["info"])


def check_packscope_and_git_always_produce_numbers(tiny_doc):
    by = {sc["scenario"]: sc for sc in tiny_doc["scenarios"]}
    systems = {s["system"]: s for c in by["exists-mixed"]["cases"] for s in c["systems"]}
    for name in (
        "packscope cat-file --batch-check",
        "git cat-file --batch-check",
        "packscope ObjectStore.contains",
        "packscope ObjectStore.object_info",
    ):
        assert systems[name]["samples"], name
    read = {s["system"]: s for c in by["read-random"]["cases"] for s in c["systems"]}
    assert read["packscope cat-file --batch"]["samples"] and read["git cat-file --batch"]["samples"]
    # Each whole-process packscope row vs git has its pure-Python twin beside it.
    for scenario, row in (
        ("exists-mixed", "packscope cat-file --batch-check"),
        ("read-random", "packscope cat-file --batch"),
        ("walk", "packscope log --all --format=%H"),
        ("startup", "packscope cat-file -t HEAD"),
        ("fsck", "packscope fsck"),
    ):
        rows = {s["system"]: s for c in by[scenario]["cases"] for s in c["systems"]}
        assert rows[row + " (pure Python)"]["samples"], (scenario, row)
    for case in by["rescan"]["cases"]:
        names = {s["system"] for s in case["systems"] if s["samples"]}
        assert {"policy git", "policy gated", "quick"} <= names
    assert all(t["ratio"] is not None for c in by["exists-mixed"]["cases"] for t in c["targets"])


def check_optional_peers_are_measured_or_named_as_missing(tiny_doc):
    for lib in OPTIONAL_PEERS:
        try:
            __import__(lib)
            installed = True
        except ImportError:
            installed = False
        rows = [
            s for sc in tiny_doc["scenarios"] for c in sc["cases"] for s in c["systems"] if s["system"].startswith(lib)
        ]
        assert rows, lib
        for s in rows:
            if installed and "no header-only" not in s["system"]:
                assert s["samples"], (lib, s["system"], s["note"])
            elif not installed:
                assert "not installed" in (s["note"] or ""), (lib, s["note"])


def check_ratios_and_targets_are_well_formed(tiny_doc):
    for sc in tiny_doc["scenarios"]:
        for case in sc["cases"]:
            for r in case["ratios"]:
                assert r["ratio"] is None or r["ratio"] > 0
            for t in case["targets"]:
                assert set(t) >= {"label", "packscope", "peer", "max_ratio", "ratio", "met"}


def check_tables_render_for_people_and_for_results_md(tiny_doc):
    from rich.console import Console

    from packscope.bench.report import render_markdown, render_rich

    md = render_markdown(tiny_doc)
    for name in SCENARIOS:
        assert f"### {name} " in md
    buf = io.StringIO()
    render_rich(tiny_doc, Console(file=buf, width=200))
    assert "exists-mixed" in buf.getvalue()


def test_synthetic_idx_is_a_valid_v2_index(tmp_path):
    from packscope.bench.scenarios.idx_search import idx_names, write_idx_v2
    from packscope.core.oid import SHA1
    from packscope.core.store.pack_index import PackIndex

    path = tmp_path / "pack-synthetic.idx"
    write_idx_v2(path, 3000, seed=3)
    idx = PackIndex(str(path), SHA1)
    idx.verify_checksum()
    names = idx_names(path)
    assert len(names) == 3000 and names == sorted(names)
    assert all(idx.find(n) == i for i, n in enumerate(names[:50]))
    shown = repos.show_index(path)  # git agrees on every name and offset
    assert len(shown) == 3000
    assert shown[names[7].hex()] == idx.offset_at(7)


def test_each_measured_process_reports_its_own_peak_resident_set(tmp_path):
    import pytest

    from packscope.bench.runner import GNU_TIME, measure_process

    grow = "b = bytearray(160 * 2**20); b[::4096] = b'x' * len(b[::4096])"  # touch every page
    big = measure_process([sys.executable, "-c", grow], ok=(0,))
    small = measure_process(["git", "--version"])
    for m in (big, small):
        m.out.unlink()
    assert big.max_rss_bytes >= 160 * 2**20
    assert big.cpu > 0 and big.wall >= big.cpu / 2
    if GNU_TIME is None:
        pytest.skip("GNU time is not installed: a small command's peak includes the bench process's")
    assert small.max_rss_bytes < 40 * 2**20  # not the bench process's own peak


def test_pure_twin_runs_the_same_command_on_the_pure_python_path(tmp_path):
    from packscope.bench.results import Series
    from packscope.bench.runner import Context, ProcessRun, pure_twin

    # The child reports the path packscope would take in it.
    probe = "from packscope.core.native import PATH; print(PATH)"
    compiled = ProcessRun(
        Series("probe", "packscope"),
        lambda i: [sys.executable, "-c", probe],
        verify=lambda p, i: {"answer": p.read_text().strip()},
    )
    twin = pure_twin(compiled)
    ctx = Context(reps=1, work_dir=tmp_path)
    for run in (compiled, twin):
        run.once({}, ctx)
    assert twin.series.system == "probe (pure Python)" and twin.series.role == "packscope"
    assert twin.series.info["answer"] == "pure"
    assert not compiled.env  # the compiled row keeps the benchmark environment as it is


def test_cached_inputs_are_rebuilt_when_their_builders_or_git_change(tmp_path):
    from packscope.bench import inputs

    source = Path(inputs.__file__).read_bytes()
    git_version = repos.git("--version")
    assert inputs.build_key(source, git_version) == inputs.BUILD_KEY
    assert inputs.build_key(source.replace(b"fast-import", b"fast-export", 1), git_version) != inputs.BUILD_KEY
    assert inputs.build_key(source, b"git version 9.9.9\n") != inputs.BUILD_KEY
    built = inputs.cached_repo(tmp_path, "probe", lambda p: p.mkdir(exist_ok=True))
    assert built.name == f"probe-{inputs.BUILD_KEY}.git" and (built / inputs.MARKER).exists()
