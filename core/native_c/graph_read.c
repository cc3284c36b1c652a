/* core/native_c/graph_read.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (see graph_read.h for what it offers).  A commit's facts from a
 * commit-graph, one file or a chain of layers (gitformat-commit-graph), for the plain walk's loop
 * (plain_walk.c); the reference is WalkSource.commit_info and _at (core/history/graph_walk.py)
 * over core/history/commit_graph.py.
 *
 *   graph: (layers, corrected dates, memo).  layers: each layer's (map, fanout at, OIDL at, CDAT at,
 *   commits, GDA2 at or -1, GDO2 rows) as GraphLayer.walk_table gives it, base first; a commit's
 *   position counts the commits of the layers below.  memo: the walk source's position memo (a dict:
 *   the position of each id met as a parent; the reference finds such a commit there, not by its
 *   id, and so does this, even when the ids are out of order).
 *
 *   A commit's answer: (tree, parents, commit time) as the reference reads it, False when the graph
 *   lacks the id, or None (doubt) where the reference would read more than this does — an octopus
 *   merge's EDGE list, a parent position past the commits its layer sees, a generation offset past
 *   GDO2 — so that it answers (or drops the graph) itself. */
#include "graph_read.h"

static void
graph_close(graph_table *g)
{
    for (int k = 0; k < g->n_layers; k++)
        release_bytes(&g->layers[k].view);
    g->n_layers = 0;
}

/* One layer from its spec: 0, or -1 (no exception) when it is not one. */
static int
graph_layer_open(graph_layer *l, PyObject *spec, Py_ssize_t rawsz, long long base)
{
    if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 7)
        return -1;
    long long v[6];
    for (int k = 0; k < 6; k++) {
        v[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(spec, k + 1));
        if (v[k] == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
    }
    const uint8_t *m;
    Py_ssize_t n;
    if (get_bytes(PyTuple_GET_ITEM(spec, 0), &l->view, &m, &n) < 0)
        return -1;
    l->m = m;
    l->fan_at = v[0];
    l->oidl_at = v[1];
    l->cdat_at = v[2];
    l->count = v[3];
    l->gda2_at = v[4];
    l->gdo2_rows = v[5];
    l->base = base;
    int fits = l->fan_at >= 0 && l->fan_at + 1024 <= n && l->count >= 0 && l->count < (1LL << 31) &&
               l->oidl_at >= 0 && l->oidl_at + l->count * rawsz <= n && l->cdat_at >= 0 &&
               l->cdat_at + l->count * (rawsz + 16) <= n && l->gdo2_rows >= 0 &&
               (l->gda2_at < 0 || l->gda2_at + l->count * 4 <= n);
    if (!fits) {
        release_bytes(&l->view);
        return -1;
    }
    return 0;
}

/* 0 with g filled (release with graph_close), or -1 (no exception) when spec is not one. */
static int
graph_open(graph_table *g, PyObject *spec, Py_ssize_t rawsz)
{
    g->n_layers = 0;
    if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 3 || !PyTuple_CheckExact(PyTuple_GET_ITEM(spec, 0)) ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(spec, 2)))
        return -1;
    PyObject *layers = PyTuple_GET_ITEM(spec, 0);
    Py_ssize_t count = PyTuple_GET_SIZE(layers);
    int corrected = PyObject_IsTrue(PyTuple_GET_ITEM(spec, 1));
    if (corrected < 0) {
        PyErr_Clear();
        return -1;
    }
    if (count < 1 || count > GRAPH_MAX_LAYERS)
        return -1;
    long long base = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (graph_layer_open(&g->layers[k], PyTuple_GET_ITEM(layers, k), rawsz, base) < 0) {
            graph_close(g);
            return -1;
        }
        g->n_layers = (int)k + 1;
        base += g->layers[k].count;
    }
    g->total = base;
    g->corrected = corrected;
    g->rawsz = rawsz;
    g->memo = PyTuple_GET_ITEM(spec, 2);
    return 0;
}

/* The layer that holds global position pos (pos in [0, total)). */
static const graph_layer *
graph_layer_of(const graph_table *g, long long pos)
{
    for (int k = 0; k < g->n_layers; k++)
        if (pos < g->layers[k].base + g->layers[k].count)
            return &g->layers[k];
    return NULL;
}

