/* core/native_c/pack_info.h: what pack_info.c offers the other parts of packscope.core._native.
 * An entry's type and size through OFS_DELTA chains (pack_info, pack_info_many). */
#ifndef PACKSCOPE_NATIVE_PACK_INFO_H
#define PACKSCOPE_NATIVE_PACK_INFO_H

#include "common.h"
#include "chain.h"

static PyObject *native_pack_info(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_pack_info_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
