/* core/native_c/line_diff.c: part of packscope.core._native, compiled as one unit by core/_native.c
 * (see line_diff.h for what it offers).  The pure reference is git_diff_flags in
 * core/history/line_diff.py and the helpers it calls (_mark, _middle, _give_up there;
 * xdiff_pre_pass, _among_dropped, place_groups, _Group, _best_shift, _split_score in
 * core/history/git_diff_heuristics.py); each step here is that step,
 * in the same order, so the same flags come out.
 *
 *   git_diff_flags(a, b, indents, check) -> (deleted, inserted) | None
 *       a, b: the two sides' lines as numbers (equal lines, equal numbers), each a buffer of
 *       C ints (array('i')); indents: None, or a mapping / sequence giving each line
 *       number's indentation (git's indent heuristic); check: None, or a callable run now
 *       and then that may raise to stop (the error reaches the caller).  The answer is two
 *       bytearrays of len(a) + 1 and len(b) + 1 (one spare 0 each), 1 where a line is
 *       deleted / inserted.  None when a or b is not such a buffer (the pure code runs). */
#include "line_diff.h"

#define LD_CHECK_EVERY 4096 /* line_diff.CHECK_EVERY */
#define LD_SCAN_WINDOW 100  /* line_diff._SCAN_WINDOW */
#define LD_KEEP_RUN 4       /* line_diff._KEEP_RUN */
#define LD_MAX_SLIDING 100  /* line_diff.MAX_SLIDING */
#define LD_MAX_BLANKS 20    /* line_diff.MAX_BLANKS */
#define LD_UNKNOWN INT_MIN  /* an indent not asked for yet */

typedef struct {
    PyObject *check;   /* None or the callable */
    PyObject *indents; /* None or the mapping / sequence */
    int failed;        /* an error is set (check raised, an indent could not be read) */
} LdRun;

static int
ld_check(LdRun *run)
{
    if (run->failed)
        return -1;
    if (run->check == Py_None)
        return 0;
    PyObject *r = PyObject_CallNoArgs(run->check);
    if (r == NULL) {
        run->failed = 1;
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

/* ---- counting each line number's copies on both sides (Counter(a), Counter(b)) ---- */

typedef struct {
    int32_t key;
    uint8_t used;
    Py_ssize_t in_a, in_b;
} LdCount;

typedef struct {
    LdCount *slots;
    size_t mask;
} LdCounts;

static inline size_t
ld_hash(int32_t key)
{
    uint32_t h = (uint32_t)key * 2654435761u;
    return (size_t)(h ^ (h >> 15));
}

static LdCount *
ld_slot(LdCounts *t, int32_t key)
{
    size_t i = ld_hash(key) & t->mask;
    while (t->slots[i].used && t->slots[i].key != key)
        i = (i + 1) & t->mask;
    return &t->slots[i];
}

static int
ld_count(LdCounts *t, const int32_t *a, Py_ssize_t n, const int32_t *b, Py_ssize_t m)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)(n + m))
        cap <<= 1;
    t->slots = PyMem_Calloc(cap, sizeof(LdCount));
    if (t->slots == NULL)
        return -1;
    t->mask = cap - 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        LdCount *s = ld_slot(t, a[i]);
        s->used = 1;
        s->key = a[i];
        s->in_a++;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        LdCount *s = ld_slot(t, b[j]);
        s->used = 1;
        s->key = b[j];
        s->in_b++;
    }
    return 0;
}

/* ---- xdiff's pre-pass (git_diff_heuristics.xdiff_pre_pass, _among_dropped) ---- */

static Py_ssize_t
ld_bogosqrt(Py_ssize_t n)
{
    Py_ssize_t r = 1;
    while (n > 0) {
        r <<= 1;
        n >>= 2;
    }
    return r;
}

