/* core/native_c/idx_lookup.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (idx_lookup.h says what it offers).  Untraced pack index searches (idx_find, idx_find_many);
 * the references are core/store/search.py and the store's MRU order. */
#include "idx_lookup.h"

/* ---- Untraced index lookups and object headers (store lookups) ---------
 *
 * The pure references: search.binary_search over a pack index's bucket
 * (core/store/pack_index.py PackIndex.find), ObjectStore._find_packed's
 * most-recently-used pack order (core/store/odb.py) and Pack.info_at
 * (core/store/pack.py).  Traced lookups never come here: they show git's
 * search step by step in Python.
 *
 *   idx_find(idx, fan_at, names_at, stride, oid) -> int, or None
 *       the position of oid among the index's names, else -(insertion
 *       point) - 1, exactly as binary_search over oid's fanout bucket; None
 *       when the fanout or the name table does not fit the buffer.
 *   idx_find_many(indexes, oids, null) -> (found, order, moves), or None
 *       indexes: [(idx, fan_at, names_at, stride, off_at, off_stride, v2),
 *       ...] in the order the packs are searched; each oid is searched in
 *       that order, a hit moves its pack to the front (as one-by-one lookups
 *       do).  found[k] is None (absent, or oid == null: never searched) or
 *       (pack number, position, pack offset); the offset is the 4-byte one
 *       at off_at + position * off_stride, or -1 when v2 is true and its
 *       high bit sends it to the large-offset table (the caller reads it:
 *       PackIndex.offset_at).  order is the final search order (pack
 *       numbers), moves the number of hits that moved a pack.  None on any
 *       doubt about an index.
 *   pack_info(pack, offset, data_end, rawsz, max_depth, memo) -> (type, size), or None
 *   (and pack_info_many, the same for a list of offsets, below)
 *       an entry's object type (1-4: a delta's is its chain's base's,
 *       followed through OFS_DELTA headers, or found in memo: a bytearray
 *       the caller keeps per pack, see type_memo) and size (a delta's
 *       result size, inflated from its first bytes); None for a REF_DELTA
 *       on the way, a chain deeper than max_depth, or anything the
 *       reference would refuse. */
#include <zlib.h>


/* 0 with t filled (release with release_bytes(&t->view)), or -1 (no error
 * set) when the arguments do not describe a fanout and name table inside
 * the buffer. */
static int
idx_table_open(idx_table *t, PyObject *buf, PyObject *fan_at, PyObject *names_at, PyObject *stride, Py_ssize_t rawsz)
{
    t->fan_at = PyLong_AsSsize_t(fan_at);
    t->names_at = PyLong_AsSsize_t(names_at);
    t->stride = PyLong_AsSsize_t(stride);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    if (t->fan_at < 0 || t->names_at < 0 || t->stride < rawsz || t->stride > 128)
        return -1;
    if (get_bytes(buf, &t->view, &t->m, &t->n) < 0)
        return -1;
    if (t->n - t->fan_at < 1024)
        goto bad;
    t->nr = be32_at(t->m + t->fan_at + 4 * 255);
    if (t->names_at > t->n || (uint64_t)t->nr * (uint64_t)t->stride > (uint64_t)(t->n - t->names_at))
        goto bad;
    if (t->nr && (uint64_t)(t->nr - 1) * (uint64_t)t->stride + (uint64_t)rawsz > (uint64_t)(t->n - t->names_at))
        goto bad;
    return 0;
bad:
    release_bytes(&t->view);
    return -1;
}

/* binary_search over oid's bucket: position, or -(insertion point) - 1;
 * *doubt set when the bucket's bounds are not in order. */
static long long
idx_search(const idx_table *t, const uint8_t *oid, Py_ssize_t rawsz, int *doubt)
{
    const uint8_t *fan = t->m + t->fan_at;
    unsigned b = oid[0];
    uint64_t lo = b ? be32_at(fan + 4 * (b - 1)) : 0;
    uint64_t hi = be32_at(fan + 4 * b);
    if (lo > hi || hi > t->nr) {
        *doubt = 1;
        return -1;
    }
    const uint8_t *names = t->m + t->names_at;
    while (lo < hi) {
        uint64_t mi = (lo + hi) >> 1;
        int c = memcmp(names + mi * (uint64_t)t->stride, oid, (size_t)rawsz);
        if (c == 0)
            return (long long)mi;
        if (c > 0)
            hi = mi;
        else
            lo = mi + 1;
    }
    return -(long long)lo - 1;
}

static int
oid_bytes(PyObject *oid, const uint8_t **d, Py_ssize_t *rawsz)
{
    if (!PyBytes_CheckExact(oid))
        return -1;
    *d = (const uint8_t *)PyBytes_AS_STRING(oid);
    *rawsz = PyBytes_GET_SIZE(oid);
    return (*rawsz >= 1 && *rawsz <= 64) ? 0 : -1;
}

