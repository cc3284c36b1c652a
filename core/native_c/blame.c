/* core/native_c/blame.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (see blame.h for what it offers).  The pure references are in core/history/blame.py:
 * moves (with unchanged_runs and _joined), split_ids, same_lines and common_tail_lines.
 *
 *   blame_moves(entries, deleted, inserted) -> (moved, stay) | None
 *       entries: a list of [final, orig, count] lists (an origin's lines, any order);
 *       deleted / inserted: the diff's flags (parent -> origin's blob), each with its spare
 *       0 at the end.  The entries are put in order of orig, neighbours whose final lines
 *       follow on joined; then each is cut along the runs of lines the diff leaves
 *       unchanged: the parts inside a run move (moved: [final, line in the parent, count]),
 *       the others stay ([final, orig, count]), both in that order.  None unless entries
 *       is a list of 3-int lists (the pure loop then runs).
 *
 *   split_ids(data, table, indents, base) -> array('i') | None
 *       data's lines as numbers: each line (a last one without a newline with NO_EOL
 *       appended) looked up in table (a dict), set to base + its place when new, and then
 *       indents[that number] = its indentation (line_indent, NO_EOL taken off).  None
 *       unless table and indents are dicts and the numbers fit a C int.
 *
 *   same_lines(a, b) -> (head, tail, head_off, a_end)
 *       whole lines equal at the start and at the end of two texts, and where the lines
 *       between start and end in a.
 *
 *   common_tail_lines(a, b) -> int
 *       the whole lines git's context-free diff cuts from the end of both texts: the
 *       common tail in blocks of 1024 bytes, given back up to the first newline in it. */
#include "blame.h"

typedef struct {
    Py_ssize_t final, orig, count, index;
} BmEntry;

static int
bm_by_orig(const void *x, const void *y)
{
    const BmEntry *a = x, *b = y;
    if (a->orig != b->orig)
        return a->orig < b->orig ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index; /* list.sort is stable */
}

static int
bm_append(PyObject *list, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c)
{
    PyObject *item = Py_BuildValue("[nnn]", a, b, c);
    if (item == NULL)
        return -1;
    int rc = PyList_Append(list, item);
    Py_DECREF(item);
    return rc;
}

typedef struct {
    Py_ssize_t new_start, old_start, length;
} BmRun;