static int
ld_among_dropped(const uint8_t *kind, Py_ssize_t i, Py_ssize_t s, Py_ssize_t e)
{
    if (s < i - LD_SCAN_WINDOW)
        s = i - LD_SCAN_WINDOW;
    if (e > i + LD_SCAN_WINDOW)
        e = i + LD_SCAN_WINDOW;
    Py_ssize_t none_before = 0, many_before = 1, none_after = 0, many_after = 1;
    for (Py_ssize_t r = i - 1; r >= s; r--) {
        if (kind[r] == 0)
            none_before++;
        else if (kind[r] == 2)
            many_before++;
        else
            break;
    }
    if (none_before == 0)
        return 0;
    for (Py_ssize_t r = i + 1; r <= e; r++) {
        if (kind[r] == 0)
            none_after++;
        else if (kind[r] == 2)
            many_after++;
        else
            break;
    }
    if (none_after == 0)
        return 0;
    Py_ssize_t none = none_before + none_after, many = many_before + many_after;
    return many * LD_KEEP_RUN < many + none;
}

/* a[start:end]'s lines kept for the search (into kept / kept_at, their count returned);
 * the others marked in changed.  other_side: 0 counts copies in b (a is the old side),
 * 1 in a.  kind: scratch of end - start bytes. */
static Py_ssize_t
ld_kept(LdCounts *t, int other_side, const int32_t *a, Py_ssize_t n, Py_ssize_t start, Py_ssize_t end,
        uint8_t *changed, uint8_t *kind, int32_t *kept, Py_ssize_t *kept_at)
{
    Py_ssize_t limit = ld_bogosqrt(n);
    if (limit > 1024)
        limit = 1024;
    Py_ssize_t len = end - start;
    for (Py_ssize_t i = 0; i < len; i++) {
        LdCount *s = ld_slot(t, a[start + i]);
        Py_ssize_t copies = other_side ? s->in_a : s->in_b;
        kind[i] = (uint8_t)((copies != 0) + (limit <= copies));
        changed[start + i] = kind[i] == 0;
    }
    Py_ssize_t last = len - 1;
    for (Py_ssize_t k = 1; k < last; k++) {
        if (kind[k] == 2 && kind[k - 1] != 1 && kind[k + 1] != 1 && ld_among_dropped(kind, k, 0, last))
            changed[start + k] = 1;
    }
    Py_ssize_t got = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        if (!changed[start + i]) {
            kept[got] = a[start + i];
            kept_at[got] = start + i;
            got++;
        }
    }
    return got;
}

/* ---- Myers' search, git's early splits included (_mark, _middle, _give_up) ---- */

static Py_ssize_t
ld_same_run(const int32_t *a, Py_ssize_t i, const int32_t *b, Py_ssize_t j, Py_ssize_t limit)
{
    Py_ssize_t k = 0;
    while (k < limit && a[i + k] == b[j + k])
        k++;
    return k;
}

static Py_ssize_t
ld_same_tail(const int32_t *a, Py_ssize_t i, const int32_t *b, Py_ssize_t j, Py_ssize_t limit)
{
    Py_ssize_t k = 0;
    while (k < limit && a[i - k - 1] == b[j - k - 1])
        k++;
    return k;
}

/* git's default search gives up on minimality in a box past a cost (_MAX_COST_MIN, _HEUR_MIN_COST,
 * _SNAKE_CNT, _K_HEUR in line_diff.py). */
#define LD_MAX_COST_MIN 256
#define LD_HEUR_MIN_COST 256
#define LD_SNAKE_CNT 20
#define LD_K_HEUR 4

static int
ld_same_lines(const int32_t *a, Py_ssize_t i, const int32_t *b, Py_ssize_t j, Py_ssize_t len)
{
    return memcmp(a + i, b + j, (size_t)len * sizeof(int32_t)) == 0;
}

/* Where git's default search splits a box it stops searching after round d (_give_up): 1 with
 * *px, *py and which half must be searched minimally, or 0 to search on. */
