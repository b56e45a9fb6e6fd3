/*
 * simdbloom for Python: what the extension's files share (each one job):
 *   module.c        the module: multi-phase init, its state (the types), its constants
 *   keys.c          arguments and keys: a key's bytes, a batch (sequence or buffer), the checks
 *                   that name their argument, the exceptions of the library's codes
 *   filter.c        the Filter type over the public C API (simdbloom.h)
 *   redis_filter.c  the RedisFilter type over libsimdbloom-redis, where built
 *
 * Keys are str (their UTF-8 bytes) or bytes. Batch calls take a list (or any sequence) of keys,
 * or any buffer of 64-bit integers (a numpy uint64 or int64 array without a copy), and return
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
#ifndef SIMDBLOOM_PYTHON_H
#define SIMDBLOOM_PYTHON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "simdbloom.h"

/* ---- keys.c ---- */

/* The exception that fits a library code (path, may be NULL, names the file); NULL. */
PyObject *raise_code(int code, const char *path);
/* The same for a call a layout does not have: SBLOOM_E_LAYOUT said as what the call `needs`. */
PyObject *raise_for(int code, const sbloom_t *f, const char *needs);
/* An integer argument (an int, anything with __index__, a float with no fraction) in [min, max],
 * and the false-positive rate: 0, or -1 with the exception set, naming the argument. */
int count_arg(PyObject *o, const char *name, unsigned long long min, unsigned long long max,
              unsigned long long *out);
int fpp_arg(double fpp);
/* The bytes of one key: str as UTF-8 (cached by Python, no copy), or bytes. */
int key_bytes(PyObject *key, const char **data, Py_ssize_t *len);

/* A batch of keys: a sequence of str/bytes (held in a tuple, so that no other thread can free
 * them while the GIL is released), or a buffer of 64-bit integers. */
typedef struct {
    PyObject *tuple; /* the keys, when a sequence */
    const void **ptrs;
    size_t *lens;
    Py_buffer view; /* the integers, when a buffer */
    int is_u64;
    size_t n;
} batch;
int batch_open(PyObject *keys, batch *b);
void batch_release(batch *b);

/* The batch operations. */
enum { OP_ADD, OP_CONTAINS, OP_ADD_IF_NEW, OP_REMOVE };

/* ---- filter.c, redis_filter.c: the types' specs (module.c makes them) ---- */
extern PyType_Spec filter_spec;
#ifdef SIMDBLOOM_WITH_REDIS
extern PyType_Spec redis_filter_spec;
#endif

#endif
