/* core/native_c/fsck_tree.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (fsck_tree.h says what it offers).  fsck's verdict on a tree and the walk's unseen entries
 * (fsck_tree, tree_unseen); the references are core/fsck/syntax.py and reach.py. */
#include "fsck_tree.h"

/* ---- fsck's tree checks (core/fsck/syntax.py and reach.py hold the pure references) ----
 *
 *   fsck_tree(data, rawsz) -> (flags, ids, candidates)
 *       flags: 0 when the tree is clean as syntax._tree_is_clean decides it
 *       (then ids: the ids of its entries other than gitlinks, a tuple);
 *       else FT_* bits naming what syntax.check_tree_closely reports (git's
 *       message ids), plus the LOOK bits for what only the pure path can
 *       decide (names that may fold to .git or a special name outside
 *       ASCII, an unusual mode, a budget exceeded), and ids is None.
 *       candidates: when every entry parsed, [(mode, name, id)] of the
 *       entries whose name may be .gitmodules/.gitattributes (what
 *       special_blobs.add_tree looks at closely), else None.
 *   tree_unseen(data, rawsz, seen) -> [(id, is_tree), ...] of the entries
 *       (directories, files, symlinks; not gitlinks) whose id is not in the
 *       set seen, in tree order; None unless every entry parses. */

#define FT_BAD_TREE 0x1
#define FT_NULL_SHA1 0x2
#define FT_FULL_PATHNAME 0x4
#define FT_HAS_DOT 0x8
#define FT_HAS_DOTDOT 0x10
#define FT_HAS_DOTGIT 0x20
#define FT_ZERO_PADDED 0x40
#define FT_BAD_FILEMODE 0x80
#define FT_SYMLINK_SPECIAL 0x100
#define FT_DUPLICATE 0x200
#define FT_NOT_SORTED 0x400
#define FT_LOOK_NAME 0x800 /* a name only the pure path can fold (non-ASCII) */
#define FT_LOOK_MODE 0x1000 /* a mode spelled otherwise than git writes it */
#define FT_LOOK_BUDGET 0x2000 /* duplicate search given up (huge unsorted tree) */

typedef struct {
    Py_ssize_t name, len;
    int dir, gitlink;
} ft_entry;

/* The byte at i of an entry's sort key (its name, then '/' for a directory), -1 past its end. */
static inline int
ft_key_at(const uint8_t *d, const ft_entry *e, Py_ssize_t i)
{
    return i < e->len ? d[e->name + i] : (e->dir && i == e->len ? '/' : -1);
}

/* Compare two entries as git orders them (a directory as if its name ended in '/'). */
static int
ft_key_cmp(const uint8_t *d, const ft_entry *a, const ft_entry *b)
{
    Py_ssize_t m = a->len < b->len ? a->len : b->len;
    int c = memcmp(d + a->name, d + b->name, (size_t)m);
    if (c)
        return c;
    for (Py_ssize_t i = m;; i++) {
        int x = ft_key_at(d, a, i), y = ft_key_at(d, b, i);
        if (x != y || x < 0)
            return x - y;
    }
}

static int
ft_same_name(const uint8_t *d, const ft_entry *a, const ft_entry *b)
{
    return a->len == b->len && memcmp(d + a->name, d + b->name, (size_t)a->len) == 0;
}

static uint8_t
ft_lower(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c | 0x20) : c;
}

static int
ft_ieq(const uint8_t *s, Py_ssize_t n, const char *word)
{
    Py_ssize_t k = (Py_ssize_t)strlen(word);
    if (n != k)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (ft_lower(s[i]) != (uint8_t)word[i])
            return 0;
    return 1;
}

/* tree_entries._folds_to for an ASCII name: the name itself, or its NTFS
 * spelling (cut at ':', trailing spaces and dots dropped), case folded,
 * equal to target or to the short name. */
static int
ft_ascii_folds_to(const uint8_t *s, Py_ssize_t n, const char *target, const char *shortname)
{
    if (ft_ieq(s, n, target))
        return 1;
    const uint8_t *colon = memchr(s, ':', (size_t)n);
    Py_ssize_t k = colon ? colon - s : n;
    while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '.'))
        k--;
    return ft_ieq(s, k, target) || ft_ieq(s, k, shortname);
}

