"""The Lookup lab's batches (part of ``LabScreen``): K lookups run in a
worker, on a fresh store per run unless warm, then their distributions
and the table of every run so far."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual import work
from textual.widgets import ContentSwitcher, Label, Static

from packscope.inspector import lab_batch
from packscope.inspector.widgets.lab_views import batch_bins, batch_summary, batch_table, runs_table

if TYPE_CHECKING:
    # For the type checker this mixin is a packscope screen (it is mixed
    # into LabScreen); at run time it adds only its methods.
    from packscope.inspector.screens.base import PackscopeScreen as _Screen
else:
    _Screen = object

BATCH_SIZES = (100, 1000, 10_000, 100_000)


class LabBatches(_Screen):
    """Mixed into ``LabScreen``: its actions b, k, m, f, r, W and v."""

    # What LabScreen keeps for these methods (set in its __init__).
    batch_k: int
    batch_mode: str
    batch_ids: list[bytes] | None
    batch_source: str
    last_batch: lab_batch.BatchResult | None
    runs: list[lab_batch.BatchResult]
    batch_progress: str
    warm_runs: bool

    if TYPE_CHECKING:

        def show_settings(self) -> None: ...

    def action_view(self) -> None:
        sw = self.query_one(ContentSwitcher)
        sw.current = "lab-batch" if sw.current == "lab-lookup" else "lab-lookup"

    def action_batch_size(self) -> None:
        i = BATCH_SIZES.index(self.batch_k) if self.batch_k in BATCH_SIZES else 0
        self.batch_k = BATCH_SIZES[(i + 1) % len(BATCH_SIZES)]
        self.show_settings()

    def action_warm(self) -> None:
        self.warm_runs = not self.warm_runs
        self.show_settings()
        self.notify(
            "batch runs keep the store's caches (negative cache, loose cache, MRU)"
            if self.warm_runs
            else "each batch run starts from a fresh store (empty caches)",
            timeout=3,
        )

    def action_batch_mode(self) -> None:
        self.batch_mode = lab_batch.BATCH_MODES[
            (lab_batch.BATCH_MODES.index(self.batch_mode) + 1) % len(lab_batch.BATCH_MODES)
        ]
        self.show_settings()

    def action_batch(self) -> None:
        self.start_batch()

    def action_rerun(self) -> None:
        if self.batch_ids is None:
            self.notify("no batch yet: b runs one", timeout=2)
            return
        self.start_batch(ids=self.batch_ids, source=self.batch_source)

    def action_batch_file(self) -> None:
        from packscope.inspector.widgets.prompt import Prompt

        def chosen(path: str | None) -> None:
            if path:
                self.start_batch(path=path)

        self.app.push_screen(Prompt("ids from file:", "path, one id (or revision) per line"), chosen)

    def start_batch(
        self,
        k: int | None = None,
        mode: str | None = None,
        ids: list[bytes] | None = None,
        path: str | None = None,
        source: str = "",
        seed: int | None = None,
    ):
        if not self.app.core.ready:
            self.notify("the repository is still opening", timeout=2)
            return None
        self.query_one(ContentSwitcher).current = "lab-batch"
        return self._batch_worker(k or self.batch_k, mode or self.batch_mode, ids, path, source, seed, self.warm_runs)

    @work(thread=True, exclusive=True, group="lab-batch")
    def _batch_worker(
        self, k: int, mode: str, ids, path, source: str, seed, warm: bool
    ) -> lab_batch.BatchResult | None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        core = self.app.core
        say = self.app.call_from_thread
        if ids is None:
            if path is not None:
                say(self._batch_status, f"reading ids from {path}…")
                try:
                    ids, bad = lab_batch.read_ids(core.session, core.lock, path)
                except OSError as e:
                    say(self.notify, f"cannot read {path}: {e.strerror}", severity="error", timeout=5)
                    say(self._batch_status, "")
                    return None
                source = f"{len(ids):,} ids from {path}" + (f" ({bad} unresolved)" if bad else "")
            else:
                say(self._batch_status, f"choosing {k:,} {mode} ids…")
                ids = lab_batch.sample_ids(core.store, core.lock, k, mode, seed)
                source = f"{k:,} {mode} ids"
        label = f"#{len(self.runs) + 1} {source}"

        def progress(done: int, total: int) -> None:
            say(self._batch_status, f"batch {label}: {done:,}/{total:,} ({done / total:.0%})")

        if warm:
            res = lab_batch.run_batch(
                core.store, core.lock, ids, label, progress, lambda: worker.is_cancelled, warm=True, repo=core.repo
            )
        else:
            say(self._batch_status, f"batch {label}: opening a fresh store…")
            fresh = lab_batch.fresh_session(core.session, core.lock)
            try:
                lock = threading.RLock()  # the fresh store is this worker's alone
                res = lab_batch.run_batch(
                    fresh.store, lock, ids, label, progress, lambda: worker.is_cancelled, warm=False, repo=fresh.repo
                )
            finally:
                fresh.close()
        say(self._batch_done, res, ids, source)
        return res

    def _batch_status(self, text: str) -> None:
        self.batch_progress = text
        status = self.query_one("#lab-batch-status", Label)
        status.update(Text(text, style="italic"))
        status.display = bool(text)  # an empty line costs a row at 80×24

    def _batch_done(self, res: lab_batch.BatchResult, ids: list[bytes], source: str) -> None:
        self.last_batch, self.batch_ids, self.batch_source = res, ids, source
        self.runs.append(res)
        self._batch_status("")
        self.show_batch()
        self.notify(
            f"batch done: {res.lookups:,} lookups in {res.wall:.2f} s — {res.rescans} rescans, "
            f"{res.fills} loose-cache fills"
            + (f"; the repository changed during the batch ({res.changed}): r runs it again" if res.changed else ""),
            severity="warning" if res.changed else "information",
            timeout=6 if res.changed else 4,
        )

    def show_batch(self) -> None:
        res = self.last_batch
        if res is None:
            self.query_one("#lab-batch-summary", Static).update(
                Text(
                    "No batch yet: b looks up K ids (k: K, m: present/absent/mixed, f: ids from a file).",
                    style="italic",
                )
            )
            self.query_one("#lab-batch-chart", Static).update("")
            self.query_one("#lab-batch-runs", Static).update("")
            return
        self.query_one("#lab-batch-summary", Static).update(batch_summary(res))
        self.query_one("#lab-batch-chart", Static).update(
            batch_table(res, batch_bins(self.size.width), narrow=self.size.width < 110)
        )
        runs = Group(
            Text("\nruns (r repeats the same ids: switch a, P, U, C or W first to compare)", style="bold"),
            runs_table(self.runs),
        )
        self.query_one("#lab-batch-runs", Static).update(runs)
