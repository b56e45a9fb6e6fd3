/* simdbloom for Python: arguments and keys (_simdbloom.h says what each file holds). */
#include "_simdbloom.h" /* (first: Python.h sets the feature macros) */

#include <errno.h>
#include <math.h>
#include <string.h>

/* ---- Errors --------------------------------------------------------------------------------- */

/* Raises the exception that fits a library code; path (may be NULL) names the file. */
PyObject *raise_code(int code, const char *path)
{
    const char *message = sbloom_strerror(code), *detail = sbloom_error_detail();
    switch (code) {
    case SBLOOM_E_NOMEM: return PyErr_NoMemory();
    case SBLOOM_E_IO:
    case SBLOOM_E_NOT_REGULAR: {
        int saved = code == SBLOOM_E_IO && errno ? errno : EINVAL;
        PyObject *args = path ? Py_BuildValue("(iss)", saved, message, path)
                              : Py_BuildValue("(is)", saved, message);
        if (args) {
            PyErr_SetObject(PyExc_OSError, args);
            Py_DECREF(args);
        }
        return NULL;
    }
    default:
        if (path)
            PyErr_Format(PyExc_ValueError, "%s: %s%s%s", path, message, *detail ? ": " : "",
                         detail);
        else
            PyErr_Format(PyExc_ValueError, "%s%s%s", message, *detail ? ": " : "", detail);
        return NULL;
    }
}

/* The same for a call a layout does not have: SBLOOM_E_LAYOUT said as what the call needs
 * (`needs`, e.g. "remove needs a counting filter (layout='counting512')"). */
PyObject *raise_for(int code, const sbloom_t *f, const char *needs)
{
    if (code != SBLOOM_E_LAYOUT)
        return raise_code(code, NULL);
    PyErr_Format(PyExc_ValueError, "%s; this filter is %s", needs,
                 f ? sbloom_layout_name(sbloom_get_layout(f)) : "closed");
    return NULL;
}

/* ---- Arguments, each error naming its argument ----------------------------------------------- */

/* An integer argument (an int, anything with __index__ such as numpy.int64, or a float with no
 * fraction such as 1e7) in [min, max]: 0, or -1 with the exception set. */
int count_arg(PyObject *o, const char *name, unsigned long long min, unsigned long long max,
              unsigned long long *out)
{
    PyObject *n = NULL;
    if (PyFloat_Check(o)) {
        double d = PyFloat_AS_DOUBLE(o);
        if (!(d == floor(d)) || !isfinite(d)) {
            PyErr_Format(PyExc_ValueError, "%s must be a whole number, not %R", name, o);
            return -1;
        }
        n = PyLong_FromDouble(d);
    } else {
        n = PyNumber_Index(o);
    }
    if (!n) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.80s", name,
                         Py_TYPE(o)->tp_name);
        }
        return -1;
    }
    int overflow = 0;
    long long small = PyLong_AsLongLongAndOverflow(n, &overflow);
    unsigned long long v = 0;
    int fits = 0;
    if (overflow > 0) { /* past a long long: perhaps an unsigned one */
        v = PyLong_AsUnsignedLongLong(n);
        fits = !(v == (unsigned long long)-1 && PyErr_Occurred());
        PyErr_Clear();
    } else if (overflow == 0 && small >= 0) {
        v = (unsigned long long)small;
        fits = 1;
    }
    Py_DECREF(n);
    if (fits && v >= min && v <= max) {
        *out = v;
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "%s must be %llu to %llu, not %R", name, min, max, o);
    return -1;
}

/* The false-positive rate: in (0, 1), and not below 1e-15, where a plan's size stops meaning
 * anything (1e-30 for 10 keys would take 545 MB). */
int fpp_arg(double fpp)
{
    if (fpp > 0 && fpp < 1 && fpp >= 1e-15)
        return 0;
    char message[160];
    snprintf(message, sizeof message,
             "fpp is the false-positive rate: more than 0 and less than 1 (1e-15 at least), not %g",
             fpp);
    PyErr_SetString(PyExc_ValueError, message);
    return -1;
}

/* ---- Keys ----------------------------------------------------------------------------------- */

/* The bytes of one key: str as UTF-8 (cached by Python, no copy), or bytes. */
int key_bytes(PyObject *key, const char **data, Py_ssize_t *len)
{
    if (PyUnicode_Check(key)) {
        *data = PyUnicode_AsUTF8AndSize(key, len);
        return *data ? 0 : -1;
    }
    if (PyBytes_Check(key)) {
        *data = PyBytes_AS_STRING(key);
        *len = PyBytes_GET_SIZE(key);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a key is str or bytes, not %.80s", Py_TYPE(key)->tp_name);
    return -1;
}

void batch_release(batch *b)
{
    PyMem_Free(b->ptrs);
    PyMem_Free(b->lens);
    Py_XDECREF(b->tuple);
    if (b->is_u64)
        PyBuffer_Release(&b->view);
}

/* 1 when a buffer's items are 64-bit integers in this host's order: unsigned (numpy uint64), or
 * signed (numpy int64, numpy's default integer), whose bits are keyed as the unsigned integer of
 * the same bits (so -1 and 2**64 - 1 are one key). */
static int u64_format(const Py_buffer *v)
{
    const char *f = v->format ? v->format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    return v->itemsize == 8 && (strcmp(f, "Q") == 0 || strcmp(f, "L") == 0 || strcmp(f, "q") == 0 ||
                                strcmp(f, "l") == 0);
}

int batch_open(PyObject *keys, batch *b)
{
    memset(b, 0, sizeof *b);
    if (PyObject_CheckBuffer(keys) && !PyBytes_Check(keys) && !PyUnicode_Check(keys)) {
        if (PyObject_GetBuffer(keys, &b->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
            return -1;
        b->is_u64 = 1;
        if (!u64_format(&b->view)) {
            PyErr_SetString(PyExc_TypeError,
                            "a buffer of keys must hold 64-bit integers (numpy uint64 or int64)");
            batch_release(b);
            return -1;
        }
        b->n = (size_t)(b->view.len / 8);
        return 0;
    }
    if (PyUnicode_Check(keys) || PyBytes_Check(keys)) {
        PyErr_SetString(PyExc_TypeError, "give a list of keys (a single key: add, in)");
        return -1;
    }
    b->tuple = PySequence_Tuple(keys);
    if (!b->tuple)
        return -1;
    b->n = (size_t)PyTuple_GET_SIZE(b->tuple);
    b->ptrs = PyMem_Malloc((b->n ? b->n : 1) * sizeof *b->ptrs);
    b->lens = PyMem_Malloc((b->n ? b->n : 1) * sizeof *b->lens);
    if (!b->ptrs || !b->lens) {
        batch_release(b);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < b->n; i++) {
        const char *data;
        Py_ssize_t len;
        if (key_bytes(PyTuple_GET_ITEM(b->tuple, (Py_ssize_t)i), &data, &len) < 0) {
            batch_release(b);
            return -1;
        }
        b->ptrs[i] = data;
        b->lens[i] = (size_t)len;
    }
    return 0;
}