/* A code point HFS+ ignores (tree_entries.HFS_IGNORED), UTF-8 encoded, somewhere in s. */
static int
ft_has_hfs_ignorable(const uint8_t *s, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i + 2 < n; i++) {
        if (s[i] == 0xE2) {
            uint8_t b = s[i + 1], c = s[i + 2];
            if ((b == 0x80 && ((c >= 0x8C && c <= 0x8F) || (c >= 0xAA && c <= 0xAE))) ||
                (b == 0x81 && c >= 0xAA && c <= 0xAF))
                return 1;
        } else if (s[i] == 0xEF && s[i + 1] == 0xBB && s[i + 2] == 0xBF) {
            return 1;
        }
    }
    return 0;
}

/* What one pass over a name finds (the checks below look closer only when it says so). */
#define FN_HIGH 0x1 /* a byte >= 0x80 */
#define FN_E2EF 0x2 /* 0xE2 or 0xEF: HFS+ ignorables' lead bytes */
#define FN_GIT 0x4 /* "git", any case */
#define FN_SPECIAL 0x8 /* "gitmod", "gitatt", "gi7eba", "gi7d29" (any case): special_blobs' candidates */
#define FN_SLASH 0x10

static int
ft_name_scan(const uint8_t *s, Py_ssize_t n)
{
    int out = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c >= 0x80) {
            out |= FN_HIGH;
            if (c == 0xE2 || c == 0xEF)
                out |= FN_E2EF;
        } else if (c == '/') {
            out |= FN_SLASH;
        } else if ((c | 0x20) == 'g' && i + 2 < n && (s[i + 1] | 0x20) == 'i') {
            uint8_t t = ft_lower(s[i + 2]);
            if (t == 't') {
                out |= FN_GIT;
                if (i + 5 < n) {
                    uint8_t a = ft_lower(s[i + 3]), b = ft_lower(s[i + 4]), e = ft_lower(s[i + 5]);
                    if ((a == 'm' && b == 'o' && e == 'd') || (a == 'a' && b == 't' && e == 't'))
                        out |= FN_SPECIAL;
                }
            } else if (t == '7' && i + 5 < n) {
                uint8_t a = ft_lower(s[i + 3]), b = ft_lower(s[i + 4]), e = ft_lower(s[i + 5]);
                if ((a == 'e' && b == 'b' && e == 'a') || (a == 'd' && b == '2' && e == '9'))
                    out |= FN_SPECIAL;
            }
        }
    }
    return out;
}

/* One entry: mode (wrapped at 32 bits), where its mode text, name and id are. 0 at a malformed entry. */
static int
ft_parse(const uint8_t *d, Py_ssize_t n, Py_ssize_t rawsz, Py_ssize_t *pos, uint32_t *mode, Py_ssize_t *name,
         Py_ssize_t *name_len)
{
    Py_ssize_t p = *pos, start = p;
    uint32_t m = 0;
    while (p < n && d[p] >= '0' && d[p] <= '7') {
        m = m * 8u + (uint32_t)(d[p] - '0');
        p++;
    }
    if (p == start || p >= n || d[p] != ' ')
        return 0;
    p++;
    const uint8_t *nul = memchr(d + p, 0, (size_t)(n - p));
    if (nul == NULL || nul == d + p)
        return 0;
    Py_ssize_t end = nul - d;
    if (n - (end + 1) < rawsz)
        return 0;
    *mode = m;
    *name = p;
    *name_len = end - p;
    *pos = end + 1 + rawsz;
    return 1;
}

static const char *const ft_specials[4][2] = {
    {".gitmodules", "gitmod~1"},
    {".gitattributes", "gitatt~1"},
    {".gitignore", "gitign~1"},
    {".mailmap", "mailma~1"},
};

#define FT_DUP_BUDGET (1 << 22) /* name comparisons for duplicates in an unsorted tree */

