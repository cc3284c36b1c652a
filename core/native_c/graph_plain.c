/* core/native_c/graph_plain.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (see graph_plain.h for what it offers).  The plain default-order
 * walk over a commit-graph's positions: once every commit waiting in the queue is in the graph, all
 * that follows is too (a graph holds the parents of its commits), so the loop needs no ids, no sets
 * and no tuples per queued commit -- a heap of (-date, number, position) records and a bitmap of the
 * positions met.  The reference is still PlainWalk.stream_plain (core/history/plain_walk.py): the
 * same pops, the same numbers, the same records.
 *
 *   graph_walk_check(graph, edges, hexsz) -> bool
 *       True when every commit of every layer reads as the reference reads it without doubt (parents
 *       inside the layer's view, octopus lists inside EDGE, generation data where corrected dates
 *       are used), so that a walk over positions never meets what graph_facts would leave to Python.
 *       edges: per layer (EDGE offset or -1, EDGE entries).
 *
 *   graph_walk_enter(queue, seen, graph, heap, bits, hexsz) -> bool
 *       The walk's state moved onto positions: each queue entry (-date, number, id, tree, parents)
 *       becomes a 24-byte record in heap (a bytearray, filled), each id of seen the graph holds a bit
 *       in bits (a bytearray of one bit per commit).  False (nothing kept) when an entry's id is not
 *       in the graph.
 *
 *   graph_walk_plain(heap, bits, counter, graph, edges, first_parent, walked_type, hexsz, limit)
 *       -> (walked, counter, graph answers)
 *       Up to limit commits popped from heap as the reference pops them, each unmet parent marked,
 *       read from the graph and pushed with the next number; walked: (id, tree, parents, date) as
 *       walked_type.
 *
 *   graph_walk_ids(heap, bits, counter, graph, edges, first_parent, hexsz, limit) -> (ids, counter, graph answers)
 *       graph_walk_plain's loop for a caller that needs only the ids (log --format=%H): ids is the
 *       popped commits' raw ids concatenated, one bytes object, no object made per commit. */
#include "graph_plain.h"

typedef struct {
    long long key; /* -date */
    long long number;
    long long pos;
} gw_entry;

typedef struct {
    long long at, count;
} gw_edge;

static int
gw_less(const gw_entry *a, const gw_entry *b)
{
    return a->key != b->key ? a->key < b->key : a->number < b->number;
}

static void
gw_sift_up(gw_entry *h, Py_ssize_t pos)
{
    gw_entry item = h[pos];
    while (pos > 0) {
        Py_ssize_t up = (pos - 1) >> 1;
        if (!gw_less(&item, &h[up]))
            break;
        h[pos] = h[up];
        pos = up;
    }
    h[pos] = item;
}

static void
gw_sift_down(gw_entry *h, Py_ssize_t n)
{
    if (n == 0)
        return;
    gw_entry item = h[0];
    Py_ssize_t pos = 0;
    for (;;) {
        Py_ssize_t child = 2 * pos + 1;
        if (child >= n)
            break;
        if (child + 1 < n && gw_less(&h[child + 1], &h[child]))
            child++;
        if (!gw_less(&h[child], &item))
            break;
        h[pos] = h[child];
        pos = child;
    }
    h[pos] = item;
}

/* edges into out (one per layer): 0, or -1 (no exception) when it is not one. */
static int
gw_edges(PyObject *edges, const graph_table *g, gw_edge *out)
{
    if (!PyTuple_CheckExact(edges) || PyTuple_GET_SIZE(edges) != g->n_layers)
        return -1;
    for (int k = 0; k < g->n_layers; k++) {
        PyObject *e = PyTuple_GET_ITEM(edges, k);
        if (!PyTuple_CheckExact(e) || PyTuple_GET_SIZE(e) != 2)
            return -1;
        out[k].at = PyLong_AsLongLong(PyTuple_GET_ITEM(e, 0));
        out[k].count = PyLong_AsLongLong(PyTuple_GET_ITEM(e, 1));
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (out[k].at >= 0 && (out[k].count < 0 || out[k].at + 4 * out[k].count > (long long)g->layers[k].view.len))
            return -1;
    }
    return 0;
}

/* The index of the layer holding pos. */
static int
gw_layer_index(const graph_table *g, long long pos)
{
    int k = 0;
    while (k < g->n_layers - 1 && pos >= g->layers[k].base + g->layers[k].count)
        k++;
    return k;
}

/* Parent positions of global position pos into out (room for cap): the count, or -1 when they do not read
 * without doubt (the reference would raise, or graph_facts would doubt). */
static Py_ssize_t
gw_parents(const graph_table *g, const gw_edge *edges, long long pos, long long *out, Py_ssize_t cap)
{
    int k = gw_layer_index(g, pos);
    const graph_layer *l = &g->layers[k];
    long long i = pos - l->base, limit = l->base + l->count;
    const uint8_t *row = l->m + l->cdat_at + i * (g->rawsz + 16);
    uint32_t p1 = be32_at(row + g->rawsz), p2 = be32_at(row + g->rawsz + 4);
    Py_ssize_t n = 0;
    if (p1 == GRAPH_PARENT_NONE)
        return 0;
    out[n++] = p1;
    if (p2 & GRAPH_EDGE_FLAG) {
        const gw_edge *e = &edges[k];
        if (e->at < 0)
            return -1;
        for (long long j = p2 & ~GRAPH_EDGE_FLAG;; j++) {
            if (j >= e->count || n >= cap)
                return -1;
            uint32_t v = be32_at(l->m + e->at + 4 * j);
            out[n++] = v & ~GRAPH_EDGE_FLAG;
            if (v & GRAPH_EDGE_FLAG)
                break;
        }
    }
    else if (p2 != GRAPH_PARENT_NONE)
        out[n++] = p2;
    for (Py_ssize_t j = 0; j < n; j++)
        if (out[j] >= limit)
            return -1;
    return n;
}

/* The commit time of global position pos. */
static long long
gw_time(const graph_table *g, long long pos)
{
    const graph_layer *l = &g->layers[gw_layer_index(g, pos)];
    const uint8_t *row = l->m + l->cdat_at + (pos - l->base) * (g->rawsz + 16) + g->rawsz + 8;
    return (long long)(((unsigned long long)(be32_at(row) & 3) << 32) | be32_at(row + 4));
}

static const uint8_t *
gw_oid(const graph_table *g, long long pos)
{
    const graph_layer *l = &g->layers[gw_layer_index(g, pos)];
    return l->m + l->oidl_at + (pos - l->base) * g->rawsz;
}

#define GW_MAX_PARENTS 4096 /* an octopus wider than this is left to the reference */