static int
ld_give_up(const int32_t *a, Py_ssize_t a0, Py_ssize_t a1, const int32_t *b, Py_ssize_t b0, Py_ssize_t b1,
           const Py_ssize_t *vf, const Py_ssize_t *vb, Py_ssize_t off, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t d,
           int sample, int enough, Py_ssize_t *px, Py_ssize_t *py, int *min_lo, int *min_hi)
{
    Py_ssize_t n = a1 - a0, m = b1 - b0;
    if (sample) {
        Py_ssize_t best = 0, sx = 0, sy = 0;
        for (Py_ssize_t k = hi; k >= lo; k -= 2) {
            Py_ssize_t x = vf[off + k], y = x - k;
            Py_ssize_t v = x + y - (k < 0 ? -k : k);
            if (v > LD_K_HEUR * d && v > best && LD_SNAKE_CNT <= x && x < n && LD_SNAKE_CNT <= y && y < m &&
                ld_same_lines(a, a0 + x - LD_SNAKE_CNT, b, b0 + y - LD_SNAKE_CNT, LD_SNAKE_CNT)) {
                best = v;
                sx = a0 + x;
                sy = b0 + y;
            }
        }
        if (best > 0) {
            *px = sx;
            *py = sy;
            *min_lo = 1;
            *min_hi = 0;
            return 1;
        }
        for (Py_ssize_t k = lo; k <= hi; k += 2) {
            Py_ssize_t x = vb[off + k], y = x - k;
            Py_ssize_t v = x + y - (k < 0 ? -k : k);
            if (v > LD_K_HEUR * d && v > best && LD_SNAKE_CNT <= x && x < n && LD_SNAKE_CNT <= y && y < m &&
                ld_same_lines(a, a1 - x, b, b1 - y, LD_SNAKE_CNT)) {
                best = v;
                sx = a1 - x;
                sy = b1 - y;
            }
        }
        if (best > 0) {
            *px = sx;
            *py = sy;
            *min_lo = 0;
            *min_hi = 1;
            return 1;
        }
    }
    if (!enough)
        return 0;
    Py_ssize_t fbest = -1, fx = 0;
    for (Py_ssize_t k = hi; k >= lo; k -= 2) {
        Py_ssize_t x = vf[off + k] < n ? vf[off + k] : n;
        if (x < 0)
            continue;
        Py_ssize_t y = x - k;
        if (y > m) {
            x = m + k;
            y = m;
        }
        if (x + y > fbest) {
            fbest = x + y;
            fx = x;
        }
    }
    Py_ssize_t bbest = -1, bx = 0;
    for (Py_ssize_t k = lo; k <= hi; k += 2) {
        Py_ssize_t x = vb[off + k] < n ? vb[off + k] : n;
        if (x < 0)
            continue;
        Py_ssize_t y = x - k;
        if (y > m) {
            x = m + k;
            y = m;
        }
        if (x + y > bbest) {
            bbest = x + y;
            bx = x;
        }
    }
    if (bbest < fbest) {
        *px = a0 + fx;
        *py = b0 + fbest - fx;
        *min_lo = 1;
        *min_hi = 0;
    }
    else {
        *px = a1 - bx;
        *py = b1 - (bbest - bx);
        *min_lo = 0;
        *min_hi = 1;
    }
    return 1;
}

/* A point strictly inside the box (a0, b0)-(a1, b1) to split it at (_middle): on a minimal path,
 * unless need_min is 0 and git's search gives up there (ld_give_up); *min_lo, *min_hi: whether
 * each half must be searched minimally.  vf, vb: room for (a1 - a0) + (b1 - b0) + 3 entries each.
 * 0, or -1 when check raised. */
