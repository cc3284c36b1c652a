/* core/native_c/fsck_tree.h: what fsck_tree.c offers the other parts of packscope.core._native.
 * fsck's verdict on a tree's entries, and the entries a walk has not seen. */
#ifndef PACKSCOPE_NATIVE_FSCK_TREE_H
#define PACKSCOPE_NATIVE_FSCK_TREE_H

#include "common.h"
#include "id_set.h"

static PyObject *native_fsck_tree(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_tree_unseen(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
