"""packscope's inspector: the Textual UI and the ``packscope`` CLI, built on core."""