static int
ld_middle(LdRun *run, const int32_t *a, Py_ssize_t a0, Py_ssize_t a1, const int32_t *b, Py_ssize_t b0,
          Py_ssize_t b1, Py_ssize_t *vf, Py_ssize_t *vb, int need_min, Py_ssize_t max_cost, Py_ssize_t *px,
          Py_ssize_t *py, int *min_lo, int *min_hi)
{
    *min_lo = *min_hi = 1;
    Py_ssize_t n = a1 - a0, m = b1 - b0;
    Py_ssize_t delta = n - m;
    int odd = (int)(delta & 1);
    Py_ssize_t max_d = (n + m + 1) / 2;
    Py_ssize_t off = m + 1;
    for (Py_ssize_t i = 0; i < n + m + 3; i++)
        vf[i] = vb[i] = -1;
    vf[off] = 0;
    vb[off] = 0;
    Py_ssize_t steps = 0;
    for (Py_ssize_t d = 1; d <= max_d; d++) {
        Py_ssize_t lo = d <= m ? -d : -m + ((m - d) & 1);
        Py_ssize_t hi = d <= n ? d : n - ((n - d) & 1);
        steps += d;
        if (steps > LD_CHECK_EVERY) {
            steps = 0;
            if (ld_check(run) < 0)
                return -1;
        }
        int snake = 0; /* a snake longer than LD_SNAKE_CNT this round */
        for (Py_ssize_t k = hi; k >= lo; k -= 2) {
            Py_ssize_t at = off + k;
            Py_ssize_t x = vf[at];
            Py_ssize_t u = vf[at + 1];
            if (u > x && u - k <= m)
                x = u;
            u = vf[at - 1];
            if (u >= 0 && u >= x && u < n)
                x = u + 1;
            if (x < 0)
                continue;
            Py_ssize_t y = x - k;
            if (x < n && y < m && a[a0 + x] == b[b0 + y]) {
                Py_ssize_t r = ld_same_run(a, a0 + x, b, b0 + y, n - x < m - y ? n - x : m - y);
                x += r;
                y += r;
                snake |= r > LD_SNAKE_CNT;
            }
            vf[at] = x;
            if (odd) {
                Py_ssize_t xb = vb[off + delta - k];
                if (xb >= 0 && x >= n - xb) {
                    *px = a0 + x;
                    *py = b0 + y;
                    return 0;
                }
            }
        }
        for (Py_ssize_t k = lo; k <= hi; k += 2) {
            Py_ssize_t at = off + k;
            Py_ssize_t x = vb[at];
            Py_ssize_t u = vb[at + 1];
            if (u > x && u - k <= m)
                x = u;
            u = vb[at - 1];
            if (u >= 0 && u >= x && u < n)
                x = u + 1;
            if (x < 0)
                continue;
            Py_ssize_t y = x - k;
            if (x < n && y < m && a[a1 - 1 - x] == b[b1 - 1 - y]) {
                Py_ssize_t r = ld_same_tail(a, a1 - x, b, b1 - y, n - x < m - y ? n - x : m - y);
                x += r;
                y += r;
                snake |= r > LD_SNAKE_CNT;
            }
            vb[at] = x;
            if (!odd) {
                Py_ssize_t xf = vf[off + delta - k];
                if (xf >= 0 && xf >= n - x) {
                    *px = a1 - x;
                    *py = b1 - y;
                    return 0;
                }
            }
        }
        if (!need_min && ((snake && d > LD_HEUR_MIN_COST) || d >= max_cost) &&
            ld_give_up(a, a0, a1, b, b0, b1, vf, vb, off, lo, hi, d, snake && d > LD_HEUR_MIN_COST, d >= max_cost,
                       px, py, min_lo, min_hi))
            return 0;
    }
    PyErr_SetString(PyExc_AssertionError, "git_diff_flags: the two searches did not meet");
    run->failed = 1;
    return -1;
}

typedef struct {
    Py_ssize_t a0, a1, b0, b1;
    int need_min;
} LdBox;

