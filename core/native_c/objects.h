/* core/native_c/objects.h: what objects.c offers the other parts of packscope.core._native.
 * Tree entries, commit headers and a pack entry's header as Python answers. */
#ifndef PACKSCOPE_NATIVE_OBJECTS_H
#define PACKSCOPE_NATIVE_OBJECTS_H

#include "common.h"

/* At most this many bytes of an entry are read for its header (Pack._header_py). */
#define ENTRY_PEEK 64

static PyObject *native_tree_items(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_commit_header(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_entry_header(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
