/* core/native_c/common.h: what common.c offers the other parts of packscope.core._native.
 * Helpers every part uses: bytes of a buffer-like argument, the (data, size)
 * call, id widths, and which failed calls into Python may be answered with "doubt". */
#ifndef PACKSCOPE_NATIVE_COMMON_H
#define PACKSCOPE_NATIVE_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

static int clear_unless_fatal(void);
static int get_bytes(PyObject *obj, Py_buffer *view, const uint8_t **data, Py_ssize_t *len);
static void release_bytes(Py_buffer *view);
static int data_and_size(PyObject *const *args, Py_ssize_t nargs, const char *usage, int (*size_ok)(Py_ssize_t),
                         const char *bad_size, Py_ssize_t *size, Py_buffer *view, const uint8_t **d, Py_ssize_t *n);
static int rawsz_ok(Py_ssize_t rawsz);
static int hexsz_ok(Py_ssize_t hexsz);

#endif
