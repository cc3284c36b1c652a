/* core/native_c/graph_read.h: what graph_read.c offers the other parts of packscope.core._native.
 * A commit-graph chain read as walk_plain reads it: graph_table, graph_open,
 * graph_facts, graph_close.  The graph_table type and these functions are still defined in
 * graph_read.c itself (its owner moves the type here); this header names its needs. */
#ifndef PACKSCOPE_NATIVE_GRAPH_READ_H
#define PACKSCOPE_NATIVE_GRAPH_READ_H

#include "common.h"

#include "idx_lookup.h" /* be32_at, oid_bytes */

#endif