static int
ld_mark(LdRun *run, const int32_t *a, const Py_ssize_t *a_at, Py_ssize_t na, const int32_t *b,
        const Py_ssize_t *b_at, Py_ssize_t nb, uint8_t *deleted, uint8_t *inserted)
{
    Py_ssize_t cap = 64, top = 0;
    LdBox *stack = PyMem_Malloc(cap * sizeof(LdBox));
    Py_ssize_t *vf = PyMem_Malloc((na + nb + 3) * sizeof(Py_ssize_t));
    Py_ssize_t *vb = PyMem_Malloc((na + nb + 3) * sizeof(Py_ssize_t));
    int rc = 0;
    if (stack == NULL || vf == NULL || vb == NULL) {
        PyErr_NoMemory();
        run->failed = 1;
        rc = -1;
        goto done;
    }
    Py_ssize_t max_cost = ld_bogosqrt(na + nb + 3);
    if (max_cost < LD_MAX_COST_MIN)
        max_cost = LD_MAX_COST_MIN;
    stack[top++] = (LdBox){0, na, 0, nb, 0}; /* git's default search: not --minimal */
    while (top > 0) {
        LdBox s = stack[--top];
        Py_ssize_t k = ld_same_run(a, s.a0, b, s.b0, s.a1 - s.a0 < s.b1 - s.b0 ? s.a1 - s.a0 : s.b1 - s.b0);
        s.a0 += k;
        s.b0 += k;
        k = ld_same_tail(a, s.a1, b, s.b1, s.a1 - s.a0 < s.b1 - s.b0 ? s.a1 - s.a0 : s.b1 - s.b0);
        s.a1 -= k;
        s.b1 -= k;
        if (s.a0 == s.a1 || s.b0 == s.b1) {
            for (Py_ssize_t x = s.a0; x < s.a1; x++)
                deleted[a_at[x]] = 1;
            for (Py_ssize_t y = s.b0; y < s.b1; y++)
                inserted[b_at[y]] = 1;
            continue;
        }
        Py_ssize_t x, y;
        int min_lo, min_hi;
        if (ld_middle(run, a, s.a0, s.a1, b, s.b0, s.b1, vf, vb, s.need_min, max_cost, &x, &y, &min_lo, &min_hi) <
            0) {
            rc = -1;
            goto done;
        }
        if (top + 2 > cap) {
            LdBox *grown = PyMem_Realloc(stack, 2 * cap * sizeof(LdBox));
            if (grown == NULL) {
                PyErr_NoMemory();
                run->failed = 1;
                rc = -1;
                goto done;
            }
            stack = grown;
            cap *= 2;
        }
        stack[top++] = (LdBox){x, s.a1, y, s.b1, min_hi};
        stack[top++] = (LdBox){s.a0, x, s.b0, y, min_lo};
    }
done:
    PyMem_Free(stack);
    PyMem_Free(vf);
    PyMem_Free(vb);
    return rc;
}

/* ---- sliding the groups (git_diff_heuristics.place_groups, _Group, _best_shift, _split_score) ---- */

typedef struct {
    const int32_t *lines; /* NULL for the other side's group */
    uint8_t *changed;     /* n + 1 flags, changed[n] == 0 */
    Py_ssize_t n, start, end;
} LdGroup;

static void
ld_group_init(LdGroup *g, const int32_t *lines, Py_ssize_t n, uint8_t *changed)
{
    g->lines = lines;
    g->n = n;
    g->changed = changed;
    g->start = g->end = 0;
    while (changed[g->end])
        g->end++;
}

static int
ld_group_next(LdGroup *g)
{
    if (g->end == g->n)
        return 0;
    g->start = g->end = g->end + 1;
    while (g->changed[g->end])
        g->end++;
    return 1;
}

static int
ld_group_previous(LdGroup *g)
{
    if (g->start == 0)
        return 0;
    g->end = g->start = g->start - 1;
    while (g->start > 0 && g->changed[g->start - 1])
        g->start--;
    return 1;
}

static int
ld_slide_down(LdGroup *g)
{
    if (g->end < g->n && g->lines[g->start] == g->lines[g->end]) {
        g->changed[g->start] = 0;
        g->changed[g->end] = 1;
        g->start++;
        g->end++;
        while (g->changed[g->end])
            g->end++;
        return 1;
    }
    return 0;
}

