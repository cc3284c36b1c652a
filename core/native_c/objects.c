/* core/native_c/objects.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (objects.h says what it offers).  Tree entries, commit headers and pack entry headers
 * (tree_items, commit_header, entry_header); the references are core/objects.py and
 * core/store/pack_entry.py. */
#include "objects.h"

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
