/* packscope.core._native: optional compiled versions of core's hottest
 * byte loops.  The pure-Python code is the reference and the fallback
 * (core/store/delta.py); this module only ever answers what the reference
 * would answer, and on any doubt hands the input over to it.
 *
 * Delta application (gitformat-pack, "Deltified representation"):
 *
 *   try_apply_delta(base, delta, max_size) -> bytes, or None when the delta
 *       is not valid for this base (or anything else is unexpected);
 *   apply_delta(base, delta, max_size=4 GiB) -> bytes; on doubt it calls the
 *       fallback set with set_delta_fallback(func) with the same arguments,
 *       so every error (kind, offset, message) comes from the reference.
 *
 * Tree entries and commit headers: tree_items and commit_header (below),
 * the references being in core/objects.py; pack entry headers:
 * entry_header, the reference being core/store/pack.py.
 *
 * The input is hostile until proven otherwise: the header's sizes are 64-bit
 * varints (more than 63 bits is refused), every read of the delta is checked
 * against its length, every copy against the base, and the instruction
 * stream is validated completely (its sizes add up to the declared result
 * size) before the result is allocated, so a corrupt delta can never make
 * us allocate what it merely declares.  Sizes are kept in uint64_t: an
 * offset is below 2^32 and a copy size below 2^24, so offset + size cannot
 * wrap, and the declared sizes are compared, never added.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define COPY_ZERO_SIZE 0x10000u
#define DEFAULT_MAX_RESULT (4ull << 30)

/* Argument bytes that follow a copy opcode: the number of bits set in its
 * low seven bits.  Filled at module init. */
static uint8_t copy_arg_bytes[128];

static PyObject *delta_fallback = NULL; /* the reference, set by delta.py */
static PyObject *default_max_size = NULL;

/* A size varint at *pos: 0 and the value, or -1 if it runs past the end
 * or needs a byte at bit 63 or beyond (as the reference refuses). */
static int
read_size(const uint8_t *d, Py_ssize_t n, Py_ssize_t *pos, uint64_t *out)
{
    uint64_t value = 0;
    unsigned shift = 0;
    Py_ssize_t p = *pos;
    for (;;) {
        if (p >= n)
            return -1;
        uint8_t c = d[p++];
        value |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80))
            break;
        shift += 7;
        if (shift > 56)
            return -1;
    }
    *pos = p;
    *out = value;
    return 0;
}

/* A copy's offset and size from its argument bytes at a (the caller has
 * checked that all copy_arg_bytes[op & 0x7F] of them are there). */
static inline void
copy_fields(uint8_t op, const uint8_t *a, uint64_t *off, uint64_t *size)
{
    uint32_t o = 0, s = 0;
    if (op & 0x01) o = *a++;
    if (op & 0x02) o |= (uint32_t)*a++ << 8;
    if (op & 0x04) o |= (uint32_t)*a++ << 16;
    if (op & 0x08) o |= (uint32_t)*a++ << 24;
    if (op & 0x10) s = *a++;
    if (op & 0x20) s |= (uint32_t)*a++ << 8;
    if (op & 0x40) s |= (uint32_t)*a << 16;
    *off = o;
    *size = s ? s : COPY_ZERO_SIZE;
}

/* Both passes over the instructions from pos, in one walk:
 *
 *   out == NULL (pass 1): every instruction is whole, every copy inside the
 *       base, none writes past result_size and they add up to it exactly;
 *   out != NULL (pass 2): the same, writing the result into out.  Pass 1 has
 *       proven every bound; they are checked again anyway (cheap next to the
 *       copies) so that this pass is safe on its own.
 *
 * Returns 0, or -1 if a bound fails.  Always inline: each caller passes a
 * constant out, so each gets its own loop without the out tests. */
static inline __attribute__((always_inline)) int
walk_instructions(const uint8_t *d, Py_ssize_t n, Py_ssize_t pos, const uint8_t *base, uint64_t base_size,
                  uint8_t *out, uint64_t result_size)
{
    uint64_t remaining = result_size;
    while (pos < n) {
        uint8_t op = d[pos++];
        if (op & 0x80) {
            Py_ssize_t k = copy_arg_bytes[op & 0x7F];
            uint64_t off, size;
            if (k > n - pos)
                return -1;
            copy_fields(op, d + pos, &off, &size);
            pos += k;
            if (off + size > base_size || size > remaining)
                return -1;
            if (out != NULL)
                memcpy(out + (result_size - remaining), base + off, (size_t)size);
            remaining -= size;
        }
        else if (op) {
            if ((Py_ssize_t)op > n - pos || op > remaining)
                return -1;
            if (out != NULL)
                memcpy(out + (result_size - remaining), d + pos, op);
            pos += op;
            remaining -= op;
        }
        else {
            return -1; /* opcode 0 is reserved */
        }
    }
    return remaining == 0 ? 0 : -1;
}

static int
check_instructions(const uint8_t *d, Py_ssize_t n, Py_ssize_t pos, uint64_t base_size, uint64_t result_size)
{
    return walk_instructions(d, n, pos, NULL, base_size, NULL, result_size);
}

static int
write_result(const uint8_t *d, Py_ssize_t n, Py_ssize_t pos, const uint8_t *base, uint64_t base_size, uint8_t *out,
             uint64_t result_size)
{
    return walk_instructions(d, n, pos, base, base_size, out, result_size);
}

/* Bytes of a buffer-like object: bytes directly, anything else through the
 * buffer protocol (released by release_bytes).  0, or -1 with no error set
 * if the object has no suitable buffer. */
static int
get_bytes(PyObject *obj, Py_buffer *view, const uint8_t **data, Py_ssize_t *len)
{
    if (PyBytes_CheckExact(obj)) {
        view->obj = NULL;
        *data = (const uint8_t *)PyBytes_AS_STRING(obj);
        *len = PyBytes_GET_SIZE(obj);
        return 0;
    }
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        return -1;
    }
    /* len() of a memoryview counts items: only byte items mean the same. */
    if (view->itemsize != 1) {
        PyBuffer_Release(view);
        view->obj = NULL;
        return -1;
    }
    *data = (const uint8_t *)view->buf;
    *len = view->len;
    return 0;
}

static void
release_bytes(Py_buffer *view)
{
    if (view->obj != NULL)
        PyBuffer_Release(view);
}

/* The result bytes (new reference), Py_None (new reference) on doubt, or
 * NULL with an exception set (only MemoryError). */