static PyObject *
native_graph_walk_check(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "graph_walk_check(graph, edges, hexsz)");
        return NULL;
    }
    graph_table g;
    if (walk_graph_open(&g, args[0], args[2]) != 1)
        Py_RETURN_FALSE;
    gw_edge edges[GRAPH_MAX_LAYERS];
    int ok = gw_edges(args[1], &g, edges) == 0;
    long long *parents = ok ? PyMem_Malloc(sizeof(long long) * GW_MAX_PARENTS) : NULL;
    if (ok && parents == NULL) {
        graph_close(&g);
        return PyErr_NoMemory();
    }
    for (int k = 0; ok && k < g.n_layers; k++) {
        const graph_layer *l = &g.layers[k];
        if (g.corrected && l->gda2_at < 0)
            ok = 0;
        for (long long i = 0; ok && i < l->count; i++) {
            if (gw_parents(&g, edges, l->base + i, parents, GW_MAX_PARENTS) < 0)
                ok = 0;
            else if (g.corrected) {
                uint32_t offset = be32_at(l->m + l->gda2_at + 4 * i);
                if ((offset & GRAPH_EDGE_FLAG) && (long long)(offset & ~GRAPH_EDGE_FLAG) >= l->gdo2_rows)
                    ok = 0;
            }
        }
    }
    PyMem_Free(parents);
    graph_close(&g);
    return PyBool_FromLong(ok);
}

/* The heap bytearray's room for at least n entries: its data, or NULL with an exception. */
static gw_entry *
gw_room(PyObject *heap, Py_ssize_t n)
{
    Py_ssize_t need = n * (Py_ssize_t)sizeof(gw_entry);
    if (PyByteArray_GET_SIZE(heap) < need) {
        Py_ssize_t grown = 2 * PyByteArray_GET_SIZE(heap);
        if (PyByteArray_Resize(heap, grown > need ? grown : need) < 0)
            return NULL;
    }
    return (gw_entry *)PyByteArray_AS_STRING(heap);
}

static PyObject *
native_graph_walk_enter(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "graph_walk_enter(queue, seen, graph, heap, bits, hexsz)");
        return NULL;
    }
    PyObject *queue = args[0], *seen = args[1], *heap = args[3], *bits = args[4];
    if (!PyList_CheckExact(queue) || !PySet_Check(seen) || !PyByteArray_CheckExact(heap) ||
        !PyByteArray_CheckExact(bits))
        Py_RETURN_FALSE;
    graph_table g;
    if (walk_graph_open(&g, args[2], args[5]) != 1)
        Py_RETURN_FALSE;
    PyObject *result = Py_False;
    Py_ssize_t n = PyList_GET_SIZE(queue);
    if (PyByteArray_Resize(bits, (Py_ssize_t)((g.total + 7) / 8)) < 0 || PyByteArray_Resize(heap, 0) < 0) {
        result = NULL;
        goto done;
    }
    memset(PyByteArray_AS_STRING(bits), 0, (size_t)PyByteArray_GET_SIZE(bits));
    gw_entry *h = gw_room(heap, n);
    if (h == NULL) {
        result = NULL;
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *e = PyList_GET_ITEM(queue, k);
        if (!walk_entry_ok(e))
            goto done;
        int over_a, over_b;
        long long key = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(e, 0), &over_a);
        long long number = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(e, 1), &over_b);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            goto done;
        }
        if (over_a || over_b)
            goto done;
        const uint8_t *oid;
        Py_ssize_t rawsz;
        if (oid_bytes(PyTuple_GET_ITEM(e, 2), &oid, &rawsz) < 0 || rawsz != g.rawsz)
            goto done;
        long long pos = graph_find(&g, oid);
        if (pos < 0)
            goto done;
        h[k].key = key;
        h[k].number = number;
        h[k].pos = pos;
    }
    /* the list is a heap on (key, number) already; so is the same order of records */
    uint8_t *b = (uint8_t *)PyByteArray_AS_STRING(bits);
    PyObject *it = PyObject_GetIter(seen), *key;
    if (it == NULL) {
        result = NULL;
        goto done;
    }
    while ((key = PyIter_Next(it)) != NULL) {
        const uint8_t *oid;
        Py_ssize_t rawsz;
        long long pos = oid_bytes(key, &oid, &rawsz) < 0 || rawsz != g.rawsz ? -1 : graph_find(&g, oid);
        Py_DECREF(key); /* (the set holds it) */
        if (pos == -2) {
            Py_DECREF(it);
            goto done;
        }
        if (pos >= 0)
            b[pos >> 3] |= (uint8_t)(1u << (pos & 7));
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        result = NULL;
        goto done;
    }
    if (PyByteArray_Resize(heap, n * (Py_ssize_t)sizeof(gw_entry)) < 0) {
        result = NULL;
        goto done;
    }
    result = Py_True;
done:
    graph_close(&g);
    if (result == Py_False)
        PyByteArray_Resize(heap, 0);
    return result == NULL ? NULL : Py_NewRef(result);
}

/* The loop of graph_walk_plain and graph_walk_ids: up to limit commits popped from heap as the reference
 * pops them, each unmet parent marked, read from the graph and pushed with the next number.  With a
 * walked_type, each popped commit is a record (id, tree, parents, date) in a list; without one (NULL),
 * the popped commits' raw ids are concatenated in one bytes object, and no object is made per commit. */
