"""`packscope lookup`: trace how the store finds objects.

For each object: the whole path through the store (multi-pack-index, packs in
search order, loose cache or stat, alternates, rescans with their reason) and,
inside each fanout bucket searched, every probe (lo, mi, hi, comparison,
page).  ``--algorithm all`` repeats each bucket search with the three
algorithms side by side.  ``--json`` prints the very events core emitted.
"""

from __future__ import annotations

import json
import sys
import time

from packscope.core import trace
from packscope.core.errors import AmbiguousObjectError, PackscopeError, PromisedObjectError
from packscope.core.repo.session import open_session
from packscope.core.store.search import ALGORITHMS
from packscope.inspector.commands import command_parser
from packscope.inspector.commands.store_options import add_store_options

SCHEMA_VERSION = 1


def register(sub) -> None:
    p = command_parser(sub, "lookup", __doc__, "trace how the object store finds objects (probes, pages, rescans)")
    p.add_argument("objects", nargs="*", metavar="OBJECT", help="object id, abbreviation or revision")
    p.add_argument(
        "--algorithm",
        choices=(*ALGORITHMS, "all"),
        default="binary",
        help="search inside fanout buckets (default: binary, git's)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output (schema in the README)")
    p.add_argument(
        "--stdin",
        action="store_true",
        help="also read objects from standard input, one per line (first word), e.g. git rev-list --objects --all",
    )
    p.add_argument("--summary", action="store_true", help="print totals only (probes, pages, fills, rescans, time)")
    add_store_options(p)
    p.set_defaults(func=run)


def _inputs(args):
    yield from args.objects
    if args.stdin:
        for line in sys.stdin:
            word = line.split(maxsplit=1)
            if word:
                yield word[0]


def resolve_input(session, text: str) -> tuple[bytes | None, dict]:
    """An object id for ``text`` (any revision; a ref of that name wins
    over an abbreviation, as in git); on failure, None and the reason.
    The final object is not checked: the traced lookup does that."""
    try:
        return session.resolve(text, verify=False), {}
    except AmbiguousObjectError as e:
        return None, {"error": "ambiguous", "candidates": [c[0] for c in e.candidates]}
    except PromisedObjectError as e:  # on the way (a promised tree of REV:path)
        return None, {"error": e.kind, "promised": True, "message": e.message}
    except PackscopeError as e:
        return None, {"error": e.kind, "message": e.message}


class _IndexByName:
    def __init__(self, store) -> None:
        self.map = {h.index.name: h.index for h in store.packs}
        for m in store.midxs:
            self.map[m.path.rsplit("/", 1)[-1]] = m

    def get(self, name):
        return self.map.get(name)


def lookup_one(session, recorder, text: str, algorithm: str, indexes: _IndexByName | None) -> dict:
    oid, failure = resolve_input(session, text)
    result: dict[str, object] = {"input": text, "oid": oid.hex() if oid else None}  # a JSON record
    if oid is None:
        result.update(found=False, promised=False)
        result.update(failure)
        return result
    recorder.events.clear()
    t0 = time.perf_counter()
    loc = session.store.locate(oid)
    seconds = time.perf_counter() - t0
    events = list(recorder.events)
    result.update(
        found=loc is not None,
        source=loc.source if loc else None,
        where=loc.where if loc else None,
        offset=loc.offset if loc else None,
        seconds=seconds,
        events=events,
    )
    if loc is None and oid == session.store.empty_tree:
        result["error"] = "not stored"
        result["message"] = "the empty tree, which git always has (cat-file answers it: tree, size 0)"
    elif loc is None:
        # Absent: in a partial clone, is it promised?  (Asked after the
        # trace so the promised-set build is not part of the lookup's time.)
        promised = session.store.is_promised(oid)
        result["promised"] = promised
        if promised:
            result["error"] = "promised"
    if indexes is not None:
        result["compare"] = [
            {
                "pack": e.pack,
                "source": e.source,
                "paths": {a: indexes.get(e.pack).find_traced(oid, a) for a in ALGORITHMS},
            }
            for e in events
            if isinstance(e, trace.PackSearched) and indexes.get(e.pack) is not None
        ]
    return result


def run(args) -> int:
    recorder = trace.Recorder()
    tracer = trace.Tracer()
    tracer.subscribe(recorder)
    algorithm = "binary" if args.algorithm == "all" else args.algorithm
    session = open_session(
        tracer=tracer, policy=args.policy, quick=args.quick, loose_strategy=args.loose_strategy, algorithm=algorithm
    )
    indexes = _IndexByName(session.store) if args.algorithm == "all" else None
    totals = Totals()
    printer = None if args.summary else (JsonPrinter() if args.json else RichPrinter(session))
    status = 0
    for text in _inputs(args):
        if indexes is not None and not args.summary:
            indexes = _IndexByName(session.store)  # packs may have changed on a rescan
        result = lookup_one(session, recorder, text, algorithm, indexes)
        totals.add(result, recorder)
        if not result["found"]:
            status = 1
        if printer:
            printer.print(result)
    if printer:
        printer.close()
    if args.summary:
        totals.store_counters = session.store.counters.as_dict()
        if args.json:
            print(json.dumps(totals.as_dict(), indent=2))
        else:
            totals.render()
    session.close()
    return status


