/* core/native_c/pack_read.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (see pack_read.h).  A delta chain walked and applied in one call
 * (walk_chain, apply_chain); the reference is Pack.read_at's loop (core/store/pack.py). */
#include "pack_read.h"

/* A delta chain applied in one call (the pure reference: Pack.read_at's
 * loop over inflate_entry and apply_delta):
 *
 *   apply_chain(pack, base, deltas, end, max_size[, decompress[, inflate_big]]) -> [object, ...], or None
 *       deltas: [(entry offset, data offset, size), ...] top first, as
 *       read_at collects them; each delta's zlib stream (at its data offset, fed up to end)
 *       must inflate to exactly its size, and is applied to the object
 *       below it, the bottom one to base.  The objects come back in the
 *       same order (the last made from base, the first the top one).  None
 *       on any doubt — the pure loop then raises the error.  The walk's
 *       application is chain.c's chain_apply, with its inflaters: deltas up
 *       to SMALL_INFLATE by one z_stream that serves every call
 *       (inflateReset keeps its state), up to ONE_CALL_INFLATE by decompress
 *       when given (a one-shot function of Python's zlib API: zlib-ng's is
 *       faster than the system zlib, but has no output cap), bigger ones by
 *       inflate_big(data, size) when given (exactly size bytes or None,
 *       capped). */
static PyObject *
native_apply_chain(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 5 || nargs > 7 || !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "apply_chain(pack, base, deltas: list, end, max_size[, decompress[, inflate_big]])");
        return NULL;
    }
    chain_inflaters inf = {nargs >= 6 && args[5] != Py_None ? args[5] : NULL,
                           nargs == 7 && args[6] != Py_None ? args[6] : NULL};
    PyObject *deltas = args[2], *max_obj = args[4];
    long long end = PyLong_AsLongLong(args[3]);
    long long max_size = PyLong_AsLongLong(max_obj);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Py_ssize_t count = PyList_GET_SIZE(deltas);
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n;
    if (get_bytes(args[0], &view, &m, &n) < 0)
        Py_RETURN_NONE;
    PyObject *results = NULL, **made = NULL;
    chain_link *links = NULL;
    if (end > n)
        goto doubt;
    links = PyMem_Calloc((size_t)count + 1, sizeof(chain_link));
    made = PyMem_Calloc((size_t)count + 1, sizeof(PyObject *));
    if (links == NULL || made == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = PyList_GET_ITEM(deltas, k);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3)
            goto doubt;
        long long start = PyLong_AsLongLong(PyTuple_GET_ITEM(item, 1));
        long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(item, 2));
        if (PyErr_Occurred() || start < 0 || size < 0) {
            PyErr_Clear();
            goto doubt;
        }
        links[k].at = -1;
        links[k].data_at = start;
        links[k].size = (uint64_t)size;
    }
    int got = chain_apply(m, end, max_size, max_obj, links, count, args[1], &inf, made);
    if (got == CHAIN_ERROR)
        goto done;
    if (got == CHAIN_DOUBT)
        goto doubt;
    results = PyList_New(count);
    if (results == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyList_SET_ITEM(results, k, made[k]);
        made[k] = NULL;
    }
    goto done;
doubt:
    results = Py_NewRef(Py_None);
done:
    if (made != NULL) {
        for (Py_ssize_t k = 0; k < count; k++)
            Py_XDECREF(made[k]);
        PyMem_Free(made);
    }
    PyMem_Free(links);
    release_bytes(&view);
    return results;
}

/* A delta chain's walk down to something to build on (the pure reference:
 * Pack.read_at's loop):
 *
 *   walk_chain(pack, offset, end, max_depth, cached, name)
 *       -> ChainWalk(hit, base_type, base_offset, base_data_offset, base_size, deltas, misses), or None
 *       Headers are read from offset down through OFS_DELTA bases; before
 *       each delta's base (and at a delta on top) the delta-base cache is
 *       probed: cached is its dict of (name, offset) -> entry, only read
 *       here.  hit: the offset whose entry ends the walk (-1: none, the walk
 *       reached a whole object: base type, offset, data offset and size).
 *       deltas: [(offset, data offset, size), ...] top first, as read_at
 *       collects them (empty for a whole object on top); misses: the probes
 *       that found nothing.  None for a REF_DELTA on the way, a chain deeper
 *       than max_depth, or anything the reference would refuse. */