/* oid's local position in layer l, -1 when absent, -2 on doubt (a fanout out of order). */
static long long
graph_layer_find(const graph_layer *l, const uint8_t *oid, Py_ssize_t rawsz)
{
    const uint8_t *fan = l->m + l->fan_at;
    long long lo = oid[0] ? be32_at(fan + 4 * (oid[0] - 1)) : 0, hi = be32_at(fan + 4 * oid[0]);
    if (lo > hi || hi > l->count)
        return -2;
    while (lo < hi) { /* search.binary_search's probes, so that ids out of order give its answer */
        long long mid = lo + (hi - lo) / 2;
        int c = memcmp(l->m + l->oidl_at + mid * rawsz, oid, (size_t)rawsz);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* oid's global position, tip layer first as git searches: -1 when absent, -2 on doubt. */
static long long
graph_find(const graph_table *g, const uint8_t *oid)
{
    for (int k = g->n_layers - 1; k >= 0; k--) {
        long long i = graph_layer_find(&g->layers[k], oid, g->rawsz);
        if (i == -2)
            return -2;
        if (i >= 0)
            return g->layers[k].base + i;
    }
    return -1;
}

/* oid's facts: a new reference ((tree, parents, time), Py_False, or Py_None), or NULL (MemoryError). */
static PyObject *
graph_facts(const graph_table *g, PyObject *oid_obj)
{
    const uint8_t *oid;
    Py_ssize_t rawsz;
    if (oid_bytes(oid_obj, &oid, &rawsz) < 0 || rawsz != g->rawsz)
        Py_RETURN_NONE;
    long long pos;
    PyObject *known = PyDict_GetItemWithError(g->memo, oid_obj);
    if (known != NULL) {
        pos = PyLong_AsLongLong(known);
        if (pos < 0 || pos >= g->total) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    }
    else {
        if (PyErr_Occurred())
            return NULL;
        pos = graph_find(g, oid);
        if (pos == -1)
            Py_RETURN_FALSE;
        if (pos < 0)
            Py_RETURN_NONE;
    }
    const graph_layer *l = graph_layer_of(g, pos);
    long long i = pos - l->base;
    const uint8_t *row = l->m + l->cdat_at + i * (g->rawsz + 16);
    uint32_t p1 = be32_at(row + g->rawsz), p2 = be32_at(row + g->rawsz + 4);
    uint32_t word = be32_at(row + g->rawsz + 8), low = be32_at(row + g->rawsz + 12);
    long long parent_pos[2];
    int parents_n = 0;
    if (p1 != GRAPH_PARENT_NONE) {
        if (p2 & GRAPH_EDGE_FLAG)
            Py_RETURN_NONE; /* an octopus: the reference reads EDGE */
        parent_pos[parents_n++] = p1;
        if (p2 != GRAPH_PARENT_NONE)
            parent_pos[parents_n++] = p2;
    }
    for (int k = 0; k < parents_n; k++)
        if (parent_pos[k] >= l->base + l->count)
            Py_RETURN_NONE; /* a layer never points above itself: the reference drops the graph */
    if (g->corrected) {
        /* the reference computes the generation too, and doubts an offset past GDO2 */
        if (l->gda2_at < 0)
            Py_RETURN_NONE;
        uint32_t offset = be32_at(l->m + l->gda2_at + 4 * i);
        if ((offset & GRAPH_EDGE_FLAG) && (long long)(offset & ~GRAPH_EDGE_FLAG) >= l->gdo2_rows)
            Py_RETURN_NONE;
    }
    PyObject *tree = PyBytes_FromStringAndSize((const char *)row, g->rawsz);
    PyObject *parents = PyTuple_New(parents_n);
    PyObject *time = PyLong_FromUnsignedLongLong(((unsigned long long)(word & 3) << 32) | low);
    PyObject *facts = NULL;
    if (tree == NULL || parents == NULL || time == NULL)
        goto done;
    for (int k = 0; k < parents_n; k++) {
        const graph_layer *pl = graph_layer_of(g, parent_pos[k]);
        PyObject *p = PyBytes_FromStringAndSize(
            (const char *)(pl->m + pl->oidl_at + (parent_pos[k] - pl->base) * g->rawsz), g->rawsz);
        if (p == NULL)
            goto done;
        PyTuple_SET_ITEM(parents, k, p);
        PyObject *at = PyLong_FromLongLong(parent_pos[k]);
        int bad = at == NULL || PyDict_SetItem(g->memo, p, at) < 0; /* the walk asks for the parents next */
        Py_XDECREF(at);
        if (bad)
            goto done;
    }
    facts = PyTuple_Pack(3, tree, parents, time);
done:
    Py_XDECREF(tree);
    Py_XDECREF(parents);
    Py_XDECREF(time);
    return facts;
}
