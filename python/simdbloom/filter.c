/* simdbloom for Python: the Filter type (_simdbloom.h says what each file holds). */
#include "_simdbloom.h" /* (first: Python.h sets the feature macros) */

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    PyObject_HEAD sbloom_t *filter; /* NULL once closed */
    Py_ssize_t inflight;            /* batches running without the GIL */
    int draining;                   /* calls waiting for them, or running alone */
} FilterObject;

/* ---- The type ------------------------------------------------------------------------------- */

/* A new Filter object of this type over f (freed if the object cannot be made). */
static FilterObject *wrap(PyTypeObject *type, sbloom_t *f)
{
    FilterObject *self = (FilterObject *)type->tp_alloc(type, 0);
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
    PyTypeObject *type = Py_TYPE(self); /* (a heap type: its instances hold it) */
    sbloom_free(self->filter);
    type->tp_free(self);
    Py_DECREF(type);
}

/* 1 when o is a Filter (of this module's type, whichever module object made it). */
static int is_filter(PyObject *o)
{
    return Py_TYPE(o)->tp_dealloc == (destructor)Filter_dealloc;
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

/* What remove and remove_many need, said when the filter's layout has no remove. */
#define REMOVE_NEEDS                                                                               \
    "remove needs a counting filter (layout='counting512') or a fingerprint filter (what "         \
    "Filter(expected, fpp) and Filter(fpp=...) make at fpp <= 1e-3, or layout='fp512-r19' ...)"

/* The layout a name asks for: 0 for None (the smallest of every family), or a layout; *bloom
 * set for "bloom" (the smallest Bloom layout: what takes every key at a rising rate, and what
 * the concurrent mode and the set operations need). */
static int layout_of(PyObject *name, sbloom_layout *out, int *bloom)
{
    *out = (sbloom_layout)0;
    *bloom = 0;
    if (!name || name == Py_None)
        return 0;
    const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (text && strcmp(text, "bloom") == 0) {
        *bloom = 1;
        return 0;
    }
    int layout = text ? sbloom_layout_from_name(text) : -1;
    if (layout <= 0 || layout == SBLOOM_LAYOUT_WINDOWED) {
        PyErr_Format(PyExc_ValueError,
                     "layout is None (the smallest), 'bloom' (the smallest Bloom layout), "
                     "parquet, block512-k8, block512-k16, counting512, scalable or a fingerprint "
                     "layout fp512-r10 .. fp512-r29, not %R (a windowed filter: Filter.windowed)",
                     name);
        return -1;
    }
    *out = (sbloom_layout)layout;
    return 0;
}

/* The plan of Filter() and Filter.map(): expected (None: grows), fpp, layout; with `bloom` (a
 * concurrent mapping) no layout means the smallest Bloom layout. */
static int new_filter(PyObject *expected, double fpp, PyObject *layout_name, int bloom,
                      sbloom_t **out)
{
    sbloom_layout layout;
    int asked_bloom;
    if (fpp_arg(fpp) < 0 || layout_of(layout_name, &layout, &asked_bloom) < 0)
        return -1;
    bloom |= asked_bloom;
    int rc;
    if (expected == Py_None) { /* no count: a filter that grows, keeping the rate */
        if (layout && layout != SBLOOM_LAYOUT_SCALABLE) {
            PyErr_SetString(PyExc_ValueError,
                            "a fixed layout needs expected (the keys to plan for)");
            return -1;
        }
        /* stages of every family (fingerprint ones at 1e-3 and below), or Bloom ones */
        sbloom_opts opts = sbloom_opts_init();
        opts.first = 1000000;
        opts.fpp = fpp;
        opts.flags = bloom ? 0 : SBLOOM_OPTS_ANY_FAMILY;
        rc = sbloom_create_opts(out, &opts);
    } else {
        unsigned long long n;
        if (count_arg(expected, "expected", 1, UINT64_MAX, &n) < 0)
            return -1;
        /* no layout: the smallest of every family (a fingerprint layout at 1e-3 and below) */
        sbloom_opts opts = sbloom_opts_init();
        opts.expected = n;
        opts.fpp = fpp;
        opts.layout = layout;
        opts.flags = bloom ? 0 : SBLOOM_OPTS_ANY_FAMILY;
        rc = sbloom_create_opts(out, &opts);
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
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OdO:Filter", names, &expected, &fpp,
                                     &layout_name))
        return NULL;
    sbloom_t *f = NULL;
    return new_filter(expected, fpp, layout_name, 0, &f) < 0 ? NULL : (PyObject *)wrap(type, f);
}