static PyObject *
gw_walk(PyObject *heap, PyObject *bits, PyObject *counter_obj, PyObject *graph, PyObject *edges_obj,
        PyObject *first_parent_obj, PyTypeObject *walked_type, PyObject *hexsz, PyObject *limit_obj, const char *name)
{
    long long counter = PyLong_AsLongLong(counter_obj);
    int first_parent = PyObject_IsTrue(first_parent_obj);
    Py_ssize_t limit = PyLong_AsSsize_t(limit_obj);
    if (PyErr_Occurred())
        return NULL;
    if (!PyByteArray_CheckExact(heap) || !PyByteArray_CheckExact(bits)) {
        PyErr_Format(PyExc_TypeError, "%s: heap and bits bytearrays", name);
        return NULL;
    }
    graph_table g;
    if (walk_graph_open(&g, graph, hexsz) != 1) {
        PyErr_Format(PyExc_TypeError, "%s: graph is GraphCommitInfo.walk_packs()'s graph", name);
        return NULL;
    }
    gw_edge edges[GRAPH_MAX_LAYERS];
    if (gw_edges(edges_obj, &g, edges) < 0 || PyByteArray_GET_SIZE(bits) != (Py_ssize_t)((g.total + 7) / 8) ||
        PyByteArray_GET_SIZE(heap) % (Py_ssize_t)sizeof(gw_entry) != 0) {
        graph_close(&g);
        PyErr_Format(PyExc_ValueError, "%s: state that does not fit this graph", name);
        return NULL;
    }
    Py_ssize_t n = PyByteArray_GET_SIZE(heap) / (Py_ssize_t)sizeof(gw_entry);
    long long answers = 0;
    long long *parents = PyMem_Malloc(sizeof(long long) * GW_MAX_PARENTS);
    PyObject *walked = NULL;
    Py_ssize_t count = 0, room = 0; /* commits popped; ids mode: the ids' room in walked */
    if (walked_type != NULL)
        walked = PyList_New(0);
    else {
        room = limit < 256 ? (limit > 0 ? limit : 1) : 256;
        if (room > n && n > 0)
            room = n; /* (grown below when the walk goes on) */
        walked = PyBytes_FromStringAndSize(NULL, room * g.rawsz);
    }
    if (parents == NULL || walked == NULL)
        goto fail;
    while (n > 0 && count < limit) {
        gw_entry *h = (gw_entry *)PyByteArray_AS_STRING(heap);
        gw_entry top = h[0];
        h[0] = h[n - 1];
        n--;
        gw_sift_down(h, n);
        Py_ssize_t np = gw_parents(&g, edges, top.pos, parents, GW_MAX_PARENTS);
        if (np < 0) {
            PyErr_Format(PyExc_ValueError, "%s: a commit graph_walk_check did not pass", name);
            goto fail;
        }
        PyObject *ptuple = NULL;
        if (walked_type != NULL) {
            ptuple = PyTuple_New(np);
            if (ptuple == NULL)
                goto fail;
            for (Py_ssize_t k = 0; k < np; k++) {
                PyObject *p = PyBytes_FromStringAndSize((const char *)gw_oid(&g, parents[k]), g.rawsz);
                if (p == NULL) {
                    Py_DECREF(ptuple);
                    goto fail;
                }
                PyTuple_SET_ITEM(ptuple, k, p);
            }
        }
        uint8_t *b = (uint8_t *)PyByteArray_AS_STRING(bits);
        for (Py_ssize_t k = 0; k < np; k++) {
            long long pp = parents[k];
            if (!(b[pp >> 3] & (1u << (pp & 7)))) {
                b[pp >> 3] |= (uint8_t)(1u << (pp & 7));
                h = gw_room(heap, n + 1);
                if (h == NULL) {
                    Py_XDECREF(ptuple);
                    goto fail;
                }
                h[n].key = -gw_time(&g, pp);
                h[n].number = counter++;
                h[n].pos = pp;
                gw_sift_up(h, n);
                n++;
                answers++;
            }
            if (first_parent)
                break;
        }
        const graph_layer *l = &g.layers[gw_layer_index(&g, top.pos)];
        const uint8_t *raw = l->m + l->oidl_at + (top.pos - l->base) * g.rawsz;
        if (walked_type == NULL) {
            if (count == room) {
                Py_ssize_t grown = 2 * room < limit ? 2 * room : limit;
                if (_PyBytes_Resize(&walked, grown * g.rawsz) < 0)
                    goto fail; /* (walked is NULL now) */
                room = grown;
            }
            memcpy(PyBytes_AS_STRING(walked) + count * g.rawsz, raw, (size_t)g.rawsz);
            count++;
            continue;
        }
        const uint8_t *row = l->m + l->cdat_at + (top.pos - l->base) * (g.rawsz + 16);
        PyObject *oid = PyBytes_FromStringAndSize((const char *)raw, g.rawsz);
        PyObject *tree = PyBytes_FromStringAndSize((const char *)row, g.rawsz);
        PyObject *date = PyLong_FromLongLong(-top.key);
        PyObject *rec = walked_type->tp_alloc(walked_type, 4);
        if (oid == NULL || tree == NULL || date == NULL || rec == NULL) {
            Py_XDECREF(oid);
            Py_XDECREF(tree);
            Py_XDECREF(date);
            Py_XDECREF(rec);
            Py_DECREF(ptuple);
            goto fail;
        }
        PyTuple_SET_ITEM(rec, 0, oid);
        PyTuple_SET_ITEM(rec, 1, tree);
        PyTuple_SET_ITEM(rec, 2, ptuple);
        PyTuple_SET_ITEM(rec, 3, date);
        int rc = PyList_Append(walked, rec);
        Py_DECREF(rec);
        if (rc < 0)
            goto fail;
        count++;
    }
    PyMem_Free(parents);
    graph_close(&g);
    if (walked_type == NULL && count != room && _PyBytes_Resize(&walked, count * g.rawsz) < 0)
        walked = NULL;
    if (walked == NULL || PyByteArray_Resize(heap, n * (Py_ssize_t)sizeof(gw_entry)) < 0) {
        Py_XDECREF(walked);
        return NULL;
    }
    return Py_BuildValue("(NLL)", walked, counter, answers);
fail:
    PyMem_Free(parents);
    graph_close(&g);
    Py_XDECREF(walked);
    PyByteArray_Resize(heap, n * (Py_ssize_t)sizeof(gw_entry)); /* (a heap still, whatever failed) */
    return NULL;
}

static PyObject *
native_graph_walk_plain(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError,
                        "graph_walk_plain(heap, bits, counter, graph, edges, first_parent, walked_type, hexsz, limit)");
        return NULL;
    }
    PyTypeObject *walked_type = (PyTypeObject *)args[6];
    if (!PyType_Check(args[6]) || !PyType_IsSubtype(walked_type, &PyTuple_Type) ||
        walked_type->tp_basicsize != PyTuple_Type.tp_basicsize || walked_type->tp_itemsize != PyTuple_Type.tp_itemsize) {
        PyErr_SetString(PyExc_TypeError, "graph_walk_plain: heap and bits bytearrays, a plain tuple type");
        return NULL;
    }
    return gw_walk(args[0], args[1], args[2], args[3], args[4], args[5], walked_type, args[7], args[8],
                   "graph_walk_plain");
}

static PyObject *
native_graph_walk_ids(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "graph_walk_ids(heap, bits, counter, graph, edges, first_parent, hexsz, limit)");
        return NULL;
    }
    return gw_walk(args[0], args[1], args[2], args[3], args[4], args[5], NULL, args[6], args[7], "graph_walk_ids");
}

/* graph_commit(graph, oid, hexsz) -> (tree, parents, commit time, generation), False, or None
 *     One commit as WalkSource.commit_info answers from the graph (core/history/graph_walk.py, _at):
 *     its position from the memo, else searched tip layer first; the parents' positions kept in the
 *     memo.  False when the graph lacks the id (the caller reads the packs), None when the reference
 *     would read more than this does (an octopus, an offset in GDO2, anything it would call broken):
 *     the caller asks the reference. */
static PyObject *
native_graph_commit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "graph_commit(graph, oid, hexsz)");
        return NULL;
    }
    graph_table g;
    if (walk_graph_open(&g, args[0], args[2]) != 1)
        Py_RETURN_NONE;
    PyObject *facts = graph_facts(&g, args[1]); /* (tree, parents, time), False or None */
    if (facts == NULL || !PyTuple_CheckExact(facts)) {
        graph_close(&g);
        return facts;
    }
    /* graph_facts found the position (memo or search); find it again for the generation */
    const uint8_t *oid;
    Py_ssize_t rawsz;
    long long pos = -1;
    PyObject *known = PyDict_GetItemWithError(g.memo, args[1]);
    if (known != NULL)
        pos = PyLong_AsLongLong(known);
    else if (!PyErr_Occurred() && oid_bytes(args[1], &oid, &rawsz) == 0)
        pos = graph_find(&g, oid);
    PyObject *out = NULL;
    if (PyErr_Occurred() || pos < 0 || pos >= g.total)
        goto done;
    const graph_layer *l = &g.layers[gw_layer_index(&g, pos)];
    long long i = pos - l->base;
    const uint8_t *row = l->m + l->cdat_at + i * (g.rawsz + 16);
    uint32_t word = be32_at(row + g.rawsz + 8);
    unsigned long long generation;
    if (g.corrected) {
        uint32_t offset = be32_at(l->m + l->gda2_at + 4 * i); /* (graph_facts checked GDA2 is there) */
        if (offset & GRAPH_EDGE_FLAG) { /* in GDO2, whose offset this table lacks: the reference reads it */
            out = Py_NewRef(Py_None);
            goto done;
        }
        generation = (((unsigned long long)(word & 3) << 32) | be32_at(row + g.rawsz + 12)) + offset;
    }
    else
        generation = word >> 2;
    PyObject *gen = PyLong_FromUnsignedLongLong(generation);
    if (gen == NULL)
        goto done;
    out = PyTuple_Pack(4, PyTuple_GET_ITEM(facts, 0), PyTuple_GET_ITEM(facts, 1), PyTuple_GET_ITEM(facts, 2), gen);
    Py_DECREF(gen);
