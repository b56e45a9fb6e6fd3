/*
 * simdbloom for Python: the Filter type over the public C API (simdbloom.h).
 *
 * Keys are str (their UTF-8 bytes) or bytes. Batch calls take a list (or any sequence) of keys,
 * or any buffer of 64-bit unsigned integers (a numpy uint64 array without a copy), and return
 * bytes with one answer (0 or 1) per key: numpy.frombuffer(answers, dtype=bool) views them.
 *
 * Threads: batch calls release the GIL where that is safe: lookups on a fixed-size filter, and
 * every call on a filter in concurrent mode (set_concurrent(True)), whose adds and lookups may then
 * run from any number of threads at once with the library's promises (each key new exactly
 * once). A filter that grows (scalable, windowed) or is not concurrent keeps the GIL for adds, so
 * threads take turns. The calls that need the filter to themselves (save, copy, clear, union,
 * set_concurrent, set_threads, sync, to_bytes, close) first wait, the GIL released, for the batches
 * running without it, and hold new ones back until they are done: the filter object counts them
 * (inflight, draining: read and written with the GIL held). Errors are exceptions with the
 * library's message, naming the argument or the call: MemoryError, OSError (files, with errno),
 * ValueError (arguments, damaged files, a closed filter), TypeError (key types), OverflowError.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "simdbloom.h"

typedef struct {
    PyObject_HEAD sbloom_t *filter; /* NULL once closed */
    Py_ssize_t inflight;            /* batches running without the GIL */
    int draining;                   /* calls waiting for them, or running alone */
} FilterObject;

static PyTypeObject FilterType;

/* ---- Errors --------------------------------------------------------------------------------- */

/* Raises the exception that fits a library code; path (may be NULL) names the file. */
static PyObject *raise_code(int code, const char *path)
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
static PyObject *raise_for(int code, const sbloom_t *f, const char *needs)
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
static int count_arg(PyObject *o, const char *name, unsigned long long min, unsigned long long max,
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
static int fpp_arg(double fpp)
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
static int key_bytes(PyObject *key, const char **data, Py_ssize_t *len)
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

/* A batch of keys: a sequence of str/bytes (held in a tuple, so that no other thread can free
 * them while the GIL is released), or a buffer of uint64. */
typedef struct {
    PyObject *tuple; /* the keys, when a sequence */
    const void **ptrs;
    size_t *lens;
    Py_buffer view; /* the integers, when a buffer */
    int is_u64;
    size_t n;
} batch;

static void batch_release(batch *b)
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

static int batch_open(PyObject *keys, batch *b)
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

/* ---- The type ------------------------------------------------------------------------------- */

static FilterObject *wrap(sbloom_t *f)
{
    FilterObject *self = PyObject_New(FilterObject, &FilterType);
    if (!self) {
        sbloom_free(f);
        return NULL;
    }
    self->filter = f;
    self->inflight = 0;
    self->draining = 0;
    return self;
}

static void Filter_dealloc(FilterObject *self)
{
    sbloom_free(self->filter);
    PyObject_Free(self);
}

/* The filter of an open object, or NULL with ValueError (after close()). */
static sbloom_t *open_filter(FilterObject *self)
{
    if (!self->filter)
        PyErr_SetString(PyExc_ValueError, "the filter is closed");
    return self->filter;
}

/* A short pause with the GIL released: the other threads run meanwhile. */
static void pause_without_gil(void)
{
    Py_BEGIN_ALLOW_THREADS struct timespec t = {0, 20000};
    nanosleep(&t, NULL);
    Py_END_ALLOW_THREADS
}

/* A call that needs the filter to itself: waits until no batch runs without the GIL, and holds
 * new ones back until exclusive_end. The filter (NULL and ValueError if closed meanwhile). */
static sbloom_t *exclusive_begin(FilterObject *self)
{
    self->draining++;
    while (self->inflight > 0)
        pause_without_gil();
    sbloom_t *f = open_filter(self);
    if (!f)
        self->draining--;
    return f;
}

static void exclusive_end(FilterObject *self)
{
    self->draining--;
}

static int layout_of(PyObject *name, sbloom_layout *out)
{
    *out = (sbloom_layout)0;
    if (!name || name == Py_None)
        return 0;
    const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    int layout = text ? sbloom_layout_from_name(text) : -1;
    if (layout <= 0 || layout == SBLOOM_LAYOUT_WINDOWED) {
        PyErr_Format(PyExc_ValueError,
                     "layout is parquet, block512-k8, block512-k16, counting512 or scalable, not "
                     "%R (a windowed filter: Filter.windowed)",
                     name);
        return -1;
    }
    *out = (sbloom_layout)layout;
    return 0;
}

/* The plan of Filter() and Filter.map(): expected (None: grows), fpp, layout. */
static int new_filter(PyObject *expected, double fpp, PyObject *layout_name, sbloom_t **out)
{
    sbloom_layout layout;
    if (fpp_arg(fpp) < 0 || layout_of(layout_name, &layout) < 0)
        return -1;
    int rc;
    if (expected == Py_None) { /* no count: a filter that grows, keeping the rate */
        if (layout && layout != SBLOOM_LAYOUT_SCALABLE) {
            PyErr_SetString(PyExc_ValueError,
                            "a fixed layout needs expected (the keys to plan for)");
            return -1;
        }
        rc = sbloom_create_scalable(out, 1000000, fpp);
    } else {
        unsigned long long n;
        if (count_arg(expected, "expected", 1, UINT64_MAX, &n) < 0)
            return -1;
        rc = layout ? sbloom_create_for_layout(out, n, fpp, layout) : sbloom_create(out, n, fpp);
    }
    if (rc != SBLOOM_OK) {
        raise_code(rc, NULL);
        return -1;
    }
    return 0;
}

static PyObject *Filter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"expected", "fpp", "layout", NULL};
    PyObject *expected = Py_None, *layout_name = Py_None;
    double fpp = 1e-6;
    (void)type;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OdO:Filter", names, &expected, &fpp,
                                     &layout_name))
        return NULL;
    sbloom_t *f = NULL;
    return new_filter(expected, fpp, layout_name, &f) < 0 ? NULL : (PyObject *)wrap(f);
}

