/* core/native_c/blame.h: what blame.c offers the other parts of packscope.core._native.
 * blame's steps per blob: its lines numbered (split_ids), the whole lines two versions share
 * at start and end (same_lines, common_tail_lines), and after a diff which of an origin's
 * lines move to the parent (blame_moves).  References: core/history/blame.py. */
#ifndef PACKSCOPE_NATIVE_BLAME_H
#define PACKSCOPE_NATIVE_BLAME_H

#include "common.h"

static PyObject *native_blame_moves(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_split_ids(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_same_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_common_tail_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