done:
    PyErr_Clear();
    if (out == NULL && !PyErr_Occurred())
        out = Py_NewRef(Py_None);
    Py_DECREF(facts);
    graph_close(&g);
    return out;
}

/* graph_bloom_unchanged(blooms, memo, oid) -> True, False, or None
 *     The Bloom shortcut of WalkSource.first_parent_unchanged (core/history/graph_walk.py) for one
 *     commit; the reference is core/history/bloom.py (BloomFilter.contains_hashes).  memo: the walk
 *     source's positions (a commit not in it was not read from the graph: False).  blooms: per layer,
 *     base first, (map, commits, BIDX offset or -1 when the layer has no usable filters, filter data
 *     offset, filter data bytes, ((hashes of each key of a path, ...) per path)).  True when, for every
 *     path, some key's bits are not all set (the path certainly did not change); False when the filter
 *     cannot say (none, not computed, or a path that may have changed); None when the filter's span
 *     is outside BDAT (the reference calls the graph broken). */
/* The Bloom shortcut for global position pos (blooms as graph_bloom_unchanged takes them): 1 when
 * every path certainly did not change, 0 when the filter cannot say, 2 when the filter's span is
 * outside BDAT (the reference calls the graph broken), -1 with an exception. */
static int
gw_bloom_at(PyObject *blooms, long long pos)
{
    if (!PyTuple_CheckExact(blooms)) {
        PyErr_SetString(PyExc_TypeError, "graph_bloom: blooms is a tuple of layers");
        return -1;
    }
    long long base = 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(blooms); k++) {
        PyObject *spec = PyTuple_GET_ITEM(blooms, k);
        if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 6) {
            PyErr_SetString(PyExc_TypeError, "graph_bloom_unchanged: a layer is (map, commits, BIDX, data, size, "
                                             "hashes)");
            return -1;
        }
        long long count = PyLong_AsLongLong(PyTuple_GET_ITEM(spec, 1));
        if (count == -1 && PyErr_Occurred())
            return -1;
        if (pos >= base + count) {
            base += count;
            continue;
        }
        if (pos < base)
            break;
        long long bidx = PyLong_AsLongLong(PyTuple_GET_ITEM(spec, 2));
        long long data_at = PyLong_AsLongLong(PyTuple_GET_ITEM(spec, 3));
        long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(spec, 4));
        if (PyErr_Occurred())
            return -1;
        if (bidx < 0)
            return 0; /* no usable filters in this layer */
        Py_buffer view;
        const uint8_t *m;
        Py_ssize_t n;
        if (get_bytes(PyTuple_GET_ITEM(spec, 0), &view, &m, &n) < 0)
            return 2; /* (a closed map: the reference decides) */
        long long i = pos - base;
        int out = 0;
        if (bidx + 4 * (i + 1) > n || data_at + size > n) {
            out = 2;
            goto done;
        }
        long long end = be32_at(m + bidx + 4 * i), start = i ? be32_at(m + bidx + 4 * (i - 1)) : 0;
        if (start > end || end > size) {
            out = 2;
            goto done;
        }
        unsigned long long nbits = (unsigned long long)(end - start) * 8;
        if (nbits == 0)
            goto done; /* not computed */
        const uint8_t *f = m + data_at + start;
        PyObject *paths = PyTuple_GET_ITEM(spec, 5);
        if (!PyTuple_CheckExact(paths))
            goto bad;
        for (Py_ssize_t p = 0; p < PyTuple_GET_SIZE(paths); p++) {
            PyObject *keys = PyTuple_GET_ITEM(paths, p);
            if (!PyTuple_CheckExact(keys))
                goto bad;
            int may_have_changed = 1; /* all keys' bits set */
            for (Py_ssize_t q = 0; q < PyTuple_GET_SIZE(keys) && may_have_changed; q++) {
                PyObject *hashes = PyTuple_GET_ITEM(keys, q);
                if (!PyTuple_CheckExact(hashes))
                    goto bad;
                for (Py_ssize_t r = 0; r < PyTuple_GET_SIZE(hashes); r++) {
                    unsigned long long h = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(hashes, r));
                    if (h == (unsigned long long)-1 && PyErr_Occurred()) {
                        release_bytes(&view);
                        return -1;
                    }
                    unsigned long long bit = h % nbits;
                    if (!(f[bit >> 3] & (1u << (bit & 7)))) {
                        may_have_changed = 0;
                        break;
                    }
                }
            }
            if (may_have_changed)
                goto done; /* this path may have changed: 0 */
        }
        out = 1;
    done:
        release_bytes(&view);
        return out;
    bad:
        release_bytes(&view);
        PyErr_SetString(PyExc_TypeError, "graph_bloom_unchanged: hashes are tuples of tuples of tuples of ints");
        return -1;
    }
    return 0; /* a position past the graph: the reference finds no filter either */
}

static PyObject *
native_graph_bloom_unchanged(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyTuple_CheckExact(args[0]) || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "graph_bloom_unchanged(blooms, memo, oid)");
        return NULL;
    }
    PyObject *known = PyDict_GetItemWithError(args[1], args[2]);
    if (known == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_FALSE;
    }
    long long pos = PyLong_AsLongLong(known);
    if (pos == -1 && PyErr_Occurred())
        return NULL;
    switch (gw_bloom_at(args[0], pos)) {
    case 1:
        Py_RETURN_TRUE;
    case 0:
        Py_RETURN_FALSE;
    case 2:
        Py_RETURN_NONE;
    default:
        return NULL;
    }
}

/* --- the path-limited default-order walk over positions ------------------------------------------
 *
 *   graph_walk_paths(heap, bits, counter, graph, edges, first_parent, walked_type, hexsz, limit,
 *                    blooms, changed, touches) -> (walked, counter, graph answers, error)
 *
 * _RevWalk.stream with a path limiter and no exclusions (core/history/walk.py: stream and
 * simplify are the reference), once every queued commit is in a sound graph: the same heap and
 * bits as graph_walk_plain.  Each popped commit is simplified as git's default simplification
 * does it without exclusions -- a root is TREESAME unless touches(tree); else each parent in turn
 * (only the first with first_parent) is compared, the first through the Bloom shortcut (blooms as
 * graph_bloom_unchanged takes them, () for none) and otherwise through changed(parent tree, tree),
 * and the first parent it is TREESAME to is the only one kept -- then its kept parents are queued
 * as graph_walk_plain queues them and, unless TREESAME, its record is walked.  limit counts the
 * commits popped (a batch may walk none).  error: the exception a callback raised (the records
 * before it are walked, as the reference yields them before it raises), else None. */

