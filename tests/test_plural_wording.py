"""Counts are worded for their number: "1 pack", "2 packs", "3,352 ids"."""

from __future__ import annotations

from packscope.core import trace
from packscope.inspector.events import EventDigest
from packscope.inspector.plural import count


def test_count_words_one_and_many_with_separators():
    assert count(1, "pack") == "1 pack"
    assert count(0, "pack") == "0 packs"
    assert count(3352, "id") == "3,352 ids"
    assert count(2, "index", "indexes") == "2 indexes"


def test_the_event_log_says_1_pack_and_1_name():
    digest = EventDigest()
    _, scan = digest._one(trace.PackDirScanned("objects", "startup", 1, (), (), 0.001))
    assert "1 pack " in scan.plain + " " and "1 packs" not in scan.plain
    _, scan = digest._one(trace.PackDirScanned("objects", "startup", 2, (), (), 0.001))
    assert "2 packs" in scan.plain
    _, fill = digest._one(trace.LooseCacheFilled("objects", "ab", 1, 0.0001, "per-subdir"))
    assert "+1 name " in fill.plain and "names" not in fill.plain