static PyObject *Filter_windowed(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"expected", "fpp", "periods", "period", "now", NULL};
    PyObject *expected, *periods_arg, *period_arg, *now_arg = NULL;
    unsigned long long n = 0, periods, period, now = 0;
    double fpp = 1e-6;
    (void)cls;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OdOO|O:windowed", names, &expected, &fpp,
                                     &periods_arg, &period_arg, &now_arg))
        return NULL;
    if ((expected != Py_None && count_arg(expected, "expected", 1, UINT64_MAX, &n) < 0) ||
        fpp_arg(fpp) < 0 ||
        count_arg(periods_arg, "periods", 1, SBLOOM_WINDOW_MAX_PERIODS, &periods) < 0 ||
        count_arg(period_arg, "period", 1, UINT64_MAX, &period) < 0 ||
        (now_arg && count_arg(now_arg, "now", 0, UINT64_MAX, &now) < 0))
        return NULL;
    sbloom_t *f = NULL;
    /* expected None: a window that grows from 1M keys, as Filter(None) does */
    int rc = expected == Py_None
                 ? sbloom_create_windowed_scalable(&f, 1000000, fpp, (uint32_t)periods, period, now)
                 : sbloom_create_windowed(&f, n, fpp, (uint32_t)periods, period, now);
    if (rc != SBLOOM_OK)
        return raise_code(rc, NULL);
    return (PyObject *)wrap(f);
}

static PyObject *Filter_load(PyObject *cls, PyObject *arg)
{
    PyObject *bytes_path = NULL;
    (void)cls;
    if (!PyUnicode_FSConverter(arg, &bytes_path))
        return NULL;
    const char *path = PyBytes_AS_STRING(bytes_path);
    sbloom_t *f = NULL;
    int rc;
    PyThreadState *released = PyEval_SaveThread();
    rc = sbloom_load(&f, path);
    PyEval_RestoreThread(released);
    if (rc != SBLOOM_OK) {
        raise_code(rc, path);
        Py_DECREF(bytes_path);
        return NULL;
    }
    Py_DECREF(bytes_path);
    return (PyObject *)wrap(f);
}

/* A new filter file at path, made whole under another name and linked into place: processes that
 * start together all map the one file (the link fails for all but the first: a rename would
 * replace a file another process had mapped already). 0, or -1 with the exception set. */
static int make_file(const char *path, const sbloom_t *f)
{
    char made[4096];
    if (snprintf(made, sizeof made, "%s.new.%ld", path, (long)getpid()) >= (int)sizeof made) {
        PyErr_SetString(PyExc_ValueError, "the path is too long");
        return -1;
    }
    int rc = sbloom_save(f, made);
    if (rc != SBLOOM_OK) {
        raise_code(rc, made);
        return -1;
    }
    int linked = link(made, path) == 0 || errno == EEXIST ? 0 : errno;
    unlink(made);
    if (linked) {
        errno = linked;
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
        return -1;
    }
    return 0;
}

static PyObject *Filter_map(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"path", "write", "concurrent", "expected", "fpp", "layout", NULL};
    PyObject *bytes_path = NULL, *expected = NULL, *layout_name = Py_None;
    int write = 0, concurrent = 0;
    double fpp = 1e-6;
    (void)cls;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|ppOdO:map", names, PyUnicode_FSConverter,
                                     &bytes_path, &write, &concurrent, &expected, &fpp,
                                     &layout_name))
        return NULL;
    const char *path = PyBytes_AS_STRING(bytes_path);
    if (expected && access(path, F_OK) != 0) { /* made first, planned (a mapping cannot grow) */
        sbloom_t *made = NULL;
        int failed = expected == Py_None;
        if (failed)
            PyErr_SetString(PyExc_ValueError, "a mapped file has a fixed size: give expected");
        else
            failed = new_filter(expected, fpp, layout_name, &made) < 0 || make_file(path, made) < 0;
        sbloom_free(made);
        if (failed) {
            Py_DECREF(bytes_path);
            return NULL;
        }
        write = 1;
    }
    unsigned flags = (write ? SBLOOM_OPEN_WRITE : 0) | (concurrent ? SBLOOM_OPEN_CONCURRENT : 0);
    sbloom_t *f = NULL;
    int rc = sbloom_map(&f, path, flags);
    if (rc != SBLOOM_OK) {
        if (rc == SBLOOM_E_INVALID && concurrent && !write)
            PyErr_SetString(PyExc_ValueError, "concurrent=True needs write=True");
        else
            raise_code(rc, path);
        Py_DECREF(bytes_path);
        return NULL;
    }
    Py_DECREF(bytes_path);
    return (PyObject *)wrap(f);
}

static PyObject *Filter_save(FilterObject *self, PyObject *arg)
{
    PyObject *bytes_path = NULL;
    if (!PyUnicode_FSConverter(arg, &bytes_path))
        return NULL;
    const char *path = PyBytes_AS_STRING(bytes_path);
    sbloom_t *f = exclusive_begin(self); /* no batch adds while the filter is written out */
    PyObject *result = NULL;
    if (f) {
        int rc = sbloom_save(f, path);
        result = rc == SBLOOM_OK ? Py_NewRef(Py_None) : raise_code(rc, path);
        exclusive_end(self);
    }
    Py_DECREF(bytes_path);
    return result;
}

static PyObject *Filter_sync(FilterObject *self, PyObject *unused)
{
    (void)unused;
    sbloom_t *f = exclusive_begin(self);
    if (!f)
        return NULL;
    int rc = sbloom_sync(f);
    exclusive_end(self);
    return rc == SBLOOM_OK ? Py_NewRef(Py_None) : raise_code(rc, NULL);
}

static PyObject *Filter_close(FilterObject *self, PyObject *unused)
{
    (void)unused;
    if (!self->filter)
        Py_RETURN_NONE; /* closed already: as a file's close */
    sbloom_t *f = exclusive_begin(self);
    if (!f)
        return NULL;
    self->filter = NULL; /* (a writable mapping is synced, then unmapped) */
    sbloom_free(f);
    exclusive_end(self);
    Py_RETURN_NONE;
}

static PyObject *Filter_enter(FilterObject *self, PyObject *unused)
{
    (void)unused;
    return open_filter(self) ? Py_NewRef(self) : NULL;
}