/* The exception set now, taken (normalised, with its traceback): what a walk returns as its error. */
static PyObject *
gw_take_error(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

static PyObject *
native_graph_walk_paths(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 12) {
        PyErr_SetString(PyExc_TypeError, "graph_walk_paths(heap, bits, counter, graph, edges, first_parent, "
                                         "walked_type, hexsz, limit, blooms, changed, touches)");
        return NULL;
    }
    PyObject *heap = args[0], *bits = args[1], *blooms = args[9], *changed = args[10], *touches = args[11];
    PyTypeObject *walked_type = (PyTypeObject *)args[6];
    long long counter = PyLong_AsLongLong(args[2]);
    int first_parent = PyObject_IsTrue(args[5]);
    Py_ssize_t limit = PyLong_AsSsize_t(args[8]);
    if (PyErr_Occurred())
        return NULL;
    if (!PyByteArray_CheckExact(heap) || !PyByteArray_CheckExact(bits) || !PyType_Check(args[6]) ||
        !PyType_IsSubtype(walked_type, &PyTuple_Type) || walked_type->tp_basicsize != PyTuple_Type.tp_basicsize ||
        walked_type->tp_itemsize != PyTuple_Type.tp_itemsize || !PyTuple_CheckExact(blooms) ||
        !PyCallable_Check(changed) || !PyCallable_Check(touches)) {
        PyErr_SetString(PyExc_TypeError,
                        "graph_walk_paths: heap and bits bytearrays, a plain tuple type, blooms a tuple, callables");
        return NULL;
    }
    graph_table g;
    if (walk_graph_open(&g, args[3], args[7]) != 1) {
        PyErr_SetString(PyExc_TypeError, "graph_walk_paths: graph is GraphCommitInfo.walk_packs()'s graph");
        return NULL;
    }
    gw_edge edges[GRAPH_MAX_LAYERS];
    if (gw_edges(args[4], &g, edges) < 0 || PyByteArray_GET_SIZE(bits) != (Py_ssize_t)((g.total + 7) / 8) ||
        PyByteArray_GET_SIZE(heap) % (Py_ssize_t)sizeof(gw_entry) != 0) {
        graph_close(&g);
        PyErr_SetString(PyExc_ValueError, "graph_walk_paths: state that does not fit this graph");
        return NULL;
    }
    Py_ssize_t n = PyByteArray_GET_SIZE(heap) / (Py_ssize_t)sizeof(gw_entry);
    long long answers = 0;
    Py_ssize_t popped = 0;
    long long *parents = PyMem_Malloc(sizeof(long long) * GW_MAX_PARENTS);
    PyObject *walked = PyList_New(0), *error = NULL;
    if (parents == NULL || walked == NULL)
        goto fail;
    while (n > 0 && popped < limit) {
        gw_entry *h = (gw_entry *)PyByteArray_AS_STRING(heap);
        gw_entry top = h[0];
        h[0] = h[n - 1];
        n--;
        gw_sift_down(h, n);
        popped++;
        Py_ssize_t np = gw_parents(&g, edges, top.pos, parents, GW_MAX_PARENTS);
        if (np < 0) {
            PyErr_SetString(PyExc_ValueError, "graph_walk_paths: a commit graph_walk_check did not pass");
            goto fail;
        }
        const graph_layer *l = &g.layers[gw_layer_index(&g, top.pos)];
        const uint8_t *row = l->m + l->cdat_at + (top.pos - l->base) * (g.rawsz + 16);
        PyObject *tree = PyBytes_FromStringAndSize((const char *)row, g.rawsz);
        if (tree == NULL)
            goto fail;
        /* simplify: treesame, and the one parent kept (-1: all of them) */
        int treesame = 0;
        Py_ssize_t kept = -1;
        if (np == 0) {
            PyObject *got = PyObject_CallOneArg(touches, tree);
            int t = got == NULL ? -1 : PyObject_IsTrue(got);
            Py_XDECREF(got);
            if (t < 0) {
                Py_DECREF(tree);
                error = gw_take_error();
                break;
            }
            treesame = !t;
        }
        for (Py_ssize_t k = 0; k < np && !treesame; k++) {
            if (k == 1 && first_parent)
                break;
            int same = 0;
            if (k == 0 && PyTuple_GET_SIZE(blooms) > 0) {
                int b = gw_bloom_at(blooms, top.pos);
                if (b < 0) {
                    Py_DECREF(tree);
                    goto fail;
                }
                same = b == 1;
            }
            if (!same) {
                const graph_layer *pl = &g.layers[gw_layer_index(&g, parents[k])];
                PyObject *ptree = PyBytes_FromStringAndSize(
                    (const char *)(pl->m + pl->cdat_at + (parents[k] - pl->base) * (g.rawsz + 16)), g.rawsz);
                PyObject *got = ptree == NULL ? NULL : PyObject_CallFunctionObjArgs(changed, ptree, tree, NULL);
                Py_XDECREF(ptree);
                int c = got == NULL ? -1 : PyObject_IsTrue(got);
                Py_XDECREF(got);
                if (c < 0) {
                    Py_DECREF(tree);
                    error = gw_take_error();
                    goto stopped;
                }
                same = !c;
            }
            if (same) {
                treesame = 1;
                kept = k;
            }
        }
        uint8_t *b = (uint8_t *)PyByteArray_AS_STRING(bits);
        for (Py_ssize_t k = kept < 0 ? 0 : kept; k < (kept < 0 ? np : kept + 1); k++) {
            long long pp = parents[k];
            if (!(b[pp >> 3] & (1u << (pp & 7)))) {
                b[pp >> 3] |= (uint8_t)(1u << (pp & 7));
                h = gw_room(heap, n + 1);
                if (h == NULL) {
                    Py_DECREF(tree);
                    goto fail;
                }
                b = (uint8_t *)PyByteArray_AS_STRING(bits);
                h[n].key = -gw_time(&g, pp);
                h[n].number = counter++;
                h[n].pos = pp;
                gw_sift_up(h, n);
                n++;
                answers++;
            }
            if (first_parent)
                break;
        }
        if (treesame) {
            Py_DECREF(tree);
            continue;
        }
        PyObject *ptuple = PyTuple_New(np);
        if (ptuple == NULL) {
            Py_DECREF(tree);
            goto fail;
        }
        for (Py_ssize_t k = 0; k < np; k++) {
            PyObject *p = PyBytes_FromStringAndSize((const char *)gw_oid(&g, parents[k]), g.rawsz);
            if (p == NULL) {
                Py_DECREF(ptuple);
                Py_DECREF(tree);
                goto fail;
            }
            PyTuple_SET_ITEM(ptuple, k, p);
        }
        PyObject *oid = PyBytes_FromStringAndSize((const char *)(l->m + l->oidl_at + (top.pos - l->base) * g.rawsz),
                                                  g.rawsz);
        PyObject *date = PyLong_FromLongLong(-top.key);
        PyObject *rec = walked_type->tp_alloc(walked_type, 4);
        if (oid == NULL || date == NULL || rec == NULL) {
            Py_XDECREF(oid);
            Py_XDECREF(date);
            Py_XDECREF(rec);
            Py_DECREF(ptuple);
            Py_DECREF(tree);
            goto fail;
        }
        PyTuple_SET_ITEM(rec, 0, oid);
        PyTuple_SET_ITEM(rec, 1, tree);
        PyTuple_SET_ITEM(rec, 2, ptuple);
        PyTuple_SET_ITEM(rec, 3, date);
        int rc = PyList_Append(walked, rec);
        Py_DECREF(rec);
        if (rc < 0)
            goto fail;
    }
stopped:
    PyMem_Free(parents);
    graph_close(&g);
    if (PyByteArray_Resize(heap, n * (Py_ssize_t)sizeof(gw_entry)) < 0) {
        Py_DECREF(walked);
        Py_XDECREF(error);
        return NULL;
    }
    return Py_BuildValue("(NLLN)", walked, counter, answers, error != NULL ? error : Py_NewRef(Py_None));
fail:
    PyMem_Free(parents);
    graph_close(&g);
    Py_XDECREF(walked);
    Py_XDECREF(error);
    PyByteArray_Resize(heap, n * (Py_ssize_t)sizeof(gw_entry)); /* (a heap still, whatever failed) */
    return NULL;
}

