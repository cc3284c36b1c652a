"""What to do about a repository: git's maintenance decisions as git would
take them now (``maintenance``), git-sizer's metrics with on-disk sizes
(``sizes``), and the document ``packscope advise --json`` prints
(``document``).

This layer reads the store, the repository and history; it sits above fsck
and below the inspector, and never changes anything on disk.
"""
