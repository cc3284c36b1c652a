/* core/native_c/object_read.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (which includes Python.h, then pack_read.c, then this file).  One object, or a run of objects of one
 * pack, read whole with the delta-base cache's bookkeeping in one call (read_object, read_objects); the
 * reference is Pack.read_at (core/store/pack.py) and DeltaBaseCache (core/store/cache.py). */

/* One object read whole, cache bookkeeping included (the pure reference:
 * Pack.read_at's loop, whose compiled form was walk_chain + _build +
 * apply_chain with the cache's get and put in Python):
 *
 *   read_object(pack, offset, end, max_depth, max_size, cache, name, keep, decompress, inflate_big)
 *       -> (type name, data), or None
 *       cache: the DeltaBaseCache (its _entries OrderedDict and its _counts
 *       list — hits, misses, fills, evictions, bytes — are read and updated
 *       as its get and put would, within its budget).  The
 *       walk, the inflating and the deltas are done first; only when all of
 *       them succeed is the cache touched, in the reference's order: the
 *       misses counted, a hit moved to the end and counted, the base put
 *       (when deltas rest on it, or keep), then each object made, bottom
 *       first, the top one only with keep.  None, with the cache untouched,
 *       for a REF_DELTA on the way, a chain deeper than max_depth, a tracer
 *       listening (the Python path emits its events), or anything the
 *       reference would refuse or raise for: read_at's loop answers then. */
typedef struct {
    long long at, data_at;
    uint64_t size;
} chain_link;

static PyObject *s_entries, *s_counts, *s_budget, *s_tracer, *s_active, *s_move_to_end, *s_pop, *s_popitem,
    *s_type_names[5];

static int
read_object_names(void)
{
    if (s_entries != NULL)
        return 0;
    static const char *types[5] = {"", "commit", "tree", "blob", "tag"};
    for (int i = 0; i < 5; i++)
        if ((s_type_names[i] = PyUnicode_InternFromString(types[i])) == NULL)
            return -1;
    if ((s_budget = PyUnicode_InternFromString("budget")) == NULL ||
        (s_counts = PyUnicode_InternFromString("_counts")) == NULL ||
        (s_tracer = PyUnicode_InternFromString("tracer")) == NULL ||
        (s_active = PyUnicode_InternFromString("active")) == NULL ||
        (s_move_to_end = PyUnicode_InternFromString("move_to_end")) == NULL ||
        (s_pop = PyUnicode_InternFromString("pop")) == NULL ||
        (s_popitem = PyUnicode_InternFromString("popitem")) == NULL)
        return -1;
    s_entries = PyUnicode_InternFromString("_entries");
    return s_entries == NULL ? -1 : 0;
}

/* An int attribute of the cache, or -1 with an error set (or a doubt: -2). */
static long long
cache_int(PyObject *cache, PyObject *attr)
{
    PyObject *v = PyObject_GetAttr(cache, attr);
    if (v == NULL)
        return -1;
    if (!PyLong_CheckExact(v)) {
        Py_DECREF(v);
        return -2;
    }
    long long x = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -2;
    }
    return x;
}

/* The cache's _counts (hits, misses, fills, evictions, bytes) into c: 0;
 * -2 when it is not a list of five non-negative ints; -1 with an error set. */
enum { C_HITS, C_MISSES, C_FILLS, C_EVICTIONS, C_BYTES, C_N };

static int
counts_get(PyObject *counts, long long c[C_N])
{
    if (!PyList_CheckExact(counts) || PyList_GET_SIZE(counts) != C_N)
        return -2;
    for (int i = 0; i < C_N; i++) {
        PyObject *v = PyList_GET_ITEM(counts, i);
        if (!PyLong_CheckExact(v))
            return -2;
        c[i] = PyLong_AsLongLong(v);
        if (c[i] < 0) {
            PyErr_Clear();
            return -2;
        }
    }
    return 0;
}

/* c back into the list, the items that changed from was: 0, or -1 with an error set. */
static int
counts_set(PyObject *counts, const long long c[C_N], const long long was[C_N])
{
    for (int i = 0; i < C_N; i++) {
        if (c[i] == was[i])
            continue;
        PyObject *v = PyLong_FromLongLong(c[i]);
        if (v == NULL || PyList_SetItem(counts, i, v) < 0)
            return -1;
    }
    return 0;
}