static PyObject *
native_idx_find(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "idx_find(idx, fan_at, names_at, stride, oid)");
        return NULL;
    }
    const uint8_t *oid;
    Py_ssize_t rawsz;
    idx_table t;
    if (oid_bytes(args[4], &oid, &rawsz) < 0 || idx_table_open(&t, args[0], args[1], args[2], args[3], rawsz) < 0)
        Py_RETURN_NONE;
    int doubt = 0;
    long long pos = idx_search(&t, oid, rawsz, &doubt);
    release_bytes(&t.view);
    if (doubt)
        Py_RETURN_NONE;
    return PyLong_FromLongLong(pos);
}

static PyObject *
native_idx_find_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyList_Check(args[0]) || !PyList_Check(args[1]) || !PyBytes_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "idx_find_many(indexes: list, oids: list, null: bytes)");
        return NULL;
    }
    PyObject *indexes = args[0], *oids = args[1], *null = args[2];
    Py_ssize_t npacks = PyList_GET_SIZE(indexes), noids = PyList_GET_SIZE(oids);
    Py_ssize_t rawsz = PyBytes_GET_SIZE(null);
    if (rawsz < 1 || rawsz > 64)
        Py_RETURN_NONE;
    idx_table *tables = PyMem_Calloc(npacks ? (size_t)npacks : 1, sizeof(idx_table));
    Py_ssize_t *order = PyMem_Malloc((npacks ? (size_t)npacks : 1) * sizeof(Py_ssize_t));
    PyObject *found = NULL, *result = NULL;
    Py_ssize_t opened = 0, moves = 0;
    if (tables == NULL || order == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (; opened < npacks; opened++) {
        PyObject *item = PyList_GET_ITEM(indexes, opened);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 7)
            goto doubt;
        idx_table *t = &tables[opened];
        if (idx_table_open(t, PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1), PyTuple_GET_ITEM(item, 2),
                           PyTuple_GET_ITEM(item, 3), rawsz) < 0)
            goto doubt;
        order[opened] = opened;
        t->off_at = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 4));
        t->off_stride = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 5));
        t->v2 = PyObject_IsTrue(PyTuple_GET_ITEM(item, 6));
        if (PyErr_Occurred()) {
            PyErr_Clear();
            opened++; /* its view is released below */
            goto doubt;
        }
        /* every position's 4 offset bytes inside the buffer */
        if (t->off_at < 0 || t->off_stride < 4 || t->off_at > t->n ||
            (t->nr && (uint64_t)(t->nr - 1) * (uint64_t)t->off_stride + 4 > (uint64_t)(t->n - t->off_at))) {
            opened++;
            goto doubt;
        }
    }
    found = PyList_New(noids);
    if (found == NULL)
        goto done;
    const uint8_t *null_d = (const uint8_t *)PyBytes_AS_STRING(null);
    for (Py_ssize_t k = 0; k < noids; k++) {
        const uint8_t *oid;
        Py_ssize_t len;
        PyObject *hit = Py_None;
        if (oid_bytes(PyList_GET_ITEM(oids, k), &oid, &len) < 0 || len != rawsz)
            goto doubt;
        if (memcmp(oid, null_d, (size_t)rawsz) != 0) {
            for (Py_ssize_t r = 0; r < npacks; r++) {
                const idx_table *t = &tables[order[r]];
                const uint8_t *fan = t->m + t->fan_at;
                unsigned b = oid[0];
                /* an empty bucket answers "not here" without a search */
                if ((b ? be32_at(fan + 4 * (b - 1)) : 0) == be32_at(fan + 4 * b))
                    continue;
                int doubt = 0;
                long long pos = idx_search(t, oid, rawsz, &doubt);
                if (doubt)
                    goto doubt;
                if (pos >= 0) {
                    Py_ssize_t pack = order[r];
                    uint32_t off = be32_at(t->m + t->off_at + (uint64_t)pos * (uint64_t)t->off_stride);
                    long long offset = (t->v2 && (off & 0x80000000u)) ? -1 : (long long)off;
                    hit = Py_BuildValue("(nLL)", pack, pos, offset);
                    if (hit == NULL)
                        goto done;
                    if (r) {
                        memmove(order + 1, order, (size_t)r * sizeof(Py_ssize_t));
                        order[0] = pack;
                        moves++;
                    }
                    break;
                }
            }
        }
        PyList_SET_ITEM(found, k, hit == Py_None ? Py_NewRef(Py_None) : hit);
    }
    PyObject *order_list = PyList_New(npacks);
    if (order_list == NULL)
        goto done;
    for (Py_ssize_t r = 0; r < npacks; r++) {
        PyObject *v = PyLong_FromSsize_t(order[r]);
        if (v == NULL) {
            Py_DECREF(order_list);
            goto done;
        }
        PyList_SET_ITEM(order_list, r, v);
    }
    result = Py_BuildValue("(ONn)", found, order_list, moves);
    goto done;
doubt:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(found);
    if (tables != NULL)
        for (Py_ssize_t i = 0; i < opened; i++)
            release_bytes(&tables[i].view);
    PyMem_Free(tables);
    PyMem_Free(order);
    return result;
}