static PyObject *Filter_exit(FilterObject *self, PyObject *args)
{
    (void)args;
    PyObject *r = Filter_close(self, NULL);
    Py_XDECREF(r);
    return r ? Py_NewRef(Py_False) : NULL;
}

/* ---- Bytes: to_bytes, from_bytes, pickling --------------------------------------------------- */

static PyObject *Filter_to_bytes(FilterObject *self, PyObject *unused)
{
    (void)unused;
    sbloom_t *f = exclusive_begin(self);
    if (!f)
        return NULL;
    uint64_t size = sbloom_serialized_size(f);
    PyObject *out = size <= PY_SSIZE_T_MAX ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size)
                                           : PyErr_NoMemory();
    int rc = out ? sbloom_serialize(f, PyBytes_AS_STRING(out), (size_t)size) : SBLOOM_OK;
    exclusive_end(self);
    if (rc != SBLOOM_OK) {
        Py_DECREF(out);
        return raise_code(rc, NULL);
    }
    return out;
}

static PyObject *Filter_from_bytes(PyObject *cls, PyObject *arg)
{
    (void)cls;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    sbloom_t *f = NULL;
    int rc = sbloom_deserialize(&f, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return rc == SBLOOM_OK ? (PyObject *)wrap(f) : raise_code(rc, NULL);
}

/* pickle (a filter handed to a multiprocessing worker): Filter.from_bytes(to_bytes()). A
 * concurrent or mapped filter pickles as a copy in memory. */
static PyObject *Filter_reduce(FilterObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *data = Filter_to_bytes(self, NULL);
    if (!data)
        return NULL;
    PyObject *from_bytes = PyObject_GetAttrString((PyObject *)&FilterType, "from_bytes");
    PyObject *r = from_bytes ? Py_BuildValue("(O(N))", from_bytes, data) : NULL;
    if (!r && !from_bytes)
        Py_DECREF(data);
    Py_XDECREF(from_bytes);
    return r;
}

/* ---- One key -------------------------------------------------------------------------------- */

static PyObject *Filter_add(FilterObject *self, PyObject *key)
{
    const char *data;
    Py_ssize_t len;
    sbloom_t *f = open_filter(self);
    if (!f || key_bytes(key, &data, &len) < 0)
        return NULL;
    int rc = sbloom_add(f, data, (size_t)len);
    return rc < 0 ? raise_code(rc, NULL) : PyBool_FromLong(rc);
}

static int Filter_contains(FilterObject *self, PyObject *key)
{
    const char *data;
    Py_ssize_t len;
    sbloom_t *f = open_filter(self);
    if (!f || key_bytes(key, &data, &len) < 0)
        return -1;
    int rc = sbloom_contains(f, data, (size_t)len);
    if (rc < 0) {
        raise_code(rc, NULL);
        return -1;
    }
    return rc;
}

static PyObject *Filter_remove(FilterObject *self, PyObject *key)
{
    const char *data;
    Py_ssize_t len;
    sbloom_t *f = open_filter(self);
    if (!f || key_bytes(key, &data, &len) < 0)
        return NULL;
    int rc = sbloom_remove(f, data, (size_t)len);
    if (rc == SBLOOM_E_ABSENT) {
        PyErr_SetString(PyExc_KeyError, "the key was never added (a counter of it is zero)");
        return NULL;
    }
    return rc < 0 ? raise_for(rc, f, "remove needs a counting filter (layout='counting512')")
                  : Py_NewRef(Py_None);
}

/* ---- Batches -------------------------------------------------------------------------------- */

enum { OP_ADD, OP_CONTAINS, OP_ADD_IF_NEW, OP_REMOVE };

/* May this call run without the GIL? Lookups on a filter of fixed size, or anything on a filter
 * in concurrent mode. */
static int free_threaded(const sbloom_t *f, int op)
{
    sbloom_layout layout = sbloom_get_layout(f);
    if (layout == SBLOOM_LAYOUT_SCALABLE || layout == SBLOOM_LAYOUT_WINDOWED)
        return 0;
    return op == OP_CONTAINS || sbloom_is_concurrent(f);
}

static int64_t run_batch(sbloom_t *f, int op, const batch *b, uint8_t *out)
{
    if (b->is_u64) {
        const uint64_t *v = b->view.buf;
        switch (op) {
        case OP_ADD: return sbloom_add_u64s(f, v, b->n);
        case OP_CONTAINS: return sbloom_contains_u64s(f, v, b->n, out);
        case OP_ADD_IF_NEW: return sbloom_add_if_new_u64s(f, v, b->n, out);
        default: {
            int64_t removed = 0;
            for (size_t i = 0; i < b->n; i++) {
                int rc = sbloom_remove_u64(f, v[i]);
                if (out)
                    out[i] = rc == SBLOOM_OK;
                if (rc != SBLOOM_OK && rc != SBLOOM_E_ABSENT)
                    return rc;
                removed += rc == SBLOOM_OK;
            }
            return removed;
        }
        }
    }
    const void *const *k = (const void *const *)b->ptrs;
    switch (op) {
    case OP_ADD: return sbloom_add_keys(f, k, b->lens, b->n);
    case OP_CONTAINS: return sbloom_contains_keys(f, k, b->lens, b->n, out);
    case OP_ADD_IF_NEW: return sbloom_add_if_new_keys(f, k, b->lens, b->n, out);
    default: return sbloom_remove_keys(f, k, b->lens, b->n, out);
    }
}

/* A batch call: the count (add), or bytes of answers (the others). */
static PyObject *batch_call(FilterObject *self, PyObject *keys, int op)
{
    batch b;
    if (!open_filter(self) || batch_open(keys, &b) < 0)
        return NULL;
    PyObject *answers = NULL;
    uint8_t *out = NULL;
    if (op != OP_ADD) {
        answers = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)b.n);
        if (!answers) {
            batch_release(&b);
            return NULL;
        }
        out = (uint8_t *)PyBytes_AS_STRING(answers);
    }
    while (self->draining) /* a call that needs the filter alone waits, or runs: after it */
        pause_without_gil();
    sbloom_t *f = open_filter(self); /* (closed meanwhile?) */
    int64_t rc = 0;
    if (f && free_threaded(f, op)) {
        self->inflight++;
        PyThreadState *released = PyEval_SaveThread();
        rc = run_batch(f, op, &b, out);
        PyEval_RestoreThread(released);
        self->inflight--;
    } else if (f) {
        rc = run_batch(f, op, &b, out);
    }
    batch_release(&b);
    if (!f || rc < 0) {
        Py_XDECREF(answers);
        return f ? raise_for((int)rc, f,
                             "remove_many needs a counting filter "
                             "(layout='counting512')")
                 : NULL;
    }
    return op == OP_ADD ? PyLong_FromLongLong(rc) : answers;
}