static PyObject *
native_blame_moves(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "blame_moves(entries, deleted, inserted)");
        return NULL;
    }
    PyObject *entries = args[0];
    if (!PyList_Check(entries))
        Py_RETURN_NONE;
    Py_buffer vd, vi;
    const uint8_t *deleted, *inserted;
    Py_ssize_t nd, ni;
    if (get_bytes(args[1], &vd, &deleted, &nd) < 0)
        Py_RETURN_NONE;
    if (get_bytes(args[2], &vi, &inserted, &ni) < 0) {
        release_bytes(&vd);
        Py_RETURN_NONE;
    }
    PyObject *answer = NULL, *moved = NULL, *stay = NULL;
    Py_ssize_t count = PyList_GET_SIZE(entries);
    BmEntry *es = PyMem_Malloc((count ? count : 1) * sizeof(BmEntry));
    BmRun *runs = NULL;
    if (es == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        if (!PyList_Check(e) || PyList_GET_SIZE(e) != 3) {
            answer = Py_NewRef(Py_None);
            goto done;
        }
        Py_ssize_t v[3];
        for (int k = 0; k < 3; k++) {
            PyObject *x = PyList_GET_ITEM(e, k);
            v[k] = PyLong_CheckExact(x) ? PyLong_AsSsize_t(x) : -1;
            if (v[k] == -1) { /* not a plain int, or too large: the pure loop's to do */
                if (PyErr_Occurred() && !clear_unless_fatal())
                    goto done;
                answer = Py_NewRef(Py_None);
                goto done;
            }
        }
        es[i] = (BmEntry){v[0], v[1], v[2], i};
    }
    /* unchanged_runs: (start in the new side, start in the old side, length) */
    Py_ssize_t n = nd - 1, m = ni - 1, nruns = 0, cap = 16;
    if (n < 0 || m < 0) {
        answer = Py_NewRef(Py_None);
        goto done;
    }
    runs = PyMem_Malloc(cap * sizeof(BmRun));
    if (runs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t i = 0, j = 0;
    while (i < n && j < m) {
        Py_ssize_t k = 0;
        while (i + k < n && j + k < m && !deleted[i + k] && !inserted[j + k])
            k++;
        if (k > 0) {
            if (nruns == cap) {
                BmRun *grown = PyMem_Realloc(runs, 2 * cap * sizeof(BmRun));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                runs = grown;
                cap *= 2;
            }
            runs[nruns++] = (BmRun){j, i, k};
            i += k;
            j += k;
        }
        while (i < n && deleted[i])
            i++;
        while (j < m && inserted[j])
            j++;
    }
    /* _joined */
    qsort(es, count, sizeof(BmEntry), bm_by_orig);
    Py_ssize_t joined = 0;
    for (Py_ssize_t x = 0; x < count; x++) {
        if (joined > 0) {
            BmEntry *last = &es[joined - 1];
            if (last->orig + last->count == es[x].orig && last->final + last->count == es[x].final) {
                last->count += es[x].count;
                continue;
            }
        }
        es[joined++] = es[x];
    }
    moved = PyList_New(0);
    stay = PyList_New(0);
    if (moved == NULL || stay == NULL)
        goto done;
    Py_ssize_t k = 0;
    for (Py_ssize_t x = 0; x < joined; x++) {
        Py_ssize_t final = es[x].final, orig = es[x].orig, end = orig + es[x].count;
        while (k < nruns && runs[k].new_start + runs[k].length <= orig)
            k++;
        Py_ssize_t pos = orig, r = k;
        while (pos < end) {
            if (r >= nruns || runs[r].new_start >= end) {
                if (bm_append(stay, final + pos - orig, pos, end - pos) < 0)
                    goto done;
                break;
            }
            Py_ssize_t rs = runs[r].new_start, ps = runs[r].old_start, rn = runs[r].length;
            if (rs > pos) {
                if (bm_append(stay, final + pos - orig, pos, rs - pos) < 0)
                    goto done;
                pos = rs;
            }
            Py_ssize_t stop = rs + rn < end ? rs + rn : end;
            if (bm_append(moved, final + pos - orig, ps + pos - rs, stop - pos) < 0)
                goto done;
            pos = stop;
            if (stop == rs + rn)
                r++;
        }
    }
    answer = PyTuple_Pack(2, moved, stay);
done:
    Py_XDECREF(moved);
    Py_XDECREF(stay);
    PyMem_Free(es);
    PyMem_Free(runs);
    release_bytes(&vd);
    release_bytes(&vi);
    return answer;
}

/* ---- split_ids ---- */

#define BM_NO_EOL "\0no-eol" /* line_diff.NO_EOL */
#define BM_NO_EOL_LEN 7
#define BM_MAX_INDENT 200

static long
bm_line_indent(const uint8_t *p, Py_ssize_t len)
{
    long n = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        uint8_t c = p[i];
        if (c == 0x20)
            n += 1;
        else if (c == 0x09)
            n += 8 - n % 8;
        else if (c != 0x0A && c != 0x0B && c != 0x0C && c != 0x0D)
            return n;
        if (n >= BM_MAX_INDENT)
            return BM_MAX_INDENT;
    }
    return -1;
}

/* One line's number in table (new: number); a new one's indent set. 0, or -1 on an error. */
static int
bm_number(PyObject *table, PyObject *indents, PyObject *line, long number, int32_t *out)
{
    PyObject *value = NULL;
    PyObject *got = PyDict_GetItemWithError(table, line); /* borrowed */
    int rc = -1;
    if (got == NULL && PyErr_Occurred())
        return -1;
    if (got == NULL) { /* a new line: its number, and its indent */
        value = PyLong_FromLong(number);
        if (value == NULL || PyDict_SetItem(table, line, value) < 0)
            goto done;
        const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(line);
        Py_ssize_t len = PyBytes_GET_SIZE(line);
        if (len >= BM_NO_EOL_LEN && memcmp(p + len - BM_NO_EOL_LEN, BM_NO_EOL, BM_NO_EOL_LEN) == 0)
            len -= BM_NO_EOL_LEN;
        PyObject *indent = PyLong_FromLong(bm_line_indent(p, len));
        if (indent == NULL || PyDict_SetItem(indents, value, indent) < 0) {
            Py_XDECREF(indent);
            goto done;
        }
        Py_DECREF(indent);
        *out = (int32_t)number;
        rc = 0;
        goto done;
    }
    long v = PyLong_Check(got) ? PyLong_AsLong(got) : -1;
    if (!PyLong_Check(got) || (v == -1 && PyErr_Occurred()) || v < INT32_MIN || v > INT32_MAX) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_OverflowError, "split_ids: a line number out of a C int's range");
        goto done;
    }
    *out = (int32_t)v;
    rc = 0;