/* --- the incremental topological walk over positions ---------------------------------------------
 *
 *   graph_topo_start(graph, edges, hexsz, tips, by_date, first_parent) -> state or None
 *   graph_topo_next(state, graph, edges, hexsz, by_date, first_parent, walked_type, limit)
 *       -> (walked, graph answers)
 *
 * git's incremental --topo-order / --date-order walk (core/history/topo_walk.py, _Incremental, is
 * the reference) for an unlimited walk without paths whose tips are all in a sound graph.  Without
 * paths the explore queue only parses commits ahead of time, which changes nothing here (every
 * commit is read from the graph when first met), so only the indegree queue and the topo queue are
 * kept: indegrees as int32 per position, flags per position, the indegree queue as a heap of
 * (generation, date, number, position) records, the topo queue as a stack of positions or a heap
 * of (date, number, position).  state: (indegrees, flags, indegree queue, topo queue, [number,
 * lowest generation]); None when a tip is not in the graph or a generation lies in GDO2. */

#define GT_INDEGREE 1
#define GT_SHOWN 2
#define GT_READ 4

typedef struct {
    unsigned long long gen;
    long long date, number, pos;
} gt_iq; /* indegree queue: highest generation, then latest date, then first in */

typedef struct {
    long long date, number, pos;
} gt_tq; /* topo queue by date: latest date, then first in */

static int
gt_iq_less(const gt_iq *a, const gt_iq *b)
{
    if (a->gen != b->gen)
        return a->gen > b->gen;
    if (a->date != b->date)
        return a->date > b->date;
    return a->number < b->number;
}

static int
gt_tq_less(const gt_tq *a, const gt_tq *b)
{
    return a->date != b->date ? a->date > b->date : a->number < b->number;
}

/* A generation: 0 with *gen set, -1 when it lies in GDO2 (this table lacks its offset). */
static int
gt_generation(const graph_table *g, long long pos, unsigned long long *gen)
{
    const graph_layer *l = &g->layers[gw_layer_index(g, pos)];
    long long i = pos - l->base;
    uint32_t word = be32_at(l->m + l->cdat_at + i * (g->rawsz + 16) + g->rawsz + 8);
    if (!g->corrected) {
        *gen = word >> 2;
        return 0;
    }
    uint32_t offset = be32_at(l->m + l->gda2_at + 4 * i);
    if (offset & GRAPH_EDGE_FLAG)
        return -1;
    *gen = (unsigned long long)gw_time(g, pos) + offset;
    return 0;
}

typedef struct {
    const graph_table *g;
    const gw_edge *edges;
    int32_t *indeg;
    uint8_t *flags;
    PyObject *iq, *tq; /* bytearrays */
    Py_ssize_t n_iq, n_tq;
    long long number;
    unsigned long long min_gen;
    int by_date, first_parent;
    long long answers;
    long long *parents; /* room for GW_MAX_PARENTS */
} gt_walk;

static void
gt_read(gt_walk *w, long long pos)
{
    if (!(w->flags[pos] & GT_READ)) {
        w->flags[pos] |= GT_READ;
        w->answers++;
    }
}

static int
gt_room(PyObject *buf, Py_ssize_t n, Py_ssize_t size)
{
    Py_ssize_t need = n * size;
    if (PyByteArray_GET_SIZE(buf) >= need)
        return 0;
    Py_ssize_t grown = 2 * PyByteArray_GET_SIZE(buf);
    return PyByteArray_Resize(buf, grown > need ? grown : need);
}

static int
gt_iq_push(gt_walk *w, long long pos)
{
    if (w->flags[pos] & GT_INDEGREE)
        return 0;
    w->flags[pos] |= GT_INDEGREE;
    gt_iq item;
    if (gt_generation(w->g, pos, &item.gen) < 0) {
        PyErr_SetString(PyExc_ValueError, "graph_topo: a generation in GDO2");
        return -1;
    }
    item.date = gw_time(w->g, pos);
    item.number = w->number++;
    item.pos = pos;
    if (gt_room(w->iq, w->n_iq + 1, sizeof(gt_iq)) < 0)
        return -1;
    gt_iq *h = (gt_iq *)PyByteArray_AS_STRING(w->iq);
    Py_ssize_t at = w->n_iq++;
    while (at > 0) {
        Py_ssize_t up = (at - 1) >> 1;
        if (!gt_iq_less(&item, &h[up]))
            break;
        h[at] = h[up];
        at = up;
    }
    h[at] = item;
    return 0;
}

static gt_iq
gt_iq_pop(gt_walk *w)
{
    gt_iq *h = (gt_iq *)PyByteArray_AS_STRING(w->iq);
    gt_iq top = h[0], item = h[--w->n_iq];
    Py_ssize_t at = 0, n = w->n_iq;
    for (;;) {
        Py_ssize_t child = 2 * at + 1;
        if (child >= n)
            break;
        if (child + 1 < n && gt_iq_less(&h[child + 1], &h[child]))
            child++;
        if (!gt_iq_less(&h[child], &item))
            break;
        h[at] = h[child];
        at = child;
    }
    if (n > 0)
        h[at] = item;
    return top;
}

static int
gt_put_topo(gt_walk *w, long long pos)
{
    if (!w->by_date) {
        if (gt_room(w->tq, w->n_tq + 1, sizeof(long long)) < 0)
            return -1;
        ((long long *)PyByteArray_AS_STRING(w->tq))[w->n_tq++] = pos;
        return 0;
    }
    gt_tq item = {gw_time(w->g, pos), w->number++, pos};
    if (gt_room(w->tq, w->n_tq + 1, sizeof(gt_tq)) < 0)
        return -1;
    gt_tq *h = (gt_tq *)PyByteArray_AS_STRING(w->tq);
    Py_ssize_t at = w->n_tq++;
    while (at > 0) {
        Py_ssize_t up = (at - 1) >> 1;
        if (!gt_tq_less(&item, &h[up]))
            break;
        h[at] = h[up];
        at = up;
    }
    h[at] = item;
    return 0;
}

