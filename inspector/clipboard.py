"""``y``: copy an id, and say how it was copied.

The terminal's clipboard is asked through OSC 52 (Textual's
``copy_to_clipboard``), which many set-ups drop silently — stock tmux among
them (``set-clipboard`` is not ``on``).  Inside tmux the id also goes into
tmux's paste buffer; on a desktop session, to the system clipboard by the
usual tool when there is one.  The caller shows the id on screen as well,
for selecting by hand when nothing else worked.
"""

from __future__ import annotations

import os
import shutil
import subprocess


def _pipe(cmd: list[str], text: str) -> bool:
    try:
        subprocess.run(cmd, input=text.encode(), timeout=2, check=True, capture_output=True)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def copy_text(app, text: str) -> str:
    """Copy ``text`` every way available; a sentence saying which."""
    app.copy_to_clipboard(text)
    ways = ["sent as OSC 52 (some terminals, and tmux without set-clipboard, drop it)"]
    if os.environ.get("TMUX") and shutil.which("tmux") and _pipe(["tmux", "load-buffer", "-"], text):
        ways.append("in tmux's buffer: prefix ] pastes it")
    for env, tool in (("WAYLAND_DISPLAY", ["wl-copy"]), ("DISPLAY", ["xclip", "-selection", "clipboard"])):
        if os.environ.get(env) and shutil.which(tool[0]) and _pipe(tool, text):
            ways.append(f"copied with {tool[0]}")
            break
    return "; ".join(ways) + "; or select the id above."
