/* core/native_c/object_read.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (see object_read.h).  One object, or a run of objects of one
 * pack, read whole with the delta-base cache's bookkeeping in one call (read_object, read_objects); the
 * reference is Pack.read_at (core/store/pack.py) and DeltaBaseCache (core/store/cache.py). */
#include "object_read.h"

/* One object read whole, cache bookkeeping included (the pure reference:
 * Pack.read_at's loop, whose compiled form was walk_chain + _build +
 * apply_chain with the cache's get and put in Python):
 *
 *   read_object(reading, offset, keep) -> (type name, data), or None
 *       reading: the pack's record (core/store/pack.py PackReading, a
 *       tuple): (pack, end, max_depth, max_size, cache, name, decompress,
 *       inflate_big).
 *       cache: the DeltaBaseCache, read and updated through its public
 *       surface with cache.c's get and put rules (the mirror of cache.py's).  The
 *       walk, the inflating and the deltas are done first; only when all of
 *       them succeed is the cache touched, in the reference's order: the
 *       misses counted, a hit moved to the end and counted, the base put
 *       (when deltas rest on it, or keep), then each object made, bottom
 *       first, the top one only with keep.  None, with the cache untouched,
 *       for a REF_DELTA on the way, a chain deeper than max_depth, a tracer
 *       listening (the Python path emits its events), or anything the
 *       reference would refuse or raise for: read_at's loop answers then. */
static PyObject *s_type_names[5];

static int
type_names_init(void)
{
    if (s_type_names[4] != NULL)
        return 0;
    static const char *types[5] = {"", "commit", "tree", "blob", "tag"};
    for (int i = 0; i < 5; i++)
        if ((s_type_names[i] = PyUnicode_InternFromString(types[i])) == NULL)
            return -1;
    return 0;
}

/* The probe of read_one's walk: the cache's entry at offset (kept, borrowed). */
typedef struct {
    cache_view *cache;
    PyObject *name, *entry;
} entry_probe;

static int
probe_entry(void *ctx, long long offset)
{
    entry_probe *p = ctx;
    p->entry = cache_peek(p->cache, p->name, offset);
    if (p->entry == NULL)
        return PyErr_Occurred() ? -1 : 0;
    return 1;
}

/* One object as read_object answers it (new reference: (type name, data),
 * Py_None on doubt with the cache untouched, NULL with an error set). */
static PyObject *
read_one(const uint8_t *m, Py_ssize_t n, long long offset, long long end, long long max_depth, long long max_size,
         PyObject *max_obj, cache_view *cache, PyObject *name, int keep, const chain_inflaters *inf)
{
    PyObject *result = NULL, *base = NULL, *type_name = NULL;
    PyObject **made = NULL; /* made[k]: the object delta k makes (k = 0: the top) */
    entry_probe probe = {cache, name, NULL};
    chain_walk w;
    int got = chain_walk_from(&w, m, n, offset, end, max_depth, probe_entry, &probe);
    if (got != CHAIN_OK)
        goto walked_badly;
    if (w.hit >= 0) {
        PyObject *entry = probe.entry;
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(entry, 0)) ||
            !PyBytes_Check(PyTuple_GET_ITEM(entry, 1)))
            goto doubt;
        type_name = Py_NewRef(PyTuple_GET_ITEM(entry, 0));
        base = Py_NewRef(PyTuple_GET_ITEM(entry, 1));
    }
    else { /* a whole object at the bottom */
        if (w.size > (uint64_t)LLONG_MAX)
            goto doubt;
        type_name = Py_NewRef(s_type_names[w.type]);
        base = inflate_any(inf, m, w.data_at, (long long)w.size, end, max_size);
        if (base == NULL)
            goto inflated_badly;
    }
    if (w.count) {
        made = PyMem_Calloc((size_t)w.count, sizeof(PyObject *));
        if (made == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        got = chain_apply(m, end, max_size, max_obj, w.links, w.count, base, inf, made);
        if (got != CHAIN_OK)
            goto walked_badly;
    }
    /* Everything read: the cache's bookkeeping, in the reference's order. */
    got = cache_begin(cache);
    if (got != 0)
        goto walked_badly;
    cache->c[C_MISSES] += w.misses;
    if (w.hit >= 0) {
        if (cache_hit(cache, name, w.hit) < 0)
            goto fail;
    }
    else if ((w.count || keep) && cache_put(cache, name, w.at, type_name, base) < 0)
        goto fail_counted;
    for (Py_ssize_t k = w.count - 1; k >= (keep ? 0 : 1); k--)
        if (cache_put(cache, name, w.links[k].at, type_name, made[k]) < 0)
            goto fail_counted;
    if (cache_end(cache) < 0)
        goto fail;
    result = PyTuple_Pack(2, type_name, w.count ? made[0] : base);
    goto done;
fail_counted: { /* an error while putting: what was put is counted, as put would have; that error is raised */
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    if (cache_end(cache) < 0)
        PyErr_Clear();
    PyErr_Restore(et, ev, etb);
    goto fail;
}
inflated_badly:
    got = PyErr_Occurred() ? CHAIN_ERROR : CHAIN_DOUBT;
walked_badly:
    if (got == CHAIN_DOUBT || got == 1)
        goto doubt;
fail:
    result = NULL;
    goto done;
doubt:
    result = Py_NewRef(Py_None);
done:
    if (made != NULL) {
        for (Py_ssize_t k = 0; k < w.count; k++)
            Py_XDECREF(made[k]);
        PyMem_Free(made);
    }
    chain_walk_release(&w);
    Py_XDECREF(base);
    Py_XDECREF(type_name);
    return result;
}

