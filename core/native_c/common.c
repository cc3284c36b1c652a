/* core/native_c/common.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (common.h says what it offers).  Helpers every part uses: bytes of a buffer-like
 * argument, the (data, size) call, id widths. */
#include "common.h"

/* After a failed call into Python that the caller would rather answer with
 * "doubt" (the pure reference then runs): clear the error when it is an
 * ordinary Exception, and return 1; keep it and return 0 when it must reach
 * the caller — MemoryError, and anything that is not an Exception at all
 * (KeyboardInterrupt from Ctrl-C, SystemExit, GeneratorExit): dropping
 * those would silently redo the work in Python and lose the interrupt. */
static int
clear_unless_fatal(void)
{
    PyObject *raised = PyErr_Occurred();
    if (raised == NULL)
        return 1;
    if (PyErr_GivenExceptionMatches(raised, PyExc_MemoryError) ||
        !PyErr_GivenExceptionMatches(raised, PyExc_Exception))
        return 0;
    PyErr_Clear();
    return 1;
}

/* Bytes of a buffer-like object: bytes directly, anything else through the
 * buffer protocol (released by release_bytes).  0, or -1 with no error set
 * if the object has no suitable buffer. */
static int
get_bytes(PyObject *obj, Py_buffer *view, const uint8_t **data, Py_ssize_t *len)
{
    if (PyBytes_CheckExact(obj)) {
        view->obj = NULL;
        *data = (const uint8_t *)PyBytes_AS_STRING(obj);
        *len = PyBytes_GET_SIZE(obj);
        return 0;
    }
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        return -1;
    }
    /* len() of a memoryview counts items: only byte items mean the same. */
    if (view->itemsize != 1) {
        PyBuffer_Release(view);
        view->obj = NULL;
        return -1;
    }
    *data = (const uint8_t *)view->buf;
    *len = view->len;
    return 0;
}

static void
release_bytes(Py_buffer *view)
{
    if (view->obj != NULL)
        PyBuffer_Release(view);
}

/* The (data, size) call of tree_items and commit_header.  1: data's bytes
 * in *d and *n (held by view: release_bytes it) and the size in *size;
 * 0: data has no byte buffer (the caller answers None); -1 with TypeError
 * (usage) for a wrong call, or ValueError (bad_size) for a size that
 * size_ok refuses. */
static int
data_and_size(PyObject *const *args, Py_ssize_t nargs, const char *usage, int (*size_ok)(Py_ssize_t),
              const char *bad_size, Py_ssize_t *size, Py_buffer *view, const uint8_t **d, Py_ssize_t *n)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    *size = PyLong_AsSsize_t(args[1]);
    if (*size == -1 && PyErr_Occurred())
        return -1;
    if (!size_ok(*size)) {
        PyErr_SetString(PyExc_ValueError, bad_size);
        return -1;
    }
    return get_bytes(args[0], view, d, n) < 0 ? 0 : 1;
}

static int
rawsz_ok(Py_ssize_t rawsz)
{
    return rawsz > 0 && rawsz <= 64;
}

static int
hexsz_ok(Py_ssize_t hexsz)
{
    return hexsz == 40 || hexsz == 64;
}