static PyObject *Filter_add_many(FilterObject *self, PyObject *keys)
{
    return batch_call(self, keys, OP_ADD);
}

static PyObject *Filter_contains_many(FilterObject *self, PyObject *keys)
{
    return batch_call(self, keys, OP_CONTAINS);
}

static PyObject *Filter_add_if_new_many(FilterObject *self, PyObject *keys)
{
    return batch_call(self, keys, OP_ADD_IF_NEW);
}

static PyObject *Filter_remove_many(FilterObject *self, PyObject *keys)
{
    return batch_call(self, keys, OP_REMOVE);
}

/* update(*iterables): the set's and rbloom's name; each iterable a batch (None: as set.update) */
static PyObject *Filter_update(FilterObject *self, PyObject *args)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++) {
        PyObject *r = batch_call(self, PyTuple_GET_ITEM(args, i), OP_ADD);
        if (!r)
            return NULL;
        Py_DECREF(r);
    }
    Py_RETURN_NONE;
}

/* ---- The rest ------------------------------------------------------------------------------- */

static Py_ssize_t Filter_len(FilterObject *self)
{
    sbloom_t *f = open_filter(self);
    if (!f)
        return -1;
    uint64_t items = sbloom_items(f);
    if (items > (uint64_t)PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_OverflowError,
                        "the count is past what len() can say: read the items property");
        return -1;
    }
    return (Py_ssize_t)items;
}

static PyObject *stats_dict(const sbloom_stats *st, const sbloom_t *f)
{
    return Py_BuildValue("{s:d,s:d,s:d,s:K,s:K}", "fill", st->fill, "fpp_now", st->estimated_fpp,
                         "estimated_items", st->estimated_items, "items",
                         (unsigned long long)sbloom_items(f), "bytes",
                         (unsigned long long)sbloom_bytes(f));
}

static PyObject *Filter_stats(FilterObject *self, PyObject *unused)
{
    (void)unused;
    sbloom_t *f = open_filter(self);
    if (!f)
        return NULL;
    sbloom_stats st = sbloom_stats_init();
    int rc;
    if (free_threaded(f, OP_CONTAINS)) { /* a read of a filter that cannot grow */
        self->inflight++;                /* (close waits for it) */
        PyThreadState *released = PyEval_SaveThread();
        rc = sbloom_get_stats(f, &st);
        PyEval_RestoreThread(released);
        self->inflight--;
    } else {
        rc = sbloom_get_stats(f, &st);
    }
    return rc == SBLOOM_OK ? stats_dict(&st, f) : raise_code(rc, NULL);
}

static PyObject *Filter_estimate(FilterObject *self, PyObject *unused)
{
    (void)unused;
    sbloom_t *f = open_filter(self);
    if (!f)
        return NULL;
    sbloom_stats st = sbloom_stats_init();
    int rc = sbloom_estimate(f, &st);
    return rc == SBLOOM_OK ? stats_dict(&st, f) : raise_code(rc, NULL);
}

static PyObject *Filter_copy(FilterObject *self, PyObject *unused)
{
    (void)unused;
    sbloom_t *f = exclusive_begin(self), *copy = NULL;
    if (!f)
        return NULL;
    int rc = sbloom_clone(&copy, f);
    exclusive_end(self);
    return rc == SBLOOM_OK ? (PyObject *)wrap(copy) : raise_code(rc, NULL);
}

static PyObject *Filter_clear(FilterObject *self, PyObject *unused)
{
    (void)unused;
    sbloom_t *f = exclusive_begin(self);
    if (!f)
        return NULL;
    int rc = sbloom_clear(f);
    exclusive_end(self);
    return rc == SBLOOM_OK ? Py_NewRef(Py_None) : raise_code(rc, NULL);
}

static PyObject *Filter_union(FilterObject *self, PyObject *other)
{
    if (!PyObject_TypeCheck(other, &FilterType)) {
        PyErr_SetString(PyExc_TypeError, "union takes another simdbloom.Filter");
        return NULL;
    }
    FilterObject *o = (FilterObject *)other;
    sbloom_t *f = exclusive_begin(self);
    if (!f)
        return NULL;
    sbloom_t *g = o == self ? f : exclusive_begin(o);
    int rc = g ? sbloom_union(f, g) : SBLOOM_OK;
    if (g && o != self)
        exclusive_end(o);
    exclusive_end(self);
    if (!g)
        return NULL;
    if (rc == SBLOOM_E_INCOMPATIBLE) {
        PyErr_Format(PyExc_ValueError,
                     "union takes a filter of the same layout and size: this one is %s of %llu "
                     "bytes, the other %s of %llu bytes",
                     sbloom_layout_name(sbloom_get_layout(f)), (unsigned long long)sbloom_bytes(f),
                     sbloom_layout_name(sbloom_get_layout(g)), (unsigned long long)sbloom_bytes(g));
        return NULL;
    }
    return rc == SBLOOM_OK ? Py_NewRef(Py_None)
                           : raise_for(rc, f, "union takes bit filters (not counting ones)");
}

static PyObject *Filter_ior(PyObject *self, PyObject *other)
{
    if (!PyObject_TypeCheck(self, &FilterType) || !PyObject_TypeCheck(other, &FilterType))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *r = Filter_union((FilterObject *)self, other);
    if (!r)
        return NULL;
    Py_DECREF(r);
    return Py_NewRef(self);
}

static PyObject *Filter_or(PyObject *a, PyObject *b)
{
    if (!PyObject_TypeCheck(a, &FilterType) || !PyObject_TypeCheck(b, &FilterType))
        Py_RETURN_NOTIMPLEMENTED;
    FilterObject *copy = (FilterObject *)Filter_copy((FilterObject *)a, NULL);
    if (!copy)
        return NULL;
    PyObject *r = Filter_ior((PyObject *)copy, b);
    Py_DECREF(copy);
    return r;
}

