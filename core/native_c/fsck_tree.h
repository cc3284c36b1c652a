/* core/native_c/fsck_tree.h: what fsck_tree.c offers the other parts of packscope.core._native.
 * fsck's verdict on a tree's entries, the entries a walk has not seen, and the entry
 * parser tree_sums shares. */
#ifndef PACKSCOPE_NATIVE_FSCK_TREE_H
#define PACKSCOPE_NATIVE_FSCK_TREE_H

#include "common.h"
#include "id_set.h"

/* One entry at *pos (moved past it): mode (wrapped at 32 bits), where its mode text, name
 * and id are.  0 at a malformed entry. */
static int ft_parse(const uint8_t *d, Py_ssize_t n, Py_ssize_t rawsz, Py_ssize_t *pos, uint32_t *mode,
                    Py_ssize_t *name, Py_ssize_t *name_len);

static PyObject *native_fsck_tree(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_tree_unseen(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
