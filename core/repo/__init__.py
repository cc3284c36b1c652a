"""The repository: discovery, config, refs, reflogs, the index file, revisions, and opening a session."""
