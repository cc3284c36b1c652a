/* core/native_c/chain.h: what chain.c offers the other parts of packscope.core._native.
 * The one delta-chain walk and the one chain application (walk_chain, read_object
 * and pack_info use them), and the inflaters they share.  Reference: Pack.read_at (core/store/pack.py). */
#ifndef PACKSCOPE_NATIVE_CHAIN_H
#define PACKSCOPE_NATIVE_CHAIN_H

#include "common.h"
#include "objects.h"
#include "delta.h"

#include <zlib.h>

#define OBJ_OFS_DELTA_TYPE 6
#define MAX_DEFLATE_RATIO 1032       /* deflate makes at most this much of a byte (plus a little) */
#define ONE_CALL_INFLATE (64 << 10)  /* up to this size a one-shot Python decompress may inflate */
#define SMALL_INFLATE 512            /* up to this size the reused z_stream is the cheapest */
#define CHAIN_SMALL 64               /* links kept without an allocation */

/* An entry's header as the reference parses it: 0 with the fields, or -1
 * for anything it would refuse (or a REF_DELTA, whose base is found through
 * an index, which the caller leaves to Python). */
static int entry_head(const uint8_t *m, Py_ssize_t n, long long offset, long long end, int *type, uint64_t *size,
                      long long *data_at, long long *base_at);

/* One delta of a chain: its entry's offset, its zlib stream's offset and its size. */
typedef struct {
    long long at, data_at;
    uint64_t size;
} chain_link;

/* A walk's answer.  links[0..count): the deltas passed, top first.  hit:
 * the offset where the probe ended the walk, or -1: then type, at, data_at
 * and size are the whole object at the bottom.  misses: probes that said
 * "go on".  Release with chain_walk_release. */
typedef struct {
    chain_link *links;
    Py_ssize_t count, cap;
    long long hit, misses;
    int type;
    long long at, data_at;
    uint64_t size;
    chain_link small[CHAIN_SMALL];
} chain_walk;

/* What the walk asks before it reads a base (and at a delta on top): 1
 * "stop here" (a cache or memo holds it), 0 "go on", -1 with an error set. */
typedef int (*chain_probe)(void *ctx, long long offset);

enum { CHAIN_OK = 0, CHAIN_DOUBT = 1, CHAIN_ERROR = -1 };

/* The walk from offset through OFS_DELTA bases: CHAIN_OK with w filled,
 * CHAIN_DOUBT for a REF_DELTA on the way, more than max_depth deltas, or
 * anything the reference would refuse (its loop then answers or raises),
 * CHAIN_ERROR with an exception from the probe or an allocation.  Release
 * w in every case. */
static int chain_walk_from(chain_walk *w, const uint8_t *m, Py_ssize_t n, long long offset, long long end,
                           long long max_depth, chain_probe probe, void *ctx);
static void chain_walk_release(chain_walk *w);

/* The Python inflaters a caller may hand over (NULL: the reused z_stream):
 * decompress, a one-shot function of Python's zlib API for deltas up to
 * ONE_CALL_INFLATE; inflate_big(data, size) -> exactly size bytes or None
 * (capped) for bigger ones. */
typedef struct {
    PyObject *decompress, *inflate_big;
} chain_inflaters;

/* size bytes inflated from the zlib stream at m[start:end] (new reference),
 * or NULL unless the stream makes exactly that many (an error set only for
 * MemoryError and what is not an Exception, such as KeyboardInterrupt). */
static PyObject *inflate_any(const chain_inflaters *inf, const uint8_t *m, long long start, long long size,
                             long long end, long long max_size);

/* links[0..count) (top first) inflated and applied upwards from base
 * (borrowed): made[k] the object links[k] makes (new references; made[0]
 * the top one), filled bottom first.  CHAIN_OK, CHAIN_DOUBT (what was made
 * stays in made for the caller to release) or CHAIN_ERROR. */
static int chain_apply(const uint8_t *m, long long end, long long max_size, PyObject *max_obj, const chain_link *links,
                       Py_ssize_t count, PyObject *base, const chain_inflaters *inf, PyObject **made);

#endif