static long long
gt_pop_topo(gt_walk *w)
{
    if (!w->by_date)
        return ((long long *)PyByteArray_AS_STRING(w->tq))[--w->n_tq];
    gt_tq *h = (gt_tq *)PyByteArray_AS_STRING(w->tq);
    gt_tq top = h[0], item = h[--w->n_tq];
    Py_ssize_t at = 0, n = w->n_tq;
    for (;;) {
        Py_ssize_t child = 2 * at + 1;
        if (child >= n)
            break;
        if (child + 1 < n && gt_tq_less(&h[child + 1], &h[child]))
            child++;
        if (!gt_tq_less(&h[child], &item))
            break;
        h[at] = h[child];
        at = child;
    }
    if (n > 0)
        h[at] = item;
    return top.pos;
}

/* compute_indegrees_to_depth: 0, or -1 with an exception. */
static int
gt_indegrees(gt_walk *w, unsigned long long cutoff)
{
    while (w->n_iq > 0 && ((gt_iq *)PyByteArray_AS_STRING(w->iq))[0].gen >= cutoff) {
        gt_iq c = gt_iq_pop(w);
        Py_ssize_t np = gw_parents(w->g, w->edges, c.pos, w->parents, GW_MAX_PARENTS);
        if (np < 0) {
            PyErr_SetString(PyExc_ValueError, "graph_topo: a commit graph_walk_check did not pass");
            return -1;
        }
        for (Py_ssize_t k = 0; k < np; k++) {
            long long p = w->parents[k];
            gt_read(w, p);
            w->indeg[p] = w->indeg[p] ? w->indeg[p] + 1 : 2;
            if (gt_iq_push(w, p) < 0)
                return -1;
            if (w->first_parent)
                break;
        }
    }
    return 0;
}

/* The walk's view of state (borrowed buffers): 0, or -1 (no exception) when state is not one. */
static int
gt_open(gt_walk *w, PyObject *state, const graph_table *g, const gw_edge *edges, int by_date, int first_parent)
{
    if (!PyTuple_CheckExact(state) || PyTuple_GET_SIZE(state) != 5)
        return -1;
    PyObject *indeg = PyTuple_GET_ITEM(state, 0), *flags = PyTuple_GET_ITEM(state, 1);
    PyObject *scal = PyTuple_GET_ITEM(state, 4);
    w->iq = PyTuple_GET_ITEM(state, 2);
    w->tq = PyTuple_GET_ITEM(state, 3);
    if (!PyByteArray_CheckExact(indeg) || !PyByteArray_CheckExact(flags) || !PyByteArray_CheckExact(w->iq) ||
        !PyByteArray_CheckExact(w->tq) || !PyList_CheckExact(scal) || PyList_GET_SIZE(scal) != 4 ||
        PyByteArray_GET_SIZE(indeg) != (Py_ssize_t)(4 * g->total) || PyByteArray_GET_SIZE(flags) != g->total)
        return -1;
    w->g = g;
    w->edges = edges;
    w->indeg = (int32_t *)PyByteArray_AS_STRING(indeg);
    w->flags = (uint8_t *)PyByteArray_AS_STRING(flags);
    w->number = PyLong_AsLongLong(PyList_GET_ITEM(scal, 0));
    w->min_gen = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(scal, 1));
    w->n_iq = PyLong_AsSsize_t(PyList_GET_ITEM(scal, 2));
    w->n_tq = PyLong_AsSsize_t(PyList_GET_ITEM(scal, 3));
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    if (w->n_iq < 0 || w->n_tq < 0 || w->n_iq * (Py_ssize_t)sizeof(gt_iq) > PyByteArray_GET_SIZE(w->iq) ||
        w->n_tq * (Py_ssize_t)(by_date ? sizeof(gt_tq) : sizeof(long long)) > PyByteArray_GET_SIZE(w->tq))
        return -1; /* counts the queues cannot hold */
    w->by_date = by_date;
    w->first_parent = first_parent;
    w->answers = 0;
    return 0;
}

static int
gt_save(gt_walk *w, PyObject *state)
{
    PyObject *scal = PyTuple_GET_ITEM(state, 4);
    PyObject *v[4] = {PyLong_FromLongLong(w->number), PyLong_FromUnsignedLongLong(w->min_gen),
                      PyLong_FromSsize_t(w->n_iq), PyLong_FromSsize_t(w->n_tq)};
    int rc = 0;
    for (int k = 0; k < 4; k++) {
        if (v[k] == NULL)
            rc = -1;
        else
            PyList_SetItem(scal, k, v[k]); /* steals */
    }
    return rc;
}

/* Parse the common arguments: graph (args[0]), edges (args[1]), hexsz (args[2]). */
static int
gt_graph(PyObject *const *args, graph_table *g, gw_edge *edges)
{
    if (walk_graph_open(g, args[0], args[2]) != 1)
        return -1;
    if (gw_edges(args[1], g, edges) < 0) {
        graph_close(g);
        return -1;
    }
    return 0;
}

static PyObject *
native_graph_topo_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyList_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "graph_topo_start(graph, edges, hexsz, tips, by_date, first_parent)");
        return NULL;
    }
    int by_date = PyObject_IsTrue(args[4]), first_parent = PyObject_IsTrue(args[5]);
    if (by_date < 0 || first_parent < 0)
        return NULL;
    graph_table g;
    gw_edge edges[GRAPH_MAX_LAYERS];
    if (gt_graph(args, &g, edges) < 0)
        Py_RETURN_NONE;
    PyObject *tips = args[3], *state = NULL, *out = NULL;
    Py_ssize_t n = PyList_GET_SIZE(tips);
    long long *pos = PyMem_Malloc(sizeof(long long) * (n ? n : 1));
    gt_walk w;
    w.parents = PyMem_Malloc(sizeof(long long) * GW_MAX_PARENTS);
    if (pos == NULL || w.parents == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        const uint8_t *oid;
        Py_ssize_t rawsz;
        if (oid_bytes(PyList_GET_ITEM(tips, k), &oid, &rawsz) < 0 || rawsz != g.rawsz ||
            (pos[k] = graph_find(&g, oid)) < 0) {
            out = Py_NewRef(Py_None);
            goto done;
        }
    }
    if (g.corrected) /* a generation in GDO2 anywhere: the reference walks */
        for (int k = 0; k < g.n_layers; k++)
            for (long long i = 0; i < g.layers[k].count; i++)
                if (be32_at(g.layers[k].m + g.layers[k].gda2_at + 4 * i) & GRAPH_EDGE_FLAG) {
                    out = Py_NewRef(Py_None);
                    goto done;
                }
    state = Py_BuildValue("(NNNN[iiii])", PyByteArray_FromStringAndSize(NULL, 0),
                          PyByteArray_FromStringAndSize(NULL, 0), PyByteArray_FromStringAndSize(NULL, 0),
                          PyByteArray_FromStringAndSize(NULL, 0), 0, 0, 0, 0);
    if (state == NULL || PyByteArray_Resize(PyTuple_GET_ITEM(state, 0), (Py_ssize_t)(4 * g.total)) < 0 ||
        PyByteArray_Resize(PyTuple_GET_ITEM(state, 1), (Py_ssize_t)g.total) < 0)
        goto done;
    memset(PyByteArray_AS_STRING(PyTuple_GET_ITEM(state, 0)), 0, (size_t)(4 * g.total));
    memset(PyByteArray_AS_STRING(PyTuple_GET_ITEM(state, 1)), 0, (size_t)g.total);
    if (gt_open(&w, state, &g, edges, by_date, first_parent) < 0) {
        PyErr_SetString(PyExc_SystemError, "graph_topo_start: a state it made does not open");
        goto done;
    }
    w.min_gen = ~0ULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        unsigned long long gen;
        gt_read(&w, pos[k]);
        if (gt_iq_push(&w, pos[k]) < 0 || gt_generation(&g, pos[k], &gen) < 0)
            goto done;
        if (gen < w.min_gen)
            w.min_gen = gen;
        w.indeg[pos[k]] = 1;
    }
    if (gt_indegrees(&w, w.min_gen) < 0)
        goto done;
    for (Py_ssize_t k = 0; k < n; k++)
        if (w.indeg[pos[k]] == 1 && gt_put_topo(&w, pos[k]) < 0)
            goto done;
    if (!by_date) { /* the tips come out in the walk's order */
        long long *s = (long long *)PyByteArray_AS_STRING(w.tq);
        for (Py_ssize_t a = 0, b = w.n_tq - 1; a < b; a++, b--) {
            long long t = s[a];
            s[a] = s[b];
            s[b] = t;
        }
    }
    if (gt_save(&w, state) < 0)
        goto done;
    out = Py_BuildValue("(OL)", state, w.answers);
