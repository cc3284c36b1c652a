"""The object store: pack indexes and their searches, packs and deltas, caches, loose objects, multi-pack-index, alternates, promised objects, reading around damage."""
