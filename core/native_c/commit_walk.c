/* core/native_c/commit_walk.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (commit_walk.h says what it offers).  A commit's header from one pack in one call
 * (commit_lookup); the reference is core/history/commit_reader.py. */
#include "commit_walk.h"

/* ---- Commit headers at walk speed (core/history/commit_reader.py) ----------
 *
 * The pure reference: CommitHeaderReader.__call__'s Python path.
 *
 *   commit_lookup(table, pack, oid, hexsz, prefix) -> (tree, parents, commit_time), False, or None
 *       oid looked up in one pack's index (table: what PackIndex.search_table
 *       returns; False when the index does not hold it), and the header of
 *       the plain (undeltified) commit entry it names, read as the reference
 *       reads it: the first min(size, prefix) bytes inflated from at most
 *       that many + 1/8 + 64 bytes of the stream (one z_stream reused), then
 *       matched as commit_header does.  None for anything else (a doubt
 *       about the index, a large offset, another type or a delta, a prefix
 *       too short for the header, damage): the caller then takes its Python
 *       path, which gives its own answer. */
#define COMMIT_PREFIX_MAX 4096

/* The header at offset: a new reference (the header or None), or NULL
 * with an exception set (only MemoryError).  With delta_at, a None for a
 * delta entry (OFS or REF) sets *delta_at to its offset. */
static PyObject *
commit_header_at(PyObject *self, PyObject *pack, long long offset, PyObject *hexsz, long long prefix,
                 long long *delta_at)
{
    static z_stream z;
    static int z_ready = 0;
    static uint8_t out[COMMIT_PREFIX_MAX];
    if (prefix <= 0 || prefix > COMMIT_PREFIX_MAX)
        Py_RETURN_NONE;
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n;
    if (get_bytes(pack, &view, &m, &n) < 0)
        Py_RETURN_NONE;
    PyObject *result = NULL;
    int type;
    uint64_t size;
    long long data_at, base_at;
    if (entry_head(m, n, offset, n, &type, &size, &data_at, &base_at) < 0)
        goto doubt;
    if (type != 1) {
        if (delta_at != NULL && (type == 6 || type == 7))
            *delta_at = offset;
        goto doubt;
    }
    Py_ssize_t want = size < (uint64_t)prefix ? (Py_ssize_t)size : (Py_ssize_t)prefix;
    Py_ssize_t feed = want + (want >> 3) + 64; /* as the reference slices the stream */
    if (feed > n - data_at)
        feed = n - data_at;
    if (!z_ready) {
        memset(&z, 0, sizeof z);
        if (inflateInit(&z) != Z_OK)
            goto doubt;
        z_ready = 1;
    }
    else if (inflateReset(&z) != Z_OK)
        goto doubt;
    z.next_in = (Bytef *)(m + data_at);
    z.avail_in = (uInt)feed;
    z.next_out = out;
    z.avail_out = (uInt)want;
    int rc = inflate(&z, Z_NO_FLUSH);
    if ((rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) || z.avail_out != 0)
        goto doubt; /* damage, or fewer bytes than the reference needs */
    PyObject *data = PyBytes_FromStringAndSize((const char *)out, want);
    if (data == NULL)
        goto done;
    PyObject *header_args[2] = {data, hexsz};
    result = native_commit_header(self, header_args, 2); /* (tree, parents, time), None, or NULL */
    Py_DECREF(data);
    goto done;
doubt:
    result = Py_NewRef(Py_None);
done:
    release_bytes(&view);
    return result;
}

/* commit_lookup's answer for args (table, pack, oid, hexsz, prefix); see commit_header_at for delta_at. */
static PyObject *
commit_lookup_in(PyObject *self, PyObject *const *args, long long *delta_at)
{
    PyObject *table = args[0];
    const uint8_t *oid;
    Py_ssize_t rawsz;
    if (!PyTuple_Check(table) || PyTuple_GET_SIZE(table) != 7 || oid_bytes(args[2], &oid, &rawsz) < 0)
        Py_RETURN_NONE;
    long long prefix = PyLong_AsLongLong(args[4]);
    Py_ssize_t off_at = PyLong_AsSsize_t(PyTuple_GET_ITEM(table, 4));
    Py_ssize_t off_stride = PyLong_AsSsize_t(PyTuple_GET_ITEM(table, 5));
    int v2 = PyObject_IsTrue(PyTuple_GET_ITEM(table, 6));
    if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    idx_table t;
    if (idx_table_open(&t, PyTuple_GET_ITEM(table, 0), PyTuple_GET_ITEM(table, 1), PyTuple_GET_ITEM(table, 2),
                       PyTuple_GET_ITEM(table, 3), rawsz) < 0)
        Py_RETURN_NONE;
    int doubt = 0;
    long long pos = idx_search(&t, oid, rawsz, &doubt);
    long long offset = -1;
    if (!doubt && pos >= 0 && off_at >= 0 && off_stride >= 4 && off_at <= t.n &&
        (uint64_t)pos * (uint64_t)off_stride + 4 <= (uint64_t)(t.n - off_at)) {
        uint32_t off = be32_at(t.m + off_at + (uint64_t)pos * (uint64_t)off_stride);
        offset = (v2 && (off & 0x80000000u)) ? -1 : (long long)off; /* -1: the large-offset table */
    }
    release_bytes(&t.view);
    if (doubt)
        Py_RETURN_NONE;
    if (pos < 0)
        Py_RETURN_FALSE;
    if (offset < 0)
        Py_RETURN_NONE;
    return commit_header_at(self, args[1], offset, args[3], prefix, delta_at);
}

static PyObject *
native_commit_lookup(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "commit_lookup(table, pack, oid, hexsz, prefix)");
        return NULL;
    }
    return commit_lookup_in(self, args, NULL);
}

/* ---- end of commit headers at walk speed ---- */
