/* core/native_c/graph_read.h: what graph_read.c offers the other parts of packscope.core._native.
 * A commit-graph chain read as walk_plain reads it: the graph_table (one view per layer,
 * base first), graph_open, graph_find, graph_facts, graph_close.  Reference: WalkSource
 * (core/history/graph_walk.py) over core/history/commit_graph.py. */
#ifndef PACKSCOPE_NATIVE_GRAPH_READ_H
#define PACKSCOPE_NATIVE_GRAPH_READ_H

#include "common.h"

#include "idx_lookup.h" /* be32_at, oid_bytes */

#define GRAPH_PARENT_NONE 0x70000000u
#define GRAPH_EDGE_FLAG 0x80000000u
#define GRAPH_MAX_LAYERS 64 /* a longer chain is left to the Python loop */

typedef struct {
    Py_buffer view;
    const uint8_t *m;
    long long fan_at, oidl_at, cdat_at, count, gda2_at, gdo2_rows, base;
} graph_layer;

typedef struct {
    graph_layer layers[GRAPH_MAX_LAYERS];
    int n_layers;
    long long total;
    int corrected;
    Py_ssize_t rawsz;
    PyObject *memo; /* borrowed: the spec holds it */
} graph_table;

/* g filled from a walk_table spec (graph_read.c's notes): 0, or -1 (no exception) when it is not one. */
static int graph_open(graph_table *g, PyObject *spec, Py_ssize_t rawsz);
static void graph_close(graph_table *g);
/* The global position of oid in the graph, -1 when it lacks it, -2 for doubt. */
static long long graph_find(const graph_table *g, const uint8_t *oid);
/* A commit's (tree, parents, commit time), False when the graph lacks it, None for doubt, NULL with an error. */
static PyObject *graph_facts(const graph_table *g, PyObject *oid_obj);

#endif
