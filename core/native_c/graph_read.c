/* core/native_c/graph_read.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (which includes Python.h, common.c and idx_lookup.c before this file).  A commit's facts from a
 * one-file commit-graph (gitformat-commit-graph), for the plain walk's loop (plain_walk.c); the
 * reference is WalkSource.commit_info and _at (core/history/graph_walk.py) over
 * core/history/commit_graph.py.
 *
 *   graph: (map, fanout at, OIDL at, CDAT at, commits, GDA2 at or -1, GDO2 rows, corrected dates)
 *   as GraphLayer.walk_table gives it, then the walk source's position memo (a dict: the position
 *   of each id met as a parent; the reference finds such a commit there, not by its id, and so
 *   does this, even when the ids are out of order).  A commit's answer: (tree, parents, commit time) as the
 *   reference reads it, False when the graph lacks the id, or None (doubt) where the reference
 *   would read more than this does — an octopus merge's EDGE list, a parent position past the
 *   graph, a generation offset past GDO2 — so that it answers (or drops the graph) itself. */

#define GRAPH_PARENT_NONE 0x70000000u
#define GRAPH_EDGE_FLAG 0x80000000u

typedef struct {
    Py_buffer view;
    const uint8_t *m;
    Py_ssize_t n;
    long long fan_at, oidl_at, cdat_at, count, gda2_at, gdo2_rows;
    int corrected;
    Py_ssize_t rawsz;
    PyObject *memo; /* borrowed: the spec holds it */
} graph_table;

/* 0 with g filled (release with graph_close), or -1 (no exception) when spec is not one. */
static int
graph_open(graph_table *g, PyObject *spec, Py_ssize_t rawsz)
{
    if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 9 || !PyDict_CheckExact(PyTuple_GET_ITEM(spec, 8)))
        return -1;
    long long v[6];
    for (int k = 0; k < 6; k++) {
        v[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(spec, k + 1));
        if (v[k] == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
    }
    int corrected = PyObject_IsTrue(PyTuple_GET_ITEM(spec, 7));
    if (corrected < 0) {
        PyErr_Clear();
        return -1;
    }
    if (get_bytes(PyTuple_GET_ITEM(spec, 0), &g->view, &g->m, &g->n) < 0)
        return -1;
    g->fan_at = v[0];
    g->oidl_at = v[1];
    g->cdat_at = v[2];
    g->count = v[3];
    g->gda2_at = v[4];
    g->gdo2_rows = v[5];
    g->corrected = corrected;
    g->rawsz = rawsz;
    g->memo = PyTuple_GET_ITEM(spec, 8);
    long long n = g->n;
    int fits = g->fan_at >= 0 && g->fan_at + 1024 <= n && g->count >= 0 && g->count < (1LL << 31) &&
               g->oidl_at >= 0 && g->oidl_at + g->count * rawsz <= n && g->cdat_at >= 0 &&
               g->cdat_at + g->count * (rawsz + 16) <= n && g->gdo2_rows >= 0 &&
               (g->gda2_at < 0 || g->gda2_at + g->count * 4 <= n);
    if (!fits) {
        release_bytes(&g->view);
        return -1;
    }
    return 0;
}

static void
graph_close(graph_table *g)
{
    release_bytes(&g->view);
}

/* The local position of oid, -1 when absent, -2 on doubt (a fanout out of order). */
static long long
graph_find(const graph_table *g, const uint8_t *oid)
{
    const uint8_t *fan = g->m + g->fan_at;
    long long lo = oid[0] ? be32_at(fan + 4 * (oid[0] - 1)) : 0, hi = be32_at(fan + 4 * oid[0]);
    if (lo > hi || hi > g->count)
        return -2;
    while (lo < hi) {
        long long mid = lo + (hi - lo) / 2;
        int c = memcmp(g->m + g->oidl_at + mid * g->rawsz, oid, (size_t)g->rawsz);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* The id at local position pos, as a new bytes object (NULL: MemoryError). */
static PyObject *
graph_oid_at(const graph_table *g, long long pos)
{
    return PyBytes_FromStringAndSize((const char *)(g->m + g->oidl_at + pos * g->rawsz), g->rawsz);
}

/* oid's facts: a new reference ((tree, parents, time), Py_False, or Py_None), or NULL (MemoryError). */
static PyObject *
graph_facts(const graph_table *g, PyObject *oid_obj)
{
    const uint8_t *oid;
    Py_ssize_t rawsz;
    if (oid_bytes(oid_obj, &oid, &rawsz) < 0 || rawsz != g->rawsz)
        Py_RETURN_NONE;
    long long i;
    PyObject *known = PyDict_GetItemWithError(g->memo, oid_obj);
    if (known != NULL) {
        i = PyLong_AsLongLong(known);
        if (i < 0 || i >= g->count) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    }
    else {
        if (PyErr_Occurred())
            return NULL;
        i = graph_find(g, oid);
        if (i == -1)
            Py_RETURN_FALSE;
        if (i < 0)
            Py_RETURN_NONE;
    }
    const uint8_t *row = g->m + g->cdat_at + i * (g->rawsz + 16);
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
        if (parent_pos[k] >= g->count)
            Py_RETURN_NONE; /* the reference reports the graph and drops it */
    if (g->corrected) {
        /* the reference computes the generation too, and doubts an offset past GDO2 */
        if (g->gda2_at < 0)
            Py_RETURN_NONE;
        uint32_t offset = be32_at(g->m + g->gda2_at + 4 * i);
        if ((offset & GRAPH_EDGE_FLAG) && (long long)(offset & ~GRAPH_EDGE_FLAG) >= g->gdo2_rows)
            Py_RETURN_NONE;
    }
    PyObject *tree = PyBytes_FromStringAndSize((const char *)row, g->rawsz);
    PyObject *parents = PyTuple_New(parents_n);
    PyObject *time = PyLong_FromUnsignedLongLong(((unsigned long long)(word & 3) << 32) | low);
    PyObject *facts = NULL;
    if (tree == NULL || parents == NULL || time == NULL)
        goto done;
    for (int k = 0; k < parents_n; k++) {
        PyObject *p = graph_oid_at(g, parent_pos[k]);
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
