/* packscope.core._native: optional compiled versions of core's hottest
 * byte loops.  The pure-Python code is the reference and the fallback
 * (core/store/delta.py); this module only ever answers what the reference
 * would answer, and on any doubt hands the input over to it.
 *
 * The functions live in core/native_c/, one concern per file, each with
 * its own notes and a header (the .h beside it) saying what it offers;
 * this file includes them (one translation unit) and lists the methods.
 */

/* Each file's header (the .h beside it in core/native_c) declares what it offers and
 * includes the headers of what it uses; the files are included here in an
 * order where every definition follows its declaration (one translation
 * unit: the helpers stay static, and the hot ones inline across files). */
#include "native_c/common.c"
#include "native_c/delta.c"
#include "native_c/objects.c"
#include "native_c/chain.c"
#include "native_c/cache.c"
#include "native_c/tree_diff.c"
#include "native_c/id_set.c"
#include "native_c/fsck_tree.c"
#include "native_c/tree_sums.c"
#include "native_c/idx_lookup.c"
#include "native_c/pack_info.c"
#include "native_c/pack_read.c"
#include "native_c/object_read.c"
#include "native_c/commit_walk.c"
#include "native_c/graph_read.c"
#include "native_c/plain_walk.c"
#include "native_c/graph_plain.c"
#include "native_c/line_diff.c"
#include "native_c/blame.c"

