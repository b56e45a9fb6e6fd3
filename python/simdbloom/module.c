/* simdbloom for Python: the module (_simdbloom.h says what each file holds). Multi-phase init:
 * each module object makes its own types, kept in its state, so that the module can be loaded
 * in several interpreters and unloaded. */
#include "_simdbloom.h"

typedef struct {
    PyObject *filter_type;
    PyObject *redis_filter_type; /* NULL where libsimdbloom-redis is not built */
} module_state;

static int add_type(PyObject *m, PyType_Spec *spec, const char *name, PyObject **kept)
{
    *kept = PyType_FromModuleAndSpec(m, spec, NULL);
    return *kept ? PyModule_AddObjectRef(m, name, *kept) : -1;
}

static int module_exec(PyObject *m)
{
    module_state *state = PyModule_GetState(m);
    if (add_type(m, &filter_spec, "Filter", &state->filter_type) < 0)
        return -1;
#ifdef SIMDBLOOM_WITH_REDIS
    if (add_type(m, &redis_filter_spec, "RedisFilter", &state->redis_filter_type) < 0)
        return -1;
#endif
    if (PyModule_AddStringConstant(m, "__version__", sbloom_version_string()) < 0 ||
        PyModule_AddStringConstant(m, "isa", sbloom_isa()) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
    module_state *state = PyModule_GetState(m);
    Py_VISIT(state->filter_type);
    Py_VISIT(state->redis_filter_type);
    return 0;
}

static int module_clear(PyObject *m)
{
    module_state *state = PyModule_GetState(m);
    Py_CLEAR(state->filter_type);
    Py_CLEAR(state->redis_filter_type);
    return 0;
}

static void module_free(void *m)
{
    module_clear((PyObject *)m);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "simdbloom._simdbloom",
    .m_doc = "Blocked Bloom filters with SIMD kernels (libsimdbloom).",
    .m_size = sizeof(module_state),
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__simdbloom(void)
{
    return PyModuleDef_Init(&module);
}
