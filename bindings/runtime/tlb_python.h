/* The Python binding's C types and hot path (tlb_python.c), for the SWIG layer (bindings/tl.i),
 * which wraps the two calls below and calls tlb_py_init_types from the module's init. */
#ifndef TLB_PYTHON_H
#define TLB_PYTHON_H
#include <Python.h>

/* Registers the package's Tensor and Context classes and its raise_for(ctx, *operands): None, or
 * NULL with TypeError when the classes do not derive from _TensorBase and _ContextBase or the
 * Tensor class adds attributes. */
PyObject *tlb_py_register(PyObject *tensor_class, PyObject *context_class, PyObject *raise_for);
/* A Tensor object of ctx for handle bits (for the calls made through the SWIG layer). */
PyObject *tlb_py_tensor_of(PyObject *ctx, unsigned long long bits);
#ifndef SWIG
/* Readies _TensorBase and _ContextBase into the module's dict d: 0, or -1 with an exception set. */
int tlb_py_init_types(PyObject *d);
#endif
#endif
