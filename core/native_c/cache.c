/* core/native_c/cache.c: part of packscope.core._native (see cache.h for what it offers).
 *
 * The delta-base cache's rules in C, written once: DeltaBaseCache (core/store/cache.py) is the
 * reference, and this file mirrors its get (a hit moved to the end and counted; misses counted)
 * and its put (an entry over the budget is not kept; a key put again replaces its entry; the
 * least recently used entries are evicted until the bytes fit the budget).  The pair is held
 * together by tests/test_delta_base_cache_pair.py, which drives both with the same puts.
 *
 * It reads the cache only through its public surface (cache.py "the compiled read's surface"):
 * table (the OrderedDict of (pack name, offset) -> (type name, data)), counts (the list of
 * hits, misses, fills, evictions, bytes), budget and tracer. */
#include "cache.h"

static PyObject *s_table, *s_counts, *s_budget, *s_tracer, *s_active, *s_move_to_end, *s_pop, *s_popitem;

static int
cache_names(void)
{
    if (s_popitem != NULL)
        return 0;
    if ((s_table = PyUnicode_InternFromString("table")) == NULL ||
        (s_counts = PyUnicode_InternFromString("counts")) == NULL ||
        (s_budget = PyUnicode_InternFromString("budget")) == NULL ||
        (s_tracer = PyUnicode_InternFromString("tracer")) == NULL ||
        (s_active = PyUnicode_InternFromString("active")) == NULL ||
        (s_move_to_end = PyUnicode_InternFromString("move_to_end")) == NULL ||
        (s_pop = PyUnicode_InternFromString("pop")) == NULL)
        return -1;
    s_popitem = PyUnicode_InternFromString("popitem");
    return s_popitem == NULL ? -1 : 0;
}

static int
cache_open(cache_view *v, PyObject *cache)
{
    v->cache = cache;
    v->table = v->counts = NULL;
    if (cache_names() < 0)
        return -1;
    PyObject *tracer = PyObject_GetAttr(cache, s_tracer);
    if (tracer == NULL)
        return -1;
    int listening = 0;
    if (tracer != Py_None) {
        PyObject *active = PyObject_GetAttr(tracer, s_active);
        listening = active == NULL ? -1 : PyObject_IsTrue(active);
        Py_XDECREF(active);
    }
    Py_DECREF(tracer);
    if (listening)
        return listening < 0 ? -1 : 0; /* the Python cache emits its events */
    v->table = PyObject_GetAttr(cache, s_table);
    if (v->table == NULL)
        return -1;
    if (!PyDict_Check(v->table)) {
        Py_CLEAR(v->table);
        return 0;
    }
    return 1;
}

static void
cache_close(cache_view *v)
{
    Py_CLEAR(v->table);
    Py_CLEAR(v->counts);
}

static PyObject *
cache_key(PyObject *name, long long offset)
{
    PyObject *off = PyLong_FromLongLong(offset);
    if (off == NULL)
        return NULL;
    PyObject *key = PyTuple_Pack(2, name, off);
    Py_DECREF(off);
    return key;
}

static PyObject *
cache_peek(cache_view *v, PyObject *name, long long offset)
{
    PyObject *key = cache_key(name, offset);
    if (key == NULL)
        return NULL;
    PyObject *entry = PyDict_GetItemWithError(v->table, key);
    Py_DECREF(key);
    return entry;
}

/* An int attribute of the cache: 0 with *out, 1 when it is not a plain int, -1 with an error set. */
static int
cache_int(PyObject *cache, PyObject *attr, long long *out)
{
    PyObject *value = PyObject_GetAttr(cache, attr);
    if (value == NULL)
        return -1;
    int rc = 1;
    if (PyLong_CheckExact(value)) {
        *out = PyLong_AsLongLong(value);
        rc = *out == -1 && PyErr_Occurred() ? (PyErr_Clear(), 1) : 0;
    }
    Py_DECREF(value);
    return rc;
}