static int
ld_slide_up(LdGroup *g)
{
    if (g->start > 0 && g->lines[g->start - 1] == g->lines[g->end - 1]) {
        g->start--;
        g->end--;
        g->changed[g->start] = 1;
        g->changed[g->end] = 0;
        while (g->start > 0 && g->changed[g->start - 1])
            g->start--;
        return 1;
    }
    return 0;
}

typedef struct {
    LdRun *run;
    const int32_t *lines;
    int *memo; /* per line, LD_UNKNOWN until asked */
} LdIndent;

/* Line i's indentation: indents[lines[i]] (0 with run->failed set on an error). */
static int
ld_indent(LdIndent *ind, Py_ssize_t i)
{
    int got = ind->memo[i];
    if (got != LD_UNKNOWN)
        return got;
    if (ind->run->failed)
        return 0;
    PyObject *key = PyLong_FromLong(ind->lines[i]);
    PyObject *v = key == NULL ? NULL : PyObject_GetItem(ind->run->indents, key);
    Py_XDECREF(key);
    long value = v == NULL ? -1 : PyLong_AsLong(v);
    Py_XDECREF(v);
    if (v == NULL || (value == -1 && PyErr_Occurred()) || value < INT_MIN + 1 || value > INT_MAX) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_OverflowError, "git_diff_flags: an indent out of range");
        ind->run->failed = 1;
        return 0;
    }
    ind->memo[i] = (int)value;
    return (int)value;
}

static void
ld_split_score(LdIndent *ind, Py_ssize_t nrec, Py_ssize_t split, long *level_out, long *penalty_out)
{
    int end_of_file = split >= nrec;
    long here = end_of_file ? -1 : ld_indent(ind, split);
    long pre_blank = 0, pre_indent = -1;
    for (Py_ssize_t i = split - 1; i >= 0; i--) {
        pre_indent = ld_indent(ind, i);
        if (pre_indent != -1)
            break;
        pre_blank++;
        if (pre_blank == LD_MAX_BLANKS) {
            pre_indent = 0;
            break;
        }
    }
    long post_blank = 0, post_indent = -1;
    for (Py_ssize_t i = split + 1; i < nrec; i++) {
        post_indent = ld_indent(ind, i);
        if (post_indent != -1)
            break;
        post_blank++;
        if (post_blank == LD_MAX_BLANKS) {
            post_indent = 0;
            break;
        }
    }
    long penalty = 0;
    if (pre_indent == -1 && pre_blank == 0)
        penalty += 1;
    if (end_of_file)
        penalty += 21;
    long blanks_after = here == -1 ? 1 + post_blank : 0;
    long blanks = pre_blank + blanks_after;
    penalty += -30 * blanks + 6 * blanks_after;
    long level = here != -1 ? here : post_indent;
    if (level != -1 && pre_indent != -1) {
        if (level > pre_indent)
            penalty += blanks ? 10 : -4;
        else if (level < pre_indent) {
            if (post_indent != -1 && post_indent > level)
                penalty += blanks ? 17 : 24;
            else
                penalty += blanks ? 17 : 23;
        }
    }
    *level_out = level;
    *penalty_out = penalty;
}

static Py_ssize_t
ld_best_shift(LdIndent *ind, Py_ssize_t nrec, Py_ssize_t earliest_end, Py_ssize_t end, Py_ssize_t size)
{
    Py_ssize_t best_shift = -1;
    long best0 = 0, best1 = 0;
    Py_ssize_t from = earliest_end;
    if (end - size - 1 > from)
        from = end - size - 1;
    if (end - LD_MAX_SLIDING > from)
        from = end - LD_MAX_SLIDING;
    for (Py_ssize_t shift = from; shift <= end; shift++) {
        long i1, p1, i2, p2;
        ld_split_score(ind, nrec, shift, &i1, &p1);
        ld_split_score(ind, nrec, shift - size, &i2, &p2);
        long s0 = i1 + i2, s1 = p1 + p2;
        if (best_shift == -1 || 60 * ((s0 > best0) - (s0 < best0)) + s1 - best1 <= 0) {
            best0 = s0;
            best1 = s1;
            best_shift = shift;
        }
    }
    return best_shift;
}

