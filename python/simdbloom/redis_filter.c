/* simdbloom for Python: the RedisFilter type, where libsimdbloom-redis is built (_simdbloom.h
 * says what each file holds). */
#ifdef SIMDBLOOM_WITH_REDIS
#include "_simdbloom.h" /* (first: Python.h sets the feature macros) */

#include <math.h>
#include <string.h>

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
    PyTypeObject *type = Py_TYPE(self);
    sbloom_redis_close(self->filter);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
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

static PyType_Slot redis_filter_slots[] = {
    {Py_tp_doc, "RedisFilter(nodes, name, expected=None, fpp=1e-6, password=None, retry=0, "
                "timeout=0): one filter for a fleet, kept in a Redis Cluster (or one server). "
                "expected creates it when absent; without it, it must exist."},
    {Py_tp_new, RedisFilter_new},
    {Py_tp_dealloc, RedisFilter_dealloc},
    {Py_tp_repr, RedisFilter_repr},
    {Py_tp_methods, RedisFilter_methods},
    {Py_tp_getset, RedisFilter_getset},
    {Py_sq_length, RedisFilter_len},
    {Py_sq_contains, RedisFilter_contains},
    {0, NULL},
};

PyType_Spec redis_filter_spec = {
    .name = "simdbloom.RedisFilter",
    .basicsize = sizeof(RedisFilterObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = redis_filter_slots,
};

#endif