static int
cache_begin(cache_view *v)
{
    int got = cache_int(v->cache, s_budget, &v->budget);
    if (got != 0)
        return got;
    if (v->budget < 0)
        return 1;
    Py_CLEAR(v->counts);
    v->counts = PyObject_GetAttr(v->cache, s_counts);
    if (v->counts == NULL)
        return -1;
    if (!PyList_CheckExact(v->counts) || PyList_GET_SIZE(v->counts) != C_N)
        return 1;
    for (int i = 0; i < C_N; i++) {
        PyObject *value = PyList_GET_ITEM(v->counts, i);
        if (!PyLong_CheckExact(value))
            return 1;
        v->c[i] = PyLong_AsLongLong(value);
        if (v->c[i] < 0) {
            PyErr_Clear();
            return 1;
        }
    }
    memcpy(v->was, v->c, sizeof v->c);
    return 0;
}

static int
cache_hit(cache_view *v, PyObject *name, long long offset)
{
    PyObject *key = cache_key(name, offset);
    if (key == NULL)
        return -1;
    PyObject *r = PyObject_CallMethodObjArgs(v->table, s_move_to_end, key, NULL);
    Py_DECREF(key);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    v->c[C_HITS] += 1;
    return 0;
}

/* The size of an entry's data as put stores it ((type name, bytes)), 0 for anything else. */
static Py_ssize_t
entry_size(PyObject *entry)
{
    if (PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) == 2 && PyBytes_Check(PyTuple_GET_ITEM(entry, 1)))
        return PyBytes_GET_SIZE(PyTuple_GET_ITEM(entry, 1));
    return 0;
}

static int
cache_put(cache_view *v, PyObject *name, long long offset, PyObject *type_name, PyObject *data)
{
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    if (size > v->budget) /* would only evict everything else and then itself */
        return 0;
    PyObject *key = cache_key(name, offset);
    if (key == NULL)
        return -1;
    PyObject *entry = NULL;
    int rc = -1;
    PyObject *old = PyDict_GetItemWithError(v->table, key); /* borrowed; read only */
    if (old == NULL && PyErr_Occurred())
        goto out;
    if (old != NULL) {
        old = PyObject_CallMethodObjArgs(v->table, s_pop, key, NULL);
        if (old == NULL)
            goto out;
        v->c[C_BYTES] -= entry_size(old);
        Py_DECREF(old);
    }
    entry = PyTuple_Pack(2, type_name, data);
    if (entry == NULL || PyObject_SetItem(v->table, key, entry) < 0)
        goto out;
    v->c[C_BYTES] += size;
    v->c[C_FILLS] += 1;
    while (v->c[C_BYTES] > v->budget) {
        PyObject *item = PyObject_CallMethodObjArgs(v->table, s_popitem, Py_False, NULL);
        if (item == NULL)
            goto out;
        if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2)
            v->c[C_BYTES] -= entry_size(PyTuple_GET_ITEM(item, 1));
        Py_DECREF(item);
        v->c[C_EVICTIONS] += 1;
    }
    rc = 0;
out:
    Py_XDECREF(entry);
    Py_DECREF(key);
    return rc;
}

static int
cache_end(cache_view *v)
{
    for (int i = 0; i < C_N; i++) {
        if (v->c[i] == v->was[i])
            continue;
        PyObject *value = PyLong_FromLongLong(v->c[i]);
        if (value == NULL || PyList_SetItem(v->counts, i, value) < 0)
            return -1;
        v->was[i] = v->c[i];
    }
    return 0;
}

/* cache_put(cache, name, offset, type_name, data) -> True if put as the
 * compiled read puts, False when the Python cache must (a tracer listening,
 * a cache not shaped as expected). */
static PyObject *
native_cache_put(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyUnicode_Check(args[1]) || !PyUnicode_Check(args[3]) || !PyBytes_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "cache_put(cache, name: str, offset: int, type_name: str, data: bytes)");
        return NULL;
    }
    long long offset = PyLong_AsLongLong(args[2]);
    if (offset == -1 && PyErr_Occurred())
        return NULL;
    cache_view v;
    int ready = cache_open(&v, args[0]);
    if (ready <= 0)
        return ready < 0 ? NULL : Py_NewRef(Py_False);
    int got = cache_begin(&v);
    PyObject *result = NULL;
    if (got == 0) {
        int put = cache_put(&v, args[1], offset, args[3], args[4]);
        if (cache_end(&v) == 0 && put == 0)
            result = Py_NewRef(Py_True);
    }
    else if (got == 1)
        result = Py_NewRef(Py_False);
    cache_close(&v);
    return result;
}
