/* core/native_c/pack_read.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (which includes Python.h, then this file).  A delta chain walked and applied in one call
 * (walk_chain, apply_chain); the reference is Pack.read_at's loop (core/store/pack.py). */

/* A delta chain applied in one call (the pure reference: Pack.read_at's
 * loop over inflate_entry and apply_delta):
 *
 *   apply_chain(pack, base, deltas, end, max_size[, decompress[, inflate_big]]) -> [object, ...], or None
 *       deltas: [(entry offset, data offset, size), ...] top first, as
 *       read_at collects them; each delta's zlib stream (at its data offset, fed up to end)
 *       must inflate to exactly its size, and is applied to the object
 *       below it, the bottom one to base.  The objects come back in the
 *       same order (the last made from base, the first the top one).  None
 *       on any doubt — the pure loop then raises the error.  The deltas are
 *       inflated by decompress when given and they are small (a one-shot
 *       function of Python's zlib API: zlib-ng's is faster than the system
 *       zlib, but has no output cap), bigger ones by inflate_big(data,
 *       size) when given (exactly size bytes or None, capped), else by one
 *       z_stream that serves every call (inflateReset keeps its state). */
#define MAX_DEFLATE_RATIO 1032
#define ONE_CALL_INFLATE (64 << 10)

/* size bytes inflated from the stream at m[start:end] into a new bytes
 * object when it ends there with exactly that many; NULL otherwise (with
 * an exception set only for MemoryError). */
static PyObject *
inflate_exact(const uint8_t *m, long long start, long long size, long long end, long long max_size)
{
    static z_stream z;
    static int z_ready = 0;
    if (start < 0 || size < 0 || end <= start || size > max_size || size > PY_SSIZE_T_MAX - 1 ||
        (unsigned long long)size > (unsigned long long)(end - start) * MAX_DEFLATE_RATIO + 64)
        return NULL;
    if (!z_ready) {
        memset(&z, 0, sizeof z);
        if (inflateInit(&z) != Z_OK)
            return NULL;
        z_ready = 1;
    }
    else if (inflateReset(&z) != Z_OK)
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (out == NULL)
        return NULL;
    uint8_t spare; /* one byte past the declared size: a longer stream shows there */
    const uint8_t *in = m + start;
    uint64_t in_left = (uint64_t)(end - start);
    uint8_t *dst = (uint8_t *)PyBytes_AS_STRING(out);
    uint64_t out_left = (uint64_t)size;
    for (;;) {
        int spare_round = out_left == 0;
        uInt in_now = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        uInt out_now = spare_round ? 1 : (out_left > (1u << 30) ? (1u << 30) : (uInt)out_left);
        z.next_in = (Bytef *)in;
        z.avail_in = in_now;
        z.next_out = spare_round ? &spare : dst;
        z.avail_out = out_now;
        int rc = inflate(&z, Z_NO_FLUSH);
        uInt used = in_now - z.avail_in, made = out_now - z.avail_out;
        in += used;
        in_left -= used;
        if (spare_round) {
            if (made)
                goto doubt; /* longer than declared */
        }
        else {
            dst += made;
            out_left -= made;
        }
        if (rc == Z_STREAM_END)
            break;
        if ((rc != Z_OK && rc != Z_BUF_ERROR) || (used == 0 && made == 0))
            goto doubt; /* corrupt, or cut: no progress with all input fed */
    }
    if (out_left == 0)
        return out;
doubt: /* shorter or longer than declared, corrupt or cut */
    Py_DECREF(out);
    return NULL;
}

/* The window of m[start:end] that inflate_entry reads first for an entry of
 * size bytes, as a read-only memoryview (new reference); NULL when the entry
 * cannot be one a Python inflater may be handed (a size over max_size or
 * beyond what deflate can make of the bytes left), with an error set only
 * when the view could not be made.  A stream needing more input than the
 * window is left to inflate_entry. */
static PyObject *
inflate_window(const uint8_t *m, long long start, long long size, long long end, long long max_size)
{
    if (start < 0 || size < 0 || end <= start || size > max_size || size > PY_SSIZE_T_MAX - 1 ||
        (unsigned long long)size > (unsigned long long)(end - start) * MAX_DEFLATE_RATIO + 64)
        return NULL;
    long long stop = start + size + (size >> 3) + 64;
    if (stop > end)
        stop = end;
    return PyMemoryView_FromMemory((char *)(m + start), (Py_ssize_t)(stop - start), PyBUF_READ);
}

/* A Python inflater's answer (new reference, or NULL from a failed call)
 * kept only when it is exactly size bytes: NULL otherwise, with an error
 * set only for MemoryError. */
