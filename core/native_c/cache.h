/* core/native_c/cache.h: what cache.c offers the other parts of packscope.core._native.
 * The delta-base cache's compiled half: DeltaBaseCache.get's and .put's rules
 * (core/store/cache.py, the reference of this pair; tests/test_delta_base_cache_pair.py holds them
 * together) on the cache's public surface: its table, counts, budget and tracer. */
#ifndef PACKSCOPE_NATIVE_CACHE_H
#define PACKSCOPE_NATIVE_CACHE_H

#include "common.h"

/* The indexes of DeltaBaseCache.counts. */
enum { C_HITS, C_MISSES, C_FILLS, C_EVICTIONS, C_BYTES, C_N };

/* A cache opened for one call.  table: cache.table (an OrderedDict, new
 * reference); counts: cache.counts (a list, new reference) read into c at
 * cache_begin and written back (what changed) at cache_end. */
typedef struct {
    PyObject *cache, *table, *counts;
    long long budget;
    long long c[C_N], was[C_N];
} cache_view;

/* 1 with v ready (cache_close it), 0 when the Python path must answer (a
 * tracer listening: the Python cache emits its events; a table that is not
 * a dict), -1 with an error set. */
static int cache_open(cache_view *v, PyObject *cache);
static void cache_close(cache_view *v);

/* The entry under (name, offset): a borrowed (type name, data), or NULL
 * (with an error set only on failure).  Neither counted nor moved. */
static PyObject *cache_peek(cache_view *v, PyObject *name, long long offset);

/* Budget and counts read for a round of bookkeeping: 0, 1 for a cache not
 * shaped as expected (doubt), -1 with an error set. */
static int cache_begin(cache_view *v);
/* get's bookkeeping for a hit at key: moved to the end, counted. */
static int cache_hit(cache_view *v, PyObject *name, long long offset);
/* DeltaBaseCache.put without a tracer: 0, or -1 with an error set. */
static int cache_put(cache_view *v, PyObject *name, long long offset, PyObject *type_name, PyObject *data);
/* The counts back into the cache's list: 0, or -1 with an error set. */
static int cache_end(cache_view *v);

/* cache_put(cache, name, offset, type_name, data): put as the compiled read puts (for the reference test). */
static PyObject *native_cache_put(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
