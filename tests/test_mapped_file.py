"""Every memory-mapped reader (pack index, pack, multi-pack-index layer,
commit-graph layer) opens its file through the one opener in
core/store/mapped_file.py: same errors for missing and empty files, and a
file rejected while parsing is unmapped at once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import packscope.core.store.mapped_file
from packscope.core.errors import PackscopeError
from packscope.core.history.commit_graph import GraphLayer
from packscope.core.oid import SHA1
from packscope.core.store.midx import MidxLayer
from packscope.core.store.pack import Pack
from packscope.core.store.pack_index import PackIndex

ROOT = Path(__file__).resolve().parent.parent

# reader factory (opens on call), file name, kind prefix of its errors
READERS = [
    (lambda p: PackIndex(str(p), SHA1).open(), "pack-x.idx", "idx"),
    (lambda p: Pack(str(p), fmt=SHA1).open(), "pack-x.pack", "pack"),
    (lambda p: MidxLayer(str(p), SHA1).open(), "multi-pack-index", "midx"),
    (lambda p: GraphLayer(str(p), SHA1), "commit-graph", "commit-graph"),
]
IDS = [r[2] for r in READERS]


@pytest.mark.parametrize(("open_reader", "name", "kind"), READERS, ids=IDS)
def test_missing_file_is_an_unreadable_error(tmp_path, open_reader, name, kind):
    with pytest.raises(PackscopeError) as ei:
        open_reader(tmp_path / name)
    assert ei.value.kind == f"{kind}-unreadable"
    assert ei.value.path == str(tmp_path / name)
    assert "No such file" in str(ei.value)


@pytest.mark.parametrize(("open_reader", "name", "kind"), READERS, ids=IDS)
def test_empty_file_is_a_truncated_error_at_offset_0(tmp_path, open_reader, name, kind):
    (tmp_path / name).write_bytes(b"")
    with pytest.raises(PackscopeError) as ei:
        open_reader(tmp_path / name)
    assert ei.value.kind == f"{kind}-truncated"
    assert ei.value.offset == 0
    assert "is empty" in str(ei.value)


@pytest.mark.parametrize(("open_reader", "name", "kind"), READERS, ids=IDS)
def test_rejected_file_is_unmapped(tmp_path, monkeypatch, open_reader, name, kind):
    maps = []
    real = packscope.core.store.mapped_file.map_readonly

    def recording(path, open_files=None):
        m, size = real(path, open_files)
        maps.append(m)
        return m, size

    monkeypatch.setattr(packscope.core.store.mapped_file, "map_readonly", recording)
    (tmp_path / name).write_bytes(b"\x00garbage" * 16)
    with pytest.raises(PackscopeError) as ei:
        open_reader(tmp_path / name)
    assert ei.value.kind.startswith(kind)
    assert len(maps) == 1
    assert maps[0].closed


def _mmap_calls(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        f = node.func if isinstance(node, ast.Call) else None
        if isinstance(f, ast.Attribute) and f.attr == "mmap" and isinstance(f.value, ast.Name) and f.value.id == "mmap":
            lines.append(node.lineno)
    return lines


def test_only_mapped_file_calls_mmap():
    opener = ROOT / "core" / "store" / "mapped_file.py"
    calls = {
        str(p.relative_to(ROOT)): lines
        for top in ("core", "inspector", "bench")
        for p in sorted((ROOT / top).rglob("*.py"))
        if p != opener and (lines := _mmap_calls(p))
    }
    assert calls == {}
    assert _mmap_calls(opener)  # the scan does see a call where there is one
