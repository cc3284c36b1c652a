/* core/native_c/object_read.h: what object_read.c offers the other parts of packscope.core._native.
 * Objects read whole with the delta-base cache's bookkeeping (read_object,
 * read_objects). */
#ifndef PACKSCOPE_NATIVE_OBJECT_READ_H
#define PACKSCOPE_NATIVE_OBJECT_READ_H

#include "common.h"
#include "chain.h"
#include "cache.h"

static PyObject *native_read_object(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_read_objects(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
