/* core/native_c/plain_walk.h: what plain_walk.c offers the other parts of packscope.core._native.
 * The plain default-order walk (walk_plain) and commit facts in bulk
 * (commit_facts_many), and the queue-entry check and graph opening graph_plain shares;
 * needs commit_walk (commit_lookup_in) and graph_read (graph_*). */
#ifndef PACKSCOPE_NATIVE_PLAIN_WALK_H
#define PACKSCOPE_NATIVE_PLAIN_WALK_H

#include "common.h"
#include "commit_walk.h"
#include "graph_read.h"

/* 1 if e is a queue entry the loops know: (-date, number, id, tree, parents) with parents a tuple. */
static int walk_entry_ok(PyObject *e);
/* g filled from graph (None: no graph): 1 when filled, 0 when None, -1 when graph is not one. */
static int walk_graph_open(graph_table *g, PyObject *graph, PyObject *hexsz);

static PyObject *native_walk_plain(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_commit_facts_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
