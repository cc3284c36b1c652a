/* core/native_c/delta.c: part of packscope.core._native, compiled as one unit by core/_native.c (which
 * includes Python.h, then this file).  Delta application (apply_delta, try_apply_delta); the reference
 * is core/store/delta.py. */
#include "delta.h"

/*
 * Delta application (gitformat-pack, "Deltified representation"):
 *
 *   try_apply_delta(base, delta, max_size) -> bytes, or None when the delta
 *       is not valid for this base (or anything else is unexpected);
 *   apply_delta(base, delta, max_size=4 GiB) -> bytes; on doubt it calls the
 *       fallback set with set_delta_fallback(func) with the same arguments,
 *       so every error (kind, offset, message) comes from the reference.
 *
 * The input is hostile until proven otherwise: the header's sizes are 64-bit
 * varints (more than 63 bits is refused), every read of the delta is checked
 * against its length, every copy against the base, and the instruction
 * stream is validated completely (its sizes add up to the declared result
 * size) before the result is allocated, so a corrupt delta can never make
 * us allocate what it merely declares.  Sizes are kept in uint64_t: an
 * offset is below 2^32 and a copy size below 2^24, so offset + size cannot
 * wrap, and the declared sizes are compared, never added.
 */

#define COPY_ZERO_SIZE 0x10000u

/* Argument bytes that follow a copy opcode: the number of bits set in its
 * low seven bits.  Filled at module init. */
static uint8_t copy_arg_bytes[128];

static PyObject *delta_fallback = NULL; /* the reference, set by delta.py */

/* A size varint at *pos: 0 and the value, or -1 if it runs past the end
 * or needs a byte at bit 63 or beyond (as the reference refuses). */
static int
read_size(const uint8_t *d, Py_ssize_t n, Py_ssize_t *pos, uint64_t *out)
{
    uint64_t value = 0;
    unsigned shift = 0;
    Py_ssize_t p = *pos;
    for (;;) {
        if (p >= n)
            return -1;
        uint8_t c = d[p++];
        value |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80))
            break;
        shift += 7;
        if (shift > 56)
            return -1;
    }
    *pos = p;
    *out = value;
    return 0;
}

/* A copy's offset and size from its argument bytes at a (the caller has
 * checked that all copy_arg_bytes[op & 0x7F] of them are there). */
static inline void
copy_fields(uint8_t op, const uint8_t *a, uint64_t *off, uint64_t *size)
{
    uint32_t o = 0, s = 0;
    if (op & 0x01) o = *a++;
    if (op & 0x02) o |= (uint32_t)*a++ << 8;
    if (op & 0x04) o |= (uint32_t)*a++ << 16;
    if (op & 0x08) o |= (uint32_t)*a++ << 24;
    if (op & 0x10) s = *a++;
    if (op & 0x20) s |= (uint32_t)*a++ << 8;
    if (op & 0x40) s |= (uint32_t)*a << 16;
    *off = o;
    *size = s ? s : COPY_ZERO_SIZE;
}

/* Both passes over the instructions from pos, in one walk:
 *
 *   out == NULL (pass 1): every instruction is whole, every copy inside the
 *       base, none writes past result_size and they add up to it exactly;
 *   out != NULL (pass 2): the same, writing the result into out.  Pass 1 has
 *       proven every bound; they are checked again anyway (cheap next to the
 *       copies) so that this pass is safe on its own.
 *
 * Returns 0, or -1 if a bound fails.  Always inline: each caller passes a
 * constant out, so each gets its own loop without the out tests. */
static inline __attribute__((always_inline)) int
walk_instructions(const uint8_t *d, Py_ssize_t n, Py_ssize_t pos, const uint8_t *base, uint64_t base_size,
                  uint8_t *out, uint64_t result_size)
{
    uint64_t remaining = result_size;
    while (pos < n) {
        uint8_t op = d[pos++];
        if (op & 0x80) {
            Py_ssize_t k = copy_arg_bytes[op & 0x7F];
            uint64_t off, size;
            if (k > n - pos)
                return -1;
            copy_fields(op, d + pos, &off, &size);
            pos += k;
            if (off + size > base_size || size > remaining)
                return -1;
            if (out != NULL)
                memcpy(out + (result_size - remaining), base + off, (size_t)size);
            remaining -= size;
        }
        else if (op) {
            if ((Py_ssize_t)op > n - pos || op > remaining)
                return -1;
            if (out != NULL)
                memcpy(out + (result_size - remaining), d + pos, op);
            pos += op;
            remaining -= op;
        }
        else {
            return -1; /* opcode 0 is reserved */
        }
    }
    return remaining == 0 ? 0 : -1;
}

