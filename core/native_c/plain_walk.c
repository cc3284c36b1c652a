/* core/native_c/plain_walk.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (see plain_walk.h for what it offers).  The plain default-order walk's loop
 * (walk_plain); the reference is PlainWalk.stream_plain's Python loop (core/history/plain_walk.py).
 *
 *   walk_plain(queue, seen, counter, packs, graph, fallback, first_parent, walked_type, hexsz, prefix, limit)
 *       -> (walked, counter, error, graph answers), or None
 *
 *   queue: a heap (a list, as heapq keeps it) of (-date, number, id, tree, parents) tuples; seen:
 *   the set of ids met.  Up to `limit` commits are popped in the reference's order.  Each parent
 *   not in seen is added to it, read, and queued with the next number: read from graph when it is
 *   one (graph_read.c; a commit it lacks is looked for in the packs), else by commit_lookup
 *   through packs ([(table, pack map, delta reader), ...], the commit reader's packs in its order;
 *   an entry stored as a delta is read by delta_reader(offset, id) -> facts or None), or, when
 *   they do not answer, by fallback(id) -> (tree, parents, date, ...), which is the reference's
 *   own read.  With first_parent only the first parent counts.  walked: the popped commits as
 *   walked_type (a 4-item tuple type without fields of its own): (id, tree, parents, date).
 *
 *   After a fallback call the loop stops: the read may have rescanned the pack directory or
 *   started a tracer, and the caller looks at its packs again before the next call.  error: the
 *   exception fallback raised (the commit whose parent it was is not in walked), else None.
 *   None for a queue or type this loop does not know; the caller then takes its Python loop.
 *
 *   commit_facts_many(packs, graph, oids, hexsz, prefix) -> ([facts or None, ...], graph answers)
 *       Each id as walk_plain reads a parent before its fallback: the facts the packs give, or None
 *       (the caller's own read answers it).  For the tips of a walk, read in one call. */
#include "plain_walk.h"

/* 1 if entry a sorts before entry b (heapq's `<` on the tuples, which the
 * unique (date, number) pair decides), 0 if not, -1 with an exception. */
static int
walk_entry_less(PyObject *a, PyObject *b)
{
    for (Py_ssize_t k = 0; k < 2; k++) {
        PyObject *x = PyTuple_GET_ITEM(a, k), *y = PyTuple_GET_ITEM(b, k);
        if (PyLong_CheckExact(x) && PyLong_CheckExact(y)) {
            int over_x, over_y;
            long long vx = PyLong_AsLongLongAndOverflow(x, &over_x);
            long long vy = PyLong_AsLongLongAndOverflow(y, &over_y);
            if (!over_x && !over_y) {
                if (vx != vy)
                    return vx < vy;
                continue;
            }
        }
        return PyObject_RichCompareBool(a, b, Py_LT); /* a date past 64 bits: as heapq compares */
    }
    return PyObject_RichCompareBool(a, b, Py_LT);
}

/* Push item (a new reference, stolen) on the heap. */
static int
walk_heap_push(PyObject *heap, PyObject *item)
{
    int rc = PyList_Append(heap, item);
    Py_DECREF(item);
    if (rc < 0)
        return -1;
    PyObject **slots = ((PyListObject *)heap)->ob_item;
    Py_ssize_t pos = PyList_GET_SIZE(heap) - 1;
    while (pos > 0) {
        Py_ssize_t up = (pos - 1) >> 1;
        int less = walk_entry_less(item, slots[up]);
        if (less < 0) {
            slots[pos] = item; /* still a permutation of the items (if no longer a heap) */
            return -1;
        }
        if (!less)
            break;
        slots[pos] = slots[up];
        pos = up;
    }
    slots[pos] = item;
    return 0;
}

/* Pop the heap's smallest item: a new reference, or NULL with an exception. */
static PyObject *
walk_heap_pop(PyObject *heap)
{
    Py_ssize_t n = PyList_GET_SIZE(heap);
    PyObject *last = Py_NewRef(PyList_GET_ITEM(heap, n - 1));
    if (PyList_SetSlice(heap, n - 1, n, NULL) < 0) {
        Py_DECREF(last);
        return NULL;
    }
    if (n == 1)
        return last;
    PyObject **slots = ((PyListObject *)heap)->ob_item;
    PyObject *top = slots[0]; /* the list's reference becomes ours */
    Py_ssize_t pos = 0, end = n - 1;
    for (;;) {
        Py_ssize_t child = 2 * pos + 1;
        if (child >= end)
            break;
        if (child + 1 < end) {
            int right = walk_entry_less(slots[child + 1], slots[child]);
            if (right < 0)
                goto fail;
            child += right;
        }
        int less = walk_entry_less(slots[child], last);
        if (less < 0)
            goto fail;
        if (!less)
            break;
        slots[pos] = slots[child];
        pos = child;
    }
    slots[pos] = last;
    return top;
fail:
    slots[pos] = last;
    Py_DECREF(top);
    return NULL;
}

static int
walk_entry_ok(PyObject *e)
{
    return PyTuple_CheckExact(e) && PyTuple_GET_SIZE(e) == 5 && PyTuple_CheckExact(PyTuple_GET_ITEM(e, 4));
}

