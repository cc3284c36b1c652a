/* core/native_c/blame.h: what blame.c offers the other parts of packscope.core._native.
 * blame's step after a diff: which of an origin's lines move to the parent (blame_moves).
 * Reference: Blame.split in core/history/blame.py (with _joined and unchanged_runs). */
#ifndef PACKSCOPE_NATIVE_BLAME_H
#define PACKSCOPE_NATIVE_BLAME_H

#include "common.h"

static PyObject *native_blame_moves(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