static PyObject *
exactly(PyObject *out, long long size)
{
    if (out == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_MemoryError))
            PyErr_Clear();
        return NULL;
    }
    if (!PyBytes_CheckExact(out) || PyBytes_GET_SIZE(out) != size) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* The same as inflate_exact through a one-shot decompress function of
 * Python's zlib API (decompress(data, wbits, bufsize), which raises unless
 * the stream ends): size bytes, or NULL (an error set only for MemoryError). */
static PyObject *
inflate_with(PyObject *decompress, const uint8_t *m, long long start, long long size, long long end,
             long long max_size)
{
    PyObject *view = inflate_window(m, start, size, end, max_size);
    if (view == NULL)
        return NULL;
    PyObject *call[3] = {view, PyLong_FromLong(15), PyLong_FromLongLong(size + 1)};
    PyObject *out = NULL;
    if (call[1] != NULL && call[2] != NULL)
        out = PyObject_Vectorcall(decompress, call, 3, NULL);
    Py_DECREF(view);
    Py_XDECREF(call[1]);
    Py_XDECREF(call[2]);
    return exactly(out, size);
}

/* The same through inflate_big(data, size) -> exactly size bytes or None,
 * a Python function with an output cap (pack.py _inflate_capped). */
static PyObject *
inflate_big_with(PyObject *inflate_big, const uint8_t *m, long long start, long long size, long long end,
                 long long max_size)
{
    PyObject *view = inflate_window(m, start, size, end, max_size);
    if (view == NULL)
        return NULL;
    PyObject *call[2] = {view, PyLong_FromLongLong(size)};
    PyObject *out = NULL;
    if (call[1] != NULL)
        out = PyObject_Vectorcall(inflate_big, call, 2, NULL);
    Py_DECREF(view);
    Py_XDECREF(call[1]);
    return exactly(out, size);
}

static PyObject *
native_apply_chain(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 5 || nargs > 7 || !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "apply_chain(pack, base, deltas: list, end, max_size[, decompress[, inflate_big]])");
        return NULL;
    }
    PyObject *decompress = nargs >= 6 && args[5] != Py_None ? args[5] : NULL;
    PyObject *inflate_big = nargs == 7 && args[6] != Py_None ? args[6] : NULL;
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
    PyObject *results = NULL;
    if (end > n)
        goto doubt;
    results = PyList_New(count);
    if (results == NULL)
        goto done;
    PyObject *below = args[1]; /* borrowed: base, then results' items */
    for (Py_ssize_t k = count - 1; k >= 0; k--) {
        PyObject *item = PyList_GET_ITEM(deltas, k);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3)
            goto doubt;
        long long start = PyLong_AsLongLong(PyTuple_GET_ITEM(item, 1));
        long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(item, 2));
        if (PyErr_Occurred()) {
            PyErr_Clear();
            goto doubt;
        }
        /* a one-shot decompress has no output cap: only for small deltas,
         * whose window cannot make much (pack.py ONE_CALL_INFLATE) */
        PyObject *delta;
        if (size <= ONE_CALL_INFLATE && decompress != NULL)
            delta = inflate_with(decompress, m, start, size, end, max_size);
        else if (size > ONE_CALL_INFLATE && inflate_big != NULL)
            delta = inflate_big_with(inflate_big, m, start, size, end, max_size);
        else
            delta = inflate_exact(m, start, size, end, max_size);
        if (delta == NULL) {
            if (PyErr_Occurred())
                goto fail;
            goto doubt;
        }
        PyObject *made = apply_or_none(below, delta, max_obj);
        Py_DECREF(delta);
        if (made == NULL)
            goto fail;
        if (made == Py_None) {
            Py_DECREF(made);
            goto doubt;
        }
        PyList_SET_ITEM(results, k, made);
        below = made;
    }
    goto done;
fail:
    Py_CLEAR(results);
    goto done;
doubt:
    Py_XDECREF(results);
    results = Py_NewRef(Py_None);
done:
    release_bytes(&view);
    return results;
}

/* A delta chain's walk down to something to build on (the pure reference:
 * Pack.read_at's loop):
 *
 *   walk_chain(pack, offset, end, max_depth, cached, name)
 *       -> (hit, base type, base offset, base data offset, base size, deltas, misses), or None
 *       Headers are read from offset down through OFS_DELTA bases; before
 *       each delta's base (and at a delta on top) the delta-base cache is
 *       probed: cached is its dict of (name, offset) -> entry, only read
 *       here.  hit: the offset whose entry ends the walk (-1: none, the walk
 *       reached a whole object: base type, offset, data offset and size).
 *       deltas: [(offset, data offset, size), ...] top first, as read_at
 *       collects them (empty for a whole object on top); misses: the probes
 *       that found nothing.  None for a REF_DELTA on the way, a chain deeper
 *       than max_depth, or anything the reference would refuse. */
