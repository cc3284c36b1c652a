/* core/native_c/pack_info.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (see pack_info.h).  An entry's type and size through OFS_DELTA chains
 * (pack_info, pack_info_many); the reference is core/store/pack_info.py. */
#include "pack_info.h"

/* A delta's result size from the start of its zlib stream at data_at
 * (inflating at most 20 bytes, as Pack.delta_result_size): 0, or -1. */
static int
delta_result_size(const uint8_t *m, long long data_at, long long end, uint64_t delta_size, uint64_t *result)
{
    /* One stream for every call (the GIL serialises them): inflateReset
     * keeps the state and window that inflateInit and the first inflate
     * allocate, which cost more than the few bytes inflated here. */
    static z_stream z;
    static int z_ready = 0;
    uint8_t out[20];
    size_t want = delta_size < sizeof out ? (size_t)delta_size : sizeof out;
    if (!z_ready) {
        memset(&z, 0, sizeof z);
        if (inflateInit(&z) != Z_OK)
            return -1;
        z_ready = 1;
    }
    else if (inflateReset(&z) != Z_OK)
        return -1;
    z.next_in = (Bytef *)(m + data_at);
    z.avail_in = (uInt)((end - data_at) < (1 << 30) ? (end - data_at) : (1 << 30));
    z.next_out = out;
    z.avail_out = (uInt)want;
    int rc = Z_OK;
    while (z.avail_out > 0 && rc == Z_OK)
        rc = inflate(&z, Z_SYNC_FLUSH);
    size_t got = want - z.avail_out;
    if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && got == want))
        return -1;
    /* two size varints: the base's, then the result's */
    size_t pos = 0;
    for (int which = 0; which < 2; which++) {
        uint64_t value = 0;
        unsigned shift = 0;
        for (;;) {
            if (pos >= got || shift > 56)
                return -1;
            uint8_t c = out[pos++];
            value |= (uint64_t)(c & 0x7F) << shift;
            if (!(c & 0x80))
                break;
            shift += 7;
        }
        *result = value;
    }
    return 0;
}

/* The type memo of pack_info: a direct-mapped table in a bytearray the
 * Pack owns (a power of two of 8-byte slots, 0 empty).  A slot holds one
 * delta's offset (40 bits), the number of deltas from it down to its base
 * (21 bits: the depth rule still counts the whole chain) and the base's
 * type (3 bits).  Chains in a pack share their lower links, so most walks
 * stop at an entry an earlier walk passed; a slot is checked whole, so a
 * collision only costs a walk. */
#define MEMO_OFFSET_BITS 40
#define MEMO_BELOW_BITS 21
typedef struct {
    uint64_t *slots;
    uint64_t mask;
} type_memo;

static inline uint64_t *
memo_slot(const type_memo *t, long long offset)
{
    return &t->slots[(((uint64_t)offset * 0x9E3779B97F4A7C15ull) >> 29) & t->mask];
}

/* The base's type (and *below) for the delta at offset, or 0 if unknown. */
static inline int
memo_get(const type_memo *t, long long offset, long long *below)
{
    if (t->slots == NULL)
        return 0;
    uint64_t v = *memo_slot(t, offset);
    if (v == 0 || (v >> (MEMO_BELOW_BITS + 3)) != (uint64_t)offset)
        return 0;
    *below = (long long)((v >> 3) & ((1u << MEMO_BELOW_BITS) - 1));
    return (int)(v & 7);
}

static inline void
memo_put(const type_memo *t, long long offset, long long below, int type)
{
    if (t->slots != NULL && (uint64_t)offset < (1ull << MEMO_OFFSET_BITS) && below < (1 << MEMO_BELOW_BITS))
        *memo_slot(t, offset) = (uint64_t)offset << (MEMO_BELOW_BITS + 3) | (uint64_t)below << 3 | (uint64_t)type;
}

/* The probe of pack_info's walk: the memo's type for a delta, and how
 * many deltas lie below it. */
typedef struct {
    const type_memo *memo;
    int type;
    long long below;
} memo_probe;

static int
probe_memo(void *ctx, long long offset)
{
    memo_probe *p = ctx;
    p->type = memo_get(p->memo, offset, &p->below);
    return p->type != 0;
}

/* pack_info's answer for the entry at offset: 0 with *type and *size, or
 * -1 on any doubt.  memo may have no slots (no memo).  The walk is the
 * shared one (chain.c); OFS_DELTA bases lie strictly earlier, so it cannot
 * loop.  The depth rule is the reference's (Pack._check_chain_depth): the
 * deltas of the whole chain, those under a memo hit included.  The deltas
 * passed learn the type (the first CHAIN_SMALL of them). */