/* What read_object and read_objects share: the pack's bytes, the limits
 * and the cache, read from their reading record. */
typedef struct {
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n;
    long long end, max_depth, max_size;
    PyObject *max_obj, *name;
    cache_view cache;
    chain_inflaters inf;
} read_args;

/* 1 with a filled (release with read_args_release), 0 when the answer is
 * None (an argument out of range, a tracer listening, no bytes), or -1
 * with an exception. */
static int
read_args_open(read_args *a, PyObject *pack, PyObject *end, PyObject *max_depth, PyObject *max_size, PyObject *cache,
               PyObject *name, PyObject *decompress, PyObject *inflate_big)
{
    a->end = PyLong_AsLongLong(end);
    a->max_depth = PyLong_AsLongLong(max_depth);
    a->max_size = PyLong_AsLongLong(max_size);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (type_names_init() < 0)
        return -1;
    int ready = cache_open(&a->cache, cache);
    if (ready <= 0)
        return ready;
    if (get_bytes(pack, &a->view, &a->m, &a->n) < 0) {
        cache_close(&a->cache);
        return 0;
    }
    a->max_obj = max_size;
    a->name = name;
    a->inf.decompress = decompress != Py_None ? decompress : NULL;
    a->inf.inflate_big = inflate_big != Py_None ? inflate_big : NULL;
    return 1;
}

/* read_args_open over the fields of a reading record (PackReading):
 * -1 with a TypeError when it is not an 8-tuple whose name is a str. */
static int
reading_open(read_args *a, PyObject *reading, const char *usage)
{
    if (!PyTuple_Check(reading) || PyTuple_GET_SIZE(reading) != 8 || !PyUnicode_Check(PyTuple_GET_ITEM(reading, 5))) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    PyObject **f = &PyTuple_GET_ITEM(reading, 0);
    return read_args_open(a, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
}

static void
read_args_release(read_args *a)
{
    release_bytes(&a->view);
    cache_close(&a->cache);
}

static PyObject *
read_args_one(read_args *a, long long offset, int keep)
{
    return read_one(a->m, a->n, offset, a->end, a->max_depth, a->max_size, a->max_obj, &a->cache, a->name, keep,
                    &a->inf);
}

static PyObject *
native_read_object(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char usage[] = "read_object(reading: PackReading (pack, end, max_depth, max_size, cache, "
                                "name: str, decompress, inflate_big), offset, keep)";
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    int keep = PyObject_IsTrue(args[2]);
    if (keep < 0)
        return NULL;
    long long offset = PyLong_AsLongLong(args[1]);
    if (offset == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    read_args a;
    int ready = reading_open(&a, args[0], usage);
    if (ready <= 0)
        return ready < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *result = read_args_one(&a, offset, keep);
    read_args_release(&a);
    return result;
}

/* Several objects of one pack read in turn as read_object reads each (keep
 * false), in one call:
 *
 *   read_objects(reading, offsets) -> [(type name, data), ...] for the first offsets, up to the first
 *       one read_object would answer None for (excluded; the caller reads
 *       it through read_at and goes on after it), or None when no object
 *       can be read here (a tracer listening). */
static PyObject *
native_read_objects(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char usage[] = "read_objects(reading: PackReading (pack, end, max_depth, max_size, cache, "
                                "name: str, decompress, inflate_big), offsets: list)";
    if (nargs != 2 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    PyObject *offsets = args[1];
    read_args a;
    int ready = reading_open(&a, args[0], usage);
    if (ready <= 0)
        return ready < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *results = PyList_New(0);
    for (Py_ssize_t i = 0; results != NULL && i < PyList_GET_SIZE(offsets); i++) {
        PyObject *item = PyList_GET_ITEM(offsets, i);
        long long offset = PyLong_Check(item) ? PyLong_AsLongLong(item) : -1;
        if (offset < 0) {
            PyErr_Clear();
            break; /* (read_at answers, or raises) */
        }
        PyObject *got = read_args_one(&a, offset, 0);
        if (got == NULL)
            Py_CLEAR(results);
        else if (got == Py_None) {
            Py_DECREF(got);
            break;
        }
        else {
            int rc = PyList_Append(results, got);
            Py_DECREF(got);
            if (rc < 0)
                Py_CLEAR(results);
        }
    }
    read_args_release(&a);
    return results;
}