static PyMethodDef native_methods[] = {
    {"apply_delta", (PyCFunction)(void (*)(void))native_apply_delta, METH_FASTCALL | METH_KEYWORDS,
     "apply_delta(base, delta, max_size=4 GiB) -> bytes: the object the delta makes from base; on anything "
     "unexpected the fallback (the pure-Python reference) is called and raises the error."},
    {"try_apply_delta", (PyCFunction)(void (*)(void))native_try_apply_delta, METH_FASTCALL | METH_KEYWORDS,
     "try_apply_delta(base, delta, max_size) -> bytes, or None if the delta is not valid for this base."},
    {"set_delta_fallback", native_set_delta_fallback, METH_O,
     "set_delta_fallback(func): what apply_delta calls with (base, delta, max_size) on doubt."},
    {"commit_header", (PyCFunction)(void (*)(void))native_commit_header, METH_FASTCALL,
     "commit_header(data, hexsz) -> (tree, parents, commit_time), or None unless the common header shape."},
    {"entry_header", (PyCFunction)(void (*)(void))native_entry_header, METH_FASTCALL,
     "entry_header(pack, offset, data_end, rawsz) -> (type, size, start, base offset, base id), or None."},
    {"tree_items", (PyCFunction)(void (*)(void))native_tree_items, METH_FASTCALL,
     "tree_items(data, rawsz) -> [(mode, name, id), ...], or None unless the whole tree is well-formed."},
    {"tree_diff_names", (PyCFunction)(void (*)(void))native_tree_diff_names, METH_FASTCALL,
     "tree_diff_names(a, b, rawsz) -> {names of entries not byte-identical in both}, or None unless both trees "
     "are well-formed and sorted."},
    {"tree_entry", (PyCFunction)(void (*)(void))native_tree_entry, METH_FASTCALL,
     "tree_entry(data, name, rawsz) -> (mode, name, id) of the first entry so named, (), or None unless "
     "the whole tree is well-formed."},
    {"tree_entry_near", (PyCFunction)(void (*)(void))native_tree_entry_near, METH_FASTCALL,
     "tree_entry_near(data, name, rawsz) -> (mode, name, id) of the first entry so named when it lies in the "
     "tree's first eighth, clean up to it; else None."},
    {"fsck_tree", (PyCFunction)(void (*)(void))native_fsck_tree, METH_FASTCALL,
     "fsck_tree(data, rawsz) -> (flags, ids, candidates): fsck's verdict on a tree's entries (0: clean)."},
    {"tree_unseen", (PyCFunction)(void (*)(void))native_tree_unseen, METH_FASTCALL,
     "tree_unseen(data, rawsz, seen) -> [(id, is_tree), ...] of entries not in seen, or None if malformed."},
    {"tree_sums", (PyCFunction)(void (*)(void))native_tree_sums, METH_FASTCALL,
     "tree_sums(data, rawsz, sizes) -> one tree's own entries summed for advise (see native_c/tree_sums.c)."},
    {"id_set", native_id_set, METH_O, "id_set(rawsz) -> IdSet: a set of raw ids of one width (add, in, len, clear)."},
    {"idx_find", (PyCFunction)(void (*)(void))native_idx_find, METH_FASTCALL,
     "idx_find(idx, fan_at, names_at, stride, oid) -> position or -(insertion point)-1, or None."},
    {"idx_find_many", (PyCFunction)(void (*)(void))native_idx_find_many, METH_FASTCALL,
     "idx_find_many(indexes, oids, null) -> (found, order, moves), or None: lookups over packs in MRU order."},
    {"pack_info", (PyCFunction)(void (*)(void))native_pack_info, METH_FASTCALL,
     "pack_info(pack, offset, data_end, rawsz, max_depth, memo) -> (type, size) through OFS_DELTA chains, or None."},
    {"pack_info_many", (PyCFunction)(void (*)(void))native_pack_info_many, METH_FASTCALL,
     "pack_info_many(pack, offsets, data_end, rawsz, max_depth, memo) -> [(type name, size) or None, ...]."},
    {"apply_chain", (PyCFunction)(void (*)(void))native_apply_chain, METH_FASTCALL,
     "apply_chain(pack, base, deltas, end, max_size) -> [object, ...] (top first), or None."},
    {"cache_put", (PyCFunction)(void (*)(void))native_cache_put, METH_FASTCALL,
     "cache_put(cache, name, offset, type_name, data) -> bool: DeltaBaseCache.put as the compiled read puts "
     "(False: not done, a tracer listens); the C half of the cache's reference pair."},
    {"walk_chain", (PyCFunction)(void (*)(void))native_walk_chain, METH_FASTCALL,
     "walk_chain(pack, offset, end, max_depth, cached, name) -> ChainWalk(hit, base_type, base_offset, "
     "base_data_offset, base_size, deltas, misses), or None."},
    {"read_object", (PyCFunction)(void (*)(void))native_read_object, METH_FASTCALL,
     "read_object(reading, offset, keep) -> (type name, data) through OFS_DELTA chains with the delta-base "
     "cache's bookkeeping, or None; reading: the pack's PackReading (pack, end, max_depth, max_size, cache, "
     "name, decompress, inflate_big)."},
    {"read_objects", (PyCFunction)(void (*)(void))native_read_objects, METH_FASTCALL,
     "read_objects(reading, offsets) -> [(type name, data), ...] up to the first offset read_object would "
     "answer None for, or None."},
    {"commit_lookup", (PyCFunction)(void (*)(void))native_commit_lookup, METH_FASTCALL,
     "commit_lookup(table, pack, oid, hexsz, prefix) -> (tree, parents, time) of a plain commit entry, False if absent, or None."},
    {"walk_plain", (PyCFunction)(void (*)(void))native_walk_plain, METH_FASTCALL,
     "walk_plain(queue, seen, counter, packs, graph, fallback, first_parent, walked_type, hexsz, prefix, limit) -> "
     "(walked, counter, error, graph answers): up to limit commits of the plain default-order walk, or None."},
    {"graph_walk_check", (PyCFunction)(void (*)(void))native_graph_walk_check, METH_FASTCALL,
     "graph_walk_check(graph, edges, hexsz) -> bool: every commit of the graph reads without doubt."},
    {"graph_walk_enter", (PyCFunction)(void (*)(void))native_graph_walk_enter, METH_FASTCALL,
     "graph_walk_enter(queue, seen, graph, heap, bits, hexsz) -> bool: the plain walk's state on positions."},
    {"graph_walk_plain", (PyCFunction)(void (*)(void))native_graph_walk_plain, METH_FASTCALL,
     "graph_walk_plain(heap, bits, counter, graph, edges, first_parent, walked_type, hexsz, limit) -> "
     "(walked, counter, graph answers): the plain walk's loop over graph positions."},
    {"graph_walk_ids", (PyCFunction)(void (*)(void))native_graph_walk_ids, METH_FASTCALL,
     "graph_walk_ids(heap, bits, counter, graph, edges, first_parent, hexsz, limit) -> "
     "(ids, counter, graph answers): graph_walk_plain's loop, the walked commits' raw ids concatenated."},
    {"graph_commit", (PyCFunction)(void (*)(void))native_graph_commit, METH_FASTCALL,
     "graph_commit(graph, oid, hexsz) -> (tree, parents, time, generation), False or None: one commit "
     "from the graph."},
    {"graph_bloom_unchanged", (PyCFunction)(void (*)(void))native_graph_bloom_unchanged, METH_FASTCALL,
     "graph_bloom_unchanged(blooms, memo, oid) -> True, False or None: the changed-path filters' answer."},
    {"graph_walk_paths", (PyCFunction)(void (*)(void))native_graph_walk_paths, METH_FASTCALL,
     "graph_walk_paths(heap, bits, counter, graph, edges, first_parent, walked_type, hexsz, limit, blooms, "
     "changed, touches) -> (walked, counter, graph answers, error): the path-limited walk over graph positions."},
    {"graph_topo_start", (PyCFunction)(void (*)(void))native_graph_topo_start, METH_FASTCALL,
     "graph_topo_start(graph, edges, hexsz, tips, by_date, first_parent) -> (state, graph answers) or None: "
     "the incremental topological walk over graph positions, started."},
    {"graph_topo_next", (PyCFunction)(void (*)(void))native_graph_topo_next, METH_FASTCALL,
     "graph_topo_next(graph, edges, hexsz, state, by_date, first_parent, walked_type, limit) -> "
     "(walked, graph answers): its next commits."},
    {"commit_facts_many", (PyCFunction)(void (*)(void))native_commit_facts_many, METH_FASTCALL,
     "commit_facts_many(packs, graph, oids, hexsz, prefix) -> ([(tree, parents, time) or None, ...], graph "
     "answers) as walk_plain reads."},
    {"git_diff_flags", (PyCFunction)(void (*)(void))native_git_diff_flags, METH_FASTCALL,
     "git_diff_flags(a, b, indents, check) -> (deleted, inserted) as line_diff.git_diff_flags marks them, "
     "or None unless a and b are buffers of C ints (array('i'))."},
    {"blame_moves", (PyCFunction)(void (*)(void))native_blame_moves, METH_FASTCALL,
     "blame_moves(entries, deleted, inserted) -> (moved, stay) as Blame.split cuts entries along the "
     "diff's unchanged runs, or None unless entries is a list of [final, orig, count] lists."},
    {"split_ids", (PyCFunction)(void (*)(void))native_split_ids, METH_FASTCALL,
     "split_ids(data, table, indents, base) -> array('i') of data's lines numbered as blame.split_ids numbers "
     "them (table and indents filled the same), or None."},
    {"same_lines", (PyCFunction)(void (*)(void))native_same_lines, METH_FASTCALL,
     "same_lines(a, b) -> (head, tail, head_off, a_end) as blame.same_lines, or None unless both are bytes."},
    {"common_tail_lines", (PyCFunction)(void (*)(void))native_common_tail_lines, METH_FASTCALL,
     "common_tail_lines(a, b) -> int as blame.common_tail_lines, or None unless both are bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "_native", "Compiled fast paths for packscope.core (optional; see core/native.py).", -1,
    native_methods,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    for (int i = 0; i < 128; i++) {
        int bits = 0;
        for (int b = 0; b < 7; b++)
            bits += (i >> b) & 1;
        copy_arg_bytes[i] = (uint8_t)bits;
    }
    if (default_max_size == NULL) {
        default_max_size = PyLong_FromUnsignedLongLong(DEFAULT_MAX_RESULT);
        if (default_max_size == NULL)
            return NULL;
    }
    PyObject *module = PyModule_Create(&native_module);
    if (module != NULL && (pack_read_init(module) < 0 || tree_sums_init(module) < 0))
        Py_CLEAR(module);
    return module;
}