static PyObject *Filter_set_concurrent(FilterObject *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    sbloom_t *f = exclusive_begin(self); /* (no batch runs without the GIL meanwhile) */
    if (!f)
        return NULL;
    int rc = sbloom_set_concurrent(f, on);
    exclusive_end(self);
    if (rc == SBLOOM_E_INVALID)
        return PyErr_Format(PyExc_ValueError, "a filter mapped with concurrent=True stays "
                                              "concurrent (other processes may be adding)");
    return rc == SBLOOM_OK ? Py_NewRef(Py_None)
                           : raise_for(rc, f,
                                       "concurrent mode takes a bit filter of fixed size, or a "
                                       "planned window (not a counting or growing one)");
}

static PyObject *Filter_set_threads(FilterObject *self, PyObject *arg)
{
    unsigned long long threads;
    if (count_arg(arg, "threads", 0, 1024, &threads) < 0)
        return NULL;
    sbloom_t *f = exclusive_begin(self);
    if (!f)
        return NULL;
    int rc = sbloom_set_threads(f, (unsigned)threads);
    exclusive_end(self);
    return rc == SBLOOM_OK ? Py_NewRef(Py_None) : raise_code(rc, NULL);
}

static PyObject *Filter_advance(FilterObject *self, PyObject *arg)
{
    unsigned long long now;
    sbloom_t *f = open_filter(self);
    if (!f || count_arg(arg, "now", 0, UINT64_MAX, &now) < 0)
        return NULL;
    int rc = sbloom_advance(f, now);
    return rc == SBLOOM_OK ? Py_NewRef(Py_None)
                           : raise_for(rc, f, "advance needs a windowed filter (Filter.windowed)");
}

static PyObject *Filter_window(FilterObject *self, PyObject *unused)
{
    (void)unused;
    sbloom_t *f = open_filter(self);
    if (!f)
        return NULL;
    sbloom_window w = sbloom_window_init();
    int rc = sbloom_get_window(f, &w);
    if (rc != SBLOOM_OK)
        return raise_for(rc, f, "window() needs a windowed filter (Filter.windowed)");
    PyObject *gens = PyList_New(0);
    for (uint32_t i = 0; gens && i < w.generations; i++) {
        PyObject *start = w.generation_start[i] == UINT64_MAX
                              ? Py_NewRef(Py_None)
                              : PyLong_FromUnsignedLongLong(w.generation_start[i]);
        PyObject *g = start ? Py_BuildValue("{s:N,s:K}", "start", start, "items",
                                            (unsigned long long)w.generation_items[i])
                            : NULL;
        if (!g || PyList_Append(gens, g) < 0) {
            Py_XDECREF(g);
            Py_CLEAR(gens);
            break;
        }
        Py_DECREF(g);
    }
    if (!gens)
        return NULL;
    return Py_BuildValue("{s:I,s:K,s:K,s:N}", "periods", w.periods, "period",
                         (unsigned long long)w.period, "now", (unsigned long long)w.now,
                         "generations", gens);
}

/* The getters: of an open filter (a closed one raises ValueError, but for `closed`). */
#define GETTER(name, expr)                                                                         \
    static PyObject *get_##name(FilterObject *self, void *closure)                                 \
    {                                                                                              \
        (void)closure;                                                                             \
        sbloom_t *f = open_filter(self);                                                           \
        return f ? (expr) : NULL;                                                                  \
    }
GETTER(layout, PyUnicode_FromString(sbloom_layout_name(sbloom_get_layout(f))))
GETTER(items, PyLong_FromUnsignedLongLong(sbloom_items(f)))
GETTER(bytes, PyLong_FromUnsignedLongLong(sbloom_bytes(f)))
GETTER(planned_items, PyLong_FromUnsignedLongLong(sbloom_planned_items(f)))
GETTER(planned_fpp, PyFloat_FromDouble(sbloom_planned_fpp(f)))
GETTER(concurrent, PyBool_FromLong(sbloom_is_concurrent(f)))
GETTER(isa, PyUnicode_FromString(sbloom_filter_isa(f)))
GETTER(growing, PyBool_FromLong(sbloom_is_growing(f)))

static PyObject *get_closed(FilterObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->filter == NULL);
}

static PyObject *Filter_repr(FilterObject *self)
{
    if (!self->filter)
        return PyUnicode_FromString("<simdbloom.Filter closed>");
    return PyUnicode_FromFormat("<simdbloom.Filter %s, %llu bytes, %llu items>",
                                sbloom_layout_name(sbloom_get_layout(self->filter)),
                                (unsigned long long)sbloom_bytes(self->filter),
                                (unsigned long long)sbloom_items(self->filter));
}