/* DeltaBaseCache.put (no tracer) on its entries: 0, or -1 with an error set. */
static int
cache_put_entry(PyObject *entries, PyObject *name, long long offset, PyObject *type_name, PyObject *data,
                long long budget, long long *bytes, long long *fills, long long *evictions)
{
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    if (size > budget)
        return 0;
    PyObject *off = PyLong_FromLongLong(offset);
    if (off == NULL)
        return -1;
    PyObject *key = PyTuple_Pack(2, name, off);
    Py_DECREF(off);
    if (key == NULL)
        return -1;
    PyObject *entry = NULL;
    int rc = -1;
    PyObject *old = PyDict_GetItemWithError(entries, key); /* borrowed; read only */
    if (old == NULL && PyErr_Occurred())
        goto out;
    if (old != NULL) {
        old = PyObject_CallMethodObjArgs(entries, s_pop, key, NULL);
        if (old == NULL)
            goto out;
        if (PyTuple_Check(old) && PyTuple_GET_SIZE(old) == 2 && PyBytes_Check(PyTuple_GET_ITEM(old, 1)))
            *bytes -= PyBytes_GET_SIZE(PyTuple_GET_ITEM(old, 1));
        Py_DECREF(old);
    }
    entry = PyTuple_Pack(2, type_name, data);
    if (entry == NULL || PyObject_SetItem(entries, key, entry) < 0)
        goto out;
    *bytes += size;
    *fills += 1;
    while (*bytes > budget) {
        PyObject *item = PyObject_CallMethodObjArgs(entries, s_popitem, Py_False, NULL);
        if (item == NULL)
            goto out;
        PyObject *value = PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2 ? PyTuple_GET_ITEM(item, 1) : NULL;
        if (value != NULL && PyTuple_Check(value) && PyTuple_GET_SIZE(value) == 2 &&
            PyBytes_Check(PyTuple_GET_ITEM(value, 1)))
            *bytes -= PyBytes_GET_SIZE(PyTuple_GET_ITEM(value, 1));
        Py_DECREF(item);
        *evictions += 1;
    }
    rc = 0;
out:
    Py_XDECREF(entry);
    Py_DECREF(key);
    return rc;
}

/* One delta's or whole object's bytes inflated as apply_chain does. */
#define SMALL_INFLATE 512
static PyObject *
inflate_any(PyObject *decompress, PyObject *inflate_big, const uint8_t *m, long long start, long long size,
            long long end, long long max_size)
{
    if (size <= SMALL_INFLATE) /* the reused z_stream: a Python call and a stream's set-up cost more here */
        return inflate_exact(m, start, size, end, max_size);
    if (size <= ONE_CALL_INFLATE && decompress != NULL)
        return inflate_with(decompress, m, start, size, end, max_size);
    if (size > ONE_CALL_INFLATE && inflate_big != NULL)
        return inflate_big_with(inflate_big, m, start, size, end, max_size);
    return inflate_exact(m, start, size, end, max_size);
}

/* The cache's entries when no tracer listens (new reference); NULL with no
 * error set when the Python path must answer (a tracer listening, entries
 * not a dict), NULL with an error set on failure. */
static PyObject *
unwatched_entries(PyObject *cache)
{
    if (read_object_names() < 0)
        return NULL;
    PyObject *tracer = PyObject_GetAttr(cache, s_tracer);
    if (tracer == NULL)
        return NULL;
    int listening = 0;
    if (tracer != Py_None) {
        PyObject *active = PyObject_GetAttr(tracer, s_active);
        listening = active == NULL ? -1 : PyObject_IsTrue(active);
        Py_XDECREF(active);
    }
    Py_DECREF(tracer);
    if (listening)
        return NULL; /* (-1: with the error set) */
    PyObject *entries = PyObject_GetAttr(cache, s_entries);
    if (entries != NULL && !PyDict_Check(entries))
        Py_CLEAR(entries);
    return entries;
}

/* One object as read_object answers it (new reference: (type name, data),
 * Py_None on doubt with the cache untouched, NULL with an error set). */