done:
    Py_XDECREF(value);
    return rc;
}

static PyObject *array_type; /* array.array, imported on first use */

static PyObject *
native_split_ids(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "split_ids(data, table, indents, base)");
        return NULL;
    }
    PyObject *table = args[1], *indents = args[2];
    if (!PyDict_CheckExact(table) || !PyDict_CheckExact(indents))
        Py_RETURN_NONE;
    Py_ssize_t base = PyLong_AsSsize_t(args[3]);
    if (base == -1 && PyErr_Occurred())
        return clear_unless_fatal() ? Py_NewRef(Py_None) : NULL;
    Py_buffer view;
    const uint8_t *data;
    Py_ssize_t len;
    if (get_bytes(args[0], &view, &data, &len) < 0)
        Py_RETURN_NONE;
    /* one number per newline, and one for an unterminated last line */
    Py_ssize_t lines = 0;
    for (const uint8_t *p = data, *end = data + len; (p = memchr(p, '\n', end - p)) != NULL; p++)
        lines++;
    if (len > 0 && data[len - 1] != '\n')
        lines++;
    PyObject *answer = NULL, *made = NULL;
    int32_t *ids = NULL;
    if (base < 0 || base > INT32_MAX - lines) { /* array('i') would refuse the numbers: the pure code says so */
        answer = Py_NewRef(Py_None);
        goto done;
    }
    ids = PyMem_Malloc((lines ? lines : 1) * sizeof(int32_t));
    if (ids == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = 0; i < lines; i++) {
        const uint8_t *nl = memchr(data + pos, '\n', len - pos);
        PyObject *line;
        if (nl != NULL) {
            line = PyBytes_FromStringAndSize((const char *)data + pos, nl - (data + pos));
            pos = nl - data + 1;
        }
        else {
            line = PyBytes_FromStringAndSize(NULL, len - pos + BM_NO_EOL_LEN);
            if (line != NULL) {
                memcpy(PyBytes_AS_STRING(line), data + pos, len - pos);
                memcpy(PyBytes_AS_STRING(line) + len - pos, BM_NO_EOL, BM_NO_EOL_LEN);
            }
            pos = len;
        }
        if (line == NULL)
            goto done;
        int rc = bm_number(table, indents, line, (long)(base + i), &ids[i]);
        Py_DECREF(line);
        if (rc < 0)
            goto done;
    }
    if (array_type == NULL) {
        PyObject *module = PyImport_ImportModule("array");
        array_type = module == NULL ? NULL : PyObject_GetAttrString(module, "array");
        Py_XDECREF(module);
        if (array_type == NULL)
            goto done;
    }
    made = PyObject_CallFunction(array_type, "s", "i");
    if (made == NULL)
        goto done;
    PyObject *raw = PyBytes_FromStringAndSize((const char *)ids, lines * (Py_ssize_t)sizeof(int32_t));
    if (raw == NULL)
        goto done;
    PyObject *r = PyObject_CallMethod(made, "frombytes", "O", raw);
    Py_DECREF(raw);
    if (r == NULL)
        goto done;
    Py_DECREF(r);
    answer = Py_NewRef(made);
done:
    Py_XDECREF(made);
    PyMem_Free(ids);
    release_bytes(&view);
    return answer;
}

/* ---- same_lines, common_tail_lines ---- */