static PyMethodDef Filter_methods[] = {
    {"load", (PyCFunction)Filter_load, METH_O | METH_CLASS,
     "Filter.load(path): a filter read from a file (every checksum verified)."},
    {"map", (PyCFunction)(void (*)(void))Filter_map, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Filter.map(path, write=False, concurrent=False, expected=None, fpp=1e-6, layout=None): the "
     "file mapped, zero copy. write=True adds to the file itself; concurrent=True with it lets "
     "several processes add at once. With expected, a file that does not exist is made first "
     "(planned: a mapping cannot grow) and mapped for writing."},
    {"windowed", (PyCFunction)(void (*)(void))Filter_windowed,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Filter.windowed(expected, fpp, periods, period, now=0): 'seen in the last periods x period "
     "time units?'; expected keys per window, at most expected / periods in any one period "
     "(None: it grows as keys come, from 1M a window). Move its clock with advance(now)."},
    {"from_bytes", (PyCFunction)Filter_from_bytes, METH_O | METH_CLASS,
     "Filter.from_bytes(data): a filter from to_bytes()'s bytes (every checksum verified)."},
    {"to_bytes", (PyCFunction)Filter_to_bytes, METH_NOARGS,
     "to_bytes() -> bytes: the filter's file image (what save() writes); pickle uses it."},
    {"__reduce__", (PyCFunction)Filter_reduce, METH_NOARGS, "pickle: from_bytes(to_bytes())."},
    {"save", (PyCFunction)Filter_save, METH_O, "save(path): write the filter crash-safely."},
    {"sync", (PyCFunction)Filter_sync, METH_NOARGS,
     "sync(): write a writable mapping's header back (the file is then valid)."},
    {"close", (PyCFunction)Filter_close, METH_NOARGS,
     "close(): frees the filter now (a writable mapping is synced and unmapped); any later call "
     "but close raises ValueError. A Filter is also a context manager."},
    {"__enter__", (PyCFunction)Filter_enter, METH_NOARGS,
     "with Filter... as f: closed at the end."},
    {"__exit__", (PyCFunction)Filter_exit, METH_VARARGS, "closes the filter."},
    {"add", (PyCFunction)Filter_add, METH_O,
     "add(key) -> bool: adds a str or bytes key; True if it was new (pybloomfiltermmap3's add "
     "answers the reverse: True if it was there)."},
    {"add_if_new", (PyCFunction)Filter_add, METH_O,
     "add_if_new(key) -> bool: the same as add: True if the key was new (and is now added)."},
    {"remove", (PyCFunction)Filter_remove, METH_O,
     "remove(key): takes a key out of a counting filter; KeyError if a counter of it is zero."},
    {"add_many", (PyCFunction)Filter_add_many, METH_O,
     "add_many(keys) -> int: adds a list of str/bytes, or a 64-bit integer buffer; returns how "
     "many were new."},
    {"update", (PyCFunction)Filter_update, METH_VARARGS,
     "update(*keys): adds each batch of keys, as a set's update (add_many for one)."},
    {"contains_many", (PyCFunction)Filter_contains_many, METH_O,
     "contains_many(keys) -> bytes: one byte per key, 1 if it may be present."},
    {"add_if_new_many", (PyCFunction)Filter_add_if_new_many, METH_O,
     "add_if_new_many(keys) -> bytes: one byte per key, 1 if it was new (a key repeated in the "
     "batch is new at its first occurrence only)."},
    {"remove_many", (PyCFunction)Filter_remove_many, METH_O,
     "remove_many(keys) -> bytes: counting filters: 1 for each key removed, 0 for each never "
     "added."},
    {"stats", (PyCFunction)Filter_stats, METH_NOARGS,
     "stats() -> dict: fill, fpp_now, estimated_items, items, bytes (scans the whole filter)."},
    {"estimate", (PyCFunction)Filter_estimate, METH_NOARGS,
     "estimate() -> dict: the same from a sample of at most 4,096 blocks (microseconds)."},
    {"copy", (PyCFunction)Filter_copy, METH_NOARGS, "copy() -> Filter: an independent copy."},
    {"clear", (PyCFunction)Filter_clear, METH_NOARGS, "clear(): empties the filter."},
    {"union", (PyCFunction)Filter_union, METH_O,
     "union(other): adds every key of another filter of the same layout and size (also |=)."},
    {"set_concurrent", (PyCFunction)Filter_set_concurrent, METH_O,
     "set_concurrent(on): concurrent mode: adds and lookups from many threads at once, batch calls "
     "without the GIL."},
    {"set_threads", (PyCFunction)Filter_set_threads, METH_O,
     "set_threads(n): threads one large batch call uses (0: every core; at most 1024)."},
    {"advance", (PyCFunction)Filter_advance, METH_O,
     "advance(now): a windowed filter's clock moves to now (it forgets what fell out)."},
    {"window", (PyCFunction)Filter_window, METH_NOARGS,
     "window() -> dict: a windowed filter's periods, period, now and generations."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Filter_getset[] = {
    {"layout", (getter)get_layout, NULL, "the layout's name", NULL},
    {"items", (getter)get_items, NULL, "keys added (reported new)", NULL},
    {"bytes", (getter)get_bytes, NULL, "the filter's size in bytes", NULL},
    {"planned_items", (getter)get_planned_items, NULL, "the keys it was planned for", NULL},
    {"planned_fpp", (getter)get_planned_fpp, NULL, "the false-positive rate planned", NULL},
    {"concurrent", (getter)get_concurrent, NULL, "True in concurrent mode", NULL},
    {"isa", (getter)get_isa, NULL, "the instruction set its kernels use", NULL},
    {"closed", (getter)get_closed, NULL, "True after close()", NULL},
    {"growing", (getter)get_growing, NULL,
     "True for a filter planned without a count, which grows as keys come", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods Filter_as_sequence = {
    .sq_length = (lenfunc)Filter_len,
    .sq_contains = (objobjproc)Filter_contains,
};

static PyNumberMethods Filter_as_number = {
    .nb_or = Filter_or,
    .nb_inplace_or = Filter_ior,
};

static PyTypeObject FilterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "simdbloom.Filter",
    .tp_doc = "Filter(expected=None, fpp=1e-6, layout=None): a blocked Bloom filter. Without "
              "expected it grows as keys come (a scalable filter) and keeps the rate.",
    .tp_basicsize = sizeof(FilterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Filter_new,
    .tp_dealloc = (destructor)Filter_dealloc,
    .tp_repr = (reprfunc)Filter_repr,
    .tp_methods = Filter_methods,
    .tp_getset = Filter_getset,
    .tp_as_sequence = &Filter_as_sequence,
    .tp_as_number = &Filter_as_number,
};

#ifdef SIMDBLOOM_WITH_REDIS
/* ---- The fleet filter in Redis (libsimdbloom-redis) ----------------------------------------- */
#include "simdbloom_redis.h"

typedef struct {
    PyObject_HEAD sbloom_redis_t *filter; /* NULL once closed */
    int busy; /* a call is running on the handle (without the GIL): one at a time */
    char name[130];
} RedisFilterObject;

/* The exception of a fleet error: TimeoutError (a server that kept not answering: stopped, or
 * overloaded), ConnectionError (none reachable), RuntimeError (the rest), with the message. */
static PyObject *redis_exception(int code)
{
    return code == SBLOOM_REDIS_E_TIMEOUT   ? PyExc_TimeoutError
           : code == SBLOOM_REDIS_E_CONNECT ? PyExc_ConnectionError
                                            : PyExc_RuntimeError;
}

static PyObject *raise_redis(sbloom_redis_t *f, int code)
{
    if (code == SBLOOM_E_NOMEM)
        return PyErr_NoMemory();
    PyErr_Format(redis_exception(code), "redis: %s",
                 f ? sbloom_redis_message(f) : sbloom_redis_strerror(code));
    return NULL;
}

/* The handle of an open RedisFilter, or NULL with ValueError (after close()). */
static sbloom_redis_t *open_redis(RedisFilterObject *self)
{
    if (!self->filter)
        PyErr_SetString(PyExc_ValueError, "the RedisFilter is closed");
    return self->filter;
}

static PyObject *RedisFilter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"nodes",    "name",  "expected", "fpp",
                            "password", "retry", "timeout",  NULL};
    const char *nodes, *name, *password = NULL;
    PyObject *expected = Py_None;
    double fpp = 1e-6, retry = 0, timeout = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ss|Odzdd:RedisFilter", names, &nodes, &name,
                                     &expected, &fpp, &password, &retry, &timeout))
        return NULL;
    if (retry < 0 || timeout < 0 || !isfinite(retry) || !isfinite(timeout)) {
        PyErr_SetString(PyExc_ValueError, "retry and timeout are seconds, 0 or more (0: the "
                                          "library's 30 and 5)");
        return NULL;
    }
    sbloom_redis_options options = sbloom_redis_options_init();
    options.nodes = nodes;
    options.password = password;
    options.retry = retry;
    options.timeout = timeout;
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    int planned = expected != Py_None;
    if (planned) {
        unsigned long long n;
        if (count_arg(expected, "expected", 1, UINT64_MAX, &n) < 0 || fpp_arg(fpp) < 0)
            return NULL;
        sbloom_plan p = sbloom_plan_init();
        int rc = sbloom_plan_for(n, fpp, &p);
        if (rc != SBLOOM_OK)
            return raise_code(rc, NULL);
        plan.layout = p.layout;
        plan.bytes = p.bytes;
        plan.planned_items = n;
        plan.planned_fpp = fpp;
    }
    sbloom_redis_t *f = NULL;
    char err[512] = "";
    int rc;
    PyThreadState *released = PyEval_SaveThread();
    rc = sbloom_redis_open(&f, &options, name, planned ? &plan : NULL, err, sizeof err);
    PyEval_RestoreThread(released);
    if (rc != 0) {
        PyErr_Format(redis_exception(rc), "redis: %s", err);
        return NULL;
    }
    RedisFilterObject *self = (RedisFilterObject *)type->tp_alloc(type, 0);
    if (!self) {
        sbloom_redis_close(f);
        return NULL;
    }
    self->filter = f;
    snprintf(self->name, sizeof self->name, "%s", name);
    return (PyObject *)self;
}

