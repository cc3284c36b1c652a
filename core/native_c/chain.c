/* core/native_c/chain.c: part of packscope.core._native (see chain.h for what it offers).
 * The one delta-chain walk and the one chain application of the compiled path: walk_chain
 * (pack_read.c), read_object (object_read.c) and pack_info (pack_info.c) all walk with
 * chain_walk_from and build with chain_apply.  The reference is Pack.read_at's loop
 * (core/store/pack.py): headers from the top down through OFS_DELTA bases, a probe (the
 * delta-base cache, or pack_info's type memo) before each base is read, the depth rule of
 * Pack._check_chain_depth, then the deltas inflated and applied bottom first. */
#include "chain.h"

/* An entry's header as the reference parses it (Pack._header_py): 0 with
 * the fields, or -1 for anything it would refuse (or a REF_DELTA: its base
 * is found through an index, which the caller leaves to Python). */
static int
entry_head(const uint8_t *m, Py_ssize_t n, long long offset, long long end, int *type, uint64_t *size,
           long long *data_at, long long *base_at)
{
    if (offset < 12 || offset >= end || offset >= n)
        return -1;
    const uint8_t *d = m + offset;
    Py_ssize_t avail = n - (Py_ssize_t)offset < ENTRY_PEEK ? n - (Py_ssize_t)offset : ENTRY_PEEK;
    Py_ssize_t i = 1;
    uint8_t c = d[0];
    *type = (c >> 4) & 7;
    *size = c & 15;
    unsigned shift = 4;
    while (c & 0x80) {
        if (i >= avail || shift > 57)
            return -1;
        c = d[i++];
        *size |= (uint64_t)(c & 0x7F) << shift;
        shift += 7;
    }
    *base_at = 0;
    if (*type == 6) {
        if (i >= avail)
            return -1;
        c = d[i++];
        uint64_t distance = c & 0x7F;
        while (c & 0x80) {
            if (i >= avail || distance >= (1ull << 50))
                return -1;
            c = d[i++];
            distance = ((distance + 1) << 7) | (c & 0x7F);
        }
        if (distance == 0 || distance > (uint64_t)offset || (uint64_t)offset - distance < 12)
            return -1;
        *base_at = offset - (long long)distance;
    }
    else if (*type < 1 || *type > 4)
        return -1;
    if (offset + i > end)
        return -1;
    *data_at = offset + i;
    return 0;
}


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


/* The walk (see chain.h).  A delta on top is probed first, as read_at asks
 * the cache before anything else; then each base is probed before its
 * header is read, as read_at's loop does. */
static int
chain_walk_from(chain_walk *w, const uint8_t *m, Py_ssize_t n, long long offset, long long end, long long max_depth,
                chain_probe probe, void *ctx)
{
    int type;
    uint64_t size;
    long long data_at, next_at, at = offset;
    w->links = w->small;
    w->count = 0;
    w->cap = CHAIN_SMALL;
    w->hit = -1;
    w->misses = 0;
    if (end > n || entry_head(m, n, at, end, &type, &size, &data_at, &next_at) < 0)
        return CHAIN_DOUBT;
    if (type == 6) {
        int got = probe(ctx, at);
        if (got != 0)
            return got < 0 ? CHAIN_ERROR : (w->hit = at, CHAIN_OK);
        w->misses++;
    }
    while (type == 6) {
        if (w->count == w->cap) {
            chain_link *more = PyMem_Malloc(sizeof(chain_link) * (size_t)w->cap * 2);
            if (more == NULL) {
                PyErr_NoMemory();
                return CHAIN_ERROR;
            }
            memcpy(more, w->links, sizeof(chain_link) * (size_t)w->count);
            if (w->links != w->small)
                PyMem_Free(w->links);
            w->links = more;
            w->cap *= 2;
        }
        w->links[w->count].at = at;
        w->links[w->count].data_at = data_at;
        w->links[w->count].size = size;
        if (++w->count > max_depth)
            return CHAIN_DOUBT; /* the reference raises delta-too-deep */
        at = next_at;
        int got = probe(ctx, at);
        if (got < 0)
            return CHAIN_ERROR;
        if (got) {
            w->hit = at;
            return CHAIN_OK;
        }
        w->misses++;
        if (entry_head(m, n, at, end, &type, &size, &data_at, &next_at) < 0)
            return CHAIN_DOUBT; /* a REF_DELTA, or damage */
    }
    w->type = type;
    w->at = at;
    w->data_at = data_at;
    w->size = size;
    return CHAIN_OK;
}

static void
chain_walk_release(chain_walk *w)
{
    if (w->links != w->small)
        PyMem_Free(w->links);
    w->links = w->small;
}

/* One delta's or whole object's bytes: small ones through the reused
 * z_stream (a Python call and a stream's set-up cost more there), others
 * through the Python inflaters when given (see chain.h). */
static PyObject *
inflate_any(const chain_inflaters *inf, const uint8_t *m, long long start, long long size, long long end,
            long long max_size)
{
    if (size <= SMALL_INFLATE)
        return inflate_exact(m, start, size, end, max_size);
    if (size <= ONE_CALL_INFLATE && inf->decompress != NULL)
        return inflate_with(inf->decompress, m, start, size, end, max_size);
    if (size > ONE_CALL_INFLATE && inf->inflate_big != NULL)
        return inflate_big_with(inf->inflate_big, m, start, size, end, max_size);
    return inflate_exact(m, start, size, end, max_size);
}

/* The chain application (see chain.h). */
static int
chain_apply(const uint8_t *m, long long end, long long max_size, PyObject *max_obj, const chain_link *links,
            Py_ssize_t count, PyObject *base, const chain_inflaters *inf, PyObject **made)
{
    PyObject *below = base;
    for (Py_ssize_t k = count - 1; k >= 0; k--) {
        if (links[k].size > (uint64_t)LLONG_MAX)
            return CHAIN_DOUBT;
        PyObject *delta = inflate_any(inf, m, links[k].data_at, (long long)links[k].size, end, max_size);
        if (delta == NULL)
            return PyErr_Occurred() ? CHAIN_ERROR : CHAIN_DOUBT;
        PyObject *obj = apply_or_none(below, delta, max_obj);
        Py_DECREF(delta);
        if (obj == NULL)
            return CHAIN_ERROR;
        if (obj == Py_None) {
            Py_DECREF(obj);
            return CHAIN_DOUBT;
        }
        made[k] = obj;
        below = obj;
    }
    return CHAIN_OK;
}
