/* core/native_c/tree_diff.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (tree_diff.h says what it offers).  Which entries differ between two trees, one entry by
 * name (tree_diff_names, tree_entry); the reference is core/history/tree_entries.py. */
#include "tree_diff.h"

/* --- tree_diff_names, tree_entry (last_modified's tree comparison) ----------
 *
 *   tree_diff_names(a, b, rawsz) -> {name, ...}: the names of the entries
 *       that are not byte for byte in both trees (changed mode or id, or on
 *       one side only), or None unless both trees are well-formed (as
 *       tree_items accepts them) AND in git's strict tree order (names as
 *       git sorts them, a directory's with a '/' after it; no repeats).
 *       The reference (and the answer for unsorted trees) is
 *       core/history/tree_entries.tree_diff_names_py, which compares the
 *       two trees' sets of entry bytes.  On sorted trees one merge pass
 *       answers without building an object per entry. */
typedef struct {
    Py_ssize_t start, end;   /* the entry's bytes: [start, end) */
    Py_ssize_t name, name_n; /* its name */
    int dir;                 /* S_ISDIR(mode): the name sorts as name + '/' */
} td_entry;

/* The entry at *pos into *e: 1, 0 at the end of the tree, -1 if malformed. */
static inline int
td_next(const uint8_t *d, Py_ssize_t n, Py_ssize_t *pos, Py_ssize_t rawsz, td_entry *e)
{
    Py_ssize_t p = *pos;
    if (p >= n)
        return 0;
    uint32_t mode = 0;
    Py_ssize_t digits = p;
    while (p < n && d[p] >= '0' && d[p] <= '7') {
        mode = mode * 8u + (uint32_t)(d[p] - '0');
        p++;
    }
    if (p == digits || p >= n || d[p] != ' ')
        return -1;
    p++;
    const uint8_t *nul = memchr(d + p, 0, (size_t)(n - p));
    if (nul == NULL || nul == d + p)
        return -1;
    Py_ssize_t name_end = nul - d;
    if (n - (name_end + 1) < rawsz)
        return -1;
    e->start = *pos;
    e->name = p;
    e->name_n = name_end - p;
    e->dir = (mode & 0170000u) == 0040000u;
    e->end = name_end + 1 + rawsz;
    *pos = e->end;
    return 1;
}

/* git's tree order of two entries: their names compared as bytes, a
 * directory's with a '/' after it, a shorter one first.  0: the same sort
 * key, which is the same name and kind unless a name holds a '/' (a file
 * "a/" and a directory "a": the caller doubts). */
static inline int
td_order(const uint8_t *da, const td_entry *a, const uint8_t *db, const td_entry *b)
{
    Py_ssize_t len = a->name_n < b->name_n ? a->name_n : b->name_n;
    int c = memcmp(da + a->name, db + b->name, (size_t)len);
    if (c != 0)
        return c;
    Py_ssize_t la = a->name_n + a->dir, lb = b->name_n + b->dir;
    for (Py_ssize_t i = len; i < la && i < lb; i++) {
        int ca = i < a->name_n ? da[a->name + i] : '/';
        int cb = i < b->name_n ? db[b->name + i] : '/';
        if (ca != cb)
            return ca - cb;
    }
    return (la > lb) - (la < lb);
}

static int
td_add_name(PyObject *names, const uint8_t *d, const td_entry *e)
{
    PyObject *name = PyBytes_FromStringAndSize((const char *)(d + e->name), e->name_n);
    if (name == NULL)
        return -1;
    int r = PySet_Add(names, name);
    Py_DECREF(name);
    return r;
}

/* Moves to the next entry of one tree, checking that it sorts after the
 * current one: 1, 0 at the end, -1 malformed or out of order. */
static inline int
td_advance(const uint8_t *d, Py_ssize_t n, Py_ssize_t *pos, Py_ssize_t rawsz, td_entry *e)
{
    td_entry prev = *e;
    int got = td_next(d, n, pos, rawsz, e);
    if (got == 1 && td_order(d, &prev, d, e) >= 0)
        return -1;
    return got;
}

/* The length of the common start of two buffers (memcmp by blocks, then bytes). */
static Py_ssize_t
td_common_prefix(const uint8_t *a, const uint8_t *b, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i + 256 <= n && memcmp(a + i, b + i, 256) == 0)
        i += 256;
    while (i + 16 <= n && memcmp(a + i, b + i, 16) == 0)
        i += 16;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* The rest of a tree after entry *e (its end at *pos): well-formed and in
 * order?  0, or -1. */