static void RedisFilter_dealloc(RedisFilterObject *self)
{
    sbloom_redis_close(self->filter);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *RedisFilter_close(RedisFilterObject *self, PyObject *unused)
{
    (void)unused;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this RedisFilter is in use by another thread");
        return NULL;
    }
    sbloom_redis_t *f = self->filter;
    self->filter = NULL;
    if (f) { /* (its pending count is sent: bounded by the handle's timeout and retry) */
        Py_BEGIN_ALLOW_THREADS sbloom_redis_close(f);
        Py_END_ALLOW_THREADS
    }
    Py_RETURN_NONE;
}

static PyObject *RedisFilter_enter(RedisFilterObject *self, PyObject *unused)
{
    (void)unused;
    return open_redis(self) ? Py_NewRef(self) : NULL;
}

static PyObject *RedisFilter_exit(RedisFilterObject *self, PyObject *args)
{
    (void)args;
    PyObject *r = RedisFilter_close(self, NULL);
    Py_XDECREF(r);
    return r ? Py_NewRef(Py_False) : NULL;
}

static PyObject *RedisFilter_repr(RedisFilterObject *self)
{
    if (!self->filter)
        return PyUnicode_FromFormat("<simdbloom.RedisFilter %s closed>", self->name);
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    sbloom_redis_get_plan(self->filter, &plan);
    return PyUnicode_FromFormat("<simdbloom.RedisFilter %s: %s, %llu bytes in %llu shards>",
                                self->name, sbloom_layout_name(plan.layout),
                                (unsigned long long)plan.bytes, (unsigned long long)plan.shards);
}

static PyObject *get_redis_closed(RedisFilterObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->filter == NULL);
}

/* A batch against the fleet, without the GIL. A handle takes one call at a time (the library's
 * rule): a second thread calling while one runs gets RuntimeError (open one per thread). */
static PyObject *redis_batch(RedisFilterObject *self, PyObject *keys, int op)
{
    batch b;
    if (!open_redis(self) || batch_open(keys, &b) < 0)
        return NULL;
    if (b.is_u64) {
        batch_release(&b);
        PyErr_SetString(PyExc_TypeError, "the fleet filter takes str/bytes keys");
        return NULL;
    }
    PyObject *answers = op == OP_ADD ? NULL : PyBytes_FromStringAndSize(NULL, (Py_ssize_t)b.n);
    if (op != OP_ADD && !answers) {
        batch_release(&b);
        return NULL;
    }
    uint8_t *out = answers ? (uint8_t *)PyBytes_AS_STRING(answers) : NULL;
    if (self->busy) {
        batch_release(&b);
        Py_XDECREF(answers);
        PyErr_SetString(PyExc_RuntimeError,
                        "this RedisFilter is in use by another thread: open one per thread");
        return NULL;
    }
    self->busy = 1;
    const void *const *k = (const void *const *)b.ptrs;
    int64_t rc;
    PyThreadState *released = PyEval_SaveThread();
    rc = op == OP_ADD        ? sbloom_redis_add_keys(self->filter, k, b.lens, b.n)
         : op == OP_CONTAINS ? sbloom_redis_contains_keys(self->filter, k, b.lens, b.n, out)
                             : sbloom_redis_add_if_new_keys(self->filter, k, b.lens, b.n, out);
    PyEval_RestoreThread(released);
    self->busy = 0;
    batch_release(&b);
    if (rc < 0) {
        Py_XDECREF(answers);
        return raise_redis(self->filter, (int)rc);
    }
    return op == OP_ADD ? PyLong_FromLongLong(rc) : answers;
}