static Py_ssize_t
ld_find1(const uint8_t *flags, Py_ssize_t from, Py_ssize_t len)
{
    if (from >= len)
        return -1;
    const uint8_t *p = memchr(flags + from, 1, (size_t)(len - from));
    return p == NULL ? -1 : p - flags;
}

/* place_groups: lines has n entries, changed n + 1 flags, other_changed n_other + 1. */
static int
ld_compact(LdRun *run, const int32_t *lines, Py_ssize_t n, uint8_t *changed, uint8_t *other_changed,
           Py_ssize_t n_other, LdIndent *ind)
{
    LdGroup g, go;
    ld_group_init(&g, lines, n, changed);
    ld_group_init(&go, NULL, n_other, other_changed);
    Py_ssize_t groups = 0;
    for (;;) {
        if (g.end != g.start) {
            groups++;
            if (groups % LD_CHECK_EVERY == 0 && ld_check(run) < 0)
                return -1;
            Py_ssize_t earliest_end, end_facing_change;
            for (;;) {
                Py_ssize_t size = g.end - g.start;
                end_facing_change = -1;
                while (ld_slide_up(&g))
                    ld_group_previous(&go);
                earliest_end = g.end;
                if (go.end > go.start)
                    end_facing_change = g.end;
                while (ld_slide_down(&g)) {
                    ld_group_next(&go);
                    if (go.end > go.start)
                        end_facing_change = g.end;
                }
                if (size == g.end - g.start)
                    break;
            }
            if (g.end != earliest_end && end_facing_change != -1) {
                while (go.end == go.start) {
                    ld_slide_up(&g);
                    ld_group_previous(&go);
                }
            }
            else if (g.end != earliest_end && ind != NULL) {
                Py_ssize_t best = ld_best_shift(ind, g.n, earliest_end, g.end, g.end - g.start);
                if (run->failed)
                    return -1;
                while (g.end > best) {
                    ld_slide_up(&g);
                    ld_group_previous(&go);
                }
            }
        }
        Py_ssize_t ea = ld_find1(changed, g.end + 1, n + 1), eb = ld_find1(other_changed, go.end + 1, n_other + 1);
        Py_ssize_t ka = (ea < 0 ? g.n : ea) - g.end - 1, kb = (eb < 0 ? go.n : eb) - go.end - 1;
        Py_ssize_t k = ka < kb ? ka : kb;
        if (k > 0) {
            g.start = g.end = g.end + k;
            go.start = go.end = go.end + k;
        }
        if (!ld_group_next(&g))
            break;
        ld_group_next(&go);
    }
    return 0;
}

/* ---- the call ---- */

/* The C ints of a buffer-like object (array('i')): 1, 0 when it is not one (no error set), -1 on
 * an error to pass on. */
static int
ld_ints(PyObject *obj, Py_buffer *view, const int32_t **data, Py_ssize_t *len)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        view->obj = NULL;
        return clear_unless_fatal() ? 0 : -1;
    }
    if (view->itemsize != 4 || view->format == NULL || strcmp(view->format, "i") != 0) {
        PyBuffer_Release(view);
        view->obj = NULL;
        return 0;
    }
    *data = (const int32_t *)view->buf;
    *len = view->len / 4;
    return 1;
}