static int
td_check_rest(const uint8_t *d, Py_ssize_t n, Py_ssize_t *pos, Py_ssize_t rawsz, td_entry *e)
{
    int got;
    while ((got = td_advance(d, n, pos, rawsz, e)) == 1)
        ;
    return got;
}

static PyObject *
native_tree_diff_names(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "tree_diff_names(a, b, rawsz)");
        return NULL;
    }
    Py_ssize_t rawsz = PyLong_AsSsize_t(args[2]);
    if (rawsz == -1 && PyErr_Occurred())
        return NULL;
    if (!rawsz_ok(rawsz)) {
        PyErr_SetString(PyExc_ValueError, "tree_diff_names: rawsz must be 1..64");
        return NULL;
    }
    Py_buffer aview, bview;
    const uint8_t *a, *b;
    Py_ssize_t an, bn;
    if (get_bytes(args[0], &aview, &a, &an) < 0)
        return Py_NewRef(Py_None);
    if (get_bytes(args[1], &bview, &b, &bn) < 0) {
        release_bytes(&aview);
        return Py_NewRef(Py_None);
    }
    PyObject *names = PySet_New(NULL);
    if (names == NULL)
        goto done;
    /* Two versions of a directory mostly share their start and their end:
     * entries wholly inside the common start are the same entries in both
     * (parsed, and checked in order, once), and once the trees agree again
     * after a difference, an identical rest is checked once too. */
    Py_ssize_t common = td_common_prefix(a, b, an < bn ? an : bn);
    Py_ssize_t ap = 0, bp;
    td_entry ea = {0}, eb = {0}, prev = {0};
    int have_prev = 0;
    while (ap < common) {
        Py_ssize_t at = ap;
        if (td_next(a, an, &ap, rawsz, &ea) < 0)
            goto doubt;
        if (ea.end > common) { /* not the same in b: compared below */
            ap = at;
            break;
        }
        if (have_prev && td_order(a, &prev, a, &ea) >= 0)
            goto doubt;
        prev = ea;
        have_prev = 1;
    }
    bp = ap; /* the same offset in b, the same entries before it */
    int ga = td_next(a, an, &ap, rawsz, &ea);
    int gb = td_next(b, bn, &bp, rawsz, &eb);
    if (have_prev && ((ga == 1 && td_order(a, &prev, a, &ea) >= 0) || (gb == 1 && td_order(a, &prev, b, &eb) >= 0)))
        goto doubt;
    int differed = 0; /* a name was added since the trees last agreed */
    while (ga == 1 || gb == 1) {
        if (ga < 0 || gb < 0)
            goto doubt;
        int c = ga != 1 ? 1 : gb != 1 ? -1 : td_order(a, &ea, b, &eb);
        if (c == 0) {
            if (ea.name_n != eb.name_n)
                goto doubt; /* one sort key, two names */
            Py_ssize_t len = ea.end - ea.start;
            if (len != eb.end - eb.start || memcmp(a + ea.start, b + eb.start, (size_t)len) != 0) {
                if (td_add_name(names, a, &ea) < 0)
                    goto fail;
                differed = 1;
            } else if (differed) {
                differed = 0;
                if (an - ea.start == bn - eb.start && memcmp(a + ea.start, b + eb.start, (size_t)(an - ea.start)) == 0) {
                    /* the same rest in both: a's is b's */
                    if (td_check_rest(a, an, &ap, rawsz, &ea) < 0)
                        goto doubt;
                    goto done;
                }
            }
            ga = td_advance(a, an, &ap, rawsz, &ea);
            gb = td_advance(b, bn, &bp, rawsz, &eb);
        } else if (c < 0) {
            if (td_add_name(names, a, &ea) < 0)
                goto fail;
            differed = 1;
            ga = td_advance(a, an, &ap, rawsz, &ea);
        } else {
            if (td_add_name(names, b, &eb) < 0)
                goto fail;
            differed = 1;
            gb = td_advance(b, bn, &bp, rawsz, &eb);
        }
    }
    if (ga < 0 || gb < 0)
        goto doubt;
    goto done;
doubt:
    Py_DECREF(names);
    names = Py_NewRef(Py_None);
    goto done;