static PyObject *Filter_windowed(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"expected", "fpp", "periods", "period", "now", "layout", NULL};
    PyObject *expected, *periods_arg, *period_arg, *now_arg = NULL, *layout_name = Py_None;
    unsigned long long n = 0, periods, period, now = 0;
    double fpp = 1e-6;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OdOO|OO:windowed", names, &expected, &fpp,
                                     &periods_arg, &period_arg, &now_arg, &layout_name))
        return NULL;
    /* layout None: the smallest window of any family (a fingerprint window where it is
     * smaller); "bloom": a ring of Bloom generations (threads, processes, union) */
    int bloom = 0;
    if (layout_name != Py_None) {
        const char *text = PyUnicode_Check(layout_name) ? PyUnicode_AsUTF8(layout_name) : NULL;
        if (!text || strcmp(text, "bloom") != 0) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "a window's layout is None or 'bloom', not %R",
                             layout_name);
            return NULL;
        }
        bloom = 1;
    }
    if ((expected != Py_None && count_arg(expected, "expected", 1, UINT64_MAX, &n) < 0) ||
        fpp_arg(fpp) < 0 ||
        count_arg(periods_arg, "periods", 1, SBLOOM_WINDOW_MAX_PERIODS, &periods) < 0 ||
        count_arg(period_arg, "period", 1, UINT64_MAX, &period) < 0 ||
        (now_arg && count_arg(now_arg, "now", 0, UINT64_MAX, &now) < 0))
        return NULL;
    sbloom_t *f = NULL;
    /* expected None: a window that grows from 1M keys, as Filter(None) does */
    sbloom_opts opts = sbloom_opts_init();
    opts.expected = expected == Py_None ? 0 : n;
    opts.first = expected == Py_None ? 1000000 : 0;
    opts.fpp = fpp;
    opts.periods = (uint32_t)periods;
    opts.period = period;
    opts.now = now;
    opts.flags = bloom ? 0 : SBLOOM_OPTS_ANY_FAMILY;
    int rc = sbloom_create_opts(&f, &opts);
    if (rc != SBLOOM_OK)
        return raise_code(rc, NULL);
    return (PyObject *)wrap((PyTypeObject *)cls, f);
}

static PyObject *Filter_load(PyObject *cls, PyObject *arg)
{
    PyObject *bytes_path = NULL;
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
    return (PyObject *)wrap((PyTypeObject *)cls, f);
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
            failed = new_filter(expected, fpp, layout_name, concurrent, &made) < 0 ||
                     make_file(path, made) < 0;
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
    return (PyObject *)wrap((PyTypeObject *)cls, f);
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
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    sbloom_t *f = NULL;
    int rc = sbloom_deserialize(&f, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return rc == SBLOOM_OK ? (PyObject *)wrap((PyTypeObject *)cls, f) : raise_code(rc, NULL);
}

/* pickle (a filter handed to a multiprocessing worker): Filter.from_bytes(to_bytes()). A
 * concurrent or mapped filter pickles as a copy in memory. */
static PyObject *Filter_reduce(FilterObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *data = Filter_to_bytes(self, NULL);
    if (!data)
        return NULL;
    PyObject *from_bytes = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "from_bytes");
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
        PyErr_SetString(PyExc_KeyError, "the key is not in the filter: it was never added");
        return NULL;
    }
    return rc < 0 ? raise_for(rc, f, REMOVE_NEEDS) : Py_NewRef(Py_None);
}

/* ---- Batches -------------------------------------------------------------------------------- */

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
                int rc = sbloom_remove_u64(f, v[i]); /* 1 removed, or SBLOOM_E_ABSENT */
                if (out)
                    out[i] = rc == 1;
                if (rc < 0 && rc != SBLOOM_E_ABSENT)
                    return rc;
                removed += rc == 1;
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
        return f ? raise_for((int)rc, f, "remove_many: " REMOVE_NEEDS) : NULL;
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
    return rc == SBLOOM_OK ? (PyObject *)wrap(Py_TYPE(self), copy) : raise_code(rc, NULL);
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
    if (!is_filter(other)) {
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
                           : raise_for(rc, f,
                                       "union takes Bloom filters (layout='bloom'; not counting "
                                       "or fingerprint ones)");
}

static PyObject *Filter_ior(PyObject *self, PyObject *other)
{
    if (!is_filter(self) || !is_filter(other))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *r = Filter_union((FilterObject *)self, other);
    if (!r)
        return NULL;
    Py_DECREF(r);
    return Py_NewRef(self);
}

static PyObject *Filter_or(PyObject *a, PyObject *b)
{
    if (!is_filter(a) || !is_filter(b))
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
                                       "concurrent mode takes a Bloom or fingerprint filter of "
                                       "fixed size, or a planned window (not a counting or "
                                       "growing one)");
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
     "Filter.windowed(expected, fpp, periods, period, now=0, layout=None): 'seen in the last "
     "periods x period time units?'; expected keys per window, at most expected / periods in "
     "any one period (None: it grows as keys come, from 1M a window). Move its clock with "
     "advance(now). layout None: a fingerprint window where it is smaller (threads, not "
     "processes; finer periods where period divides); 'bloom': a ring of Bloom generations "
     "(threads, processes, union)."},
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

static PyType_Slot filter_slots[] = {
    {Py_tp_doc, "Filter(expected=None, fpp=1e-6, layout=None): a filter planned for expected "
                "keys at rate fpp, the smallest layout (a fingerprint filter at fpp <= 1e-3, a "
                "blocked Bloom filter above). Without expected it grows as keys come (a scalable "
                "filter) and keeps the rate."},
    {Py_tp_new, Filter_new},
    {Py_tp_dealloc, Filter_dealloc},
    {Py_tp_repr, Filter_repr},
    {Py_tp_methods, Filter_methods},
    {Py_tp_getset, Filter_getset},
    {Py_sq_length, Filter_len},
    {Py_sq_contains, Filter_contains},
    {Py_nb_or, Filter_or},
    {Py_nb_inplace_or, Filter_ior},
    {0, NULL},
};

PyType_Spec filter_spec = {
    .name = "simdbloom.Filter",
    .basicsize = sizeof(FilterObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = filter_slots,
};