done:
    PyMem_Free(pos);
    PyMem_Free(w.parents);
    Py_XDECREF(state);
    graph_close(&g);
    return out;
}

static PyObject *
native_graph_topo_next(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "graph_topo_next(graph, edges, hexsz, state, by_date, first_parent, walked_type, limit)");
        return NULL;
    }
    int by_date = PyObject_IsTrue(args[4]), first_parent = PyObject_IsTrue(args[5]);
    Py_ssize_t limit = PyLong_AsSsize_t(args[7]);
    PyTypeObject *walked_type = (PyTypeObject *)args[6];
    if (by_date < 0 || first_parent < 0 || PyErr_Occurred())
        return NULL;
    if (!PyType_Check(args[6]) || !PyType_IsSubtype(walked_type, &PyTuple_Type) ||
        walked_type->tp_basicsize != PyTuple_Type.tp_basicsize ||
        walked_type->tp_itemsize != PyTuple_Type.tp_itemsize) {
        PyErr_SetString(PyExc_TypeError, "graph_topo_next: a plain tuple type");
        return NULL;
    }
    graph_table g;
    gw_edge edges[GRAPH_MAX_LAYERS];
    if (gt_graph(args, &g, edges) < 0) {
        PyErr_SetString(PyExc_TypeError, "graph_topo_next: graph and edges as graph_topo_start took them");
        return NULL;
    }
    gt_walk w;
    w.parents = PyMem_Malloc(sizeof(long long) * GW_MAX_PARENTS);
    long long *mine = PyMem_Malloc(sizeof(long long) * GW_MAX_PARENTS); /* the popped commit's parents */
    PyObject *walked = PyList_New(0), *out = NULL;
    if (w.parents == NULL || mine == NULL || walked == NULL)
        goto done;
    if (gt_open(&w, args[3], &g, edges, by_date, first_parent) < 0) {
        PyErr_SetString(PyExc_ValueError, "graph_topo_next: a state that does not fit this graph");
        goto done;
    }
    while (w.n_tq > 0 && PyList_GET_SIZE(walked) < limit) {
        long long c = gt_pop_topo(&w);
        w.indeg[c] = 0;
        Py_ssize_t np = gw_parents(&g, edges, c, w.parents, GW_MAX_PARENTS);
        if (np < 0) {
            PyErr_SetString(PyExc_ValueError, "graph_topo_next: a commit graph_walk_check did not pass");
            goto save;
        }
        /* the record's parents first: expanding may compute indegrees, which reuses w.parents */
        PyObject *ptuple = PyTuple_New(np);
        if (ptuple == NULL)
            goto save;
        for (Py_ssize_t k = 0; k < np; k++) {
            PyObject *p = PyBytes_FromStringAndSize((const char *)gw_oid(&g, w.parents[k]), g.rawsz);
            if (p == NULL) {
                Py_DECREF(ptuple);
                goto save;
            }
            PyTuple_SET_ITEM(ptuple, k, p);
        }
        memcpy(mine, w.parents, sizeof(long long) * (size_t)np); /* (computing indegrees reuses w.parents) */
        for (Py_ssize_t k = 0; k < np; k++) {
            long long p = mine[k];
            gt_read(&w, p);
            unsigned long long gen;
            if (gt_generation(&g, p, &gen) < 0) {
                PyErr_SetString(PyExc_ValueError, "graph_topo_next: a generation in GDO2");
                Py_DECREF(ptuple);
                goto save;
            }
            if (gen < w.min_gen) {
                w.min_gen = gen;
                if (gt_indegrees(&w, w.min_gen) < 0) {
                    Py_DECREF(ptuple);
                    goto save;
                }
            }
            int32_t d = w.indeg[p] - 1;
            w.indeg[p] = d;
            if (d == 1 && gt_put_topo(&w, p) < 0) {
                Py_DECREF(ptuple);
                goto save;
            }
            if (first_parent)
                break;
        }
        if (w.flags[c] & GT_SHOWN) {
            Py_DECREF(ptuple);
            continue;
        }
        w.flags[c] |= GT_SHOWN;
        const graph_layer *l = &g.layers[gw_layer_index(&g, c)];
        PyObject *oid = PyBytes_FromStringAndSize((const char *)gw_oid(&g, c), g.rawsz);
        PyObject *tree =
            PyBytes_FromStringAndSize((const char *)(l->m + l->cdat_at + (c - l->base) * (g.rawsz + 16)), g.rawsz);
        PyObject *date = PyLong_FromLongLong(gw_time(&g, c));
        PyObject *rec = walked_type->tp_alloc(walked_type, 4);
        if (oid == NULL || tree == NULL || date == NULL || rec == NULL) {
            Py_XDECREF(oid);
            Py_XDECREF(tree);
            Py_XDECREF(date);
            Py_XDECREF(rec);
            Py_DECREF(ptuple);
            goto save;
        }
        PyTuple_SET_ITEM(rec, 0, oid);
        PyTuple_SET_ITEM(rec, 1, tree);
        PyTuple_SET_ITEM(rec, 2, ptuple);
        PyTuple_SET_ITEM(rec, 3, date);
        int rc = PyList_Append(walked, rec);
        Py_DECREF(rec);
        if (rc < 0)
            goto save;
    }
    if (gt_save(&w, args[3]) == 0)
        out = Py_BuildValue("(OL)", walked, w.answers);
    goto done;
save:
    gt_save(&w, args[3]);
done:
    PyMem_Free(w.parents);
    PyMem_Free(mine);
    Py_XDECREF(walked);
    graph_close(&g);
    return out;
}