static Py_ssize_t
bm_prefix(const uint8_t *a, Py_ssize_t la, const uint8_t *b, Py_ssize_t lb)
{
    Py_ssize_t n = la < lb ? la : lb, k = 0;
    while (k + 8 <= n && memcmp(a + k, b + k, 8) == 0)
        k += 8;
    while (k < n && a[k] == b[k])
        k++;
    return k;
}

static Py_ssize_t
bm_suffix(const uint8_t *a, Py_ssize_t la, const uint8_t *b, Py_ssize_t lb)
{
    Py_ssize_t n = la < lb ? la : lb, k = 0;
    while (k + 8 <= n && memcmp(a + la - k - 8, b + lb - k - 8, 8) == 0)
        k += 8;
    while (k < n && a[la - k - 1] == b[lb - k - 1])
        k++;
    return k;
}

static Py_ssize_t
bm_count_nl(const uint8_t *p, Py_ssize_t len)
{
    Py_ssize_t count = 0;
    const uint8_t *end = p + len;
    while ((p = memchr(p, '\n', end - p)) != NULL) {
        count++;
        p++;
    }
    return count;
}

static int
bm_two_texts(PyObject *const *args, Py_ssize_t nargs, const char *usage, Py_buffer *va, const uint8_t **a,
             Py_ssize_t *la, Py_buffer *vb, const uint8_t **b, Py_ssize_t *lb)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    if (get_bytes(args[0], va, a, la) < 0)
        return 0;
    if (get_bytes(args[1], vb, b, lb) < 0) {
        release_bytes(va);
        return 0;
    }
    return 1;
}

static PyObject *
native_same_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer va, vb;
    const uint8_t *a, *b;
    Py_ssize_t la, lb;
    int ok = bm_two_texts(args, nargs, "same_lines(a, b)", &va, &a, &la, &vb, &b, &lb);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    Py_ssize_t p = bm_prefix(a, la, b, lb);
    Py_ssize_t head = bm_count_nl(a, p), head_off = 0;
    for (Py_ssize_t i = p; i > 0; i--) {
        if (a[i - 1] == '\n') {
            head_off = i;
            break;
        }
    }
    Py_ssize_t s = bm_suffix(a, la, b, lb);
    if (la - head_off < s)
        s = la - head_off;
    if (lb - head_off < s)
        s = lb - head_off;
    Py_ssize_t tail = 0, a_start = la;
    if (s > 0) {
        Py_ssize_t start = lb - s;
        a_start = la - s;
        int whole = (start == 0 || b[start - 1] == '\n') && (a_start == 0 || a[a_start - 1] == '\n');
        if (!whole) {
            const uint8_t *nl = memchr(b + start, '\n', lb - start);
            if (nl == NULL) {
                a_start = la;
                goto answer;
            }
            a_start += (nl - b) + 1 - start;
            start = (nl - b) + 1;
        }
        tail = bm_count_nl(b + start, lb - start) + (start < lb && b[lb - 1] != '\n' ? 1 : 0);
    }
answer:
    release_bytes(&va);
    release_bytes(&vb);
    return Py_BuildValue("nnnn", head, tail, head_off, a_start);
}

#define BM_TAIL_BLOCK 1024 /* blame.TAIL_BLOCK */

static PyObject *
native_common_tail_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer va, vb;
    const uint8_t *a, *b;
    Py_ssize_t la, lb;
    int ok = bm_two_texts(args, nargs, "common_tail_lines(a, b)", &va, &a, &la, &vb, &b, &lb);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    Py_ssize_t smaller = la < lb ? la : lb, trimmed = 0, cut = 0;
    while (trimmed + BM_TAIL_BLOCK <= smaller &&
           memcmp(a + la - trimmed - BM_TAIL_BLOCK, b + lb - trimmed - BM_TAIL_BLOCK, BM_TAIL_BLOCK) == 0)
        trimmed += BM_TAIL_BLOCK;
    if (trimmed) {
        const uint8_t *nl = memchr(a + la - trimmed, '\n', trimmed);
        if (nl != NULL) {
            Py_ssize_t after = (nl - a) + 1;
            cut = bm_count_nl(a + after, la - after) + (la > 0 && a[la - 1] == '\n' ? 0 : 1);
        }
    }
    release_bytes(&va);
    release_bytes(&vb);
    return PyLong_FromSsize_t(cut);
}
