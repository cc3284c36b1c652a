"""Maintenance triggers as sentences a user reads: "objects/17 holds 3
loose objects; gc --auto packs them above 27 (git's default) — quiet".

The sentence is built from the trigger's own facts (setting, value,
threshold, source, fires), so the command's table, its JSON (``sentence``)
and the Advice screen say the same thing.
"""

from __future__ import annotations


def count(n: int, word: str, plural: str | None = None) -> str:
    """``n`` (thousands separated) and ``word``, plural unless n is 1."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def source_words(source: str) -> str:
    """Where a threshold came from, in words."""
    return "git's default" if source == "default" else f"set in {source}"


def on_off(value: object) -> str:
    return "on" if value else "off"


def _verdict(fires: bool) -> str:
    return "fires" if fires else "quiet"


# setting -> (what the value counts, singular and plural; when it fires)
_COUNTED: dict[str, tuple[str, str, str]] = {
    "gc.autoPackLimit": ("local pack without .keep", "local packs without .keep", "above"),
    "maintenance.loose-objects.auto": ("loose object", "loose objects", "or more"),
    "maintenance.incremental-repack.auto": (
        "pack outside the multi-pack-index",
        "packs outside the multi-pack-index",
        "or more",
    ),
    "maintenance.commit-graph.auto": (
        "commit not in the commit-graph",
        "commits not in the commit-graph",
        "or more",
    ),
}


def trigger_sentence(setting: str, value: object, threshold: object, source: str, fires: bool) -> str:
    """One trigger as a sentence, ending in whether it fires."""
    src = source_words(source)
    if setting == "gc.auto":
        if isinstance(threshold, int) and threshold > 0 and isinstance(value, int):
            return (
                f"objects/17 holds {count(value, 'loose object')}; gc --auto packs loose objects"
                f" when it holds more than {threshold:,} (gc.auto ÷ 256, {src}) — {_verdict(fires)}"
            )
        return f"gc.auto is 0 or less ({src}): automatic gc is off"
    if setting in ("maintenance.auto", "core.multiPackIndex"):
        what = (
            "commands start `git maintenance run --auto` after their work"
            if setting == "maintenance.auto"
            else "the incremental-repack task may run"
        )
        if not value:
            what = (
                "commands start no maintenance on their own"
                if setting == "maintenance.auto"
                else "the incremental-repack task never runs"
            )
        return f"{setting} is {on_off(value)} ({src}): {what}"
    if setting == "gc.logExpiry":
        age = value if isinstance(value, int) else 0
        limit = f"{threshold:,} s" if isinstance(threshold, int) else "gc.logExpiry"
        return (
            f"gc.log was written {age:,} s ago; a non-empty gc.log younger than {limit} ({src})"
            f" stops automatic gc — {'it does now' if fires else 'not now'}"
        )
    if setting == "gc.packRefs":
        n = value if isinstance(value, int) else 0
        return (
            f"{count(n, 'loose ref')}; gc.packRefs is {on_off(threshold)} ({src}), so gc"
            f" {'packs' if threshold else 'leaves'} {'it' if n == 1 else 'them'} when it runs — {_verdict(fires)}"
        )
    if setting == "repack.geometric":
        n = value if isinstance(value, int) else 0
        return f"{count(n, 'pack')} would roll up to restore a factor-{threshold} progression — {_verdict(fires)}"
    counted = _COUNTED.get(setting)
    if counted is not None and isinstance(value, int) and isinstance(threshold, int):
        one, many, rule = counted
        if setting == "gc.autoPackLimit" and threshold <= 0:
            return f"gc.autoPackLimit is {threshold} ({src}): gc --auto does not count packs"
        if threshold == 0:
            return f"{setting} is 0 ({src}): never fires"
        if threshold < 0:
            return f"{setting} is negative ({src}): always fires"
        have = count(value, one, many)
        if setting == "maintenance.commit-graph.auto" and fires:
            have = "at least " + have  # counted up to the threshold
        when = f"above {threshold:,}" if rule == "above" else f"at {threshold:,} or more"
        return f"{have}; fires {when} ({src}) — {_verdict(fires)}"
    return f"{setting}: {value} against {threshold} ({src}) — {_verdict(fires)}"
