/* core/native_c/line_diff.h: what line_diff.c offers the other parts of packscope.core._native.
 * git's default line diff over two sides' line numbers (git_diff_flags): the common head
 * and tail, xdiff's pre-pass, Myers' middle snakes (split early past a cost, as git's search
 * is), the groups slid as git slides them.
 * Reference: git_diff_flags in core/history/line_diff.py. */
#ifndef PACKSCOPE_NATIVE_LINE_DIFF_H
#define PACKSCOPE_NATIVE_LINE_DIFF_H

#include "common.h"

static PyObject *native_git_diff_flags(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