class Totals:
    def __init__(self) -> None:
        self.lookups = self.found = self.missing = 0
        self.probes = 0
        self.pages = 0
        self.searches = 0
        self.loose_fills = self.rescans = 0
        self.seconds = 0.0
        self.store_counters: dict = {}

    def add(self, result: dict, recorder) -> None:
        self.lookups += 1
        if result["found"]:
            self.found += 1
        else:
            self.missing += 1
        self.seconds += result.get("seconds", 0.0)
        for e in result.get("events", ()):
            if isinstance(e, trace.PackSearched):
                self.searches += 1
                self.probes += len(e.path.probes)
                self.pages += len(e.path.pages)
            elif isinstance(e, trace.LooseCacheFilled):
                self.loose_fills += 1
            elif isinstance(e, trace.PackDirScanned) and e.reason != "startup":
                self.rescans += 1

    def as_dict(self) -> dict:
        return {
            "lookups": self.lookups,
            "found": self.found,
            "missing": self.missing,
            "bucket_searches": self.searches,
            "probes": self.probes,
            "pages": self.pages,
            "mean_probes_per_search": self.probes / self.searches if self.searches else 0.0,
            "loose_cache_fills": self.loose_fills,
            "rescans": self.rescans,
            "seconds": self.seconds,
            "store": self.store_counters,
        }

    def render(self) -> None:
        from rich.console import Console
        from rich.table import Table

        t = Table(title="lookup summary", show_header=False)
        for k, v in self.as_dict().items():
            if k == "store":
                continue
            t.add_row(k.replace("_", " "), f"{v:.4f}" if isinstance(v, float) else str(v))
        for k, v in self.store_counters.items():
            t.add_row(f"store: {k.replace('_', ' ')}", str(v))
        Console().print(t)


def result_to_json(result: dict) -> dict:
    out = {k: v for k, v in result.items() if k not in ("events", "compare")}
    if "events" in result:
        out["events"] = [trace.event_to_dict(e) for e in result["events"]]
    if "compare" in result:
        out["compare"] = [
            {"pack": c["pack"], "source": c["source"], "paths": {a: trace.jsonable(p) for a, p in c["paths"].items()}}
            for c in result["compare"]
        ]
    return out


class JsonPrinter:
    """One JSON document per line (JSON Lines), so --stdin streams."""

    def print(self, result: dict) -> None:
        sys.stdout.write(json.dumps(result_to_json(result)) + "\n")

    def close(self) -> None:
        sys.stdout.flush()


_CMP = {-1: "<", 0: "=", 1: ">"}


class RichPrinter:
    def __init__(self, session) -> None:
        from rich.console import Console

        self.console = Console(highlight=False, soft_wrap=True)
        self.session = session

    def print(self, result: dict) -> None:
        from rich.markup import escape
        from rich.table import Table

        c = self.console
        head = f"[bold]{escape(result['input'])}[/]"
        if result["oid"] and result["oid"] != result["input"]:
            head += f" → {result['oid']}"
        if not result["found"]:
            reason = result.get("error", "missing")
            extra = ""
            if result.get("candidates"):
                extra = ": " + ", ".join(result["candidates"])
            elif result.get("promised"):
                extra = " (absent from this partial clone; its promisor remote has it, nothing is fetched)"
            elif result.get("message"):
                extra = ": " + result["message"]
            c.print(f"{head}  [{'yellow' if result.get('promised') else 'red'}]{reason}[/]{escape(extra)}")
        else:
            c.print(
                f"{head}  [green]found[/] in {escape(str(result['where']))}"
                + (f" @ {result['offset']}" if result["offset"] is not None else "")
                + f"  ({result['source']}, {result['seconds'] * 1e6:.0f} µs)"
            )
        compare = {c_["pack"]: c_["paths"] for c_ in result.get("compare", ())}
        for e in result.get("events", ()):
            if isinstance(e, trace.PackSearched):
                paths = compare.get(e.pack) or {e.path.algorithm: e.path}
                lo, hi = e.path.bucket
                c.print(f"  {e.source} {escape(e.pack)}  bucket [{lo}, {hi}) of {hi - lo}")
                t = Table(box=None, padding=(0, 1), show_header=True, header_style="dim")
                for col in ("algorithm", "probes", "pages", "result", "search path: mi (lo..hi) cmp"):
                    t.add_column(col)
                for alg, path in paths.items():
                    steps = "  ".join(f"{p.mi} ({p.lo}..{p.hi}) {_CMP[p.cmp]}" for p in path.probes)
                    verdict = (
                        f"found at {path.found}" if path.found is not None else f"absent, would be at {path.insert_at}"
                    )
                    t.add_row(alg, str(len(path.probes)), str(len(path.pages)), verdict, steps)
                c.print(t)
            elif isinstance(e, trace.LooseChecked):
                c.print(
                    f"  loose {escape(e.subdir)}/ by {e.method}: {'found' if e.found else 'absent'}"
                    f"  ({escape(e.objects_dir)})"
                )
            elif isinstance(e, trace.LooseCacheFilled):
                c.print(f"  loose cache filled {e.subdir}/: {e.added} names ({e.strategy}, {e.seconds * 1e6:.0f} µs)")
            elif isinstance(e, trace.PackDirScanned):
                c.print(
                    f"  [yellow]rescan[/] of pack directories ({e.reason}): {e.packs} packs"
                    + (f", +{len(e.added)}" if e.added else "")
                    + (f", -{len(e.removed)}" if e.removed else "")
                )
            elif isinstance(e, trace.RescanSkipped):
                c.print(f"  rescan skipped: {e.reason}")
            elif isinstance(e, trace.NegativeCacheHit):
                c.print("  known missing (negative cache): no search")
            elif isinstance(e, trace.NullOidShortcut):
                c.print("  the null id: missing without any probe")
            elif isinstance(e, trace.MruMoved):
                c.print(f"  {escape(e.pack)} moved to the front (was rank {e.from_rank})")

    def close(self) -> None:
        pass