static PyObject *
native_fsck_tree(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t rawsz, n;
    Py_buffer view;
    const uint8_t *d;
    int got = data_and_size(args, nargs, "fsck_tree(data, rawsz)", rawsz_ok, "fsck_tree: rawsz must be 1..64",
                            &rawsz, &view, &d, &n);
    if (got < 0)
        return NULL;
    if (got == 0) {
        PyErr_SetString(PyExc_TypeError, "fsck_tree: data must be bytes-like");
        return NULL;
    }
    PyObject *result = NULL, *ids = NULL, *cands = NULL;
    ft_entry *ents = NULL;
    Py_ssize_t count = 0, cap = 0;
    long flags = 0;
    int regular = 1; /* no duplicate and keys increasing so far: a duplicate can only be just behind */
    long budget = FT_DUP_BUDGET;
    Py_ssize_t prev = -1; /* the entry holding prev_key */
    Py_ssize_t gitlinks = 0;
    static const uint8_t zero[64] = {0};
    cands = PyList_New(0);
    if (cands == NULL)
        goto fail;
    Py_ssize_t pos = 0;
    while (pos < n) {
        uint32_t mode;
        Py_ssize_t at = pos, name, len;
        if (!ft_parse(d, n, rawsz, &pos, &mode, &name, &len)) {
            flags = FT_BAD_TREE; /* git reports nothing else of a tree it cannot parse */
            break;
        }
        const uint8_t *mt = d + at, *nm = d + name, *id = d + name + len + 1;
        Py_ssize_t mlen = name - 1 - at;
        int known = (mlen == 6 && (memcmp(mt, "100644", 6) == 0 || memcmp(mt, "100755", 6) == 0 ||
                                   memcmp(mt, "120000", 6) == 0 || memcmp(mt, "160000", 6) == 0)) ||
                    (mlen == 5 && memcmp(mt, "40000", 5) == 0);
        if (!known) {
            uint32_t m16 = mode & 0xFFFF;
            flags |= FT_LOOK_MODE;
            if (mt[0] == '0')
                flags |= FT_ZERO_PADDED;
            if (!(m16 == 0100755 || m16 == 0100644 || m16 == 0120000 || m16 == 0040000 || m16 == 0160000 ||
                  m16 == 0100664))
                flags |= FT_BAD_FILEMODE;
        }
        int is_dir = (mode & 0xFFFF & 0170000) == 0040000;
        int is_link = (mode & 0xFFFF & 0170000) == 0120000;
        if (known && memcmp(mt, "160000", 6) == 0)
            gitlinks++;
        if (memcmp(id, zero, (size_t)rawsz) == 0)
            flags |= FT_NULL_SHA1;
        int scan = ft_name_scan(nm, len);
        int high = scan & FN_HIGH;
        if (scan & FN_SLASH)
            flags |= FT_FULL_PATHNAME;
        if (nm[0] == '.' && len == 1)
            flags |= FT_HAS_DOT;
        else if (nm[0] == '.' && len == 2 && nm[1] == '.')
            flags |= FT_HAS_DOTDOT;
        else if (high) {
            if (scan & (FN_E2EF | FN_GIT))
                flags |= FT_LOOK_NAME;
        } else if ((scan & FN_GIT) && ft_ascii_folds_to(nm, len, ".git", "git~1")) {
            flags |= FT_HAS_DOTGIT;
        }
        if (is_link) {
            if (high)
                flags |= FT_LOOK_NAME;
            else
                for (int k = 0; k < 4; k++)
                    if (ft_ascii_folds_to(nm, len, ft_specials[k][0], ft_specials[k][1]))
                        flags |= FT_SYMLINK_SPECIAL;
        }
        /* what special_blobs.add_tree looks at: a name that may spell .gitmodules/.gitattributes */
        if ((scan & FN_SPECIAL) || ((scan & FN_E2EF) && ft_has_hfs_ignorable(nm, len))) {
            PyObject *c = Py_BuildValue("(ky#y#)", (unsigned long)mode, (const char *)nm, len, (const char *)id, rawsz);
            if (c == NULL || PyList_Append(cands, c) < 0) {
                Py_XDECREF(c);
                goto fail;
            }
            Py_DECREF(c);
        }
        /* duplicates and order, as check_tree_closely: a duplicate name is
         * not compared for order */
        if (count == cap) {
            Py_ssize_t ncap = cap ? cap * 2 : 64;
            ft_entry *grown = PyMem_Realloc(ents, (size_t)ncap * sizeof(ft_entry));
            if (grown == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            ents = grown;
            cap = ncap;
        }
        ft_entry *e = &ents[count];
        e->name = name;
        e->len = len;
        e->dir = is_dir;
        e->gitlink = known && memcmp(mt, "160000", 6) == 0;
        int dup = 0;
        int cmp = prev < 0 ? 1 : ft_key_cmp(d, e, &ents[prev]);
        if (regular && cmp > 0) {
            /* keys so far increase: an earlier entry of the same name has a
             * key in [name, name + '/'], at the end of the entries */
            for (Py_ssize_t j = count - 1; j >= 0; j--) {
                ft_entry *o = &ents[j];
                Py_ssize_t m = o->len < len ? o->len : len;
                if (o->len < len || memcmp(d + o->name, nm, (size_t)m) != 0)
                    break; /* key below name: nothing further back can match */
                if (o->len == len) {
                    dup = 1;
                    break;
                }
            }
        } else {
            regular = 0;
            for (Py_ssize_t j = count - 1; j >= 0 && !dup; j--) {
                if (--budget < 0) {
                    flags |= FT_LOOK_BUDGET;
                    break;
                }
                dup = ft_same_name(d, e, &ents[j]);
            }
        }
        if (dup) {
            flags |= FT_DUPLICATE;
            regular = 0;
        } else {
            if (cmp <= 0)
                flags |= FT_NOT_SORTED;
            prev = count;
        }
        count++;
    }
    if (flags & FT_BAD_TREE) {
        Py_CLEAR(cands);
        cands = Py_NewRef(Py_None);
    }
    if (flags == 0) {
        ids = PyTuple_New(count - gitlinks);
        if (ids == NULL)
            goto fail;
        Py_ssize_t k = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            if (ents[i].gitlink)
                continue;
            PyObject *o = PyBytes_FromStringAndSize((const char *)(d + ents[i].name + ents[i].len + 1), rawsz);
            if (o == NULL)
                goto fail;
            PyTuple_SET_ITEM(ids, k++, o);
        }
    } else {
        ids = Py_NewRef(Py_None);
    }
    result = Py_BuildValue("(lNN)", flags, ids, cands);
    ids = cands = NULL;
fail:
    Py_XDECREF(ids);
    Py_XDECREF(cands);
    PyMem_Free(ents);
    release_bytes(&view);
    return result;
}