/* 1 if (name, offset) is a key of cached, 0 if not, -1 with an error set. */
static int
cache_has(PyObject *cached, PyObject *name, long long offset)
{
    PyObject *key = Py_BuildValue("(OL)", name, offset);
    if (key == NULL)
        return -1;
    PyObject *entry = PyDict_GetItemWithError(cached, key);
    Py_DECREF(key);
    if (entry != NULL)
        return 1;
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *
native_walk_chain(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyDict_Check(args[4]) || !PyUnicode_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError, "walk_chain(pack, offset, end, max_depth, cached: dict, name: str)");
        return NULL;
    }
    PyObject *cached = args[4], *name = args[5];
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
    PyObject *deltas = NULL, *result = NULL;
    int type;
    uint64_t size;
    long long data_at, base_at, at = offset, hit = -1, misses = 0;
    if (end > n || entry_head(m, n, at, end, &type, &size, &data_at, &base_at) < 0)
        goto doubt;
    deltas = PyList_New(0);
    if (deltas == NULL)
        goto done;
    if (type == 6) { /* a delta on top: the cache first, as read_at */
        int got = cache_has(cached, name, at);
        if (got < 0)
            goto done;
        if (got)
            hit = at;
        else
            misses++;
    }
    while (hit < 0 && type == 6) {
        PyObject *link = Py_BuildValue("(LLK)", at, data_at, (unsigned long long)size);
        if (link == NULL || PyList_Append(deltas, link) < 0) {
            Py_XDECREF(link);
            goto done;
        }
        Py_DECREF(link);
        if (PyList_GET_SIZE(deltas) > max_depth)
            goto doubt; /* the reference raises delta-too-deep */
        at = base_at;
        int got = cache_has(cached, name, at);
        if (got < 0)
            goto done;
        if (got) {
            hit = at;
            break;
        }
        misses++;
        if (entry_head(m, n, at, end, &type, &size, &data_at, &base_at) < 0)
            goto doubt;
    }
    if (hit >= 0)
        result = Py_BuildValue("(LiiiiOL)", hit, -1, -1, -1, -1, deltas, misses);
    else
        result = Py_BuildValue("(LiLLKOL)", hit, type, at, data_at, (unsigned long long)size, deltas, misses);
    goto done;
doubt:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(deltas);
    release_bytes(&view);
    return result;
}

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

static PyObject *
native_read_object(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 10 || !PyUnicode_Check(args[6])) {
        PyErr_SetString(PyExc_TypeError, "read_object(pack, offset, end, max_depth, max_size, cache, name: str, "
                                         "keep, decompress, inflate_big)");
        return NULL;
    }
    PyObject *cache = args[5], *name = args[6], *max_obj = args[4];
    int keep = PyObject_IsTrue(args[7]);
    if (keep < 0)
        return NULL;
    PyObject *decompress = args[8] != Py_None ? args[8] : NULL;
    PyObject *inflate_big = args[9] != Py_None ? args[9] : NULL;
    long long offset = PyLong_AsLongLong(args[1]);
    long long end = PyLong_AsLongLong(args[2]);
    long long max_depth = PyLong_AsLongLong(args[3]);
    long long max_size = PyLong_AsLongLong(max_obj);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *entries = unwatched_entries(cache);
    if (entries == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n;
    PyObject *result;
    if (get_bytes(args[0], &view, &m, &n) < 0)
        result = Py_NewRef(Py_None);
    else {
        result = read_one(m, n, offset, end, max_depth, max_size, max_obj, cache, entries, name, keep, decompress,
                          inflate_big);
        release_bytes(&view);
    }
    Py_DECREF(entries);
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
    PyObject *offsets = args[1], *cache = args[5], *name = args[6], *max_obj = args[4];
    PyObject *decompress = args[7] != Py_None ? args[7] : NULL;
    PyObject *inflate_big = args[8] != Py_None ? args[8] : NULL;
    long long end = PyLong_AsLongLong(args[2]);
    long long max_depth = PyLong_AsLongLong(args[3]);
    long long max_size = PyLong_AsLongLong(max_obj);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *entries = unwatched_entries(cache);
    if (entries == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n;
    if (get_bytes(args[0], &view, &m, &n) < 0) {
        Py_DECREF(entries);
        Py_RETURN_NONE;
    }
    PyObject *results = PyList_New(0);
    for (Py_ssize_t i = 0; results != NULL && i < PyList_GET_SIZE(offsets); i++) {
        PyObject *item = PyList_GET_ITEM(offsets, i);
        long long offset = PyLong_Check(item) ? PyLong_AsLongLong(item) : -1;
        if (offset < 0) {
            PyErr_Clear();
            break; /* (read_at answers, or raises) */
        }
        PyObject *got = read_one(m, n, offset, end, max_depth, max_size, max_obj, cache, entries, name, 0,
                                 decompress, inflate_big);
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
    release_bytes(&view);
    Py_DECREF(entries);
    return results;
}
