/* core/native_c/idx_lookup.h: what idx_lookup.c offers the other parts of packscope.core._native.
 * Object ids found in pack indexes (idx_find, idx_find_many) and the index table
 * commit_walk and graph_read search. */
#ifndef PACKSCOPE_NATIVE_IDX_LOOKUP_H
#define PACKSCOPE_NATIVE_IDX_LOOKUP_H

#include "common.h"

static inline uint32_t
be32_at(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

typedef struct {
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n, fan_at, names_at, stride;
    uint32_t nr;
    Py_ssize_t off_at, off_stride; /* idx_find_many's offsets */
    int v2;
} idx_table;

static int idx_table_open(idx_table *t, PyObject *buf, PyObject *fan_at, PyObject *names_at, PyObject *stride,
                          Py_ssize_t rawsz);
static long long idx_search(const idx_table *t, const uint8_t *oid, Py_ssize_t rawsz, int *doubt);
static int oid_bytes(PyObject *oid, const uint8_t **d, Py_ssize_t *rawsz);
static PyObject *native_idx_find(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
static PyObject *native_idx_find_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
