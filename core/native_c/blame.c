/* core/native_c/blame.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (see blame.h for what it offers).  The pure reference is the part of Blame.split
 * (core/history/blame.py) after the diff: unchanged_runs, _joined and the loop over entries.
 *
 *   blame_moves(entries, deleted, inserted) -> (moved, stay) | None
 *       entries: a list of [final, orig, count] lists (an origin's lines, any order);
 *       deleted / inserted: the diff's flags (parent -> origin's blob), each with its spare
 *       0 at the end.  The entries are put in order of orig, neighbours whose final lines
 *       follow on joined; then each is cut along the runs of lines the diff leaves
 *       unchanged: the parts inside a run move (moved: [final, line in the parent, count]),
 *       the others stay ([final, orig, count]), both in that order.  None unless entries
 *       is a list of 3-int lists (the pure loop then runs). */
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