/* The queue entry for parent oid from its facts (tree, parents, date, ...):
 * a new reference, or NULL with an exception. */
static PyObject *
walk_entry_from(PyObject *facts, PyObject *oid, long long number)
{
    if (!PyTuple_Check(facts) || PyTuple_GET_SIZE(facts) < 3) {
        PyErr_SetString(PyExc_TypeError, "walk_plain: a commit's facts are (tree, parents, date, ...)");
        return NULL;
    }
    PyObject *parents = PySequence_Tuple(PyTuple_GET_ITEM(facts, 1)); /* the same tuple when it is one */
    if (parents == NULL)
        return NULL;
    PyObject *neg = PyNumber_Negative(PyTuple_GET_ITEM(facts, 2));
    PyObject *num = PyLong_FromLongLong(number);
    PyObject *entry = NULL;
    if (neg != NULL && num != NULL)
        entry = PyTuple_Pack(5, neg, num, oid, PyTuple_GET_ITEM(facts, 0), parents);
    Py_XDECREF(neg);
    Py_XDECREF(num);
    Py_DECREF(parents);
    return entry;
}

/* The walked_type record for a popped entry: a new reference, or NULL. */
static PyObject *
walk_record(PyTypeObject *walked_type, PyObject *entry)
{
    PyObject *date = PyNumber_Negative(PyTuple_GET_ITEM(entry, 0));
    if (date == NULL)
        return NULL;
    PyObject *rec = walked_type->tp_alloc(walked_type, 4);
    if (rec == NULL) {
        Py_DECREF(date);
        return NULL;
    }
    PyTuple_SET_ITEM(rec, 0, Py_NewRef(PyTuple_GET_ITEM(entry, 2)));
    PyTuple_SET_ITEM(rec, 1, Py_NewRef(PyTuple_GET_ITEM(entry, 3)));
    PyTuple_SET_ITEM(rec, 2, Py_NewRef(PyTuple_GET_ITEM(entry, 4)));
    PyTuple_SET_ITEM(rec, 3, date);
    return rec;
}

/* The facts of parent oid from the packs: a new reference (the facts),
 * Py_None when they do not answer, or NULL with an exception.  A delta
 * entry is read by its pack's delta reader, (offset, oid) -> facts or None. */
static PyObject *
walk_packed_facts(PyObject *self, PyObject *packs, PyObject *oid, PyObject *hexsz, PyObject *prefix)
{
    Py_ssize_t n = PyList_GET_SIZE(packs);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *pack = PyList_GET_ITEM(packs, k);
        PyObject *lookup_args[5] = {PyTuple_GET_ITEM(pack, 0), PyTuple_GET_ITEM(pack, 1), oid, hexsz, prefix};
        long long delta_at = -1;
        PyObject *found = commit_lookup_in(self, lookup_args, &delta_at);
        if (found == Py_None && delta_at >= 0) {
            Py_DECREF(found);
            return PyObject_CallFunction(PyTuple_GET_ITEM(pack, 2), "LO", delta_at, oid);
        }
        if (found != Py_False)
            return found; /* the facts, None (the reference's own path decides), or NULL */
        Py_DECREF(found);
    }
    Py_RETURN_NONE; /* in no pack: loose, or new (the reference rescans) */
}

/* A commit's facts as the loop reads them: from the graph when g is one
 * (counting its answers), else (or when it lacks the id) from the packs;
 * a new reference, Py_None when neither answers, or NULL. */
static PyObject *
walk_read(PyObject *self, PyObject *packs, const graph_table *g, PyObject *oid, PyObject *hexsz, PyObject *prefix,
          long long *graph_answers)
{
    if (g != NULL) {
        PyObject *facts = graph_facts(g, oid);
        if (facts != Py_False) {
            if (facts != NULL && facts != Py_None)
                (*graph_answers)++;
            return facts;
        }
        Py_DECREF(facts);
    }
    return walk_packed_facts(self, packs, oid, hexsz, prefix);
}

/* g filled from graph (None: no graph): 1 when filled, 0 when None, -1 when graph is not one. */
static int
walk_graph_open(graph_table *g, PyObject *graph, PyObject *hexsz)
{
    if (graph == Py_None)
        return 0;
    Py_ssize_t hex_digits = PyLong_AsSsize_t(hexsz);
    if (hex_digits == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return graph_open(g, graph, hex_digits / 2) < 0 ? -1 : 1;
}

/* 1 if packs is a list of (table, pack map, delta reader), else 0. */
static int
walk_packs_ok(PyObject *packs)
{
    if (!PyList_CheckExact(packs))
        return 0;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(packs); k++) {
        PyObject *pack = PyList_GET_ITEM(packs, k);
        if (!PyTuple_CheckExact(pack) || PyTuple_GET_SIZE(pack) != 3)
            return 0;
    }
    return 1;
}

