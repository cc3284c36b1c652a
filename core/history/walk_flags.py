"""The bits a walk sets on each commit it meets, in one place so that the
walk (core.history.walk) and the topological orders (core.history.topo_walk)
share one layout and no two flags collide."""

SEEN = 1 << 0  # queued once; never queued again
UNINTERESTING = 1 << 1  # excluded (reachable from an exclusion)
TREESAME = 1 << 2  # no change under the paths relative to (relevant) parents
SHOWN = 1 << 3
ADDED = 1 << 4  # parents already processed
BOTTOM = 1 << 5  # an exclusion given by the caller (not one inferred)
QUEUED = 1 << 6  # ours: in the queue now (keeps the "all uninteresting?" count exact)
EXPLORED = 1 << 7  # git's TOPO_WALK_EXPLORED
INDEGREE = 1 << 8  # git's TOPO_WALK_INDEGREE

GENERATION_INFINITY = (1 << 63) - 1  # git's GENERATION_NUMBER_INFINITY: not in the graph