static int
check_instructions(const uint8_t *d, Py_ssize_t n, Py_ssize_t pos, uint64_t base_size, uint64_t result_size)
{
    return walk_instructions(d, n, pos, NULL, base_size, NULL, result_size);
}

static int
write_result(const uint8_t *d, Py_ssize_t n, Py_ssize_t pos, const uint8_t *base, uint64_t base_size, uint8_t *out,
             uint64_t result_size)
{
    return walk_instructions(d, n, pos, base, base_size, out, result_size);
}

/* The result bytes (new reference), Py_None (new reference) on doubt, or
 * NULL with an exception set (only MemoryError). */
static PyObject *
apply_or_none(PyObject *base_obj, PyObject *delta_obj, PyObject *max_obj)
{
    uint64_t max_size;
    if (max_obj == NULL) {
        max_size = DEFAULT_MAX_RESULT;
    }
    else {
        int overflow = 0;
        long long m = PyLong_Check(max_obj) ? PyLong_AsLongLongAndOverflow(max_obj, &overflow) : -1;
        if (m == -1 && PyErr_Occurred())
            PyErr_Clear();
        if (overflow > 0)
            max_size = UINT64_MAX;
        else if (overflow < 0 || m < 0)
            Py_RETURN_NONE; /* not a plain non-negative int: the reference decides */
        else
            max_size = (uint64_t)m;
    }

    Py_buffer bview, dview;
    const uint8_t *base, *d;
    Py_ssize_t base_len, n;
    if (get_bytes(base_obj, &bview, &base, &base_len) < 0)
        Py_RETURN_NONE;
    if (get_bytes(delta_obj, &dview, &d, &n) < 0) {
        release_bytes(&bview);
        Py_RETURN_NONE;
    }

    PyObject *result = NULL;
    Py_ssize_t pos = 0;
    uint64_t base_size, result_size;
    if (read_size(d, n, &pos, &base_size) < 0 || read_size(d, n, &pos, &result_size) < 0)
        goto doubt;
    if (base_size != (uint64_t)base_len || result_size > max_size || result_size > (uint64_t)PY_SSIZE_T_MAX)
        goto doubt;
    if (check_instructions(d, n, pos, base_size, result_size) < 0)
        goto doubt;
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)result_size);
    if (result == NULL)
        goto done; /* MemoryError */
    if (write_result(d, n, pos, base, base_size, (uint8_t *)PyBytes_AS_STRING(result), result_size) < 0) {
        Py_CLEAR(result);
        goto doubt;
    }
    goto done;
doubt:
    result = Py_NewRef(Py_None);
done:
    release_bytes(&dview);
    release_bytes(&bview);
    return result;
}

/* (base, delta, max_size) from positional and keyword arguments, the
 * reference's signature: apply_delta(base, delta, max_size=...). */
static int
delta_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int need_max, PyObject **out)
{
    static const char *const names[3] = {"base", "delta", "max_size"};
    out[0] = out[1] = out[2] = NULL;
    if (nargs > 3) {
        PyErr_Format(PyExc_TypeError, "apply_delta() takes at most 3 arguments (%zd given)", nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        int slot = -1;
        for (int j = 0; j < 3; j++) {
            if (PyUnicode_CompareWithASCIIString(key, names[j]) == 0)
                slot = j;
        }
        if (slot < 0 || out[slot] != NULL) {
            PyErr_Format(PyExc_TypeError, "apply_delta() got an unexpected or repeated argument %R", key);
            return -1;
        }
        out[slot] = args[nargs + i];
    }
    if (out[0] == NULL || out[1] == NULL || (need_max && out[2] == NULL)) {
        PyErr_SetString(PyExc_TypeError, "apply_delta() needs base and delta (and max_size)");
        return -1;
    }
    return 0;
}

static PyObject *
native_apply_delta(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[3];
    if (delta_args(args, nargs, kwnames, 0, a) < 0)
        return NULL;
    PyObject *result = apply_or_none(a[0], a[1], a[2]);
    if (result != Py_None)
        return result;
    Py_DECREF(result);
    if (delta_fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "packscope.core._native: no delta fallback set");
        return NULL;
    }
    PyObject *call[3] = {a[0], a[1], a[2] ? a[2] : default_max_size};
    return PyObject_Vectorcall(delta_fallback, call, 3, NULL);
}

static PyObject *
native_try_apply_delta(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[3];
    if (delta_args(args, nargs, kwnames, 1, a) < 0)
        return NULL;
    return apply_or_none(a[0], a[1], a[2]);
}

static PyObject *
native_set_delta_fallback(PyObject *self, PyObject *func)
{
    if (!PyCallable_Check(func)) {
        PyErr_SetString(PyExc_TypeError, "the delta fallback must be callable");
        return NULL;
    }
    Py_XSETREF(delta_fallback, Py_NewRef(func));
    Py_RETURN_NONE;
}
