/* core/native_c/id_set.h: what id_set.c offers the other parts of packscope.core._native.
 * IdSet, a set of raw ids of one width, and what fsck_tree asks of it. */
#ifndef PACKSCOPE_NATIVE_ID_SET_H
#define PACKSCOPE_NATIVE_ID_SET_H

#include "common.h"

typedef struct {
    PyObject_HEAD
    Py_ssize_t rawsz, cap, len; /* cap: a power of two, or 0 before the first add */
    uint8_t *keys;              /* cap * rawsz bytes; all zero: an empty slot */
    int has_null;               /* the null id (all zero) is in the set: kept aside */
} IdSetObject;

static PyTypeObject IdSetType;
static int idset_contains_raw(const IdSetObject *s, const uint8_t *id);
static int idset_sq_contains(PyObject *self, PyObject *key);
static PyObject *native_id_set(PyObject *self, PyObject *arg);

#endif