static PyObject *RedisFilter_add_if_new_many(RedisFilterObject *self, PyObject *keys)
{
    return redis_batch(self, keys, OP_ADD_IF_NEW);
}

static PyObject *RedisFilter_contains_many(RedisFilterObject *self, PyObject *keys)
{
    return redis_batch(self, keys, OP_CONTAINS);
}

static PyObject *RedisFilter_add_many(RedisFilterObject *self, PyObject *keys)
{
    return redis_batch(self, keys, OP_ADD);
}

/* One key: a batch of one. 1 or 0 for the key's answer, -1 after an exception. */
static int redis_one(RedisFilterObject *self, PyObject *key, int op)
{
    PyObject *list = PyTuple_Pack(1, key);
    if (!list)
        return -1;
    PyObject *answers = redis_batch(self, list, op);
    Py_DECREF(list);
    if (!answers)
        return -1;
    int answer = PyBytes_AS_STRING(answers)[0] == 1;
    Py_DECREF(answers);
    return answer;
}

static PyObject *RedisFilter_add(RedisFilterObject *self, PyObject *key)
{
    int answer = redis_one(self, key, OP_ADD_IF_NEW);
    return answer < 0 ? NULL : PyBool_FromLong(answer);
}

static int RedisFilter_contains(RedisFilterObject *self, PyObject *key)
{
    return redis_one(self, key, OP_CONTAINS);
}

static PyObject *RedisFilter_info(RedisFilterObject *self, PyObject *unused)
{
    (void)unused;
    if (!open_redis(self))
        return NULL;
    sbloom_redis_info info = sbloom_redis_info_init();
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    sbloom_redis_get_plan(self->filter, &plan);
    int rc = sbloom_redis_get_info(self->filter, &info);
    if (rc != 0)
        return raise_redis(self->filter, rc);
    return Py_BuildValue("{s:s,s:K,s:K,s:K,s:K,s:I,s:K}", "layout", sbloom_layout_name(plan.layout),
                         "bytes", (unsigned long long)plan.bytes, "shards",
                         (unsigned long long)plan.shards, "items", (unsigned long long)info.items,
                         "bits_set", (unsigned long long)info.bits_set, "masters", info.masters,
                         "planned_items", (unsigned long long)plan.planned_items);
}

static PyMethodDef RedisFilter_methods[] = {
    {"add", (PyCFunction)RedisFilter_add, METH_O,
     "add(key) -> bool: True if the key was new to the fleet (exactly one client is told so)."},
    {"add_if_new", (PyCFunction)RedisFilter_add, METH_O, "add_if_new(key) -> bool: as add."},
    {"add_many", (PyCFunction)RedisFilter_add_many, METH_O,
     "add_many(keys) -> int: adds a list of str/bytes; the count of new keys."},
    {"contains_many", (PyCFunction)RedisFilter_contains_many, METH_O,
     "contains_many(keys) -> bytes: 1 for each key the fleet may hold."},
    {"add_if_new_many", (PyCFunction)RedisFilter_add_if_new_many, METH_O,
     "add_if_new_many(keys) -> bytes: 1 for each key new to the fleet (after an error, see the "
     "exception: nothing is answered)."},
    {"info", (PyCFunction)RedisFilter_info, METH_NOARGS,
     "info() -> dict: layout, bytes, shards, items (all clients), bits_set, masters."},
    {"close", (PyCFunction)RedisFilter_close, METH_NOARGS,
     "close(): sends the handle's pending count and disconnects; later calls raise ValueError."},
    {"__enter__", (PyCFunction)RedisFilter_enter, METH_NOARGS, "with: closed at the end."},
    {"__exit__", (PyCFunction)RedisFilter_exit, METH_VARARGS, "closes the handle."},
    {NULL, NULL, 0, NULL},
};

/* len(): the keys the fleet reported new (its counter; info() reads it, with a count of the
 * bits set on the servers). */
static Py_ssize_t RedisFilter_len(RedisFilterObject *self)
{
    PyObject *info = RedisFilter_info(self, NULL);
    if (!info)
        return -1;
    PyObject *items = PyDict_GetItemString(info, "items");
    Py_ssize_t n = items ? PyLong_AsSsize_t(items) : -1;
    Py_DECREF(info);
    return n;
}

static PyGetSetDef RedisFilter_getset[] = {
    {"closed", (getter)get_redis_closed, NULL, "True after close()", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods RedisFilter_as_sequence = {
    .sq_length = (lenfunc)RedisFilter_len,
    .sq_contains = (objobjproc)RedisFilter_contains,
};

static PyTypeObject RedisFilterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "simdbloom.RedisFilter",
    .tp_doc = "RedisFilter(nodes, name, expected=None, fpp=1e-6, password=None, retry=0, "
              "timeout=0): one filter for a fleet, kept in a Redis Cluster (or one server). "
              "expected creates it when absent; without it, it must exist.",
    .tp_basicsize = sizeof(RedisFilterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = RedisFilter_new,
    .tp_dealloc = (destructor)RedisFilter_dealloc,
    .tp_repr = (reprfunc)RedisFilter_repr,
    .tp_methods = RedisFilter_methods,
    .tp_getset = RedisFilter_getset,
    .tp_as_sequence = &RedisFilter_as_sequence,
};
#endif

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "simdbloom._simdbloom",
    .m_doc = "Blocked Bloom filters with SIMD kernels (libsimdbloom).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__simdbloom(void)
{
    if (PyType_Ready(&FilterType) < 0)
        return NULL;
#ifdef SIMDBLOOM_WITH_REDIS
    if (PyType_Ready(&RedisFilterType) < 0)
        return NULL;
#endif
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    if (PyModule_AddObjectRef(m, "Filter", (PyObject *)&FilterType) < 0 ||
        PyModule_AddStringConstant(m, "__version__", sbloom_version_string()) < 0 ||
        PyModule_AddStringConstant(m, "isa", sbloom_isa()) < 0
#ifdef SIMDBLOOM_WITH_REDIS
        || PyModule_AddObjectRef(m, "RedisFilter", (PyObject *)&RedisFilterType) < 0
#endif
    ) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
