/* core/native_c/pack_read.h: what pack_read.c offers the other parts of packscope.core._native.
 * A chain walked (walk_chain, answering a ChainWalk record) or applied (apply_chain)
 * in one call. */
#ifndef PACKSCOPE_NATIVE_PACK_READ_H
#define PACKSCOPE_NATIVE_PACK_READ_H

#include "common.h"
#include "chain.h"

/* The ChainWalk record type, made at module init (pack_read_init). */
static int pack_read_init(PyObject *module);
static PyObject *native_walk_chain(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_apply_chain(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