static PyObject *
read_one(const uint8_t *m, Py_ssize_t n, long long offset, long long end, long long max_depth, long long max_size,
         PyObject *max_obj, PyObject *cache, PyObject *entries, PyObject *name, int keep, PyObject *decompress,
         PyObject *inflate_big)
{
    chain_link small[64], *links = small;
    Py_ssize_t count = 0, cap = 64;
    PyObject *result = NULL, *hit_key = NULL, *base = NULL, *type_name = NULL, *counts = NULL;
    PyObject **made = NULL; /* made[k]: the object delta k makes (k = 0: the top) */
    long long misses = 0, hit = -1, base_at = -1;
    int type;
    uint64_t size;
    long long data_at, next_at, at = offset;
    if (end > n || entry_head(m, n, at, end, &type, &size, &data_at, &next_at) < 0)
        goto doubt;
    /* The walk: a delta on top probes the cache first, then each base
     * (a whole one too) before it is used. */
    for (;;) {
        if (type == 6 || count > 0) {
            PyObject *off = PyLong_FromLongLong(at);
            if (off == NULL)
                goto fail;
            PyObject *key = PyTuple_Pack(2, name, off);
            Py_DECREF(off);
            if (key == NULL)
                goto fail;
            PyObject *entry = PyDict_GetItemWithError(entries, key);
            if (entry != NULL) {
                if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2 ||
                    !PyUnicode_Check(PyTuple_GET_ITEM(entry, 0)) || !PyBytes_Check(PyTuple_GET_ITEM(entry, 1))) {
                    Py_DECREF(key);
                    goto doubt;
                }
                hit = at;
                hit_key = key;
                type_name = Py_NewRef(PyTuple_GET_ITEM(entry, 0));
                base = Py_NewRef(PyTuple_GET_ITEM(entry, 1));
                break;
            }
            Py_DECREF(key);
            if (PyErr_Occurred())
                goto fail;
            misses++;
        }
        if (type != 6)
            break;
        if (count == cap) {
            chain_link *more = PyMem_Malloc(sizeof(chain_link) * (size_t)cap * 2);
            if (more == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            memcpy(more, links, sizeof(chain_link) * (size_t)count);
            if (links != small)
                PyMem_Free(links);
            links = more;
            cap *= 2;
        }
        links[count].at = at;
        links[count].data_at = data_at;
        links[count].size = size;
        count++;
        if (count > max_depth)
            goto doubt; /* the reference raises delta-too-deep */
        at = next_at;
        if (entry_head(m, n, at, end, &type, &size, &data_at, &next_at) < 0)
            goto doubt; /* a REF_DELTA, or damage */
    }
    if (hit < 0) { /* a whole object at the bottom */
        if (size > (uint64_t)LLONG_MAX)
            goto doubt;
        base_at = at;
        type_name = Py_NewRef(s_type_names[type]);
        base = inflate_any(decompress, inflate_big, m, data_at, (long long)size, end, max_size);
        if (base == NULL) {
            if (PyErr_Occurred())
                goto fail;
            goto doubt;
        }
    }
    if (count) {
        made = PyMem_Calloc((size_t)count, sizeof(PyObject *));
        if (made == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
    }
    PyObject *below = base;
    for (Py_ssize_t k = count - 1; k >= 0; k--) {
        if (links[k].size > (uint64_t)LLONG_MAX)
            goto doubt;
        PyObject *delta = inflate_any(decompress, inflate_big, m, links[k].data_at, (long long)links[k].size, end,
                                      max_size);
        if (delta == NULL) {
            if (PyErr_Occurred())
                goto fail;
            goto doubt;
        }
        PyObject *obj = apply_or_none(below, delta, max_obj);
        Py_DECREF(delta);
        if (obj == NULL)
            goto fail;
        if (obj == Py_None) {
            Py_DECREF(obj);
            goto doubt;
        }
        made[k] = obj;
        below = obj;
    }
    /* Everything read: the cache's bookkeeping, in the reference's order. */
    long long budget = cache_int(cache, s_budget);
    if (budget == -1)
        goto fail;
    if (budget < 0)
        goto doubt;
    counts = PyObject_GetAttr(cache, s_counts);
    if (counts == NULL)
        goto fail;
    long long c[C_N], was[C_N];
    int got = counts_get(counts, c);
    if (got == -2)
        goto doubt;
    memcpy(was, c, sizeof c);
    c[C_MISSES] += misses;
    if (hit >= 0) {
        PyObject *r = PyObject_CallMethodObjArgs(entries, s_move_to_end, hit_key, NULL);
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
        c[C_HITS] += 1;
    }
    else if ((count || keep) && cache_put_entry(entries, name, base_at, type_name, base, budget, &c[C_BYTES],
                                                &c[C_FILLS], &c[C_EVICTIONS]) < 0)
        goto fail_counted;
    for (Py_ssize_t k = count - 1; k >= (keep ? 0 : 1); k--)
        if (cache_put_entry(entries, name, links[k].at, type_name, made[k], budget, &c[C_BYTES], &c[C_FILLS],
                            &c[C_EVICTIONS]) < 0)
            goto fail_counted;
    if (counts_set(counts, c, was) < 0)
        goto fail;
    result = PyTuple_Pack(2, type_name, count ? made[0] : base);
    goto done;
fail_counted: { /* an error while putting: what was put is counted, as put would have; that error is raised */
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    if (counts_set(counts, c, was) < 0)
        PyErr_Clear();
    PyErr_Restore(et, ev, etb);
}
fail:
    result = NULL;
    goto done;
doubt:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(counts);
    if (made != NULL) {
        for (Py_ssize_t k = 0; k < count; k++)
            Py_XDECREF(made[k]);
        PyMem_Free(made);
    }
    if (links != small)
        PyMem_Free(links);
    Py_XDECREF(hit_key);
    Py_XDECREF(base);
    Py_XDECREF(type_name);
    return result;
}

/* What read_object and read_objects share: the pack's bytes, the limits
 * and the cache's entries, read from their arguments. */
typedef struct {
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n;
    long long end, max_depth, max_size;
    PyObject *max_obj, *cache, *entries, *name, *decompress, *inflate_big;
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
    a->entries = unwatched_entries(cache);
    if (a->entries == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (get_bytes(pack, &a->view, &a->m, &a->n) < 0) {
        Py_DECREF(a->entries);
        return 0;
    }
    a->max_obj = max_size;
    a->cache = cache;
    a->name = name;
    a->decompress = decompress != Py_None ? decompress : NULL;
    a->inflate_big = inflate_big != Py_None ? inflate_big : NULL;
    return 1;
}

static void
read_args_release(read_args *a)
{
    release_bytes(&a->view);
    Py_DECREF(a->entries);
}

static PyObject *
read_args_one(const read_args *a, long long offset, int keep)
{
    return read_one(a->m, a->n, offset, a->end, a->max_depth, a->max_size, a->max_obj, a->cache, a->entries, a->name,
                    keep, a->decompress, a->inflate_big);
}

static PyObject *
native_read_object(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 10 || !PyUnicode_Check(args[6])) {
        PyErr_SetString(PyExc_TypeError, "read_object(pack, offset, end, max_depth, max_size, cache, name: str, "
                                         "keep, decompress, inflate_big)");
        return NULL;
    }
    int keep = PyObject_IsTrue(args[7]);
    if (keep < 0)
        return NULL;
    long long offset = PyLong_AsLongLong(args[1]);
    if (offset == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    read_args a;
    int ready = read_args_open(&a, args[0], args[2], args[3], args[4], args[5], args[6], args[8], args[9]);
    if (ready <= 0)
        return ready < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *result = read_args_one(&a, offset, keep);
    read_args_release(&a);
    return result;
}

/* Several objects of one pack read in turn as read_object reads each (keep
 * false), in one call:
 *
 *   read_objects(pack, offsets, end, max_depth, max_size, cache, name, decompress, inflate_big)
 *       -> [(type name, data), ...] for the first offsets, up to the first
 *       one read_object would answer None for (excluded; the caller reads
 *       it through read_at and goes on after it), or None when no object
 *       can be read here (a tracer listening). */
static PyObject *
native_read_objects(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9 || !PyList_Check(args[1]) || !PyUnicode_Check(args[6])) {
        PyErr_SetString(PyExc_TypeError, "read_objects(pack, offsets: list, end, max_depth, max_size, cache, "
                                         "name: str, decompress, inflate_big)");
        return NULL;
    }
    PyObject *offsets = args[1];
    read_args a;
    int ready = read_args_open(&a, args[0], args[2], args[3], args[4], args[5], args[6], args[7], args[8]);
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
