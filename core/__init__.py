"""packscope's core: a pure-Python, read-only git object store.

core never imports the UI (textual, rich, inspector); a test enforces it.
"""
