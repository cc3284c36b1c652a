"""Small wording rules: the event log never shows two ids alike (an id
whose first 12 digits another id shown shares is shown whole), and a
finding's detail fields are words, not field names."""

from __future__ import annotations

import pytest

from packscope.core import trace
from packscope.inspector.events import EventDigest, ShortIds
from packscope.inspector.screens.finding_details import detail_words


def _finished(oid: str, found: bool) -> trace.LookupFinished:
    return trace.LookupFinished(oid, "pack" if found else None, "pack-x.pack" if found else None, 1e-6, 0)


def test_a_found_and_a_missing_id_sharing_12_digits_are_shown_apart():
    found = "1234567890ab" + "c" * 28
    missing = "1234567890ab" + "d" * 28
    digest = EventDigest()
    lines = [e.text.plain for e in digest.digest([_finished(found, True), _finished(missing, False)])]
    assert f"lookup {found[:12]} → pack" in lines[0]  # the first, before any clash: short
    assert f"lookup {missing} missing" in lines[1]  # the second: whole
    lines = [e.text.plain for e in digest.digest([_finished(found, True)])]
    assert f"lookup {found} → pack" in lines[0]  # and the first one too, from then on


def test_ids_without_a_clash_stay_short():
    ids = ShortIds()
    a, b = "ab" * 20, "cd" * 20
    assert [ids.short(a), ids.short(b), ids.short(a)] == [a[:12], b[:12], a[:12]]


def test_detail_fields_are_words():
    label, value = detail_words("unavailable_objects", 1234)
    assert "_" not in label and "objects" in label and value == "1,234"
    assert detail_words("some_new_field", "x") == ("some new field", "x")


@pytest.mark.asyncio
async def test_an_empty_repository_says_it_has_no_multi_pack_index(tmp_path):
    from tests.repos import git
    from tests.ui_support import plain, running, until

    repo = tmp_path / "empty"
    git("init", "-q", "--bare", repo)
    async with running(repo, poll_seconds=60) as (app, pilot):
        store = app.screen.query_one("#ov-store")
        text = await until(
            pilot,
            lambda: "multi-pack-index none" in (t := plain(store, width=200)) and t,
            "the Overview to say there is no multi-pack-index",
        )
        assert "packs 0 (0 objects" in text