/* The probe of walk_chain: is (name, offset) a key of the cache's table? */
typedef struct {
    PyObject *table, *name;
} table_probe;

static int
probe_table(void *ctx, long long offset)
{
    const table_probe *t = ctx;
    PyObject *key = Py_BuildValue("(OL)", t->name, offset);
    if (key == NULL)
        return -1;
    PyObject *entry = PyDict_GetItemWithError(t->table, key);
    Py_DECREF(key);
    if (entry != NULL)
        return 1;
    return PyErr_Occurred() ? -1 : 0;
}

/* walk_chain's answer: a named record (a tuple too, for unpacking). */
static PyTypeObject *ChainWalkType;
static PyStructSequence_Field chain_walk_fields[] = {
    {"hit", "the offset whose cache entry ended the walk, or -1"},
    {"base_type", "the whole object's type number at the bottom (-1 on a hit)"},
    {"base_offset", "its entry's offset (-1 on a hit)"},
    {"base_data_offset", "its zlib stream's offset (-1 on a hit)"},
    {"base_size", "its size (-1 on a hit)"},
    {"deltas", "[(offset, data offset, size), ...] of the deltas passed, top first"},
    {"misses", "the cache probes that found nothing"},
    {NULL, NULL},
};
static PyStructSequence_Desc chain_walk_desc = {
    "packscope.core._native.ChainWalk", "walk_chain's answer: where a delta chain's walk ended.", chain_walk_fields, 7,
};

static int
pack_read_init(PyObject *module)
{
    if (ChainWalkType == NULL) {
        ChainWalkType = PyStructSequence_NewType(&chain_walk_desc);
        if (ChainWalkType == NULL)
            return -1;
    }
    return PyModule_AddObjectRef(module, "ChainWalk", (PyObject *)ChainWalkType);
}

static PyObject *
native_walk_chain(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyDict_Check(args[4]) || !PyUnicode_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError, "walk_chain(pack, offset, end, max_depth, cached: dict, name: str)");
        return NULL;
    }
    table_probe probe = {args[4], args[5]};
    long long offset = PyLong_AsLongLong(args[1]);
    long long end = PyLong_AsLongLong(args[2]);
    long long max_depth = PyLong_AsLongLong(args[3]);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n;
    if (get_bytes(args[0], &view, &m, &n) < 0)
        Py_RETURN_NONE;
    PyObject *result = NULL, *deltas = NULL;
    chain_walk w;
    int got = chain_walk_from(&w, m, n, offset, end, max_depth, probe_table, &probe);
    if (got != CHAIN_OK) {
        if (got == CHAIN_DOUBT)
            result = Py_NewRef(Py_None);
        goto done;
    }
    deltas = PyList_New(w.count);
    if (deltas == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < w.count; k++) {
        PyObject *link = Py_BuildValue("(LLK)", w.links[k].at, w.links[k].data_at, (unsigned long long)w.links[k].size);
        if (link == NULL)
            goto done;
        PyList_SET_ITEM(deltas, k, link);
    }
    PyObject *fields[7];
    if (w.hit >= 0) {
        fields[0] = PyLong_FromLongLong(w.hit);
        for (int i = 1; i < 5; i++)
            fields[i] = PyLong_FromLong(-1);
    }
    else {
        fields[0] = PyLong_FromLong(-1);
        fields[1] = PyLong_FromLong(w.type);
        fields[2] = PyLong_FromLongLong(w.at);
        fields[3] = PyLong_FromLongLong(w.data_at);
        fields[4] = PyLong_FromUnsignedLongLong(w.size);
    }
    fields[5] = Py_NewRef(deltas);
    fields[6] = PyLong_FromLongLong(w.misses);
    result = PyStructSequence_New(ChainWalkType);
    for (int i = 0; i < 7; i++) {
        if (fields[i] == NULL || result == NULL) {
            Py_XDECREF(fields[i]);
            continue;
        }
        PyStructSequence_SET_ITEM(result, i, fields[i]);
    }
    for (int i = 0; result != NULL && i < 7; i++)
        if (fields[i] == NULL)
            Py_CLEAR(result);
done:
    chain_walk_release(&w);
    Py_XDECREF(deltas);
    release_bytes(&view);
    return result;
}
