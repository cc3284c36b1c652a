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
 * set only for MemoryError and what is not an Exception (KeyboardInterrupt,
 * SystemExit: clear_unless_fatal). */
static PyObject *
exactly(PyObject *out, long long size)
{
    if (out == NULL) {
        clear_unless_fatal();
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
 * the stream ends): size bytes, or NULL (an error set only as exactly sets one). */
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
