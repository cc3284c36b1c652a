"""History: walks in git's orders, commit-graph and Bloom filters, tree diffs, path limiting, log formats, last commit per entry."""