static PyObject *
apply_or_none(PyObject *base_obj, PyObject *delta_obj, PyObject *max_obj)
{
    uint64_t max_size;
    if (max_obj == NULL) {
        max_size = DEFAULT_MAX_RESULT;
    }
    else {
        int overflow = 0;
        long long m = PyLong_Check(max_obj) ? PyLong_AsLongLongAndOverflow(max_obj, &overflow) : -1;
        if (m == -1 && PyErr_Occurred())
            PyErr_Clear();
        if (overflow > 0)
            max_size = UINT64_MAX;
        else if (overflow < 0 || m < 0)
            Py_RETURN_NONE; /* not a plain non-negative int: the reference decides */
        else
            max_size = (uint64_t)m;
    }

    Py_buffer bview, dview;
    const uint8_t *base, *d;
    Py_ssize_t base_len, n;
    if (get_bytes(base_obj, &bview, &base, &base_len) < 0)
        Py_RETURN_NONE;
    if (get_bytes(delta_obj, &dview, &d, &n) < 0) {
        release_bytes(&bview);
        Py_RETURN_NONE;
    }

    PyObject *result = NULL;
    Py_ssize_t pos = 0;
    uint64_t base_size, result_size;
    if (read_size(d, n, &pos, &base_size) < 0 || read_size(d, n, &pos, &result_size) < 0)
        goto doubt;
    if (base_size != (uint64_t)base_len || result_size > max_size || result_size > (uint64_t)PY_SSIZE_T_MAX)
        goto doubt;
    if (check_instructions(d, n, pos, base_size, result_size) < 0)
        goto doubt;
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)result_size);
    if (result == NULL)
        goto done; /* MemoryError */
    if (write_result(d, n, pos, base, base_size, (uint8_t *)PyBytes_AS_STRING(result), result_size) < 0) {
        Py_CLEAR(result);
        goto doubt;
    }
    goto done;
doubt:
    result = Py_NewRef(Py_None);
done:
    release_bytes(&dview);
    release_bytes(&bview);
    return result;
}

/* (base, delta, max_size) from positional and keyword arguments, the
 * reference's signature: apply_delta(base, delta, max_size=...). */
static int
delta_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int need_max, PyObject **out)
{
    static const char *const names[3] = {"base", "delta", "max_size"};
    out[0] = out[1] = out[2] = NULL;
    if (nargs > 3) {
        PyErr_Format(PyExc_TypeError, "apply_delta() takes at most 3 arguments (%zd given)", nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        int slot = -1;
        for (int j = 0; j < 3; j++) {
            if (PyUnicode_CompareWithASCIIString(key, names[j]) == 0)
                slot = j;
        }
        if (slot < 0 || out[slot] != NULL) {
            PyErr_Format(PyExc_TypeError, "apply_delta() got an unexpected or repeated argument %R", key);
            return -1;
        }
        out[slot] = args[nargs + i];
    }
    if (out[0] == NULL || out[1] == NULL || (need_max && out[2] == NULL)) {
        PyErr_SetString(PyExc_TypeError, "apply_delta() needs base and delta (and max_size)");
        return -1;
    }
    return 0;
}

static PyObject *
native_apply_delta(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[3];
    if (delta_args(args, nargs, kwnames, 0, a) < 0)
        return NULL;
    PyObject *result = apply_or_none(a[0], a[1], a[2]);
    if (result != Py_None)
        return result;
    Py_DECREF(result);
    if (delta_fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "packscope.core._native: no delta fallback set");
        return NULL;
    }
    PyObject *call[3] = {a[0], a[1], a[2] ? a[2] : default_max_size};
    return PyObject_Vectorcall(delta_fallback, call, 3, NULL);
}

static PyObject *
native_try_apply_delta(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[3];
    if (delta_args(args, nargs, kwnames, 1, a) < 0)
        return NULL;
    return apply_or_none(a[0], a[1], a[2]);
}

static PyObject *
native_set_delta_fallback(PyObject *self, PyObject *func)
{
    if (!PyCallable_Check(func)) {
        PyErr_SetString(PyExc_TypeError, "the delta fallback must be callable");
        return NULL;
    }
    Py_XSETREF(delta_fallback, Py_NewRef(func));
    Py_RETURN_NONE;
}

/* The (data, size) call of tree_items and commit_header.  1: data's bytes
 * in *d and *n (held by view: release_bytes it) and the size in *size;
 * 0: data has no byte buffer (the caller answers None); -1 with TypeError
 * (usage) for a wrong call, or ValueError (bad_size) for a size that
 * size_ok refuses. */
static int
data_and_size(PyObject *const *args, Py_ssize_t nargs, const char *usage, int (*size_ok)(Py_ssize_t),
              const char *bad_size, Py_ssize_t *size, Py_buffer *view, const uint8_t **d, Py_ssize_t *n)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    *size = PyLong_AsSsize_t(args[1]);
    if (*size == -1 && PyErr_Occurred())
        return -1;
    if (!size_ok(*size)) {
        PyErr_SetString(PyExc_ValueError, bad_size);
        return -1;
    }
    return get_bytes(args[0], view, d, n) < 0 ? 0 : 1;
}

static int
rawsz_ok(Py_ssize_t rawsz)
{
    return rawsz > 0 && rawsz <= 64;
}

static int
hexsz_ok(Py_ssize_t hexsz)
{
    return hexsz == 40 || hexsz == 64;
}

/* Tree entries (gitformat: "<octal mode> <name>\0<raw id>" repeated):
 *
 *   tree_items(data, rawsz) -> [(mode, name, id), ...], or None unless every
 *       byte belongs to a well-formed entry (what the pure path's one regex
 *       fullmatch accepts); the caller's careful pure loop then says where
 *       it breaks.  The mode wraps at 32 bits as git's get_mode does. */
static PyObject *
native_tree_items(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t rawsz, n;
    Py_buffer view;
    const uint8_t *d;
    int got = data_and_size(args, nargs, "tree_items(data, rawsz)", rawsz_ok, "tree_items: rawsz must be 1..64",
                            &rawsz, &view, &d, &n);
    if (got <= 0)
        return got < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *items = PyList_New(0);
    if (items == NULL)
        goto done;
    Py_ssize_t pos = 0;
    while (pos < n) {
        Py_ssize_t start = pos;
        uint32_t mode = 0;
        while (pos < n && d[pos] >= '0' && d[pos] <= '7') {
            mode = mode * 8u + (uint32_t)(d[pos] - '0');
            pos++;
        }
        if (pos == start || pos >= n || d[pos] != ' ')
            goto doubt;
        pos++;
        const uint8_t *nul = memchr(d + pos, 0, (size_t)(n - pos));
        if (nul == NULL || nul == d + pos)
            goto doubt; /* no end to the name, or an empty name */
        Py_ssize_t name_end = nul - d;
        if (n - (name_end + 1) < rawsz)
            goto doubt; /* the id is cut short */
        PyObject *entry = Py_BuildValue("(ky#y#)", (unsigned long)mode, (const char *)(d + pos),
                                        name_end - pos, (const char *)(nul + 1), rawsz);
        if (entry == NULL || PyList_Append(items, entry) < 0) {
            Py_XDECREF(entry);
            Py_CLEAR(items);
            goto done;
        }
        Py_DECREF(entry);
        pos = name_end + 1 + rawsz;
    }
    goto done;
doubt:
    Py_DECREF(items);
    items = Py_NewRef(Py_None);
done:
    release_bytes(&view);
    return items;
}

/* A commit's header in its common shape (the pure reference is the regex of
 * objects.commit_header_regex and commit_header_fields):
 *
 *   commit_header(data, hexsz) -> (tree, (parents...), commit_time), or None
 *       when that regex would not match at the start of data: "tree <hex>\n",
 *       any "parent <hex>\n" lines, an author line, then a committer line
 *       whose first '>' is followed by spaces, digits, a space, the rest of
 *       the line and at least one more byte.  Ids come back raw; a time of 20
 *       or more digits saturates at 2^64 - 1. */
