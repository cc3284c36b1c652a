/* core/native_c/graph_plain.h: what graph_plain.c offers the other parts of packscope.core._native.
 * Walks over a commit-graph's positions: the plain default-order walk (graph_walk_check,
 * graph_walk_enter, graph_walk_plain, graph_walk_ids), one commit from the graph (graph_commit), the Bloom
 * shortcut (graph_bloom_unchanged), the path-limited default-order walk (graph_walk_paths) and the incremental topological walk (graph_topo_start,
 * graph_topo_next); needs graph_read (graph_*) and plain_walk (walk_entry_ok, walk_graph_open).
 * References: PlainWalk.stream_plain (core/history/plain_walk.py), WalkSource
 * (core/history/graph_walk.py), _Incremental (core/history/topo_walk.py). */
#ifndef PACKSCOPE_NATIVE_GRAPH_PLAIN_H
#define PACKSCOPE_NATIVE_GRAPH_PLAIN_H

#include "common.h"
#include "idx_lookup.h" /* be32_at, oid_bytes */
#include "graph_read.h"
#include "plain_walk.h"

static PyObject *native_graph_walk_check(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_graph_walk_enter(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_graph_walk_plain(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_graph_walk_ids(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_graph_commit(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_graph_bloom_unchanged(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_graph_walk_paths(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_graph_topo_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_graph_topo_next(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
