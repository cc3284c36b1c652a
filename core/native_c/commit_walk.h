/* core/native_c/commit_walk.h: what commit_walk.c offers the other parts of packscope.core._native.
 * A commit's header from one pack in one call (commit_lookup, and commit_lookup_in
 * for plain_walk). */
#ifndef PACKSCOPE_NATIVE_COMMIT_WALK_H
#define PACKSCOPE_NATIVE_COMMIT_WALK_H

#include "common.h"
#include "chain.h"
#include "idx_lookup.h"
#include "objects.h"

static PyObject *commit_lookup_in(PyObject *self, PyObject *const *args, long long *delta_at);
static PyObject *native_commit_lookup(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
