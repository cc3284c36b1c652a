/* core/native_c/tree_sums.h: what tree_sums.c offers the other parts of packscope.core._native.
 * One tree's own entries summed for advise's checkout metrics (tree_sums), read with
 * fsck_tree's entry parser.  Reference: SizeWalk._tree (core/advise/sizes.py). */
#ifndef PACKSCOPE_NATIVE_TREE_SUMS_H
#define PACKSCOPE_NATIVE_TREE_SUMS_H

#include "common.h"
#include "fsck_tree.h" /* ft_parse */

static PyObject *native_tree_sums(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* The TreeSums record type, made at module init (tree_sums_init). */
static int tree_sums_init(PyObject *module);

#endif
