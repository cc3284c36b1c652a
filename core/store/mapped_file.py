"""What every reader of one memory-mapped file shares: ``is_open`` and
``close()``.  Subclasses keep the mapping in ``self._map`` and, when they
belong to a store's open-file LRU, the LRU in ``self._open_files``."""

from __future__ import annotations


class MappedFile:
    _map = None
    _open_files = None

    @property
    def is_open(self) -> bool:
        return self._map is not None

    def close(self) -> None:
        m = self._map
        if m is None:
            return
        try:
            m.close()
        except BufferError:  # a view is still exported; the GC will unmap
            pass
        self._map = None
        self._forget_mapping()
        if self._open_files is not None:
            self._open_files.closed(self)

    def _forget_mapping(self) -> None:
        """Drop anything bound to the old mapping (subclasses)."""