static PyObject *
native_tree_unseen(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "tree_unseen(data, rawsz, seen)");
        return NULL;
    }
    PyObject *seen = args[2];
    IdSetObject *ids = Py_IS_TYPE(seen, &IdSetType) ? (IdSetObject *)seen : NULL;
    if (ids == NULL && !PyAnySet_Check(seen)) {
        PyErr_SetString(PyExc_TypeError, "tree_unseen: seen must be a set or an IdSet");
        return NULL;
    }
    Py_ssize_t rawsz, n;
    Py_buffer view;
    const uint8_t *d;
    int got = data_and_size(args, 2, "tree_unseen(data, rawsz, seen)", rawsz_ok, "tree_unseen: rawsz must be 1..64",
                            &rawsz, &view, &d, &n);
    if (got <= 0)
        return got < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *out = PyList_New(0);
    if (out == NULL)
        goto done;
    Py_ssize_t pos = 0;
    while (pos < n) {
        uint32_t mode;
        Py_ssize_t name, len;
        if (!ft_parse(d, n, rawsz, &pos, &mode, &name, &len)) {
            Py_SETREF(out, Py_NewRef(Py_None));
            break;
        }
        uint32_t kind = mode & 0170000;
        if (kind != 0040000 && kind != 0100000 && kind != 0120000)
            continue;
        if (ids != NULL && ids->rawsz == rawsz && idset_contains_raw(ids, d + name + len + 1))
            continue; /* seen: no object made to ask */
        PyObject *id = PyBytes_FromStringAndSize((const char *)(d + name + len + 1), rawsz);
        if (id == NULL) {
            Py_CLEAR(out);
            break;
        }
        int has = ids != NULL ? idset_sq_contains(seen, id) : PySet_Contains(seen, id);
        if (has == 0) {
            PyObject *item = Py_BuildValue("(Nl)", id, (long)(kind == 0040000));
            if (item == NULL || PyList_Append(out, item) < 0) {
                Py_XDECREF(item);
                Py_CLEAR(out);
                break;
            }
            Py_DECREF(item);
            continue;
        }
        Py_DECREF(id);
        if (has < 0) {
            Py_CLEAR(out);
            break;
        }
    }
done:
    release_bytes(&view);
    return out;
}
/* ---- end of fsck's tree checks ---- */
