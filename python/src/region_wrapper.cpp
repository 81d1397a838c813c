// RegionWrapper (region_wrapper.hpp): a plain CPython type, so a call costs one vectorcall dispatch, one
// registered-string push and one pop on top of the wrapped call (no frame, no argument tuple).
//
// Invariants:
// - Every push is matched by one pop on the same thread, also when the wrapped call raised (its
//   exception is returned unchanged), so the region stack stays balanced for the enclosing regions.
// - The handle is an NVTX registered string (valid until exit); the wrapper owns one reference to
//   `wrapped` and takes part in garbage collection (a module's __dict__ holds the wrapper, which holds
//   the module's bound method: a cycle).
#include "region_wrapper.hpp"

#include <structmember.h>

#include <cstddef>
#include <cstdint>

#include "regionprof/regions/regions.h"

namespace regionprof::python {
namespace {

struct region_wrapper {
  PyObject_HEAD
  PyObject* wrapped;
  regionprof_region_handle handle;
  vectorcallfunc vectorcall;
};

region_wrapper* as_wrapper(PyObject* self) { return reinterpret_cast<region_wrapper*>(self); }

PyObject* wrapper_call(PyObject* self, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
  region_wrapper* w = as_wrapper(self);
  regionprof_region_push(w->handle);
  PyObject* result = PyObject_Vectorcall(w->wrapped, args, nargsf, kwnames);
  regionprof_region_pop();
  return result;
}

PyObject* wrapper_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"handle", "wrapped", nullptr};
  unsigned long long handle = 0;
  PyObject* wrapped = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KO:RegionWrapper", const_cast<char**>(keywords), &handle,
                                   &wrapped)) {
    return nullptr;
  }
  if (!PyCallable_Check(wrapped)) {
    PyErr_Format(PyExc_TypeError, "RegionWrapper: wrapped must be callable, not %s", Py_TYPE(wrapped)->tp_name);
    return nullptr;
  }
  auto* w = reinterpret_cast<region_wrapper*>(type->tp_alloc(type, 0));
  if (w == nullptr) return nullptr;
  Py_INCREF(wrapped);
  w->wrapped = wrapped;
  w->handle = reinterpret_cast<regionprof_region_handle>(static_cast<std::uintptr_t>(handle));
  w->vectorcall = wrapper_call;
  return reinterpret_cast<PyObject*>(w);
}

int wrapper_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(as_wrapper(self)->wrapped);
  return 0;
}

int wrapper_clear(PyObject* self) {
  Py_CLEAR(as_wrapper(self)->wrapped);
  return 0;
}

void wrapper_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  wrapper_clear(self);
  Py_TYPE(self)->tp_free(self);
}

/// Own attributes first (`__wrapped__`, the type's), then the wrapped callable's (`__name__`, `__self__`).
PyObject* wrapper_getattro(PyObject* self, PyObject* name) {
  PyObject* found = PyObject_GenericGetAttr(self, name);
  if (found != nullptr || !PyErr_ExceptionMatches(PyExc_AttributeError)) return found;
  PyObject* wrapped = as_wrapper(self)->wrapped;
  if (wrapped == nullptr) return nullptr;
  PyErr_Clear();
  return PyObject_GetAttr(wrapped, name);
}

PyObject* wrapper_repr(PyObject* self) {
  PyObject* wrapped = as_wrapper(self)->wrapped;
  if (wrapped == nullptr) return PyUnicode_FromString("<regionprof region wrapper (cleared)>");
  return PyUnicode_FromFormat("<regionprof region wrapper of %R>", wrapped);
}

PyMemberDef wrapper_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(region_wrapper, wrapped), READONLY, "the wrapped callable"},
    {nullptr, 0, 0, 0, nullptr},
};

PyTypeObject region_wrapper_type = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "regionprof._native.RegionWrapper";
  t.tp_basicsize = sizeof(region_wrapper);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  t.tp_doc = "RegionWrapper(handle, wrapped): calls wrapped(*args, **kwargs) inside the region `handle`.";
  t.tp_new = wrapper_new;
  t.tp_dealloc = wrapper_dealloc;
  t.tp_traverse = wrapper_traverse;
  t.tp_clear = wrapper_clear;
  t.tp_getattro = wrapper_getattro;
  t.tp_repr = wrapper_repr;
  t.tp_members = wrapper_members;
  t.tp_call = PyVectorcall_Call;
  t.tp_vectorcall_offset = offsetof(region_wrapper, vectorcall);
  return t;
}();

}  // namespace

bool add_region_wrapper(PyObject* module) {
  if (PyType_Ready(&region_wrapper_type) < 0) return false;
  Py_INCREF(&region_wrapper_type);
  if (PyModule_AddObject(module, "RegionWrapper", reinterpret_cast<PyObject*>(&region_wrapper_type)) < 0) {
    Py_DECREF(&region_wrapper_type);
    return false;
  }
  return true;
}

}  // namespace regionprof::python