static int
hex_digit(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* hexsz hex digits at s as a new bytes object; NULL without an error set
 * when they are not all hex. */
static PyObject *
raw_id(const uint8_t *s, Py_ssize_t hexsz)
{
    uint8_t raw[32];
    for (Py_ssize_t i = 0; i < hexsz; i += 2) {
        int hi = hex_digit(s[i]), lo = hex_digit(s[i + 1]);
        if (hi < 0 || lo < 0)
            return NULL;
        raw[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    return PyBytes_FromStringAndSize((const char *)raw, hexsz / 2);
}

static int
starts(const uint8_t *d, Py_ssize_t n, Py_ssize_t pos, const char *word)
{
    size_t len = strlen(word);
    return n - pos >= (Py_ssize_t)len && memcmp(d + pos, word, len) == 0;
}

static PyObject *
native_commit_header(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t hexsz, n;
    Py_buffer view;
    const uint8_t *d;
    int got = data_and_size(args, nargs, "commit_header(data, hexsz)", hexsz_ok,
                            "commit_header: hexsz must be 40 or 64", &hexsz, &view, &d, &n);
    if (got <= 0)
        return got < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *tree = NULL, *parents = NULL, *result = NULL;
    Py_ssize_t pos = 0;
    if (!starts(d, n, 0, "tree ") || n - 5 < hexsz + 1 || d[5 + hexsz] != '\n')
        goto doubt;
    tree = raw_id(d + 5, hexsz);
    if (tree == NULL)
        goto fail_or_doubt;
    pos = 5 + hexsz + 1;
    parents = PyList_New(0);
    if (parents == NULL)
        goto done;
    while (starts(d, n, pos, "parent ")) {
        if (n - pos - 7 < hexsz + 1 || d[pos + 7 + hexsz] != '\n')
            goto doubt;
        PyObject *p = raw_id(d + pos + 7, hexsz);
        if (p == NULL)
            goto fail_or_doubt;
        int bad = PyList_Append(parents, p);
        Py_DECREF(p);
        if (bad < 0)
            goto done;
        pos += 7 + hexsz + 1;
    }
    if (!starts(d, n, pos, "author"))
        goto doubt;
    const uint8_t *nl = memchr(d + pos, '\n', (size_t)(n - pos));
    if (nl == NULL)
        goto doubt;
    pos = nl - d + 1;
    if (!starts(d, n, pos, "committer"))
        goto doubt;
    pos += 9;
    while (pos < n && d[pos] != '>' && d[pos] != '\n')
        pos++;
    if (pos >= n || d[pos] != '>')
        goto doubt;
    pos++;
    while (pos < n && d[pos] == ' ')
        pos++;
    Py_ssize_t digits = pos;
    uint64_t when = 0;
    int saturated = 0;
    while (pos < n && d[pos] >= '0' && d[pos] <= '9') {
        uint64_t digit = (uint64_t)(d[pos] - '0');
        if (when > (UINT64_MAX - digit) / 10)
            saturated = 1;
        else
            when = when * 10 + digit;
        pos++;
    }
    if (pos == digits || pos >= n || d[pos] != ' ')
        goto doubt;
    nl = memchr(d + pos, '\n', (size_t)(n - pos));
    if (nl == NULL || nl - d + 1 >= n)
        goto doubt; /* git also wants a byte after the committer line */
    PyObject *ptuple = PyList_AsTuple(parents);
    if (ptuple == NULL)
        goto done;
    result = Py_BuildValue("(ONK)", tree, ptuple, (unsigned long long)(saturated ? UINT64_MAX : when));
    goto done;
fail_or_doubt:
    if (PyErr_Occurred())
        goto done;
doubt:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(tree);
    Py_XDECREF(parents);
    release_bytes(&view);
    return result;
}

/* A pack entry's header (gitformat-pack; the pure reference is
 * Pack._header_py in core/store/pack.py):
 *
 *   entry_header(pack, offset, data_end, rawsz)
 *       -> (type, size, data offset, base offset or None, base id or None),
 *       or None for anything the reference would refuse or compute in big
 *       integers (then it decides).  Like the reference it reads at most
 *       ENTRY_PEEK bytes from offset, and the header must end by data_end. */
#define ENTRY_PEEK 64

static PyObject *
native_entry_header(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "entry_header(pack, offset, data_end, rawsz)");
        return NULL;
    }
    long long offset = PyLong_AsLongLong(args[1]);
    long long end = PyLong_AsLongLong(args[2]);
    Py_ssize_t rawsz = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (rawsz <= 0 || rawsz > 32 || offset < 12 || offset >= end)
        Py_RETURN_NONE;
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n;
    if (get_bytes(args[0], &view, &m, &n) < 0)
        Py_RETURN_NONE;
    PyObject *result = NULL;
    if (offset >= n)
        goto doubt;
    const uint8_t *d = m + offset;
    Py_ssize_t avail = n - (Py_ssize_t)offset < ENTRY_PEEK ? n - (Py_ssize_t)offset : ENTRY_PEEK;
    Py_ssize_t i = 1;
    uint8_t c = d[0];
    int type = (c >> 4) & 7;
    uint64_t size = c & 15;
    unsigned shift = 4;
    while (c & 0x80) {
        if (i >= avail || shift > 57)
            goto doubt; /* truncated, or a size beyond 64 bits: the reference decides */
        c = d[i++];
        size |= (uint64_t)(c & 0x7F) << shift;
        shift += 7;
    }
    PyObject *base_offset = NULL, *base_id = NULL;
    if (type >= 1 && type <= 4) {
        base_offset = Py_NewRef(Py_None);
        base_id = Py_NewRef(Py_None);
    }
    else if (type == 6) {
        if (i >= avail)
            goto doubt;
        c = d[i++];
        uint64_t distance = c & 0x7F;
        while (c & 0x80) {
            if (i >= avail || distance >= (1ull << 50))
                goto doubt;
            c = d[i++];
            distance = ((distance + 1) << 7) | (c & 0x7F);
        }
        if (distance == 0 || distance > (uint64_t)offset || (uint64_t)offset - distance < 12)
            goto doubt;
        base_offset = PyLong_FromLongLong(offset - (long long)distance);
        if (base_offset == NULL)
            goto done;
        base_id = Py_NewRef(Py_None);
    }
    else if (type == 7) {
        if (avail - i < rawsz)
            goto doubt;
        base_id = PyBytes_FromStringAndSize((const char *)(d + i), rawsz);
        if (base_id == NULL)
            goto done;
        i += rawsz;
        base_offset = Py_NewRef(Py_None);
    }
    else {
        goto doubt;
    }
    if (offset + i > end) {
        Py_DECREF(base_offset);
        Py_DECREF(base_id);
        goto doubt;
    }
    result = Py_BuildValue("(iKLNN)", type, (unsigned long long)size, offset + (long long)i, base_offset, base_id);
    goto done;
doubt:
    result = Py_NewRef(Py_None);
done:
    release_bytes(&view);
    return result;
}

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
/* --- end of tree_diff_names, tree_entry -------------------------------------- */

/* ---- fsck's id set (core/fsck/reach.py; the pure reference is a set of bytes) ----
 *
 *   id_set(rawsz) -> IdSet: a set of raw object ids of one width, the
 *       keys held inline (open addressing): add(oid), oid in s, len(s),
 *       s.clear().  The walk's "seen" set: git.git's 849k ids in ~40 MB
 *       instead of ~70, and tree_unseen asks it about an entry without
 *       making a bytes object of the entry's id. */

typedef struct {
    PyObject_HEAD
    Py_ssize_t rawsz, cap, len; /* cap: a power of two, or 0 before the first add */
    uint8_t *keys;              /* cap * rawsz bytes; all zero: an empty slot */
    int has_null;               /* the null id (all zero) is in the set: kept aside */
} IdSetObject;

static int
idset_empty_slot(const uint8_t *slot, Py_ssize_t rawsz)
{
    uint64_t w;
    memcpy(&w, slot, 8); /* rawsz is at least 8 in every set made (id_set) */
    if (w)
        return 0;
    for (Py_ssize_t i = 8; i < rawsz; i++)
        if (slot[i])
            return 0;
    return 1;
}

static int
idset_is_null(const uint8_t *id, Py_ssize_t rawsz)
{
    return idset_empty_slot(id, rawsz);
}

static uint64_t
idset_hash(const uint8_t *id, Py_ssize_t rawsz)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    Py_ssize_t i = 0;
    for (; i + 8 <= rawsz; i += 8) {
        uint64_t w;
        memcpy(&w, id + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    for (; i < rawsz; i++)
        h = (h ^ id[i]) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

/* The slot holding id (not the null id), or the empty slot where it would go. */
static Py_ssize_t
idset_slot(const IdSetObject *s, const uint8_t *id)
{
    Py_ssize_t mask = s->cap - 1, i = (Py_ssize_t)(idset_hash(id, s->rawsz) & (uint64_t)mask);
    for (;;) {
        const uint8_t *slot = s->keys + i * s->rawsz;
        if (memcmp(slot, id, (size_t)s->rawsz) == 0 || idset_empty_slot(slot, s->rawsz))
            return i;
        i = (i + 1) & mask;
    }
}

static int
idset_contains_raw(const IdSetObject *s, const uint8_t *id)
{
    if (idset_is_null(id, s->rawsz))
        return s->has_null;
    return s->cap && !idset_empty_slot(s->keys + idset_slot(s, id) * s->rawsz, s->rawsz);
}

static int
idset_grow(IdSetObject *s)
{
    Py_ssize_t cap = s->cap ? s->cap * 2 : 1024;
    uint8_t *keys = PyMem_Calloc((size_t)cap, (size_t)s->rawsz);
    if (keys == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    IdSetObject grown = *s;
    grown.cap = cap;
    grown.keys = keys;
    for (Py_ssize_t i = 0; i < s->cap; i++) {
        const uint8_t *key = s->keys + i * s->rawsz;
        if (!idset_empty_slot(key, s->rawsz))
            memcpy(keys + idset_slot(&grown, key) * s->rawsz, key, (size_t)s->rawsz);
    }
    PyMem_Free(s->keys);
    s->keys = keys;
    s->cap = cap;
    return 0;
}

/* 1 if added, 0 if there already, -1 on error. */
static int
idset_add_raw(IdSetObject *s, const uint8_t *id)
{
    if (idset_is_null(id, s->rawsz)) {
        if (s->has_null)
            return 0;
        s->has_null = 1;
        s->len++;
        return 1;
    }
    if ((s->len + 1) * 2 > s->cap && idset_grow(s) < 0)
        return -1;
    uint8_t *slot = s->keys + idset_slot(s, id) * s->rawsz;
    if (!idset_empty_slot(slot, s->rawsz))
        return 0;
    memcpy(slot, id, (size_t)s->rawsz);
    s->len++;
    return 1;
}

static void
idset_free(IdSetObject *s)
{
    PyMem_Free(s->keys);
    s->keys = NULL;
    s->cap = s->len = 0;
    s->has_null = 0;
}

static void
idset_dealloc(PyObject *self)
{
    idset_free((IdSetObject *)self);
    Py_TYPE(self)->tp_free(self);
}

/* The id's bytes if key is bytes of the set's width; NULL (no error) otherwise. */
static const uint8_t *
idset_key(const IdSetObject *s, PyObject *key)
{
    if (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) != s->rawsz)
        return NULL;
    return (const uint8_t *)PyBytes_AS_STRING(key);
}

static int
idset_sq_contains(PyObject *self, PyObject *key)
{
    const IdSetObject *s = (const IdSetObject *)self;
    const uint8_t *id = idset_key(s, key);
    return id != NULL && idset_contains_raw(s, id);
}

static Py_ssize_t
idset_length(PyObject *self)
{
    return ((IdSetObject *)self)->len;
}

static PyObject *
idset_add(PyObject *self, PyObject *key)
{
    IdSetObject *s = (IdSetObject *)self;
    const uint8_t *id = idset_key(s, key);
    if (id == NULL) {
        PyErr_Format(PyExc_TypeError, "IdSet.add: an id is bytes of length %zd", s->rawsz);
        return NULL;
    }
    if (idset_add_raw(s, id) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
idset_clear(PyObject *self, PyObject *unused)
{
    idset_free((IdSetObject *)self);
    Py_RETURN_NONE;
}

static PyObject *
idset_update(PyObject *self, PyObject *iterable)
{
    IdSetObject *s = (IdSetObject *)self;
    PyObject *it = PyObject_GetIter(iterable), *item;
    if (it == NULL)
        return NULL;
    while ((item = PyIter_Next(it)) != NULL) {
        const uint8_t *id = idset_key(s, item);
        int added = id == NULL ? -2 : idset_add_raw(s, id);
        Py_DECREF(item);
        if (added < 0) {
            if (added == -2)
                PyErr_Format(PyExc_TypeError, "IdSet.update: an id is bytes of length %zd", s->rawsz);
            Py_DECREF(it);
            return NULL;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
idset_update_joined(PyObject *self, PyObject *arg)
{
    IdSetObject *s = (IdSetObject *)self;
    Py_buffer view;
    const uint8_t *d;
    Py_ssize_t n;
    if (get_bytes(arg, &view, &d, &n) < 0) {
        PyErr_SetString(PyExc_TypeError, "IdSet.update_joined: ids back to back, bytes-like");
        return NULL;
    }
    PyObject *out = NULL;
    if (n % s->rawsz) {
        PyErr_SetString(PyExc_ValueError, "IdSet.update_joined: not a whole number of ids");
        goto done;
    }
    for (Py_ssize_t at = 0; at < n; at += s->rawsz)
        if (idset_add_raw(s, d + at) < 0)
            goto done;
    out = Py_NewRef(Py_None);
done:
    release_bytes(&view);
    return out;
}

static PyObject *
idset_joined(PyObject *self, PyObject *unused)
{
    IdSetObject *s = (IdSetObject *)self;
    PyObject *out = PyBytes_FromStringAndSize(NULL, s->len * s->rawsz);
    if (out == NULL)
        return NULL;
    uint8_t *w = (uint8_t *)PyBytes_AS_STRING(out);
    if (s->has_null) {
        memset(w, 0, (size_t)s->rawsz);
        w += s->rawsz;
    }
    for (Py_ssize_t i = 0; i < s->cap; i++) {
        const uint8_t *key = s->keys + i * s->rawsz;
        if (!idset_empty_slot(key, s->rawsz)) {
            memcpy(w, key, (size_t)s->rawsz);
            w += s->rawsz;
        }
    }
    return out;
}

static PyMethodDef idset_methods[] = {
    {"add", idset_add, METH_O, "add(oid): put a raw id of the set's width in the set."},
    {"clear", idset_clear, METH_NOARGS, "clear(): empty the set and free its table."},
    {"update", idset_update, METH_O, "update(ids): add every raw id of an iterable."},
    {"update_joined", idset_update_joined, METH_O, "update_joined(data): add the ids data holds back to back."},
    {"joined", idset_joined, METH_NOARGS, "joined() -> bytes: every id of the set back to back (in no order)."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods idset_as_sequence = {
    .sq_length = idset_length,
    .sq_contains = idset_sq_contains,
};

static PyTypeObject IdSetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packscope.core._native.IdSet",
    .tp_basicsize = sizeof(IdSetObject),
    .tp_dealloc = idset_dealloc,
    .tp_as_sequence = &idset_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A set of raw object ids of one width (see id_set).",
    .tp_methods = idset_methods,
};

static PyObject *
native_id_set(PyObject *self, PyObject *arg)
{
    Py_ssize_t rawsz = PyLong_AsSsize_t(arg);
    if (rawsz == -1 && PyErr_Occurred())
        return NULL;
    if (rawsz < 8 || rawsz > 64) {
        PyErr_SetString(PyExc_ValueError, "id_set: rawsz must be 8..64");
        return NULL;
    }
    if (!(IdSetType.tp_flags & Py_TPFLAGS_READY) && PyType_Ready(&IdSetType) < 0)
        return NULL;
    IdSetObject *s = PyObject_New(IdSetObject, &IdSetType);
    if (s == NULL)
        return NULL;
    s->rawsz = rawsz;
    s->cap = s->len = 0;
    s->keys = NULL;
    s->has_null = 0;
    return (PyObject *)s;
}
/* ---- end of fsck's id set ---- */

/* ---- fsck's tree checks (core/fsck/syntax.py and reach.py hold the pure references) ----
 *
 *   fsck_tree(data, rawsz) -> (flags, ids, candidates)
 *       flags: 0 when the tree is clean as syntax._tree_is_clean decides it
 *       (then ids: the ids of its entries other than gitlinks, a tuple);
 *       else FT_* bits naming what syntax.check_tree_closely reports (git's
 *       message ids), plus the LOOK bits for what only the pure path can
 *       decide (names that may fold to .git or a special name outside
 *       ASCII, an unusual mode, a budget exceeded), and ids is None.
 *       candidates: when every entry parsed, [(mode, name, id)] of the
 *       entries whose name may be .gitmodules/.gitattributes (what
 *       special_blobs.add_tree looks at closely), else None.
 *   tree_unseen(data, rawsz, seen) -> [(id, is_tree), ...] of the entries
 *       (directories, files, symlinks; not gitlinks) whose id is not in the
 *       set seen, in tree order; None unless every entry parses. */

#define FT_BAD_TREE 0x1
#define FT_NULL_SHA1 0x2
#define FT_FULL_PATHNAME 0x4
#define FT_HAS_DOT 0x8
#define FT_HAS_DOTDOT 0x10
#define FT_HAS_DOTGIT 0x20
#define FT_ZERO_PADDED 0x40
#define FT_BAD_FILEMODE 0x80
#define FT_SYMLINK_SPECIAL 0x100
#define FT_DUPLICATE 0x200
#define FT_NOT_SORTED 0x400
#define FT_LOOK_NAME 0x800 /* a name only the pure path can fold (non-ASCII) */
#define FT_LOOK_MODE 0x1000 /* a mode spelled otherwise than git writes it */
#define FT_LOOK_BUDGET 0x2000 /* duplicate search given up (huge unsorted tree) */

typedef struct {
    Py_ssize_t name, len;
    int dir, gitlink;
} ft_entry;

/* The byte at i of an entry's sort key (its name, then '/' for a directory), -1 past its end. */
static inline int
ft_key_at(const uint8_t *d, const ft_entry *e, Py_ssize_t i)
{
    return i < e->len ? d[e->name + i] : (e->dir && i == e->len ? '/' : -1);
}

/* Compare two entries as git orders them (a directory as if its name ended in '/'). */
static int
ft_key_cmp(const uint8_t *d, const ft_entry *a, const ft_entry *b)
{
    Py_ssize_t m = a->len < b->len ? a->len : b->len;
    int c = memcmp(d + a->name, d + b->name, (size_t)m);
    if (c)
        return c;
    for (Py_ssize_t i = m;; i++) {
        int x = ft_key_at(d, a, i), y = ft_key_at(d, b, i);
        if (x != y || x < 0)
            return x - y;
    }
}

static int
ft_same_name(const uint8_t *d, const ft_entry *a, const ft_entry *b)
{
    return a->len == b->len && memcmp(d + a->name, d + b->name, (size_t)a->len) == 0;
}

static uint8_t
ft_lower(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c | 0x20) : c;
}

static int
ft_ieq(const uint8_t *s, Py_ssize_t n, const char *word)
{
    Py_ssize_t k = (Py_ssize_t)strlen(word);
    if (n != k)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (ft_lower(s[i]) != (uint8_t)word[i])
            return 0;
    return 1;
}

/* tree_entries._folds_to for an ASCII name: the name itself, or its NTFS
 * spelling (cut at ':', trailing spaces and dots dropped), case folded,
 * equal to target or to the short name. */
static int
ft_ascii_folds_to(const uint8_t *s, Py_ssize_t n, const char *target, const char *shortname)
{
    if (ft_ieq(s, n, target))
        return 1;
    const uint8_t *colon = memchr(s, ':', (size_t)n);
    Py_ssize_t k = colon ? colon - s : n;
    while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '.'))
        k--;
    return ft_ieq(s, k, target) || ft_ieq(s, k, shortname);
}

/* A code point HFS+ ignores (tree_entries.HFS_IGNORED), UTF-8 encoded, somewhere in s. */
static int
ft_has_hfs_ignorable(const uint8_t *s, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i + 2 < n; i++) {
        if (s[i] == 0xE2) {
            uint8_t b = s[i + 1], c = s[i + 2];
            if ((b == 0x80 && ((c >= 0x8C && c <= 0x8F) || (c >= 0xAA && c <= 0xAE))) ||
                (b == 0x81 && c >= 0xAA && c <= 0xAF))
                return 1;
        } else if (s[i] == 0xEF && s[i + 1] == 0xBB && s[i + 2] == 0xBF) {
            return 1;
        }
    }
    return 0;
}

/* What one pass over a name finds (the checks below look closer only when it says so). */
#define FN_HIGH 0x1 /* a byte >= 0x80 */
#define FN_E2EF 0x2 /* 0xE2 or 0xEF: HFS+ ignorables' lead bytes */
#define FN_GIT 0x4 /* "git", any case */
#define FN_SPECIAL 0x8 /* "gitmod", "gitatt", "gi7eba", "gi7d29" (any case): special_blobs' candidates */
#define FN_SLASH 0x10

static int
ft_name_scan(const uint8_t *s, Py_ssize_t n)
{
    int out = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c >= 0x80) {
            out |= FN_HIGH;
            if (c == 0xE2 || c == 0xEF)
                out |= FN_E2EF;
        } else if (c == '/') {
            out |= FN_SLASH;
        } else if ((c | 0x20) == 'g' && i + 2 < n && (s[i + 1] | 0x20) == 'i') {
            uint8_t t = ft_lower(s[i + 2]);
            if (t == 't') {
                out |= FN_GIT;
                if (i + 5 < n) {
                    uint8_t a = ft_lower(s[i + 3]), b = ft_lower(s[i + 4]), e = ft_lower(s[i + 5]);
                    if ((a == 'm' && b == 'o' && e == 'd') || (a == 'a' && b == 't' && e == 't'))
                        out |= FN_SPECIAL;
                }
            } else if (t == '7' && i + 5 < n) {
                uint8_t a = ft_lower(s[i + 3]), b = ft_lower(s[i + 4]), e = ft_lower(s[i + 5]);
                if ((a == 'e' && b == 'b' && e == 'a') || (a == 'd' && b == '2' && e == '9'))
                    out |= FN_SPECIAL;
            }
        }
    }
    return out;
}

/* One entry: mode (wrapped at 32 bits), where its mode text, name and id are. 0 at a malformed entry. */
static int
ft_parse(const uint8_t *d, Py_ssize_t n, Py_ssize_t rawsz, Py_ssize_t *pos, uint32_t *mode, Py_ssize_t *name,
         Py_ssize_t *name_len)
{
    Py_ssize_t p = *pos, start = p;
    uint32_t m = 0;
    while (p < n && d[p] >= '0' && d[p] <= '7') {
        m = m * 8u + (uint32_t)(d[p] - '0');
        p++;
    }
    if (p == start || p >= n || d[p] != ' ')
        return 0;
    p++;
    const uint8_t *nul = memchr(d + p, 0, (size_t)(n - p));
    if (nul == NULL || nul == d + p)
        return 0;
    Py_ssize_t end = nul - d;
    if (n - (end + 1) < rawsz)
        return 0;
    *mode = m;
    *name = p;
    *name_len = end - p;
    *pos = end + 1 + rawsz;
    return 1;
}

static const char *const ft_specials[4][2] = {
    {".gitmodules", "gitmod~1"},
    {".gitattributes", "gitatt~1"},
    {".gitignore", "gitign~1"},
    {".mailmap", "mailma~1"},
};

#define FT_DUP_BUDGET (1 << 22) /* name comparisons for duplicates in an unsorted tree */

static PyObject *
native_fsck_tree(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t rawsz, n;
    Py_buffer view;
    const uint8_t *d;
    int got = data_and_size(args, nargs, "fsck_tree(data, rawsz)", rawsz_ok, "fsck_tree: rawsz must be 1..64",
                            &rawsz, &view, &d, &n);
    if (got < 0)
        return NULL;
    if (got == 0) {
        PyErr_SetString(PyExc_TypeError, "fsck_tree: data must be bytes-like");
        return NULL;
    }
    PyObject *result = NULL, *ids = NULL, *cands = NULL;
    ft_entry *ents = NULL;
    Py_ssize_t count = 0, cap = 0;
    long flags = 0;
    int regular = 1; /* no duplicate and keys increasing so far: a duplicate can only be just behind */
    long budget = FT_DUP_BUDGET;
    Py_ssize_t prev = -1; /* the entry holding prev_key */
    Py_ssize_t gitlinks = 0;
    static const uint8_t zero[64] = {0};
    cands = PyList_New(0);
    if (cands == NULL)
        goto fail;
    Py_ssize_t pos = 0;
    while (pos < n) {
        uint32_t mode;
        Py_ssize_t at = pos, name, len;
        if (!ft_parse(d, n, rawsz, &pos, &mode, &name, &len)) {
            flags = FT_BAD_TREE; /* git reports nothing else of a tree it cannot parse */
            break;
        }
        const uint8_t *mt = d + at, *nm = d + name, *id = d + name + len + 1;
        Py_ssize_t mlen = name - 1 - at;
        int known = (mlen == 6 && (memcmp(mt, "100644", 6) == 0 || memcmp(mt, "100755", 6) == 0 ||
                                   memcmp(mt, "120000", 6) == 0 || memcmp(mt, "160000", 6) == 0)) ||
                    (mlen == 5 && memcmp(mt, "40000", 5) == 0);
        if (!known) {
            uint32_t m16 = mode & 0xFFFF;
            flags |= FT_LOOK_MODE;
            if (mt[0] == '0')
                flags |= FT_ZERO_PADDED;
            if (!(m16 == 0100755 || m16 == 0100644 || m16 == 0120000 || m16 == 0040000 || m16 == 0160000 ||
                  m16 == 0100664))
                flags |= FT_BAD_FILEMODE;
        }
        int is_dir = (mode & 0xFFFF & 0170000) == 0040000;
        int is_link = (mode & 0xFFFF & 0170000) == 0120000;
        if (known && memcmp(mt, "160000", 6) == 0)
            gitlinks++;
        if (memcmp(id, zero, (size_t)rawsz) == 0)
            flags |= FT_NULL_SHA1;
        int scan = ft_name_scan(nm, len);
        int high = scan & FN_HIGH;
        if (scan & FN_SLASH)
            flags |= FT_FULL_PATHNAME;
        if (nm[0] == '.' && len == 1)
            flags |= FT_HAS_DOT;
        else if (nm[0] == '.' && len == 2 && nm[1] == '.')
            flags |= FT_HAS_DOTDOT;
        else if (high) {
            if (scan & (FN_E2EF | FN_GIT))
                flags |= FT_LOOK_NAME;
        } else if ((scan & FN_GIT) && ft_ascii_folds_to(nm, len, ".git", "git~1")) {
            flags |= FT_HAS_DOTGIT;
        }
        if (is_link) {
            if (high)
                flags |= FT_LOOK_NAME;
            else
                for (int k = 0; k < 4; k++)
                    if (ft_ascii_folds_to(nm, len, ft_specials[k][0], ft_specials[k][1]))
                        flags |= FT_SYMLINK_SPECIAL;
        }
        /* what special_blobs.add_tree looks at: a name that may spell .gitmodules/.gitattributes */
        if ((scan & FN_SPECIAL) || ((scan & FN_E2EF) && ft_has_hfs_ignorable(nm, len))) {
            PyObject *c = Py_BuildValue("(ky#y#)", (unsigned long)mode, (const char *)nm, len, (const char *)id, rawsz);
            if (c == NULL || PyList_Append(cands, c) < 0) {
                Py_XDECREF(c);
                goto fail;
            }
            Py_DECREF(c);
        }
        /* duplicates and order, as check_tree_closely: a duplicate name is
         * not compared for order */
        if (count == cap) {
            Py_ssize_t ncap = cap ? cap * 2 : 64;
            ft_entry *grown = PyMem_Realloc(ents, (size_t)ncap * sizeof(ft_entry));
            if (grown == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            ents = grown;
            cap = ncap;
        }
        ft_entry *e = &ents[count];
        e->name = name;
        e->len = len;
        e->dir = is_dir;
        e->gitlink = known && memcmp(mt, "160000", 6) == 0;
        int dup = 0;
        int cmp = prev < 0 ? 1 : ft_key_cmp(d, e, &ents[prev]);
        if (regular && cmp > 0) {
            /* keys so far increase: an earlier entry of the same name has a
             * key in [name, name + '/'], at the end of the entries */
            for (Py_ssize_t j = count - 1; j >= 0; j--) {
                ft_entry *o = &ents[j];
                Py_ssize_t m = o->len < len ? o->len : len;
                if (o->len < len || memcmp(d + o->name, nm, (size_t)m) != 0)
                    break; /* key below name: nothing further back can match */
                if (o->len == len) {
                    dup = 1;
                    break;
                }
            }
        } else {
            regular = 0;
            for (Py_ssize_t j = count - 1; j >= 0 && !dup; j--) {
                if (--budget < 0) {
                    flags |= FT_LOOK_BUDGET;
                    break;
                }
                dup = ft_same_name(d, e, &ents[j]);
            }
        }
        if (dup) {
            flags |= FT_DUPLICATE;
            regular = 0;
        } else {
            if (cmp <= 0)
                flags |= FT_NOT_SORTED;
            prev = count;
        }
        count++;
    }
    if (flags & FT_BAD_TREE) {
        Py_CLEAR(cands);
        cands = Py_NewRef(Py_None);
    }
    if (flags == 0) {
        ids = PyTuple_New(count - gitlinks);
        if (ids == NULL)
            goto fail;
        Py_ssize_t k = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            if (ents[i].gitlink)
                continue;
            PyObject *o = PyBytes_FromStringAndSize((const char *)(d + ents[i].name + ents[i].len + 1), rawsz);
            if (o == NULL)
                goto fail;
            PyTuple_SET_ITEM(ids, k++, o);
        }
    } else {
        ids = Py_NewRef(Py_None);
    }
    result = Py_BuildValue("(lNN)", flags, ids, cands);
    ids = cands = NULL;
fail:
    Py_XDECREF(ids);
    Py_XDECREF(cands);
    PyMem_Free(ents);
    release_bytes(&view);
    return result;
}

static PyObject *
native_tree_unseen(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "tree_unseen(data, rawsz, seen)");
        return NULL;
    }
    PyObject *seen = args[2];
    IdSetObject *ids = Py_IS_TYPE(seen, &IdSetType) ? (IdSetObject *)seen : NULL;
    if (ids == NULL && !PyAnySet_Check(seen)) {
        PyErr_SetString(PyExc_TypeError, "tree_unseen: seen must be a set or an IdSet");
        return NULL;
    }
    Py_ssize_t rawsz, n;
    Py_buffer view;
    const uint8_t *d;
    int got = data_and_size(args, 2, "tree_unseen(data, rawsz, seen)", rawsz_ok, "tree_unseen: rawsz must be 1..64",
                            &rawsz, &view, &d, &n);
    if (got <= 0)
        return got < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *out = PyList_New(0);
    if (out == NULL)
        goto done;
    Py_ssize_t pos = 0;
    while (pos < n) {
        uint32_t mode;
        Py_ssize_t name, len;
        if (!ft_parse(d, n, rawsz, &pos, &mode, &name, &len)) {
            Py_SETREF(out, Py_NewRef(Py_None));
            break;
        }
        uint32_t kind = mode & 0170000;
        if (kind != 0040000 && kind != 0100000 && kind != 0120000)
            continue;
        if (ids != NULL && ids->rawsz == rawsz && idset_contains_raw(ids, d + name + len + 1))
            continue; /* seen: no object made to ask */
        PyObject *id = PyBytes_FromStringAndSize((const char *)(d + name + len + 1), rawsz);
        if (id == NULL) {
            Py_CLEAR(out);
            break;
        }
        int has = ids != NULL ? idset_sq_contains(seen, id) : PySet_Contains(seen, id);
        if (has == 0) {
            PyObject *item = Py_BuildValue("(Nl)", id, (long)(kind == 0040000));
            if (item == NULL || PyList_Append(out, item) < 0) {
                Py_XDECREF(item);
                Py_CLEAR(out);
                break;
            }
            Py_DECREF(item);
            continue;
        }
        Py_DECREF(id);
        if (has < 0) {
            Py_CLEAR(out);
            break;
        }
    }
done:
    release_bytes(&view);
    return out;
}
/* ---- end of fsck's tree checks ---- */

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

static inline uint32_t
be32_at(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

typedef struct {
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n, fan_at, names_at, stride;
    uint32_t nr;
    Py_ssize_t off_at, off_stride; /* idx_find_many's offsets */
    int v2;
} idx_table;

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

/* pack_info's answer for the entry at offset: 0 with *type and *size, or
 * -1 on any doubt.  memo may have no slots (no memo). */
static int
pack_info_one(const uint8_t *m, Py_ssize_t n, long long offset, long long end, long long max_depth,
              const type_memo *memo, int *type_out, uint64_t *size_out)
{
    int type;
    uint64_t size, result_size;
    long long data_at, base_at;
    if (end > n || entry_head(m, n, offset, end, &type, &size, &data_at, &base_at) < 0)
        return -1;
    if (type <= 4) {
        *type_out = type;
        *size_out = size;
        return 0;
    }
    if (delta_result_size(m, data_at, end, size, &result_size) < 0)
        return -1;
    /* OFS_DELTA bases lie strictly earlier, so the walk cannot loop.  The
     * depth rule is the reference's (Pack._check_chain_depth): the deltas
     * of the whole chain, those under a memo hit included.  The deltas
     * passed learn the type (the first 64 of them). */
    long long passed[64];
    long long depth = 0, below = 0;
    long long at = offset;
    int known = memo_get(memo, offset, &below);
    while (!known && type == 6) {
        if (depth < 64)
            passed[depth] = at;
        if (++depth > max_depth)
            return -1;
        at = base_at;
        known = memo_get(memo, at, &below);
        if (known)
            break;
        uint64_t ignored;
        if (entry_head(m, n, at, end, &type, &ignored, &data_at, &base_at) < 0)
            return -1;
    }
    if (known) {
        type = known;
        if (depth + below > max_depth)
            return -1;
    }
    for (long long k = 0; k < depth && k < 64; k++)
        memo_put(memo, passed[k], depth - k + below, type);
    *type_out = type;
    *size_out = result_size;
    return 0;
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
#define ONE_CALL_INFLATE (16 << 10)

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

/* The same through a one-shot decompress function of Python's zlib API
 * (decompress(data, wbits, bufsize), which raises unless the stream ends):
 * size bytes, or NULL (an error set only for MemoryError). */
static PyObject *
inflate_with(PyObject *decompress, const uint8_t *m, long long start, long long size, long long end,
             long long max_size)
{
    if (start < 0 || size < 0 || end <= start || size > max_size || size > PY_SSIZE_T_MAX - 1 ||
        (unsigned long long)size > (unsigned long long)(end - start) * MAX_DEFLATE_RATIO + 64)
        return NULL;
    /* the window inflate_entry reads first; a stream that needs more input
     * than that is left to it */
    long long stop = start + size + (size >> 3) + 64;
    if (stop > end)
        stop = end;
    PyObject *view = PyMemoryView_FromMemory((char *)(m + start), (Py_ssize_t)(stop - start), PyBUF_READ);
    if (view == NULL)
        return NULL;
    PyObject *call[3] = {view, NULL, NULL};
    call[1] = PyLong_FromLong(15);
    call[2] = PyLong_FromLongLong(size + 1);
    PyObject *out = NULL;
    if (call[1] != NULL && call[2] != NULL)
        out = PyObject_Vectorcall(decompress, call, 3, NULL);
    Py_DECREF(view);
    Py_XDECREF(call[1]);
    Py_XDECREF(call[2]);
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

/* The same through inflate_big(data, size) -> exactly size bytes or None,
 * a Python function with an output cap (pack.py _inflate_capped). */
static PyObject *
inflate_big_with(PyObject *inflate_big, const uint8_t *m, long long start, long long size, long long end,
                 long long max_size)
{
    if (start < 0 || size < 0 || end <= start || size > max_size || size > PY_SSIZE_T_MAX - 1 ||
        (unsigned long long)size > (unsigned long long)(end - start) * MAX_DEFLATE_RATIO + 64)
        return NULL;
    long long stop = start + size + (size >> 3) + 64;
    if (stop > end)
        stop = end;
    PyObject *view = PyMemoryView_FromMemory((char *)(m + start), (Py_ssize_t)(stop - start), PyBUF_READ);
    if (view == NULL)
        return NULL;
    PyObject *call[2] = {view, PyLong_FromLongLong(size)};
    PyObject *out = NULL;
    if (call[1] != NULL)
        out = PyObject_Vectorcall(inflate_big, call, 2, NULL);
    Py_DECREF(view);
    Py_XDECREF(call[1]);
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
 * with an exception set (only MemoryError). */
static PyObject *
commit_header_at(PyObject *self, PyObject *pack, long long offset, PyObject *hexsz, long long prefix)
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
    if (entry_head(m, n, offset, n, &type, &size, &data_at, &base_at) < 0 || type != 1)
        goto doubt;
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

static PyObject *
native_commit_lookup(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "commit_lookup(table, pack, oid, hexsz, prefix)");
        return NULL;
    }
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
    return commit_header_at(self, args[1], offset, args[3], prefix);
}

/* ---- end of commit headers at walk speed ---- */

static PyMethodDef native_methods[] = {
    {"apply_delta", (PyCFunction)(void (*)(void))native_apply_delta, METH_FASTCALL | METH_KEYWORDS,
     "apply_delta(base, delta, max_size=4 GiB) -> bytes: the object the delta makes from base; on anything "
     "unexpected the fallback (the pure-Python reference) is called and raises the error."},
    {"try_apply_delta", (PyCFunction)(void (*)(void))native_try_apply_delta, METH_FASTCALL | METH_KEYWORDS,
     "try_apply_delta(base, delta, max_size) -> bytes, or None if the delta is not valid for this base."},
    {"set_delta_fallback", native_set_delta_fallback, METH_O,
     "set_delta_fallback(func): what apply_delta calls with (base, delta, max_size) on doubt."},
    {"commit_header", (PyCFunction)(void (*)(void))native_commit_header, METH_FASTCALL,
     "commit_header(data, hexsz) -> (tree, parents, commit_time), or None unless the common header shape."},
    {"entry_header", (PyCFunction)(void (*)(void))native_entry_header, METH_FASTCALL,
     "entry_header(pack, offset, data_end, rawsz) -> (type, size, start, base offset, base id), or None."},
    {"tree_items", (PyCFunction)(void (*)(void))native_tree_items, METH_FASTCALL,
     "tree_items(data, rawsz) -> [(mode, name, id), ...], or None unless the whole tree is well-formed."},
    {"tree_diff_names", (PyCFunction)(void (*)(void))native_tree_diff_names, METH_FASTCALL,
     "tree_diff_names(a, b, rawsz) -> {names of entries not byte-identical in both}, or None unless both trees "
     "are well-formed and sorted."},
    {"tree_entry", (PyCFunction)(void (*)(void))native_tree_entry, METH_FASTCALL,
     "tree_entry(data, name, rawsz) -> (mode, name, id) of the first entry so named, (), or None unless "
     "the whole tree is well-formed."},
    {"fsck_tree", (PyCFunction)(void (*)(void))native_fsck_tree, METH_FASTCALL,
     "fsck_tree(data, rawsz) -> (flags, ids, candidates): fsck's verdict on a tree's entries (0: clean)."},
    {"tree_unseen", (PyCFunction)(void (*)(void))native_tree_unseen, METH_FASTCALL,
     "tree_unseen(data, rawsz, seen) -> [(id, is_tree), ...] of entries not in seen, or None if malformed."},
    {"id_set", native_id_set, METH_O, "id_set(rawsz) -> IdSet: a set of raw ids of one width (add, in, len, clear)."},
    {"idx_find", (PyCFunction)(void (*)(void))native_idx_find, METH_FASTCALL,
     "idx_find(idx, fan_at, names_at, stride, oid) -> position or -(insertion point)-1, or None."},
    {"idx_find_many", (PyCFunction)(void (*)(void))native_idx_find_many, METH_FASTCALL,
     "idx_find_many(indexes, oids, null) -> (found, order, moves), or None: lookups over packs in MRU order."},
    {"pack_info", (PyCFunction)(void (*)(void))native_pack_info, METH_FASTCALL,
     "pack_info(pack, offset, data_end, rawsz, max_depth, memo) -> (type, size) through OFS_DELTA chains, or None."},
    {"pack_info_many", (PyCFunction)(void (*)(void))native_pack_info_many, METH_FASTCALL,
     "pack_info_many(pack, offsets, data_end, rawsz, max_depth, memo) -> [(type name, size) or None, ...]."},
    {"apply_chain", (PyCFunction)(void (*)(void))native_apply_chain, METH_FASTCALL,
     "apply_chain(pack, base, deltas, end, max_size) -> [object, ...] (top first), or None."},
    {"walk_chain", (PyCFunction)(void (*)(void))native_walk_chain, METH_FASTCALL,
     "walk_chain(pack, offset, end, max_depth, cached, name) -> (hit, base type, offset, data offset, size, "
     "deltas, misses), or None."},
    {"commit_lookup", (PyCFunction)(void (*)(void))native_commit_lookup, METH_FASTCALL,
     "commit_lookup(table, pack, oid, hexsz, prefix) -> (tree, parents, time) of a plain commit entry, False if absent, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "_native", "Compiled fast paths for packscope.core (optional; see core/native.py).", -1,
    native_methods,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    for (int i = 0; i < 128; i++) {
        int bits = 0;
        for (int b = 0; b < 7; b++)
            bits += (i >> b) & 1;
        copy_arg_bytes[i] = (uint8_t)bits;
    }
    if (default_max_size == NULL) {
        default_max_size = PyLong_FromUnsignedLongLong(DEFAULT_MAX_RESULT);
        if (default_max_size == NULL)
            return NULL;
    }
    return PyModule_Create(&native_module);
}
