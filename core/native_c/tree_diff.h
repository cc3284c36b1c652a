/* core/native_c/tree_diff.h: what tree_diff.c offers the other parts of packscope.core._native.
 * Two trees' differing names and one tree entry by name. */
#ifndef PACKSCOPE_NATIVE_TREE_DIFF_H
#define PACKSCOPE_NATIVE_TREE_DIFF_H

#include "common.h"

static PyObject *native_tree_diff_names(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_tree_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_tree_entry_near(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