static PyObject *
native_git_diff_flags(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "git_diff_flags(a, b, indents, check)");
        return NULL;
    }
    Py_buffer va = {0}, vb = {0};
    const int32_t *a = NULL, *b = NULL;
    Py_ssize_t n = 0, m = 0;
    int ok = ld_ints(args[0], &va, &a, &n);
    if (ok == 1)
        ok = ld_ints(args[1], &vb, &b, &m);
    if (ok < 1) {
        if (va.obj != NULL)
            PyBuffer_Release(&va);
        if (ok == 0)
            Py_RETURN_NONE;
        return NULL;
    }
    LdRun run = {args[3], args[2], 0};
    PyObject *answer = NULL, *del_obj = NULL, *ins_obj = NULL;
    LdCounts counts = {NULL, 0};
    uint8_t *kind = NULL;
    int32_t *ra = NULL, *rb = NULL;
    Py_ssize_t *ra_at = NULL, *rb_at = NULL;
    int *memo = NULL;

    del_obj = PyByteArray_FromStringAndSize(NULL, n + 1);
    ins_obj = PyByteArray_FromStringAndSize(NULL, m + 1);
    if (del_obj == NULL || ins_obj == NULL)
        goto done;
    uint8_t *deleted = (uint8_t *)PyByteArray_AS_STRING(del_obj);
    uint8_t *inserted = (uint8_t *)PyByteArray_AS_STRING(ins_obj);
    memset(deleted, 0, n + 1);
    memset(inserted, 0, m + 1);
    Py_ssize_t least = n < m ? n : m;
    Py_ssize_t head = ld_same_run(a, 0, b, 0, least);
    Py_ssize_t tail = ld_same_tail(a, n, b, m, least - head);
    Py_ssize_t a_end = n - tail, b_end = m - tail;
    if (head < a_end && head < b_end) {
        Py_ssize_t la = a_end - head, lb = b_end - head;
        kind = PyMem_Malloc(la > lb ? la : lb);
        ra = PyMem_Malloc(la * sizeof(int32_t));
        rb = PyMem_Malloc(lb * sizeof(int32_t));
        ra_at = PyMem_Malloc(la * sizeof(Py_ssize_t));
        rb_at = PyMem_Malloc(lb * sizeof(Py_ssize_t));
        if (kind == NULL || ra == NULL || rb == NULL || ra_at == NULL || rb_at == NULL || ld_count(&counts, a, n, b, m) < 0) {
            PyErr_NoMemory();
            goto done;
        }
        Py_ssize_t na = ld_kept(&counts, 0, a, n, head, a_end, deleted, kind, ra, ra_at);
        if (ld_check(&run) < 0)
            goto done;
        Py_ssize_t nb = ld_kept(&counts, 1, b, m, head, b_end, inserted, kind, rb, rb_at);
        if (ld_check(&run) < 0)
            goto done;
        PyMem_Free(counts.slots);
        counts.slots = NULL;
        if (ld_mark(&run, ra, ra_at, na, rb, rb_at, nb, deleted, inserted) < 0)
            goto done;
    }
    else {
        memset(deleted + head, 1, a_end - head);
        memset(inserted + head, 1, b_end - head);
    }
    LdIndent ind_a, ind_b;
    int heuristic = run.indents != Py_None;
    if (heuristic) {
        memo = PyMem_Malloc((n + m + 1) * sizeof(int));
        if (memo == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < n + m + 1; i++)
            memo[i] = LD_UNKNOWN;
        ind_a = (LdIndent){&run, a, memo};
        ind_b = (LdIndent){&run, b, memo + n};
    }
    if (ld_compact(&run, a, n, deleted, inserted, m, heuristic ? &ind_a : NULL) < 0 ||
        ld_compact(&run, b, m, inserted, deleted, n, heuristic ? &ind_b : NULL) < 0 || run.failed)
        goto done;
    answer = PyTuple_Pack(2, del_obj, ins_obj);
done:
    Py_XDECREF(del_obj);
    Py_XDECREF(ins_obj);
    PyMem_Free(counts.slots);
    PyMem_Free(kind);
    PyMem_Free(ra);
    PyMem_Free(rb);
    PyMem_Free(ra_at);
    PyMem_Free(rb_at);
    PyMem_Free(memo);
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return answer;
}