fail:
    Py_CLEAR(names);
done:
    release_bytes(&aview);
    release_bytes(&bview);
    return names;
}
/*   tree_entry(data, name, rawsz) -> (mode, name, id) of the first entry
 *       called name (the mode as the tree spells it), () when there is none,
 *       or None unless the whole tree is well-formed (as tree_items accepts
 *       it).  The reference is TreeEntries.entries(tree).get(name) in
 *       core/history/tree_entries.py; one pass, one tuple. */
static PyObject *
native_tree_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "tree_entry(data, name: bytes, rawsz)");
        return NULL;
    }
    Py_ssize_t rawsz = PyLong_AsSsize_t(args[2]);
    if (rawsz == -1 && PyErr_Occurred())
        return NULL;
    if (!rawsz_ok(rawsz)) {
        PyErr_SetString(PyExc_ValueError, "tree_entry: rawsz must be 1..64");
        return NULL;
    }
    Py_buffer view;
    const uint8_t *d;
    Py_ssize_t n;
    if (get_bytes(args[0], &view, &d, &n) < 0)
        return Py_NewRef(Py_None);
    const char *want = PyBytes_AS_STRING(args[1]);
    Py_ssize_t want_n = PyBytes_GET_SIZE(args[1]);
    Py_ssize_t pos = 0, found = -1;
    td_entry e = {0}, hit = {0};
    int got;
    while ((got = td_next(d, n, &pos, rawsz, &e)) == 1) {
        if (found < 0 && e.name_n == want_n && memcmp(d + e.name, want, (size_t)want_n) == 0) {
            found = e.start;
            hit = e;
        }
    }
    PyObject *result;
    if (got < 0)
        result = Py_NewRef(Py_None);
    else if (found < 0)
        result = PyTuple_New(0);
    else
        result = Py_BuildValue("(y#Oy#)", (const char *)(d + hit.start), hit.name - 1 - hit.start, args[1],
                               (const char *)(d + hit.end - rawsz), rawsz);
    release_bytes(&view);
    return result;
}
/*   tree_entry_near(data, name, rawsz) -> (mode, name, id) or None
 *       The first entry called name when it lies in the tree's first eighth
 *       and every entry up to it is well-formed: the answer of
 *       TreeEntries.near (core/history/tree_entries.py, its _scan), the
 *       reference, which reads no further into the tree either.  None for
 *       everything else (an entry further on, none, odd bytes on the way):
 *       the caller asks tree_entry or the reference.  A path-limited walk
 *       asks a root tree for "Documentation" and that for "RelNotes": both
 *       near the start, where a whole pass costs most of the lookup. */
static PyObject *
native_tree_entry_near(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "tree_entry_near(data, name: bytes, rawsz)");
        return NULL;
    }
    Py_ssize_t rawsz = PyLong_AsSsize_t(args[2]);
    if (rawsz == -1 && PyErr_Occurred())
        return NULL;
    if (!rawsz_ok(rawsz)) {
        PyErr_SetString(PyExc_ValueError, "tree_entry_near: rawsz must be 1..64");
        return NULL;
    }
    const char *want = PyBytes_AS_STRING(args[1]);
    Py_ssize_t want_n = PyBytes_GET_SIZE(args[1]);
    if (want_n == 0 || memchr(want, 0, (size_t)want_n) != NULL)
        Py_RETURN_NONE; /* (no entry has such a name: the reference says so) */
    Py_buffer view;
    const uint8_t *d;
    Py_ssize_t n;
    if (get_bytes(args[0], &view, &d, &n) < 0)
        Py_RETURN_NONE;
    Py_ssize_t limit = n >> 3, pos = 0;
    td_entry e = {0};
    PyObject *result = NULL;
    while (td_next(d, n, &pos, rawsz, &e) == 1 && e.name - 1 <= limit) {
        if (e.name_n == want_n && memcmp(d + e.name, want, (size_t)want_n) == 0) {
            result = Py_BuildValue("(y#Oy#)", (const char *)(d + e.start), e.name - 1 - e.start, args[1],
                                   (const char *)(d + e.end - rawsz), rawsz);
            break;
        }
    }
    release_bytes(&view);
    if (result == NULL && !PyErr_Occurred())
        result = Py_NewRef(Py_None);
    return result;
}
/* --- end of tree_diff_names, tree_entry, tree_entry_near ---------------------- */