static PyObject *
native_walk_plain(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "walk_plain(queue, seen, counter, packs, graph, fallback, first_parent, "
                                         "walked_type, hexsz, prefix, limit)");
        return NULL;
    }
    PyObject *queue = args[0], *seen = args[1], *packs = args[3], *fallback = args[5];
    PyTypeObject *walked_type = (PyTypeObject *)args[7];
    PyObject *hexsz = args[8], *prefix = args[9];
    long long counter = PyLong_AsLongLong(args[2]);
    Py_ssize_t limit = PyLong_AsSsize_t(args[10]);
    int first_parent = PyObject_IsTrue(args[6]);
    if (PyErr_Occurred())
        return NULL;
    if (!PyList_CheckExact(queue) || !PySet_Check(seen) || !walk_packs_ok(packs) || !PyType_Check(args[7]) ||
        !PyType_IsSubtype(walked_type, &PyTuple_Type) || walked_type->tp_basicsize != PyTuple_Type.tp_basicsize ||
        walked_type->tp_itemsize != PyTuple_Type.tp_itemsize)
        Py_RETURN_NONE;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(queue); k++)
        if (!walk_entry_ok(PyList_GET_ITEM(queue, k)))
            Py_RETURN_NONE;
    graph_table graph_view;
    int has_graph = walk_graph_open(&graph_view, args[4], hexsz);
    if (has_graph < 0)
        Py_RETURN_NONE;
    const graph_table *g = has_graph ? &graph_view : NULL;
    long long graph_answers = 0;
    PyObject *walked = PyList_New(0);
    if (walked == NULL)
        goto fail;
    PyObject *error = NULL;
    while (PyList_GET_SIZE(queue) > 0 && PyList_GET_SIZE(walked) < limit) {
        PyObject *entry = walk_heap_pop(queue);
        if (entry == NULL)
            goto fail;
        PyObject *parents = PyTuple_GET_ITEM(entry, 4);
        int called_back = 0;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(parents); k++) {
            PyObject *p = PyTuple_GET_ITEM(parents, k);
            int met = PySet_Contains(seen, p);
            if (met < 0 || (!met && PySet_Add(seen, p) < 0))
                goto fail_entry;
            if (!met) {
                PyObject *facts = walk_read(self, packs, g, p, hexsz, prefix, &graph_answers);
                if (facts == Py_None) {
                    Py_DECREF(facts);
                    called_back = 1;
                    facts = PyObject_CallOneArg(fallback, p);
                    if (facts == NULL) {
                        /* The reference raises here, after yielding the commits before this one. */
                        PyObject *type, *value, *tb;
                        PyErr_Fetch(&type, &value, &tb);
                        PyErr_NormalizeException(&type, &value, &tb);
                        if (tb != NULL && value != NULL)
                            PyException_SetTraceback(value, tb);
                        Py_XDECREF(type);
                        Py_XDECREF(tb);
                        error = value;
                        Py_DECREF(entry);
                        goto done;
                    }
                }
                if (facts == NULL)
                    goto fail_entry;
                PyObject *queued = walk_entry_from(facts, p, counter);
                Py_DECREF(facts);
                if (queued == NULL || walk_heap_push(queue, queued) < 0)
                    goto fail_entry;
                counter++;
            }
            if (first_parent)
                break;
        }
        PyObject *rec = walk_record(walked_type, entry);
        Py_DECREF(entry);
        if (rec == NULL)
            goto fail;
        int rc = PyList_Append(walked, rec);
        Py_DECREF(rec);
        if (rc < 0)
            goto fail;
        if (called_back)
            break;
        continue;
    fail_entry:
        Py_DECREF(entry);
        goto fail;
    }
done:
    if (g != NULL)
        graph_close(&graph_view);
    return Py_BuildValue("(NLNL)", walked, counter, error != NULL ? error : Py_NewRef(Py_None), graph_answers);
fail:
    if (g != NULL)
        graph_close(&graph_view);
    Py_XDECREF(walked);
    return NULL;
}

static PyObject *
native_commit_facts_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "commit_facts_many(packs, graph, oids, hexsz, prefix)");
        return NULL;
    }
    PyObject *packs = args[0], *oids = args[2];
    if (!walk_packs_ok(packs) || !PyList_CheckExact(oids)) {
        PyErr_SetString(PyExc_TypeError, "commit_facts_many: packs [(table, pack map, delta reader), ...], oids a list");
        return NULL;
    }
    graph_table graph_view;
    int has_graph = walk_graph_open(&graph_view, args[1], args[3]);
    if (has_graph < 0) {
        PyErr_SetString(PyExc_TypeError, "commit_facts_many: graph is None or GraphLayer.walk_table()");
        return NULL;
    }
    const graph_table *g = has_graph ? &graph_view : NULL;
    long long graph_answers = 0;
    Py_ssize_t n = PyList_GET_SIZE(oids);
    PyObject *out = PyList_New(n);
    if (out == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *facts = walk_read(self, packs, g, PyList_GET_ITEM(oids, k), args[3], args[4], &graph_answers);
        if (facts == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, k, facts);
    }
done:
    if (g != NULL)
        graph_close(&graph_view);
    return out == NULL ? NULL : Py_BuildValue("(NL)", out, graph_answers);
}
