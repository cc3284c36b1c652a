/* core/native_c/tree_sums.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (see tree_sums.h for what it offers; it uses fsck_tree.c's entry parser).  The pure reference
 * is the entry loop of core/advise/sizes.py (SizeWalk._tree).
 *
 *   tree_sums(data, rawsz, sizes) -> TreeSums(entries, length, blobs, blob_bytes, links, gitlinks,
 *                                             subtrees, unseen) | None
 *       One tree's own entries summed for advise's checkout metrics, with
 *       sizes a dict {blob id: size}:
 *       entries: how many; length: the longest name among entries that are
 *       not directories; blobs: entries that are neither directories (mode
 *       40000), symbolic links (120000) nor gitlinks (160000); blob_bytes:
 *       the sizes of those blobs found in sizes; links, gitlinks: counts;
 *       subtrees: [(40000, name, id)] of the directories, in tree order;
 *       unseen: [(mode, name, id)] of blobs and links whose id is not in
 *       sizes (their sizes are the caller's to find and add).  None unless
 *       every entry parses (the caller's pure loop then decides). */
#include "tree_sums.h"

/* tree_sums' answer: a named record (a tuple too, for unpacking). */
static PyTypeObject *TreeSumsType;
static PyStructSequence_Field tree_sums_fields[] = {
    {"entries", "how many entries the tree has"},
    {"length", "the longest name among entries that are not directories"},
    {"blobs", "entries that are neither directories, symbolic links nor gitlinks"},
    {"blob_bytes", "the sizes of those blobs that sizes knew"},
    {"links", "symbolic links"},
    {"gitlinks", "gitlinks (submodules)"},
    {"subtrees", "[(40000, name, id)] of the directories, in tree order"},
    {"unseen", "[(mode, name, id)] of blobs and links whose size sizes did not know"},
    {NULL, NULL},
};
static PyStructSequence_Desc tree_sums_desc = {
    "packscope.core._native.TreeSums", "tree_sums' answer: one tree's own entries summed.", tree_sums_fields, 8,
};

static int
tree_sums_init(PyObject *module)
{
    if (TreeSumsType == NULL) {
        TreeSumsType = PyStructSequence_NewType(&tree_sums_desc);
        if (TreeSumsType == NULL)
            return -1;
    }
    return PyModule_AddObjectRef(module, "TreeSums", (PyObject *)TreeSumsType);
}

static PyObject *
native_tree_sums(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "tree_sums(data, rawsz, sizes)");
        return NULL;
    }
    PyObject *sizes = args[2];
    if (!PyDict_Check(sizes)) {
        PyErr_SetString(PyExc_TypeError, "tree_sums: sizes must be a dict");
        return NULL;
    }
    Py_ssize_t rawsz, n;
    Py_buffer view;
    const uint8_t *d;
    int got = data_and_size(args, 2, "tree_sums(data, rawsz, sizes)", rawsz_ok, "tree_sums: rawsz must be 1..64",
                            &rawsz, &view, &d, &n);
    if (got <= 0)
        return got < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *subtrees = PyList_New(0), *unseen = PyList_New(0), *out = NULL;
    long long entries = 0, length = 0, blobs = 0, blob_bytes = 0, links = 0, gitlinks = 0;
    if (subtrees == NULL || unseen == NULL)
        goto done;
    Py_ssize_t pos = 0;
    while (pos < n) {
        uint32_t mode;
        Py_ssize_t name, len;
        if (!ft_parse(d, n, rawsz, &pos, &mode, &name, &len)) {
            out = Py_NewRef(Py_None);
            goto done;
        }
        entries++;
        const char *id_at = (const char *)(d + name + len + 1);
        if (mode == 0040000) {
            PyObject *item = Py_BuildValue("(ly#y#)", (long)mode, (const char *)(d + name), len, id_at, rawsz);
            if (item == NULL || PyList_Append(subtrees, item) < 0) {
                Py_XDECREF(item);
                goto done;
            }
            Py_DECREF(item);
            continue;
        }
        if (len > length)
            length = len;
        if (mode == 0160000) {
            gitlinks++;
            continue;
        }
        int link = mode == 0120000;
        if (link)
            links++;
        else
            blobs++;
        PyObject *id = PyBytes_FromStringAndSize(id_at, rawsz);
        if (id == NULL)
            goto done;
        PyObject *size = PyDict_GetItemWithError(sizes, id); /* borrowed */
        if (size == NULL) {
            if (PyErr_Occurred()) {
                Py_DECREF(id);
                goto done;
            }
            PyObject *item = Py_BuildValue("(ly#N)", (long)mode, (const char *)(d + name), len, id);
            if (item == NULL || PyList_Append(unseen, item) < 0) {
                Py_XDECREF(item);
                goto done;
            }
            Py_DECREF(item);
            continue;
        }
        Py_DECREF(id);
        if (!link) {
            long long s = PyLong_AsLongLong(size);
            if (s == -1 && PyErr_Occurred())
                goto done;
            blob_bytes += s;
        }
    }
    out = PyStructSequence_New(TreeSumsType);
    if (out == NULL)
        goto done;
    long long counts[6] = {entries, length, blobs, blob_bytes, links, gitlinks};
    for (int i = 0; i < 6; i++) {
        PyObject *n = PyLong_FromLongLong(counts[i]);
        if (n == NULL) {
            Py_CLEAR(out); /* (the fields not set yet are NULL: a structseq frees those) */
            goto done;
        }
        PyStructSequence_SET_ITEM(out, i, n);
    }
    PyStructSequence_SET_ITEM(out, 6, Py_NewRef(subtrees));
    PyStructSequence_SET_ITEM(out, 7, Py_NewRef(unseen));
done:
    Py_XDECREF(subtrees);
    Py_XDECREF(unseen);
    release_bytes(&view);
    return out;
}
/* ---- end of advise's tree sums ---- */
