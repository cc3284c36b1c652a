"""History's revision prompt reads git log's words with core's parser
(packscope.core.face.parse_log_words, the log command's own): a word git
log does not take is a notice, and the history stays as it was."""

from __future__ import annotations

import pytest

from tests import ui_history_repos as hr
from tests.ui_support import answer_prompt, open_history, running, until


@pytest.fixture(scope="module")
def history_repo(tmp_path_factory):
    return hr.build_history_repo(tmp_path_factory.mktemp("history-words"))


@pytest.mark.asyncio
async def test_a_word_git_log_does_not_take_is_refused_with_its_name(history_repo):
    async with running(history_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        before = (list(screen.revs), list(screen.paths))
        await answer_prompt(app, pilot, "r", "--all --no-such-option")
        notice = await until(
            pilot,
            lambda: next((n for n in app._notifications if "--no-such-option" in str(n.message)), None),
            "the notice naming the refused word",
        )
        assert str(notice.message) == "revisions: unrecognized argument: --no-such-option"
        assert notice.severity == "error"
        assert (screen.revs, screen.paths) == before  # nothing restarted
        await answer_prompt(app, pilot, "r", "-n x")
        await until(
            pilot,
            lambda: any(str(n.message) == "revisions: 'x': not an integer" for n in app._notifications),
            "the notice about a count that is not a number",
        )