static int
pack_info_one(const uint8_t *m, Py_ssize_t n, long long offset, long long end, long long max_depth,
              const type_memo *memo, int *type_out, uint64_t *size_out)
{
    memo_probe probe = {memo, 0, 0};
    chain_walk w;
    int got = chain_walk_from(&w, m, n, offset, end, max_depth, probe_memo, &probe);
    int rc = -1;
    if (got != CHAIN_OK) {
        PyErr_Clear(); /* (the memo probe sets none; an allocation's failure is a doubt here) */
        goto done;
    }
    if (w.count == 0 && w.hit < 0) { /* a whole object */
        *type_out = w.type;
        *size_out = w.size;
        rc = 0;
        goto done;
    }
    uint64_t result_size;
    long long top_data_at = w.count ? w.links[0].data_at : -1;
    uint64_t top_size = w.count ? w.links[0].size : 0;
    if (w.count == 0) { /* a memo hit at the top itself: its header still gives the result size */
        int type;
        long long base_at;
        if (entry_head(m, n, offset, end, &type, &top_size, &top_data_at, &base_at) < 0)
            goto done;
    }
    if (delta_result_size(m, top_data_at, end, top_size, &result_size) < 0)
        goto done;
    int type = w.type;
    if (w.hit >= 0) {
        type = probe.type;
        if (w.count + probe.below > max_depth)
            goto done;
    }
    for (Py_ssize_t k = 0; k < w.count && k < CHAIN_SMALL; k++)
        memo_put(memo, w.links[k].at, (long long)(w.count - k) + (w.hit >= 0 ? probe.below : 0), type);
    *type_out = type;
    *size_out = result_size;
    rc = 0;
done:
    chain_walk_release(&w);
    return rc;
}

/* The memo argument: a bytearray of a power of two of aligned 8-byte
 * slots, else no memo. */
static type_memo
memo_of(PyObject *obj)
{
    type_memo memo = {NULL, 0};
    if (PyByteArray_CheckExact(obj)) {
        Py_ssize_t len = PyByteArray_GET_SIZE(obj);
        uint64_t count = (uint64_t)len / 8;
        if (len % 8 == 0 && count && (count & (count - 1)) == 0 &&
            ((uintptr_t)PyByteArray_AS_STRING(obj) & 7) == 0) {
            memo.slots = (uint64_t *)PyByteArray_AS_STRING(obj);
            memo.mask = count - 1;
        }
    }
    return memo;
}

static PyObject *
native_pack_info(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "pack_info(pack, offset, data_end, rawsz, max_depth, memo)");
        return NULL;
    }
    long long offset = PyLong_AsLongLong(args[1]);
    long long end = PyLong_AsLongLong(args[2]);
    long long max_depth = PyLong_AsLongLong(args[4]);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    type_memo memo = memo_of(args[5]);
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n;
    if (get_bytes(args[0], &view, &m, &n) < 0)
        Py_RETURN_NONE;
    int type;
    uint64_t size;
    int got = pack_info_one(m, n, offset, end, max_depth, &memo, &type, &size);
    release_bytes(&view);
    if (got < 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(iK)", type, (unsigned long long)size);
}

/*   pack_info_many(pack, offsets, data_end, rawsz, max_depth, memo) -> [(type name, size) or None, ...]
 *       pack_info for each offset of a list in one call, the type as its
 *       name ("commit", "tree", "blob", "tag"). */
static PyObject *
native_pack_info_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static PyObject *names[5] = {NULL};
    if (names[1] == NULL) {
        const char *text[5] = {NULL, "commit", "tree", "blob", "tag"};
        for (int t = 1; t <= 4; t++)
            if ((names[t] = PyUnicode_InternFromString(text[t])) == NULL)
                return NULL;
    }
    if (nargs != 6 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "pack_info_many(pack, offsets: list, data_end, rawsz, max_depth, memo)");
        return NULL;
    }
    PyObject *offsets = args[1];
    Py_ssize_t count = PyList_GET_SIZE(offsets);
    PyObject *results = PyList_New(count);
    if (results == NULL)
        return NULL;
    long long end = PyLong_AsLongLong(args[2]);
    long long max_depth = PyLong_AsLongLong(args[4]);
    Py_buffer view;
    const uint8_t *m = NULL;
    Py_ssize_t n = 0;
    int usable = 1;
    if (PyErr_Occurred()) {
        PyErr_Clear();
        usable = 0;
    }
    if (usable && get_bytes(args[0], &view, &m, &n) < 0)
        usable = 0;
    type_memo memo = memo_of(args[5]);
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = Py_None;
        long long offset = PyLong_AsLongLong(PyList_GET_ITEM(offsets, k));
        if (offset == -1 && PyErr_Occurred())
            PyErr_Clear();
        else if (usable) {
            int type;
            uint64_t size;
            if (pack_info_one(m, n, offset, end, max_depth, &memo, &type, &size) == 0) {
                item = Py_BuildValue("(OK)", names[type], (unsigned long long)size);
                if (item == NULL) {
                    Py_DECREF(results);
                    results = NULL;
                    break;
                }
            }
        }
        PyList_SET_ITEM(results, k, item == Py_None ? Py_NewRef(Py_None) : item);
    }
    if (usable)
        release_bytes(&view);
    return results;
}
