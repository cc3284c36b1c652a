/* core/native_c/id_set.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (id_set.h says what it offers).  fsck's set of raw ids (id_set); the reference is a
 * Python set of bytes (core/fsck/reach.py). */
#include "id_set.h"

/* ---- fsck's id set (core/fsck/reach.py; the pure reference is a set of bytes) ----
 *
 *   id_set(rawsz) -> IdSet: a set of raw object ids of one width, the
 *       keys held inline (open addressing): add(oid), oid in s, len(s),
 *       s.clear().  The walk's "seen" set: git.git's 849k ids in ~40 MB
 *       instead of ~70, and tree_unseen asks it about an entry without
 *       making a bytes object of the entry's id. */


static int
idset_empty_slot(const uint8_t *slot, Py_ssize_t rawsz)
{
    uint64_t w;
    memcpy(&w, slot, 8); /* rawsz is at least 8 in every set made (id_set) */
    if (w)
        return 0;
    for (Py_ssize_t i = 8; i < rawsz; i++)
        if (slot[i])
            return 0;
    return 1;
}

static int
idset_is_null(const uint8_t *id, Py_ssize_t rawsz)
{
    return idset_empty_slot(id, rawsz);
}

static uint64_t
idset_hash(const uint8_t *id, Py_ssize_t rawsz)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    Py_ssize_t i = 0;
    for (; i + 8 <= rawsz; i += 8) {
        uint64_t w;
        memcpy(&w, id + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    for (; i < rawsz; i++)
        h = (h ^ id[i]) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

/* The slot holding id (not the null id), or the empty slot where it would go. */
static Py_ssize_t
idset_slot(const IdSetObject *s, const uint8_t *id)
{
    Py_ssize_t mask = s->cap - 1, i = (Py_ssize_t)(idset_hash(id, s->rawsz) & (uint64_t)mask);
    for (;;) {
        const uint8_t *slot = s->keys + i * s->rawsz;
        if (memcmp(slot, id, (size_t)s->rawsz) == 0 || idset_empty_slot(slot, s->rawsz))
            return i;
        i = (i + 1) & mask;
    }
}

static int
idset_contains_raw(const IdSetObject *s, const uint8_t *id)
{
    if (idset_is_null(id, s->rawsz))
        return s->has_null;
    return s->cap && !idset_empty_slot(s->keys + idset_slot(s, id) * s->rawsz, s->rawsz);
}

static int
idset_grow(IdSetObject *s)
{
    Py_ssize_t cap = s->cap ? s->cap * 2 : 1024;
    uint8_t *keys = PyMem_Calloc((size_t)cap, (size_t)s->rawsz);
    if (keys == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    IdSetObject grown = *s;
    grown.cap = cap;
    grown.keys = keys;
    for (Py_ssize_t i = 0; i < s->cap; i++) {
        const uint8_t *key = s->keys + i * s->rawsz;
        if (!idset_empty_slot(key, s->rawsz))
            memcpy(keys + idset_slot(&grown, key) * s->rawsz, key, (size_t)s->rawsz);
    }
    PyMem_Free(s->keys);
    s->keys = keys;
    s->cap = cap;
    return 0;
}

/* 1 if added, 0 if there already, -1 on error. */
static int
idset_add_raw(IdSetObject *s, const uint8_t *id)
{
    if (idset_is_null(id, s->rawsz)) {
        if (s->has_null)
            return 0;
        s->has_null = 1;
        s->len++;
        return 1;
    }
    if ((s->len + 1) * 2 > s->cap && idset_grow(s) < 0)
        return -1;
    uint8_t *slot = s->keys + idset_slot(s, id) * s->rawsz;
    if (!idset_empty_slot(slot, s->rawsz))
        return 0;
    memcpy(slot, id, (size_t)s->rawsz);
    s->len++;
    return 1;
}

static void
idset_free(IdSetObject *s)
{
    PyMem_Free(s->keys);
    s->keys = NULL;
    s->cap = s->len = 0;
    s->has_null = 0;
}

static void
idset_dealloc(PyObject *self)
{
    idset_free((IdSetObject *)self);
    Py_TYPE(self)->tp_free(self);
}

/* The id's bytes if key is bytes of the set's width; NULL (no error) otherwise. */
static const uint8_t *
idset_key(const IdSetObject *s, PyObject *key)
{
    if (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) != s->rawsz)
        return NULL;
    return (const uint8_t *)PyBytes_AS_STRING(key);
}

static int
idset_sq_contains(PyObject *self, PyObject *key)
{
    const IdSetObject *s = (const IdSetObject *)self;
    const uint8_t *id = idset_key(s, key);
    return id != NULL && idset_contains_raw(s, id);
}

static Py_ssize_t
idset_length(PyObject *self)
{
    return ((IdSetObject *)self)->len;
}

static PyObject *
idset_add(PyObject *self, PyObject *key)
{
    IdSetObject *s = (IdSetObject *)self;
    const uint8_t *id = idset_key(s, key);
    if (id == NULL) {
        PyErr_Format(PyExc_TypeError, "IdSet.add: an id is bytes of length %zd", s->rawsz);
        return NULL;
    }
    if (idset_add_raw(s, id) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
idset_clear(PyObject *self, PyObject *unused)
{
    idset_free((IdSetObject *)self);
    Py_RETURN_NONE;
}

static PyObject *
idset_update(PyObject *self, PyObject *iterable)
{
    IdSetObject *s = (IdSetObject *)self;
    PyObject *it = PyObject_GetIter(iterable), *item;
    if (it == NULL)
        return NULL;
    while ((item = PyIter_Next(it)) != NULL) {
        const uint8_t *id = idset_key(s, item);
        int added = id == NULL ? -2 : idset_add_raw(s, id);
        Py_DECREF(item);
        if (added < 0) {
            if (added == -2)
                PyErr_Format(PyExc_TypeError, "IdSet.update: an id is bytes of length %zd", s->rawsz);
            Py_DECREF(it);
            return NULL;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
idset_update_joined(PyObject *self, PyObject *arg)
{
    IdSetObject *s = (IdSetObject *)self;
    Py_buffer view;
    const uint8_t *d;
    Py_ssize_t n;
    if (get_bytes(arg, &view, &d, &n) < 0) {
        PyErr_SetString(PyExc_TypeError, "IdSet.update_joined: ids back to back, bytes-like");
        return NULL;
    }
    PyObject *out = NULL;
    if (n % s->rawsz) {
        PyErr_SetString(PyExc_ValueError, "IdSet.update_joined: not a whole number of ids");
        goto done;
    }
    for (Py_ssize_t at = 0; at < n; at += s->rawsz)
        if (idset_add_raw(s, d + at) < 0)
            goto done;
    out = Py_NewRef(Py_None);
done:
    release_bytes(&view);
    return out;
}

static PyObject *
idset_joined(PyObject *self, PyObject *unused)
{
    IdSetObject *s = (IdSetObject *)self;
    PyObject *out = PyBytes_FromStringAndSize(NULL, s->len * s->rawsz);
    if (out == NULL)
        return NULL;
    uint8_t *w = (uint8_t *)PyBytes_AS_STRING(out);
    if (s->has_null) {
        memset(w, 0, (size_t)s->rawsz);
        w += s->rawsz;
    }
    for (Py_ssize_t i = 0; i < s->cap; i++) {
        const uint8_t *key = s->keys + i * s->rawsz;
        if (!idset_empty_slot(key, s->rawsz)) {
            memcpy(w, key, (size_t)s->rawsz);
            w += s->rawsz;
        }
    }
    return out;
}

static PyMethodDef idset_methods[] = {
    {"add", idset_add, METH_O, "add(oid): put a raw id of the set's width in the set."},
    {"clear", idset_clear, METH_NOARGS, "clear(): empty the set and free its table."},
    {"update", idset_update, METH_O, "update(ids): add every raw id of an iterable."},
    {"update_joined", idset_update_joined, METH_O, "update_joined(data): add the ids data holds back to back."},
    {"joined", idset_joined, METH_NOARGS, "joined() -> bytes: every id of the set back to back (in no order)."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods idset_as_sequence = {
    .sq_length = idset_length,
    .sq_contains = idset_sq_contains,
};

static PyTypeObject IdSetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packscope.core._native.IdSet",
    .tp_basicsize = sizeof(IdSetObject),
    .tp_dealloc = idset_dealloc,
    .tp_as_sequence = &idset_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A set of raw object ids of one width (see id_set).",
    .tp_methods = idset_methods,
};

static PyObject *
native_id_set(PyObject *self, PyObject *arg)
{
    Py_ssize_t rawsz = PyLong_AsSsize_t(arg);
    if (rawsz == -1 && PyErr_Occurred())
        return NULL;
    if (rawsz < 8 || rawsz > 64) {
        PyErr_SetString(PyExc_ValueError, "id_set: rawsz must be 8..64");
        return NULL;
    }
    if (!(IdSetType.tp_flags & Py_TPFLAGS_READY) && PyType_Ready(&IdSetType) < 0)
        return NULL;
    IdSetObject *s = PyObject_New(IdSetObject, &IdSetType);
    if (s == NULL)
        return NULL;
    s->rawsz = rawsz;
    s->cap = s->len = 0;
    s->keys = NULL;
    s->has_null = 0;
    return (PyObject *)s;
}
/* ---- end of fsck's id set ---- */
