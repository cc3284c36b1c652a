/* core/native_c/delta.h: what delta.c offers the other parts of packscope.core._native.
 * Delta application, once: apply_or_none (every compiled caller) and the module
 * functions apply_delta, try_apply_delta, set_delta_fallback.  The reference is core/store/delta.py. */
#ifndef PACKSCOPE_NATIVE_DELTA_H
#define PACKSCOPE_NATIVE_DELTA_H

#include "common.h"

#define DEFAULT_MAX_RESULT (4ull << 30)

/* Filled at module init (core/_native.c). */
static uint8_t copy_arg_bytes[128];
static PyObject *default_max_size;

/* The object delta makes from base (new reference), Py_None (new reference)
 * when the delta is not valid for this base or anything is unexpected, or
 * NULL with an exception set (only MemoryError). */
static PyObject *apply_or_none(PyObject *base_obj, PyObject *delta_obj, PyObject *max_obj);

static PyObject *native_apply_delta(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
static PyObject *native_try_apply_delta(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
static PyObject *native_set_delta_fallback(PyObject *self, PyObject *func);

#endif
